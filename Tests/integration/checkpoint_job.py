"""The checkpointed command job the checkpoint tests cut short (test_checkpoint.py, and
Tests/e2e/test_checkpoint_e2e.py under systemd), and the result an uninterrupted run gives."""

# A job of STEPS steps that resumes from its checkpoint: each step is written to the log (its work),
# then checkpointed; a step cut short between the two is done again.
JOB = """#!/bin/sh
log="$1"; steps="$2"; pidfile="$3"
echo $$ > "$pidfile"
set -- ${TASKD_CHECKPOINT:-0 0}
step=$1; total=$2
while [ "$step" -lt "$steps" ]; do
  echo "$step" >> "$log"
  total=$(( (total * 31 + step) % 1000003 ))
  step=$((step + 1))
  echo "CHECKPOINT=$step $total" >&3
  sleep 0.003
done
echo "RESULT=$total" >&3
"""


def expected(steps):
    """The job's RESULT= after `steps` steps, done once each."""
    total = 0
    for step in range(steps):
        total = (total * 31 + step) % 1000003
    return total
