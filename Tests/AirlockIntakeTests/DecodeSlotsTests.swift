import AirlockConfiguration
import AirlockIntake
import AirlockTestSupport
import Foundation
import Synchronization
import Testing

@Suite("Decoder slots: no more drops decode at once than there are slots, however many workers wait")
struct DecodeSlotsTests {
    @Test("eight threads through two slots: never more than two hold one, and every thread gets one")
    func boundedHolders() {
        let slots = DecodeSlots(2)
        let holding = Mutex((now: 0, most: 0, served: 0))
        let threads = 8, rounds = 20
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            // Threads of their own, as the workers are: dispatch may run these one after another.
            Thread {
                for _ in 0..<rounds {
                    let slot = slots.take()
                    holding.withLock { $0.now += 1; $0.most = max($0.most, $0.now); $0.served += 1 }
                    usleep(200)
                    holding.withLock { $0.now -= 1 }
                    slot.release()
                }
                done.leave()
            }.start()
        }
        done.wait()
        let seen = holding.withLock { $0 }
        expectEqual(seen.most, 2, "at most two at once, and the two were used together: \(seen.most)")
        expectEqual(seen.served, threads * rounds)
        expectEqual(slots.available, 2)
    }

    @Test("a slot released twice (early, then by its taker) is given back once")
    func releaseIsIdempotent() {
        let slots = DecodeSlots(1)
        let slot = slots.take()
        expectEqual(slots.available, 0)
        slot.release()
        slot.release()
        expectEqual(slots.available, 1)
    }

    @Test("a worker waiting for a slot goes on once a holder releases it, not before")
    func waiterProceedsOnRelease() {
        let slots = DecodeSlots(1)
        let held = slots.take()
        let taken = Atomic(false)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let slot = slots.take()
            taken.store(true, ordering: .sequentiallyConsistent)
            slot.release()
            done.signal()
        }.start()
        usleep(50_000)
        let early = taken.load(ordering: .sequentiallyConsistent)
        expect(!early, "took a slot while none was free")
        held.release()
        expectEqual(done.wait(timeout: .now() + 10), .success)
        let late = taken.load(ordering: .sequentiallyConsistent)
        expect(late)
    }

    @Test("worker threads: one when one decoder is asked for, more than decoders otherwise")
    func workerThreads() {
        expectEqual(Configuration.workerThreads(decoding: 1), 1)
        expect(Configuration.workerThreads(decoding: 4) > 4)
    }
}
