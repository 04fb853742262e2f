import Testing

@testable import TaskScheduling

@Suite("Access rules: root and taskd's own user always; otherwise the list, by uid, primary or supplementary gid")
struct AccessListTests {
    static let list = AccessList(users: [1000], groups: [50, 60])

    @Test(
        "who is allowed",
        arguments: [
            // (uid, gid, supplementary groups, allowed)
            (UInt32(0), UInt32(0), [UInt32](), true),  // root
            (4000, 4000, [], true),  // taskd's own user (owner below)
            (1000, 1000, [], true),  // listed user
            (2000, 50, [], true),  // primary group listed
            (2000, 2000, [7, 60], true),  // supplementary group listed
            (2000, 2000, [7, 8], false),
            (65534, 65534, [], false),
        ])
    func allows(uid: UInt32, gid: UInt32, groups: [UInt32], allowed: Bool) {
        #expect(AccessList.allows(Self.list, uid: uid, gid: gid, groups: groups, owner: 4000) == allowed)
    }

    @Test("no list: whoever can connect is allowed; an empty list: only root and the owner")
    func edges() {
        #expect(AccessList.allows(nil, uid: 65534, gid: 65534, groups: [], owner: 0))
        #expect(!AccessList.allows(AccessList(), uid: 65534, gid: 65534, groups: [], owner: 0))
        #expect(AccessList.allows(AccessList(), uid: 0, gid: 0, groups: [], owner: 4000))
    }
}
