import AirlockPolicy
import AirlockSystem

/// A decoder program run as a template: started once, it loads what does not
/// depend on any drop (its libraries, the magic database, whatever `warmUp`
/// touches), then forks one child per drop the supervisor sends it. It never
/// receives or reads a drop's bytes: it holds a drop's descriptors only from the
/// request until the fork, and the child, not the template, reads them.
///
/// Each child is forked as the supervisor's own child (`SiblingFork`) and starts
/// exactly where a child started with its drop stands: its descriptors at 3, 4
/// and 5, then confinement, the decode, the verdict and its
/// exit. Before it takes its descriptors it waits for the supervisor's go-ahead
/// on a socket of its own: a child whose pidfd never reached the supervisor (the
/// template died after the fork) reads end-of-file there and exits untouched.
public enum TemplateServer {
    /// The first argument of a template; the rest are its start-up arguments.
    public static let flag = "--template"
    /// The template's request socket.
    public static let socketDescriptor = ChildStart.socketDescriptor
    /// The first byte of the template's reply, which carries the child's pidfd
    /// and then its pid (4 bytes, little-endian).
    public static let replyVersion: UInt8 = 1
    /// The supervisor's go-ahead to a forked child.
    public static let goAhead: UInt8 = 0x06
    /// A request carries the drop, the staging directory, the result pipe and the child's go-ahead socket.
    public static let requestDescriptors = 4

    /// What a template loaded for its children before the first fork.
    public struct Preloaded {
        /// The magic database its start-up arguments named (nil: none).
        public let magicDatabase: String?
        public let detector: Result<ContentTypeDetector?, ContentTypeError>

        /// The detector for `database`: the template's when it is the same database
        /// and it loaded; else loaded now, so that a template whose load failed
        /// does not pass its failure on to every child it forks.
        public func detector(for database: String?) -> Result<ContentTypeDetector?, ContentTypeError> {
            if database == magicDatabase, case .success = detector { return detector }
            return ContentTypes.load(database)
        }
    }

    /// A decoder program's start, however it was started: with its drop, or as a
    /// template, in which case this returns only in a forked child. nil: the
    /// program has nothing to do and exits with `ChildStart.unusedStatus` (its
    /// socket closed, a malformed request, a failed fork, no go-ahead).
    ///
    /// - Parameter warmUp: run once in a template, after the magic database is
    ///   loaded (it is given the detector) and before the first request.
    public static func start(_ commandLine: [String],
                             warmUp: (ContentTypeDetector?) -> Void = { _ in }) -> (ChildStart, Preloaded?)? {
        guard commandLine.first == flag else { return (ChildStart(arguments: commandLine, cpuSecondsSpent: 0), nil) }
        // Whatever the supervisor let slip into this process (a descriptor opened
        // without close-on-exec by a library) would live as long as the template
        // and reach every child until it confines itself: none is kept.
        do {
            try Confinement.tieToSupervisor()
            try CurrentProcess.closeDescriptors(from: FileDescriptor(rawValue: socketDescriptor.rawValue + 1))
        } catch {
            return nil
        }
        var startUp = Array(commandLine.dropFirst())
        let database = ContentTypes.takeDatabaseArgument(&startUp)
        CurrentProcess.setCharacterLocale("C.UTF-8")
        let preloaded = Preloaded(magicDatabase: database, detector: loadShared(database))
        // Never closed, in the template or in a child: closing frees the database
        // entry by entry, which in a child would copy every heap page it shares
        // with the template just to exit (half of a child's page faults).
        if case .success(let detector?) = preloaded.detector { _ = Unmanaged.passRetained(detector) }
        warmUp(try? preloaded.detector.get())
        warmVerdict()
        warmRequest()
        // Compiled once here; each child loads its part with one system call. The
        // denied calls are in force in the template from here on, for every child
        // it forks; one that fails to load them forks children that load the whole.
        Seccomp.compileDecoderFilter()
        try? Seccomp.applyTemplateFilter()
        SiblingFork.trimHeap()
        // The request socket, which the forked child inherited, is closed when
        // `serve` returns, before the child waits for its go-ahead: a child that
        // held it would keep a dead template's socket open, and the supervisor
        // waiting for the template's reply would see no end-of-file until its deadline.
        guard let request = serve(), let start = childStart(request) else { return nil }
        return (start, preloaded)
    }

    /// Writes a made-up verdict's JSON once, and throws it away: the first
    /// writing instantiates the generic metadata it needs, which every child
    /// would otherwise look up again for its one verdict.
    private static func warmVerdict() {
        var message = VerdictMessage(.accepted(VerdictMessage.Accepted(files: 1, directories: 0, entries: 1, bytesWritten: 1)),
                                     types: [DetectedType(entry: "warm-up.txt", type: "text/plain")])
        // Problems joined as a child's report joins them, so that call is warmed too.
        message.confinement = VerdictMessage.ConfinementFields(landlockABI: 1, landlockState: "in-force", seccompState: "in-force",
                                                               problems: ["none"].joined(separator: "; "))
        _ = message.jsonText
    }

