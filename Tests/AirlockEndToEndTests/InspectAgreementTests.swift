import Foundation
import Testing

/// `inspect` decodes without staging and without the supervisor's audit; `run`
/// with both. Every committed archive must get the same verdict from each.
@Suite("inspect reaches run's verdict on every committed archive")
struct InspectAgreementTests {
    @Test("inspect gives the manifest's verdict and reason, under the case's policy", arguments: FixtureCase.all + FixtureCase.compatibility)
    func agrees(_ item: FixtureCase) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(policy: item.policy)
        let result = try airlock(["inspect", item.fixture.path, "--root", sandbox.root.path])
        let event = try #require(result.events.first)
        #expect(event.verdict?.rawValue == item.verdict, "\(event) \(result.stderr)")
        #expect(event.reason == item.reason, "\(event)")
        #expect(result.status == (item.verdict == "accepted" ? 0 : 65), "\(result.stderr)")
        try sandbox.expectInvariants()
        #expect(try sandbox.listing(sandbox.outbox) == [] && sandbox.listing(sandbox.quarantine) == [], "inspect wrote something")
    }
}
