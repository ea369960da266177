import AirlockSystem

/// The limits a decoder child puts on itself before it reads a byte of the drop.
public struct DecoderLimits: Sendable, Equatable {
    public var addressSpaceBytes: Int64
    public var cpuSeconds: Int64
    public var openFiles: Int64
    /// One byte over the per-file quota, so an over-quota write fails in the kernel too.
    public var fileSizeBytes: Int64
    /// Whether a mechanism the kernel offers but something refuses stops the child
    /// from decoding (`decoder.confinement: "required"`), or only gets reported.
    public var requiresConfinement: Bool

    public init(addressSpaceBytes: Int64, cpuSeconds: Int64, openFiles: Int64, fileSizeBytes: Int64,
                requiresConfinement: Bool = true) {
        self.addressSpaceBytes = addressSpaceBytes
        self.cpuSeconds = cpuSeconds
        self.openFiles = openFiles
        self.fileSizeBytes = fileSizeBytes
        self.requiresConfinement = requiresConfinement
    }
}

/// What confinement the kernel actually granted a decoder child.
public struct ConfinementReport: Sendable, Equatable {
    /// The Landlock ABI the kernel offers (0: none).
    public var landlockABI: Int32 = 0
    public var landlockState: MechanismState = .notOffered
    public var seccompState: MechanismState = .notOffered
    /// Why something is missing, for the log.
    public var problems: [String] = []

    /// Whether the Landlock ruleset is in force.
    public var landlock: Bool { landlockState == .inForce }
    /// Whether the seccomp filter is in force.
    public var seccomp: Bool { seccompState == .inForce }

    public var isComplete: Bool { landlock && seccomp }

    /// Something the kernel offers was refused: with confinement required, the
    /// child must not decode.
    public var isRefused: Bool { landlockState == .refused || seccompState == .refused }

    public var summary: String {
        "landlock=\(landlock ? "abi\(landlockABI)" : landlockState.rawValue) seccomp=\(seccomp ? "on" : seccompState.rawValue)"
    }
}

/// Confines the current process: the one place the decoder child gives up what
/// it may do, before it reads a byte of the drop.
public enum Confinement {
    /// Descriptors the child inherits on purpose.
    public static let dropDescriptor = FileDescriptor(rawValue: 3)
    public static let stagingDescriptor = FileDescriptor(rawValue: 4)
    public static let resultDescriptor = FileDescriptor(rawValue: 5)

    /// Applies no_new_privs, death-with-parent, no core dumps and resource limits
    /// (after closing every descriptor above the result pipe), then Landlock and
    /// seccomp as far as the kernel offers them.
    ///
    /// - Parameter staging: the only directory the process may write beneath; nil
    ///   for inspection, which may write nowhere.
    /// - Parameter tiedToSupervisor: this process has tied itself to the supervisor
    ///   already (a child forked by a template, before its go-ahead): nothing since
    ///   could have given it a capability back (it has executed nothing) or cleared
    ///   its parent-death signal (only a fork or a change of credentials does), so
    ///   `tieToSupervisor`'s hundred-odd prctl calls are not made a second time.
    /// - Returns: what was granted, and for what is missing whether the kernel
    ///   lacks it or something refused it. The caller decides whether to go on.
    public static func apply(_ limits: DecoderLimits, staging: FileDescriptor?,
                             tiedToSupervisor: Bool = false) throws(SystemError) -> ConfinementReport {
        // Probed first: /proc and /sys are out of reach once Landlock is in force.
        let landlock = ConfinementProbe.landlock()
        let seccompObstacle = ConfinementProbe.seccompObstacle()
        // Landlock and a seccomp filter (loaded without TSYNC) bind the calling
        // thread and what it starts afterwards: a thread already running would
        // read the drop unconfined. A child has one thread here (nothing starts
        // one before this); if it ever has more, both count as refused.
        let threads = Result { () throws(SystemError) in try SiblingFork.threadCount() }
        // What the staging writer creates with the staged modes (within 0755) is
        // then exactly that, whatever umask the child inherited: the audit admits
        // nothing else. Nothing is created but beneath staging, which is private.
        CurrentProcess.setFileCreationMask(0o022)
        try applyLimits(limits, tiedToSupervisor: tiedToSupervisor)
        var report = ConfinementReport()
        report.landlockABI = landlock.abi
        report.landlockState = landlock.obstacle ?? .inForce
        if landlock.obstacle == nil {
            do {
                try LandlockRuleset.restrict(staging: staging, abi: landlock.abi)
            } catch {
                report.landlockState = .refused
                report.problems.append("Landlock ABI \(landlock.abi) refused the ruleset: \(error.errno)")
            }
        } else {
            report.problems.append(landlock.reason)
        }
        if let (state, reason) = seccompObstacle {
            report.seccompState = state
            report.problems.append(reason)
        } else {
            do {
                try Seccomp.applyDecoderFilter()
                report.seccompState = .inForce
            } catch {
                report.seccompState = .refused
                report.problems.append("the seccomp filter was not loaded: \(error.errno)")
            }
        }
        switch threads {
        case .success(1): break
        case .success(let count):
            refuseAll(&report, "\(count - 1) other threads were running when this decoder confined itself; Landlock and seccomp bind only the thread that applies them")
        case .failure(let error):
            refuseAll(&report, "cannot count this decoder's threads before confining it (\(error))")
        }
        return report
    }

