/// The bytes of a file as it streams past, in windows that keep enough of the
/// previous chunk for a pattern split between two chunks to be seen whole: each
/// position is visited once, with `lookBehind` bytes before it and `lookAhead`
/// after it (fewer only at the file's ends).
///
/// A chunk is visited where it lies: only the seam with the previous chunk is
/// copied (the carry and the chunk's first bytes), never the whole chunk, which
/// for a large file would be a second copy of every byte.
struct CarryWindow {
    let lookBehind: Int
    let lookAhead: Int
    /// The end of what has streamed past: the visited bytes kept for looking
    /// behind, then those not visited yet (waiting for their look-ahead).
    private var carry: [UInt8] = []
    /// The first position in `carry` not visited yet.
    private var next = 0

    init(lookBehind: Int, lookAhead: Int) {
        self.lookBehind = lookBehind
        self.lookAhead = lookAhead
    }

    /// Adds `chunk` and visits every position that now has its look-ahead.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ visit: (UnsafeRawBufferPointer, Range<Int>) -> Void) {
        let seam = lookBehind + lookAhead
        guard chunk.count > seam else {
            carry.append(contentsOf: chunk)
            visitCarry(upTo: carry.count - lookAhead, visit)
            keepCarry()
            return
        }
        // The seam: the carry's waiting positions and the chunk's first
        // `lookBehind`, whose look-behind is in the carry.
        carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<seam]))
        visitCarry(upTo: carry.count - lookAhead, visit)
        // The rest in place: from here on, every position's look-behind is in the chunk.
        visit(chunk, lookBehind..<(chunk.count - lookAhead))
        carry.removeAll(keepingCapacity: true)
        carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[(chunk.count - seam)...]))
        next = lookBehind
    }

    /// Visits the positions left at the end of the file.
    mutating func finish(_ visit: (UnsafeRawBufferPointer, Range<Int>) -> Void) {
        visitCarry(upTo: carry.count, visit)
    }

    private mutating func visitCarry(upTo end: Int, _ visit: (UnsafeRawBufferPointer, Range<Int>) -> Void) {
        guard end > next else { return }
        carry.withUnsafeBytes { visit($0, next..<end) }
        next = end
    }

    /// Drops what no later position can look behind to.
    private mutating func keepCarry() {
        let dropped = next - min(next, lookBehind)
        if dropped > 0 {
            carry.removeFirst(dropped)
            next -= dropped
        }
    }
}
