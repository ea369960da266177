import AirlockConfiguration

extension Daemon {
    /// Worker threads: more than decoders, so that drops waiting on their syncs
    /// share them while others decode (see DecodeSlots).
    var workerThreads: Int { Configuration.workerThreads(decoding: configuration.workerCount) }

    /// Starts the workers missing; a host out of tasks refuses threads, which are
    /// asked for again every 5 seconds (said once until all run).
    func startWorkers(now: UInt64) {
        let wanted = workerThreads - pool.workerCount
        guard wanted > 0 else { return }
        if pool.start(wanted) < wanted {
            if !workersShort { log.warning("only \(pool.workerCount) of \(workerThreads) worker threads run: the host refuses threads (out of tasks); asking again every 5 s") }
            workersShort = true
            nextWorkerStart = now + 5_000_000_000
        } else if workersShort {
            log.info("all \(workerThreads) worker threads run")
            workersShort = false
        }
    }
}
