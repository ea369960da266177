import AirlockIntake
import AirlockRoot
import AirlockSystem
import AirlockText

/// A drop that has been claimed for longer than a decoder may run: it is being
/// deferred (disk full, permissions, confinement refused) or no daemon is
/// running to finish it.
public struct LongClaim: Sendable, Equatable {
    public let id: String
    /// The drop's name, escaped.
    public let drop: String
    public let ageSeconds: Int64
}

extension Status {
    /// The claims in `layout` older than `seconds`, oldest first, by the claim
    /// directory's modification time (set when the claim was taken).
    static func longClaims(_ layout: RootLayout, olderThan seconds: Int64) throws(SystemError) -> [LongClaim] {
        let now = WallClock.seconds()
        var found: [LongClaim] = []
        try layout.eachClaim { claimed, id in
            guard let status = try? claimed.status(of: id) else { return }
            let age = now - status.modifiedSeconds
            guard age > seconds, let claim = try? Claim.reopen(id: id, in: claimed) else { return }
            OwnedDescriptor(claim.directory).close()
            found.append(LongClaim(id: EscapedName(id).text, drop: EscapedName(claim.dropName).text, ageSeconds: age))
        }
        return found.sorted { $0.ageSeconds > $1.ageSeconds }
    }
}
