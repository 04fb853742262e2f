import Foundation
import Testing

@testable import TaskdConfig

/// docs/configuration.md's reference tables (which the man pages taskd.task(5) and taskd.conf(5)
/// are made from, scripts/man) name every key the parsers' tables take, in its section, and no
/// key they do not take.
@Suite("docs/configuration.md: a row for every key of the tables")
struct ReferenceTableTests {
    /// `Section/Key` of every key the document's tables name: rows `| `[Section]` | `Key=`, … |`,
    /// an empty first cell carrying on the section above.
    static func documented() throws -> Set<String> {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/configuration.md").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var found: Set<String> = []
        var section = ""
        for line in text.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count > 3 else { continue }
            if cells[1].hasPrefix("`[") { section = String(cells[1].dropFirst(2).dropLast(2)) }
            guard !section.isEmpty else { continue }
            for item in cells[2].split(separator: ",") {
                let key = item.trimmingCharacters(in: .whitespaces)
                guard key.hasPrefix("`"), key.hasSuffix("=`") else { continue }
                found.insert("\(section)/\(key.dropFirst().dropLast(2))")
            }
        }
        return found
    }

    static func table(_ keys: [(section: String, keys: [String])]) -> Set<String> {
        Set(keys.flatMap { s in s.keys.map { "\(s.section)/\($0)" } })
    }

    @Test("every [Task], [Timer] and [Exec] key, and every [Daemon] key, has its row; none is extra")
    func everyKey() throws {
        let documented = try Self.documented()
        let keys = Self.table(TaskFileKeys.table.keys).union(Self.table(DaemonFileKeys.table.keys))
        #expect(keys.count > 70)
        #expect(keys.subtracting(documented).sorted() == [], "keys the reference does not name")
        #expect(documented.subtracting(keys).sorted() == [], "rows for keys no table takes")
    }
}
