import AirlockSystem

extension CommandRunner {
    /// What the intake's process sets before anything else: no new privileges,
    /// no capability passed on, SIGIO ignored. The exit status when it cannot.
    static func prepareSupervisor() -> Int32? {
        // The supervisor needs no privilege it does not start with; nothing it or a
        // decoder executes may gain one.
        do {
            try forbidNewPrivileges()
        } catch {
            log.error("\(error)")
            return ExitStatus.ioError
        }
        // What the supervisor holds (CAP_LEASE, CAP_DAC_READ_SEARCH) stays its own:
        // no program it starts inherits a capability, and each decoder drops
        // whatever else it holds before it reads a byte.
        do {
            try Capabilities.stopPassingOn()
        } catch {
            log.error("cannot clear the capabilities decoders would inherit (\(error)); a system-call filter must allow "
                      + "capset, as the shipped airlock.service does")
            return ExitStatus.ioError
        }
        // A read lease the intake holds (on a drop while the watcher checks it, on a
        // decoder's file while it is hashed) is broken with SIGIO, whose default
        // action would end the process; the lease is checked instead.
        Signal.io.ignore()
        return nil
    }
}
