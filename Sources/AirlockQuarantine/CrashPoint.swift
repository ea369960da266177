import AirlockSystem

/// The steps of the outcome protocols (see Settlement.swift and
/// QuarantineSettlement.swift) between which a stop matters. A debug build dies by
/// SIGKILL on reaching the step named by `AIRLOCK_TEST_CRASH_AT`, so a test can stop
/// the process exactly there, start it again and check what recovery made of it.
/// Release builds compile `reach()` to nothing; a drop's bytes cannot select a step.
package enum CrashPoint: String {
    /// The staging directory is in the outbox; the `accepted` record is not written.
    case acceptedRenamed = "accepted-renamed"
    /// The `accepted` record is durable; the claim is still there.
    case acceptedJournalled = "accepted-journalled"
    /// The claim of an accepted drop is half removed (its drop is gone).
    case claimHalfRemoved = "claim-half-removed"
    /// report.json is durable in the claim; the `rejected` record is not written.
    case rejectedReported = "rejected-reported"
    /// The `rejected` record is durable; the claim is not yet in the quarantine.
    case rejectedJournalled = "rejected-journalled"
    /// Recovery wrote a record that was missing and has not finished the claim.
    case settledJournalled = "settled-journalled"
    /// A release's marker names its inbox name; the drop has not moved.
    case releaseMarked = "release-marked"
    /// The released drop is in the inbox; the report's history does not say so yet.
    case releaseMoved = "release-moved"
    /// The report's history says released; the `released` record is not written.
    case releaseNoted = "release-noted"
    /// The `released` record is durable; the marker is still there.
    case releaseJournalled = "release-journalled"
    /// The entry is out of view in state/purging; the `purged` record is not written.
    case purgeHidden = "purge-hidden"
    /// The `purged` record is durable; the entry is not yet removed.
    case purgeJournalled = "purge-journalled"

    package func reach() {
        #if DEBUG
        guard CurrentProcess.environment("AIRLOCK_TEST_CRASH_AT") == rawValue else { return }
        CurrentProcess.kill()
        #endif
    }
}
