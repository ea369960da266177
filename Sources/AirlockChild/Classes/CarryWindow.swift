/// The bytes of a file as it streams past, in windows that keep enough of the
/// previous chunk for a pattern split between two chunks to be seen whole: each
/// position is visited once, with `lookBehind` bytes before it and `lookAhead`
/// after it (fewer only at the file's ends).
struct CarryWindow {
    let lookBehind: Int
    let lookAhead: Int
    private var buffer: [UInt8] = []
    /// The first position in `buffer` not visited yet.
    private var next = 0

    init(lookBehind: Int, lookAhead: Int) {
        self.lookBehind = lookBehind
        self.lookAhead = lookAhead
    }

    /// Adds `chunk` and visits every position that now has its look-ahead.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ visit: (UnsafeRawBufferPointer, Range<Int>) -> Void) {
        buffer.append(contentsOf: chunk)
        let end = buffer.count - lookAhead
        if end > next {
            buffer.withUnsafeBytes { visit($0, next..<end) }
            next = end
        }
        let keep = min(buffer.count, lookBehind + buffer.count - next)
        let dropped = buffer.count - keep
        if dropped > 0 {
            buffer.removeFirst(dropped)
            next -= dropped
        }
    }

    /// Visits the positions left at the end of the file.
    mutating func finish(_ visit: (UnsafeRawBufferPointer, Range<Int>) -> Void) {
        if next < buffer.count { buffer.withUnsafeBytes { visit($0, next..<buffer.count) } }
        next = buffer.count
    }
}
