import AirlockSystem

/// Where one confinement mechanism stands for this process.
public enum MechanismState: String, Sendable, Equatable {
    /// Applied and in force.
    case inForce = "in-force"
    /// The kernel does not have it (not built in, or switched off at boot):
    /// nothing here could apply it.
    case notOffered = "not-offered"
    /// The kernel has it, but something refused it to us (a service manager's
    /// system-call filter, a missing permission): the kind of failure an
    /// operator can fix, and the one decoding must not go on without.
    case refused
}

/// Tells "the kernel does not offer Landlock or seccomp" from "something refused
/// it", before either is applied (reading /proc and /sys is impossible after).
public enum ConfinementProbe {
    /// What the kernel says about Landlock: the ABI it offers (`obstacle` nil), or
    /// why there is none.
    public struct Landlock: Sendable, Equatable {
        public var abi: Int32
        public var obstacle: MechanismState?
        public var reason: String
    }

    /// landlock_create_ruleset(LANDLOCK_CREATE_RULESET_VERSION) answers with the ABI,
    /// EOPNOTSUPP when Landlock is built in but not enabled at boot, and ENOSYS
    /// when the kernel lacks the call; anything else, or ENOSYS while a seccomp
    /// filter is in force and the kernel lists Landlock among its LSMs (or the
    /// list cannot be read), is a refusal: a filter answers in the kernel's stead.
    public static func landlock() -> Landlock {
        let errno: Errno
        do {
            return Landlock(abi: try LandlockRuleset.abi(), obstacle: nil, reason: "")
        } catch {
            errno = error.errno
        }
        switch errno {
        case .notSupported:
            return Landlock(abi: 0, obstacle: .notOffered,
                            reason: "Landlock is built into this kernel but not enabled at boot (add landlock to the lsm= kernel parameter)")
        case .noSystemCall:
            // A filter above airlock, not the part of the decoder's own filter its template loaded.
            guard (try? Seccomp.modeFromOutside()) == 2 else {
                return Landlock(abi: 0, obstacle: .notOffered, reason: "this kernel has no Landlock (landlock_create_ruleset: ENOSYS)")
            }
            switch LandlockRuleset.activeSecurityModules()?.contains("landlock") {
            case false?:
                return Landlock(abi: 0, obstacle: .notOffered, reason: "this kernel has no Landlock (not among its security modules)")
            case true?:
                return Landlock(abi: 0, obstacle: .refused,
                                reason: "a system-call filter answers landlock_create_ruleset with ENOSYS although the kernel has Landlock; allow landlock_create_ruleset, landlock_add_rule and landlock_restrict_self")
            case nil:
                return Landlock(abi: 0, obstacle: .refused,
                                reason: "landlock_create_ruleset: ENOSYS under a seccomp filter, and the kernel's security modules cannot be read to tell whether it has Landlock; allow landlock_create_ruleset, landlock_add_rule and landlock_restrict_self, or set decoder.confinement to \"best-effort\" if it has none")
            }
        default:
            return Landlock(abi: 0, obstacle: .refused,
                            reason: "landlock_create_ruleset refused: \(errno) (a system-call filter such as systemd's SystemCallFilter= must allow landlock_create_ruleset, landlock_add_rule and landlock_restrict_self)")
        }
    }

    /// Whether the kernel offers seccomp filters and the seccomp call is ours to make:
    /// nil when it is, else the state and why.
    public static func seccompObstacle() -> (state: MechanismState, reason: String)? {
        do {
            guard try Seccomp.mode() != nil else {
                return (.notOffered, "this kernel has no seccomp (prctl(PR_GET_SECCOMP): EINVAL)")
            }
        } catch {
            return (.refused, "prctl(PR_GET_SECCOMP) refused: \(error.errno)")
        }
        do {
            try Seccomp.probe()
        } catch {
            return (.refused, "the seccomp system call is refused: \(error.errno) (a system-call filter such as systemd's SystemCallFilter= must allow seccomp)")
        }
        return nil
    }
}
