import TaskdProtocol

/// `taskctl fleet`: the fleet as etcd has it now (Varlink `Fleet`): its hosts, and the claims
/// they hold (docs/fleet.md).
enum FleetCommand {
    static func run(json: Bool, socket: String) throws(Failure) -> ExitCode {
        let reply = try Commands.call(socket, SchedulerInterface.Fleet.self, NoParameters())
        if json {
            Terminal.out(Terminal.json(reply))
            return .success
        }
        guard let name = reply.name else {
            Terminal.out("No fleet: taskd.conf sets no FleetEndpoints= (every task runs as Fleet=host).")
            return .success
        }
        var lines = ["Fleet \(name), this host \(reply.host ?? "?"); hosts: \(reply.hosts.joined(separator: ", "))"]
        if reply.claims.isEmpty {
            lines.append("No claim is held.")
        } else {
            var rows = [["TASK", "FLEET", "SLOT OR RUN", "HOST", "FENCE"]]
            for claim in reply.claims {
                let what = claim.slotUSec.map(Terminal.time) ?? claim.runId.map { String($0.prefix(12)) } ?? "-"
                rows.append([claim.task, claim.mode, what, claim.host, String(claim.fenceToken)])
            }
            lines.append(Terminal.table(rows))
        }
        Terminal.out(lines.joined(separator: "\n"))
        return .success
    }
}
