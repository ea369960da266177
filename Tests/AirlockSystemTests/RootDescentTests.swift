import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("Root.Descent and TrustedPath: every directory opened on the way is closed, on every way out")
struct RootDescentTests {
    private func components(_ path: String) -> ArraySlice<[UInt8]> {
        ArraySlice(path.split(separator: "/").map { Array($0.utf8) })
    }

    private func makeDirectories(_ directory: Scratch, _ paths: [String]) throws {
        for path in paths {
            try FileManager.default.createDirectory(atPath: directory.path + "/" + path, withIntermediateDirectories: true)
        }
    }

    @Test("a descent keeps each directory it passes open until closeAll(), reusing what is open")
    func keepsAndCloses() throws {
        let directory = try Scratch("owned")
        try makeDirectories(directory, ["a/b/c", "a/d"])
        let top = OwnedDescriptor(try FileDescriptor.openDirectory(path: directory.path))
        let descent = Root.Descent(Root(top.descriptor), limit: 8)
        var opened: [String] = []
        let noEntering: (FileDescriptor, [UInt8], [UInt8]) throws(SystemError) -> Void = { _, _, _ in }
        let entered: (FileDescriptor, [UInt8]) throws(SystemError) -> Void = { _, path in
            opened.append(String(decoding: path, as: UTF8.self))
        }
        let deepest = try descent.directory(components("a/b/c"), entering: noEntering, entered: entered)
        try expectEqual(deepest.status().kind, .directory)
        _ = try descent.directory(components("a/d"), entering: noEntering, entered: entered)
        _ = try descent.directory(components("a/b"), entering: noEntering, entered: entered)
        expectEqual(opened, ["a/", "a/b/", "a/b/c/", "a/d/"])
        expectEqual(descent.count, 4)
        // The top directory's own descriptor, and the four beneath it.
        expectEqual(descriptorsOpen(beneath: directory.path).count, 5)
        descent.closeAll()
        expectEqual(descent.count, 0)
        expectEqual(descriptorsOpen(beneath: directory.path), [directory.path])
        try expectEqual(descent.directory([], entering: noEntering, entered: entered), top.descriptor)
    }

    @Test("past its limit it closes everything and starts again from the root; a failed descent leaves only what it opened before")
    func limitAndFailure() throws {
        let directory = try Scratch("owned")
        try makeDirectories(directory, ["a/b", "c/d", "e"])
        let top = OwnedDescriptor(try FileDescriptor.openDirectory(path: directory.path))
        let descent = Root.Descent(Root(top.descriptor), limit: 3)
        let noEntering: (FileDescriptor, [UInt8], [UInt8]) throws(SystemError) -> Void = { _, _, _ in }
        let noEntered: (FileDescriptor, [UInt8]) throws(SystemError) -> Void = { _, _ in }
        _ = try descent.directory(components("a/b"), entering: noEntering, entered: noEntered)
        _ = try descent.directory(components("c/d"), entering: noEntering, entered: noEntered)
        expectEqual(descent.count, 2)
        expectEqual(descriptorsOpen(beneath: directory.path).count, 3)
        #expect(throws: SystemError.self) {
            try descent.directory(components("e/missing"), entering: noEntering, entered: noEntered)
        }
        // "e" was opened before "missing" failed; nothing else is held.
        expectEqual(descent.count, 1)
        expectEqual(descriptorsOpen(beneath: directory.path), [directory.path, directory.path + "/e"])
        let refusing: (FileDescriptor, [UInt8], [UInt8]) throws(SystemError) -> Void = { (_, component, _) throws(SystemError) in
            throw SystemError("mkdirat", component, .permissionDenied)
        }
        #expect(throws: SystemError.self) {
            try descent.directory(components("e/x"), entering: refusing, entered: noEntered)
        }
        expectEqual(descriptorsOpen(beneath: directory.path), [directory.path, directory.path + "/e"])
    }

    @Test("a descent's directories are closed when the descent goes")
    func closedWhenGone() throws {
        let directory = try Scratch("owned")
        try makeDirectories(directory, ["a/b"])
        let top = OwnedDescriptor(try FileDescriptor.openDirectory(path: directory.path))
        do {
            let descent = Root.Descent(Root(top.descriptor), limit: 4)
            _ = try descent.directory(components("a/b"), entering: { _, _, _ throws(SystemError) in }, entered: { _, _ throws(SystemError) in })
            expectEqual(descriptorsOpen(beneath: directory.path).count, 3)
        }
        expectEqual(descriptorsOpen(beneath: directory.path), [directory.path])
    }

    @Test("TrustedPath holds nothing open but the directory it returns, whether it finds it, meets a missing name or a link it refuses")
    func trustedPathCloses() throws {
        let directory = try Scratch("owned")
        try makeDirectories(directory, ["a/b"])
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/a/up", withDestinationPath: "b")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/abs", withDestinationPath: directory.path + "/a")
        let found = OwnedDescriptor(try TrustedPath.openDirectory(path: directory.path + "/a/up"))
        let beneath = OwnedDescriptor(try TrustedPath.openDirectory(path: directory.path + "/abs/b"))
        expectEqual(descriptorsOpen(beneath: directory.path), [directory.path + "/a/b", directory.path + "/a/b"])
        found.close()
        beneath.close()
        #expect(throws: SystemError.self) { try TrustedPath.openDirectory(path: directory.path + "/a/missing/b") }
        #expect(throws: SystemError.self) { try TrustedPath.openDirectory(path: directory.path + "/a/b/missing") }
        expect(descriptorsOpen(beneath: directory.path).isEmpty)
        if getuid() == 0 {
            // A link another user owns is refused; whatever the walk opened is closed with it.
            expectEqual(lchown(directory.path + "/a/up", 65534, 65534), 0)
            #expect(throws: SystemError.self) { try TrustedPath.openDirectory(path: directory.path + "/a/up") }
            expect(descriptorsOpen(beneath: directory.path).isEmpty)
        }
    }
}

@Suite("HandOverSocket: descriptors received are owned, closed unless taken")
struct HandOverSocketOwnershipTests {
    @Test("what a message carries is closed when the received message goes, and stays open once taken")
    func receivedDescriptorsClose() throws {
        let directory = try Scratch("owned")
        let (sender, receiver) = try HandOverSocket.pair()
        let passed = OwnedDescriptor(try FileDescriptor.openDirectory(path: directory.path))
        try sender.send([1, 2, 3], passing: [passed.descriptor, passed.descriptor])
        passed.close()
        if let received = try receiver.receive(limit: 16) {
            expect(received.bytes == [1, 2, 3] && received.descriptors.count == 2)
            expectEqual(descriptorsOpen(beneath: directory.path).count, 2)
        } else {
            Issue.record("no message received")
        }
        expect(descriptorsOpen(beneath: directory.path).isEmpty)
        let again = OwnedDescriptor(try FileDescriptor.openDirectory(path: directory.path))
        try sender.send([4], passing: [again.descriptor])
        again.close()
        guard let message = try receiver.receive(limit: 16) else {
            Issue.record("no message received")
            return
        }
        let taken = message.takeDescriptors().take()
        expect(taken.count == 1 && descriptorsOpen(beneath: directory.path).count == 1)
        taken.forEach { $0.close() }
        expect(descriptorsOpen(beneath: directory.path).isEmpty)
    }
}
