#if canImport(Glibc)
import Glibc
#endif

/// The real-time (wall) clock, for ages and timestamps people read; intervals
/// are measured with `monotonicNanoseconds()` instead, which never jumps.
public enum WallClock {
    /// clock_gettime(2) of CLOCK_REALTIME in nanoseconds since the Unix epoch.
    public static func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// clock_gettime(2) of CLOCK_REALTIME: whole seconds since the Unix epoch.
    public static func seconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }

    /// The current second in UTC, broken down by gmtime_r(3).
    public static func utc() -> CalendarTime {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        return CalendarTime(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
                            hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec))
    }

    /// nanosleep(2) for `milliseconds`, sleeping again for what is left when a
    /// signal interrupts it.
    public static func sleep(milliseconds: Int) {
        var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && Errno.current == .interrupted {
            request = remaining
        }
    }
}

/// A moment broken into calendar fields (month 1–12, day 1–31).
public struct CalendarTime: Equatable, Sendable {
    public let year: Int
    public let month: Int
    public let day: Int
    public let hour: Int
    public let minute: Int
    public let second: Int
}

extension FileStatus {
    /// The modification time in whole seconds since the Unix epoch.
    public var modifiedSeconds: Int64 { Int64(modified.tv_sec) }
    /// The status change time (ctime), which no unprivileged user can set, in
    /// nanoseconds since the Unix epoch.
    public var changedNanoseconds: Int64 { Int64(changed.tv_sec) * 1_000_000_000 + Int64(changed.tv_nsec) }
}
