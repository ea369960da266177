import AirlockEvents
import AirlockPolicy

/// The first judgement of a drop, made on its fstat size before a byte of it is
/// read: the hash, the sniff and the decoder all come after it.
enum DropSize {
    /// `drop-too-large` when `size` is over the policy's limit; nil otherwise.
    static func rejection(_ size: Int64, _ policy: Policy) -> Rejection? {
        guard size > policy.maxDropBytes else { return nil }
        return Rejection(.dropTooLarge, "the drop is \(size) bytes, over the \(policy.maxDropBytes)-byte limit")
    }
}
