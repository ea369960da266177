#if canImport(Glibc)
import Glibc
#endif
import CAirlockShims
import Synchronization

extension Errno {
    /// EOPNOTSUPP: for Landlock, built into the kernel but not enabled at boot.
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)
    /// ENOSYS: the kernel has no such call, or a system-call filter answers in its stead.
    public static let noSystemCall = Errno(rawValue: ENOSYS)
}

/// Landlock, the kernel's unprivileged filesystem sandbox (the rulesets are built
/// in C: their structures grow with the ABI, past what the installed headers know).
public enum LandlockRuleset {
    /// landlock_create_ruleset(LANDLOCK_CREATE_RULESET_VERSION): the highest ABI the
    /// kernel offers.
    /// - Throws: EOPNOTSUPP when Landlock is built in but not enabled, ENOSYS when
    ///   the kernel lacks the call (or a filter says so), anything else a filter chose.
    public static func abi() throws(SystemError) -> Int32 {
        let abi = airlock_landlock_abi()
        guard abi > 0 else { throw SystemError("landlock_create_ruleset", nil, Errno.current) }
        return abi
    }

    /// Restricts this process at `abi` (at most 7): read, write, make and remove
    /// beneath `staging` (nothing when nil), no other filesystem access; from ABI 4
    /// no TCP, from ABI 6 no signals or abstract sockets outside the domain.
    public static func restrict(staging: FileDescriptor?, abi: Int32) throws(SystemError) {
        guard airlock_landlock_restrict(staging?.rawValue ?? -1, min(abi, 7)) == 0 else {
            throw SystemError("landlock_restrict_self", nil, Errno.current)
        }
    }

    /// Restricts this process so that it may write, create, rename and remove only
    /// beneath `root` and `extra`, and write to /dev/null; reading and executing
    /// stay as they were.
    /// - Throws: `open` of /dev/null, or `landlock_restrict_self`.
    public static func restrictWrites(beneath root: FileDescriptor, and extra: FileDescriptor?, abi: Int32) throws(SystemError) {
        let devNull = OwnedDescriptor(FileDescriptor(rawValue: try retrying("open", Array("/dev/null".utf8)) {
            open("/dev/null", O_WRONLY | O_CLOEXEC)
        }))
        guard airlock_landlock_restrict_writes(root.rawValue, extra?.rawValue ?? -1, devNull.descriptor.rawValue, min(abi, 7)) == 0 else {
            throw SystemError("landlock_restrict_self", nil, Errno.current)
        }
    }

    /// The kernel's active security modules from securityfs; nil when the list
    /// cannot be read (not mounted, or hidden by the service manager).
    public static func activeSecurityModules() -> [String]? {
        let fd = open("/sys/kernel/security/lsm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let file = OwnedDescriptor(FileDescriptor(rawValue: fd))
        guard let bytes = try? file.descriptor.readAll(limit: 4096) else { return nil }
        return String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == "," || $0 == "\n" }).map(String.init)
    }
}

/// seccomp, the kernel's system-call filter.
public enum Seccomp {
    /// prctl(PR_GET_SECCOMP): this process's mode (0 none, 2 filters in force); nil
    /// when the kernel was built without seccomp (EINVAL).
    /// - Throws: whatever else a system-call filter above us answered.
    public static func mode() throws(SystemError) -> Int32? {
        let mode = airlock_seccomp_mode()
        guard mode < 0 else { return mode }
        let error = Errno.current
        if error == Errno(rawValue: EINVAL) { return nil }
        throw SystemError("prctl(PR_GET_SECCOMP)", nil, error)
    }

    /// seccomp(SECCOMP_GET_ACTION_AVAIL) for the kill-process action, which
    /// libseccomp asks before it loads a filter.
    public static func probe() throws(SystemError) {
        guard airlock_seccomp_syscall_probe() == 0 else { throw SystemError("seccomp", nil, Errno.current) }
    }

