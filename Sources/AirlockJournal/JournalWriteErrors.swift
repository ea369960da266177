import Synchronization

/// Journal appends that failed since the process started: the intake carries
/// on without the record, so the count is the only trace an operator can alert on.
public enum JournalWriteErrors {
    private static let count = Atomic<Int64>(0)

    public static func increment() { count.add(1, ordering: .relaxed) }
    public static var total: Int64 { count.load(ordering: .relaxed) }
}
