import AirlockEvents
import AirlockPolicy
import AirlockSystem

/// A claimed drop that airlock may not open. The claim directory is airlock's
/// own, so what forbids the open is the drop's mode or owner, which its producer
/// chose: that is a verdict about the drop (quarantined as it is, never read),
/// not a fault of the machine to wait out, which would defer it forever.
package enum UnreadableDrop {
    package static func applies(to error: SystemError) -> Bool {
        error.errno == .permissionDenied || error.errno == .notPermitted
    }

    /// A mode as `ls` and chmod spell it: four octal digits.
    package static func octal(_ permissions: UInt32) -> String {
        let digits = String(permissions & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    static func rejection(_ error: SystemError, _ status: FileStatus) -> Rejection {
        let lacking = (try? Capabilities.current()).map { !$0.holds(Capabilities.dacReadSearch) } ?? false
        return Rejection(.unreadableDrop, "the drop cannot be opened (\(error.errno)): owned by uid \(status.owner), mode \(octal(status.permissions))"
            + (lacking ? "; airlock lacks CAP_DAC_READ_SEARCH, with which it reads every producer's file whatever its mode (the shipped unit grants it)" : ""))
    }
}