    /// Loads the decoder's filter: every call a decoder never needs (sockets, exec,
    /// ptrace, mounts, bpf, keys, …) kills the process with SIGSYS.
    ///
    /// The programs are the ones libseccomp generates, compiled once per process
    /// (`compileDecoderFilter`), so that a child forked by a template loads one
    /// with a single system call (perf, 2,000 keyed drops: libseccomp's building
    /// and generating were 2.4% of all CPU). In a child whose template has loaded
    /// the denied calls for it (`applyTemplateFilter`), only the rules on new
    /// processes are added: the kernel prepares each filter it attaches for every
    /// system call number, which for the whole filter was another 4% of all CPU.
    /// Where a program cannot be compiled, libseccomp builds and loads the whole
    /// filter here, as it always did.
    public static func applyDecoderFilter() throws(SystemError) {
        let result: Int32
        if templateFilter.load(ordering: .relaxed) >= 0, let program = newProcessesProgram {
            result = airlock_seccomp_load(program.instructions, program.count)
        } else if let program = wholeProgram {
            result = airlock_seccomp_load(program.instructions, program.count)
        } else {
            result = airlock_seccomp_apply()
        }
        guard result == 0 else { throw SystemError("seccomp_load", nil, Errno(rawValue: -result)) }
    }

    /// Compiles the decoder's filter now, if it is not yet, so that children
    /// forked later inherit it compiled.
    public static func compileDecoderFilter() {
        _ = wholeProgram
        _ = newProcessesProgram
    }

    /// In a decoder template, before its first fork: loads the part of the
    /// decoder's filter that the template itself can live with, the denied calls
    /// (it must still fork), after setting no_new_privs. Each child it forks
    /// inherits that part and adds the rest in `applyDecoderFilter`, so the two
    /// in force in a child are the whole filter, exactly: the kernel answers each
    /// call with the strictest action of every filter. A template whose part
    /// could not be loaded says nothing: its children load the whole filter.
    /// - Throws: `prctl(PR_SET_NO_NEW_PRIVS)`, `seccomp_load`, or ENOMEM when the
    ///   program could not be compiled.
    public static func applyTemplateFilter() throws(SystemError) {
        guard newProcessesProgram != nil, let program = deniedCallsProgram else { throw SystemError("seccomp_export_bpf", nil, Errno(rawValue: ENOMEM)) }
        let before = try mode() ?? 0
        try forbidNewPrivileges()
        let result = airlock_seccomp_load(program.instructions, program.count)
        guard result == 0 else { throw SystemError("seccomp_load", nil, Errno(rawValue: -result)) }
        templateFilter.store(before, ordering: .relaxed)
    }

    /// The seccomp mode this process would be in without its template's part of
    /// the decoder's filter (`mode()`): what a filter above airlock, such as a
    /// service manager's, put in force.
    public static func modeFromOutside() throws(SystemError) -> Int32? {
        let recorded = templateFilter.load(ordering: .relaxed)
        return recorded >= 0 ? recorded : try mode()
    }

    /// -1 while no template part of the filter is in force (set, once, in a
    /// template, and inherited by its children with its memory); else the mode
    /// the process was in before it.
    private static let templateFilter = Atomic<Int32>(-1)

    /// A filter program as libseccomp generated it (instructions it allocated,
    /// never freed: it lives as long as the process, like a template's loaded data).
    private struct Program: @unchecked Sendable {
        let instructions: OpaquePointer
        let count: UInt16

        /// `parts` (AIRLOCK_FILTER_…) compiled; nil when libseccomp could not export them.
        static func compile(_ parts: Int32) -> Program? {
            var instructions: OpaquePointer?
            var count: UInt16 = 0
            guard airlock_seccomp_compile(parts, &instructions, &count) == 0, let instructions else { return nil }
            return Program(instructions: instructions, count: count)
        }
    }

    private static let wholeProgram = Program.compile(AIRLOCK_FILTER_WHOLE)
    private static let deniedCallsProgram = Program.compile(AIRLOCK_FILTER_DENIED_CALLS)
    private static let newProcessesProgram = Program.compile(AIRLOCK_FILTER_NEW_PROCESSES)
}
