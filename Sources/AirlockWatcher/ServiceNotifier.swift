import CSystemd

/// Talks to systemd through sd_notify(3) when started as a Type=notify service;
/// does nothing otherwise (NOTIFY_SOCKET unset).
struct ServiceNotifier {
    /// Half the watchdog interval, when WatchdogSec= is set.
    let watchdogIntervalNanoseconds: UInt64?

    init() {
        var microseconds: UInt64 = 0
        if sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 {
            watchdogIntervalNanoseconds = microseconds * 1000 / 2
        } else {
            watchdogIntervalNanoseconds = nil
        }
    }

    func ready() { _ = sd_notify(0, "READY=1") }
    func stopping() { _ = sd_notify(0, "STOPPING=1") }
    func reloading() { _ = sd_notify(0, "RELOADING=1") }
    func watchdog() { _ = sd_notify(0, "WATCHDOG=1") }

    func status(_ text: String) {
        // STATUS= is one line.
        let line = text.replacingOccurrencesOfNewlines()
        _ = sd_notify(0, "STATUS=" + line)
    }
}

private extension String {
    func replacingOccurrencesOfNewlines() -> String {
        String(map { $0.isNewline ? " " : $0 })
    }
}
