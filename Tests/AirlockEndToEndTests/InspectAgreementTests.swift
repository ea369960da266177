import AirlockTestSupport
import Foundation
import Testing

/// `inspect` decodes without staging and without the supervisor's audit; `run`
/// with both. Every committed archive must get the same verdict from each.
@Suite("inspect reaches run's verdict on every committed archive")
struct InspectAgreementTests {
    /// One root per policy the manifests name (`inspect` reads only its
    /// configuration, and must write nothing to it): an `init` per policy rather
    /// than per case. Every case is still inspected by its own `airlock inspect`,
    /// and every issue names the case.
    @Test("inspect gives the manifest's verdict and reason, under the case's policy",
          arguments: PolicyBatch.of(FixtureCase.all + FixtureCase.compatibility, policy: \.policy))
    func agrees(_ batch: PolicyBatch<FixtureCase>) throws {
        let items = batch.cases
        let sandbox = try Sandbox()
        try sandbox.initialise(policy: batch.policy)
        for item in items {
            let result = try airlock(["inspect", item.fixture.path, "--root", sandbox.root.path])
            guard let event = result.events.first else {
                Issue.record("\(item.file): no event: \(result.stderr)")
                continue
            }
            expectEqual(event.verdict?.rawValue, item.verdict, "\(item.file): \(event) \(result.stderr)")
            expectEqual(event.reason, item.reason, "\(item.file): \(event)")
            expectEqual(result.status, (item.verdict == "accepted" ? 0 : 65), "\(item.file): \(result.stderr)")
            try sandbox.expectInvariants()
            try expect(sandbox.listing(sandbox.outbox) == [] && sandbox.listing(sandbox.quarantine) == [],
                    "\(item.file): inspect wrote something")
        }
    }
}