    private static func refuseAll(_ report: inout ConfinementReport, _ problem: String) {
        if report.landlockState == .inForce { report.landlockState = .refused }
        if report.seccompState == .inForce { report.seccompState = .refused }
        report.problems.append(problem)
    }

    /// The supervisor's pid, which it passes in the environment under this name.
    public static let supervisorVariable = "AIRLOCK_SUPERVISOR_PID"

    /// Dies as the parent-death signal would have killed us, if the supervisor that
    /// started this child has already gone.
    ///
    /// PR_SET_PDEATHSIG only covers a parent that dies after the call: a supervisor
    /// SIGKILLed between spawning the child and the child's prctl leaves it
    /// reparented and running, and it would decode into a staging directory that the
    /// next supervisor's recovery is removing. Once the signal is set, a parent pid
    /// that is not the supervisor's means that window was hit.
    private static func dieIfOrphaned() {
        var variable = supervisorVariable
        #if DEBUG
        // Test-only: name a supervisor that is not the parent, as an orphan would see it.
        if CurrentProcess.environment("AIRLOCK_TEST_SUPERVISOR_PID") != nil { variable = "AIRLOCK_TEST_SUPERVISOR_PID" }
        #endif
        guard let text = CurrentProcess.environment(variable), let supervisor = Int32(text) else { return }
        if CurrentProcess.parentID != supervisor { CurrentProcess.kill() }
    }

    /// Makes the supervisor's death this process's death (the parent-death
    /// signal, then the check that the supervisor had not already gone), after
    /// giving up every capability.
    ///
    /// Every decoder, template and warm child starts here, before it reads
    /// anything. The supervisor may hold CAP_DAC_READ_SEARCH (it reads producers'
    /// files whatever their mode) and CAP_LEASE; a decoder holds neither, so a
    /// subverted one reads no more than Landlock and the descriptors it was given
    /// allow. Throws (the child then decodes nothing) unless the effective,
    /// permitted, inheritable and ambient sets are empty.
    public static func tieToSupervisor() throws(SystemError) {
        try Capabilities.dropAll()
        try CurrentProcess.setParentDeathSignal(.kill)
        dieIfOrphaned()
    }

    /// `tieToSupervisor` for a child forked by a template: the template gave up
    /// every capability (and as much of the bounding set as it could) before its
    /// first fork, and a fork copies its sets, so one capget checks that none is
    /// held instead of dropping each again (about 120 prctl calls per drop); then
    /// the parent-death signal, which a fork clears, and the orphan check.
    /// Throws (the child then decodes nothing) if a capability is held.
    public static func tieForkedChild() throws(SystemError) {
        guard try Capabilities.noneHeld() else { throw SystemError("capget", nil, .notPermitted) }
        try CurrentProcess.setParentDeathSignal(.kill)
        dieIfOrphaned()
    }

    private static func applyLimits(_ limits: DecoderLimits, tiedToSupervisor: Bool) throws(SystemError) {
        try CurrentProcess.closeDescriptors(from: FileDescriptor(rawValue: resultDescriptor.rawValue + 1))
        try forbidNewPrivileges()
        if !tiedToSupervisor { try tieToSupervisor() }
        // A write past RLIMIT_FSIZE should fail with EFBIG rather than kill us with SIGXFSZ.
        Signal.fileSizeExceeded.ignore()
        try ResourceLimit.coreFileSize.set(0)
        try ResourceLimit.addressSpace.set(limits.addressSpaceBytes)
        try ResourceLimit.cpuSeconds.set(limits.cpuSeconds)
        try ResourceLimit.openFiles.set(limits.openFiles)
        try ResourceLimit.fileSize.set(limits.fileSizeBytes)
        // No new processes (ignored for root, where seccomp does the work).
        try ResourceLimit.processes.set(0)
    }
}