    /// Decodes a request as each child decodes its own: the first use of its
    /// dictionary of fields looks up the key type's conformances, a scan of every
    /// conformance record of the program (perf: the request's decoding was 8% of a
    /// keyed child's CPU, most of it that lookup), which the children inherit done.
    private static func warmRequest() {
        let limits = DecoderLimits(addressSpaceBytes: 1 << 30, cpuSeconds: 60, openFiles: 64, fileSizeBytes: 1 << 20, requiresConfinement: true)
        let request = DecoderRequest(mode: .decode, format: "zip", progress: false, magicDatabase: nil, limits: limits, policy: Policy(),
                                     zipLegacyEncoding: "", tarLegacyEncoding: nil, keyed: KeyedSettings())
        _ = try? DecoderRequest(decoding: request.encoded)
    }

    /// The detector for `database`, loaded from a copy in memory the children
    /// share without faulting it in again (libmagic maps the file otherwise);
    /// from the file as any child loads it when that copy cannot be made.
    private static func loadShared(_ database: String?) -> Result<ContentTypeDetector?, ContentTypeError> {
        guard let database, let bytes = try? SiblingFork.readShared(database),
              let detector = try? ContentTypeDetector(database: database, bytes: bytes) else {
            return ContentTypes.load(database)
        }
        return .success(detector)
    }

    /// Serves requests until the supervisor closes the socket: nil in the
    /// template then (or when it must stop); in a forked child, its request and
    /// the descriptors that came with it.
    /// A request a forked child serves: the message and the descriptors that came with it.
    private struct Request: ~Copyable {
        /// The message as received, checked well-formed; the child decodes it.
        let message: [UInt8]
        var descriptors: OwnedDescriptors
    }

    private static func serve() -> Request? {
        let socket = HandOverSocket(adopting: socketDescriptor)
        #if DEBUG
        let template = CurrentProcess.id
        #endif
        while true {
            // Returning nil closes whatever came with the message.
            // Checked here, decoded in the child: see HandOverMessage.isWellFormed.
            guard var received = try? socket.receive(limit: HandOverMessage.maxBytes),
                  received.descriptors.count == requestDescriptors,
                  HandOverMessage.isWellFormed(received.bytes),
                  let side = forkOnce() else { return nil }
            switch side {
            case .child:
                #if DEBUG
                // Test-only: say which template forked this child, so tests can see templates used and replaced.
                if CurrentProcess.environment("AIRLOCK_TEST_TEMPLATE_TRACE") != nil {
                    DecoderProgram.printError("decoder: forked by template \(template)")
                }
                #endif
                return Request(message: received.bytes, descriptors: received.takeDescriptors())
            case .parent(let pid, let forked):
                // The drop's descriptors leave the template before the supervisor hears of the child.
                received.descriptors = OwnedDescriptors()
                let pidfd = OwnedDescriptor(forked)
                var reply = [replyVersion]
                withUnsafeBytes(of: pid.littleEndian) { reply += $0 }
                do { try socket.send(reply, passing: [pidfd.descriptor]) } catch { return nil }
            }
        }
    }

    /// Forks, once this process is known to have one thread: a second thread
    /// (which nothing here starts, but a library could) might hold a lock that
    /// would then stay locked in the child, so a template that has one stops.
    /// nil: no child (said on standard error); the template stops and the
    /// supervisor starts the drop's child with posix_spawn.
    private static func forkOnce() -> ForkSide? {
        do {
            let threads = try SiblingFork.threadCount()
            guard threads == 1 else {
                DecoderProgram.printError("decoder template: \(threads) threads; a template forks only while it has one")
                return nil
            }
            return try SiblingFork.fork()
        } catch {
            DecoderProgram.printError("decoder template: \(error)")
            return nil
        }
    }

    /// In the forked child: tied to the supervisor, then the go-ahead, then the
    /// drop, staging and result descriptors in place. nil when no go-ahead comes.
    private static func childStart(_ request: consuming Request) -> ChildStart? {
        // Closed when this returns: those that matter are duplicated onto their places first.
        guard let message = HandOverMessage(decoding: request.message) else { return nil }
        let owned = request.descriptors
        let descriptors = (0..<owned.count).map { owned[$0] }
        do { try Confinement.tieForkedChild() } catch { return nil }
        let go = descriptors[3]
        var byte: UInt8 = 0
        let n = withUnsafeMutableBytes(of: &byte) { buffer in (try? go.read(into: buffer)) ?? 0 }
        guard n == 1, byte == goAhead else { return nil }
        let targets = [Confinement.dropDescriptor, Confinement.stagingDescriptor, Confinement.resultDescriptor]
        do {
            for (descriptor, target) in zip(descriptors, targets) { try descriptor.duplicate(onto: target) }
        } catch {
            return nil
        }
        return ChildStart(arguments: message.arguments, cpuSecondsSpent: CurrentProcess.cpuSecondsSpent(), tiedToSupervisor: true)
    }
}
