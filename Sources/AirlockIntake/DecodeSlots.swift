import AirlockEvents
import Synchronization

/// How many drops decode at once, counted apart from how many are in flight.
///
/// A worker holds a slot while it decides a drop: its decoder child, the audit
/// of staging, the content checks and the manifest. It gives the slot back
/// before the waits that make the outcome durable: the commit's syncfs, the
/// outbox's sync after the rename (a syncfs too, or an fsync with
/// `commit.sync: "fsync"`) and the journal's fsync (or, for a rejection, the
/// report's and the quarantine's). On a journaled filesystem (ext4 as mkfs
/// makes it, XFS) each of those waits for a journal commit, milliseconds in
/// which the worker computes nothing. Without slots a drop waiting there kept
/// another from decoding, and with one worker per decoder few drops waited at
/// once, so most paid for their three journal commits alone. With more workers than slots
/// the drops that wait share their syncs (`SyncGroup`, `DirectorySyncs`,
/// `JournalBatch`), and the decoders, with the CPU and memory they take, stay
/// at `watch.workers`.
///
/// Nothing about durability changes: each drop still renames only after a
/// sync that started after its own writes, and appends its record only after
/// its rename is durable.
public final class DecodeSlots: Sendable {
    private let free: Monitor<Int>

    /// `count` drops may decode at once.
    package init(_ count: Int) {
        precondition(count >= 1, "a decoder slot count of \(count)")
        free = Monitor(count)
    }

    /// Waits for a free slot and takes it. Taking one ends no other wait, so it wakes nobody.
    package func take() -> DecodeSlot {
        free.withLock(when: { $0 > 0 }, waking: .none) { free, _ in free -= 1 }
        return DecodeSlot(self)
    }

    /// A slot given back ends one wait at most: one waiter is woken to take it.
    fileprivate func give() {
        free.withLock(waking: .one) { $0 += 1 }
    }

    /// Slots free now (tests).
    package var available: Int {
        free.read { $0 }
    }
}

/// One taken slot, given back exactly once: by the first `release()`, early,
/// once the drop's decoding is over, or by the caller that took it when the
/// drop's decision ends another way.
package final class DecodeSlot: Sendable {
    private let slots: DecodeSlots
    private let held = Atomic(true)

    fileprivate init(_ slots: DecodeSlots) {
        self.slots = slots
    }

    package func release() {
        if held.exchange(false, ordering: .acquiringAndReleasing) { slots.give() }
    }
}
