@testable import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("POSIX ACLs as the kernel takes them: one grant beyond the owner, and nothing for the group or others")
struct AccessControlTests {
    @Test("the xattr bytes are version 2, then user::, user:UID:, group::, mask::, other:: little-endian, pinned")
    func pinnedBytes() {
        let grant = UserGrant(owner: 0o7, user: 1001, rights: 0o5)
        let expected: [UInt8] = [
            2, 0, 0, 0,
            0x01, 0, 7, 0, 0xFF, 0xFF, 0xFF, 0xFF,
            0x02, 0, 5, 0, 0xE9, 0x03, 0, 0,
            0x04, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF,
            0x10, 0, 5, 0, 0xFF, 0xFF, 0xFF, 0xFF,
            0x20, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF,
        ]
        expectEqual(grant.xattrValue, expected)
    }

    @Test("set on a directory (access and default), getfacl reads back the grant; a file made in it inherits r-- for that user alone",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/getfacl"), "needs getfacl (package acl)"))
    func readBack() throws {
        let scratch = try Scratch("acl")
        let path = scratch.path
        let directory = try FileDescriptor.openDirectory(path: path)
        defer { directory.close() }
        try directory.changeMode(0o700)
        try directory.setAccessControl(UserGrant(owner: 0o7, user: 4242, rights: 0o5))
        try directory.setAccessControl(UserGrant(owner: 0o6, user: 4242, rights: 0o4), inherited: true)
        try directory.replaceAtomically(Array("r.json".utf8), with: Array("{}\n".utf8), temporary: Array(".r.tmp".utf8),
                                        AtomicWriteOptions(mode: 0o640, ignoresUmask: true))
        let acl = { (target: String) throws -> String in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/getfacl")
            process.arguments = ["-n", "-p", target]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        let onDirectory = try acl(path)
        for line in ["user::rwx", "user:4242:r-x", "group::---", "mask::r-x", "other::---",
                     "default:user::rw-", "default:user:4242:r--", "default:group::---", "default:mask::r--", "default:other::---"] {
            expect(onDirectory.contains(line + "\n"), "\(line) in \(onDirectory)")
        }
        let onFile = try acl(path + "/r.json")
        for line in ["user::rw-", "user:4242:r--", "group::---", "mask::r--", "other::---"] {
            expect(onFile.contains(line + "\n"), "\(line) in \(onFile)")
        }
    }
}
