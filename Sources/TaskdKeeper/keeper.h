// The keeper's state and its connection to taskd, shared by main.c and output.c.
#ifndef TASKD_KEEPER_H
#define TASKD_KEEPER_H
#include "CTaskdShim.h"
#include <stdint.h>
#include <sys/types.h>

struct run {
    pid_t pid;
    char run_id[64];
    int fds[3];  // the read ends of stdout, stderr, notify (-1 once closed)
    int exited;
    int status;
    uint64_t cpu_usec, read_blocks, write_blocks;
    char *snapshot;  // what taskd gave at SPAWN (its run's state), for the next taskd
    size_t snapshot_length;
};

/// The runs held, and the connection to the taskd served (-1: none).
extern struct run *runs;
extern size_t run_count;
extern int client;

/// Closes the connection (a new taskd connects, or this one broke the protocol).
void drop_client(void);
/// Sends a message to taskd; -1 (and the connection dropped) if it cannot.
int send_to_client(const struct taskd_keeper_message *m, const int *fds, int nfds);
/// OUTPUT: writes the records, then takes their lines' bytes out of the run's pipe; answers WRITTEN.
void output(void);

#endif
