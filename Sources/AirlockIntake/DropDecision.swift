import AirlockConfiguration
import AirlockDecoders
import AirlockEvents
import AirlockFormats
import AirlockJournal
import AirlockPolicy
import AirlockRoot
import AirlockSystem
import AirlockText
import Dispatch
import Foundation
import Synchronization

/// One claimed drop decided: opened once it is known to be one regular file,
/// checked for size and format from its first bytes, decoded by a confined
/// child into staging, audited against what the child reported and the content
/// rules, and, when accepted, committed to the outbox by `DropSettlement`.
/// Rejections are returned for the settlement to quarantine.
struct DropDecision: Sendable {
    let layout: RootLayout
    let configuration: Configuration
    let decoderDirectory: String
    let children: RunningDecoders?
    let log: Log
    let journal: Journal
    let showsProgress: Bool
    let settlement: DropSettlement

    /// Starts the archive decoder's template ahead of the first drop (most drops
    /// are archives), without waiting for it to load.
    static func prestartArchiveTemplate(_ children: RunningDecoders, configuration: Configuration, decoderDirectory: String) {
        let format = DropFormat.archive(.zip)
        children.templates.prestart(decoder(for: format, configuration, decoderDirectory, children).executable,
                                    startUp: DecoderProcess.startUpArguments(format.decoderRequest(configuration, mode: .decode)),
                                    environment: DecoderProcess.childEnvironment())
    }

    func decoder(for format: DropFormat) -> DecoderProcess {
        Self.decoder(for: format, configuration, decoderDirectory, children)
    }

    /// The decoder program for `format`, its children forked by `children`'s templates.
    private static func decoder(for format: DropFormat, _ configuration: Configuration, _ decoderDirectory: String,
                                _ children: RunningDecoders?) -> DecoderProcess {
        DecoderProcess(for: format, in: decoderDirectory, timeoutSeconds: configuration.decoderTimeoutSeconds, children: children)
    }

    var policy: Policy { configuration.policy }

    private func journalClaimed(_ claim: Claim, _ context: ReportContext) {
        journal.appendLogging(.claimed(.init(context.drop)), log)
    }

    /// A claimed drop opened for reading, or the verdict that ended it first.
    private enum OpenedDrop {
        /// The descriptor, and the inode the name had before it was opened.
        case drop(FileDescriptor, inode: UInt64)
        case ended(DropOutcome.Verdict)
    }

    /// The claimed drop, opened once it is known to be one regular file, or the
    /// verdict that ends it before anything reads it.
    private func openDrop(_ claim: Claim, _ context: inout ReportContext) -> OpenedDrop {
        let before: FileStatus
        do {
            before = try claim.directory.status(of: Claim.dropFile)
        } catch {
            return .ended(.deferred(detail: "\(error)"))
        }
        context.drop.uploader = Uploader(uid: before.owner)
        guard before.kind == .regular, before.linkCount == 1 else {
            journalClaimed(claim, context)
            return .ended(.rejected(notRegular(before)))
        }
        do {
            return .drop(try claim.directory.open(Claim.dropFile, [.readOnly, .noFollow, .nonBlocking]), inode: before.inode)
        } catch where error.errno == .tooManyLinks {
            return .ended(.rejected(Rejection(.notRegularFile, "the drop was replaced by a symbolic link")))
        } catch where UnreadableDrop.applies(to: error) {
            context.drop.size = before.size
            journalClaimed(claim, context)
            return .ended(.rejected(UnreadableDrop.rejection(error, before)))
        } catch {
            return .ended(error.errno.isEnvironmental ? .deferred(detail: "\(error)") : .rejected(Rejection(.notRegularFile, "\(error)")))
        }
    }

    /// Decides and, for an accepted drop, commits. Rejections are returned for the caller to quarantine.
    func decide(_ claim: Claim, _ context: inout ReportContext, _ slot: DecodeSlot) -> DropOutcome.Verdict {
        let drop: FileDescriptor, inode: UInt64
        switch openDrop(claim, &context) {
        case .drop(let opened, let named): (drop, inode) = (opened, named)
        case .ended(let verdict): return verdict
        }
        let ownedDrop = OwnedDescriptor(drop)
        defer { withExtendedLifetime(ownedDrop) {} }
        do {
            let opened = try drop.status()
            guard opened.kind == .regular, opened.linkCount == 1, opened.inode == inode else {
                journalClaimed(claim, context)
                return .rejected(notRegular(opened))
            }
            context.drop.size = opened.size
            if let change = claim.change(since: opened) { journalClaimed(claim, context); return .rejected(change) }
            // Size first (the policy's limit, or the keyed one once the first bytes
            // name the format): nothing reads a drop whose size already rejects it.
            let identified = try DropDecision.identify(drop, size: opened.size, configuration: configuration)
            if case .failure(let rejection) = identified, rejection.reason == .dropTooLarge {
                journalClaimed(claim, context)
                return .rejected(rejection)
            }
            // The hash (for the journal and reports) is computed beside the decoder,
            // on the other core, rather than before it: it reads the whole drop.
            let snapshot = context
            let hashing = HashJob(drop: drop, size: opened.size, limit: policy.maxDropBytes) { [self] sha256 in
                var claimed = snapshot
                claimed.drop.sha256 = sha256
                journalClaimed(claim, claimed)
            }
            // The drop's `claimed` record goes before its terminal one, which
            // the caller appends once this returns.
            defer { context.drop.sha256 = hashing.waitUntilDone() }
            switch identified {
            case .failure(let rejection):
                return .rejected(rejection)
            case .success(let format):
                return try decodeAndCommit(claim, drop: drop, format: format, before: opened, context: &context,
                                           slot: slot, awaitHash: { hashing.wait() })
            }
        } catch {
            return .deferred(detail: "\(error)")
        }
    }

    /// The checks made before any decoder runs: the drop's size, then its format
    /// from its first bytes.
    static func identify(_ drop: FileDescriptor, size: Int64, configuration: Configuration) throws(SystemError) -> Result<DropFormat, Rejection> {
        if let tooLarge = DropSize.rejection(size, configuration.policy) { return .failure(tooLarge) }
        var prefix = [UInt8](repeating: 0, count: ArchiveFormat.sniffLength)
        let got = try prefix.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try drop.read(into: raw, at: 0) }
        }.get()
        var sniffed = DropFormat.sniff(Array(prefix[0..<got]))
        if sniffed == nil && got > 0 { sniffed = try DropFormat.zipBehindPrefix(drop, size: size) }
        if sniffed == nil && got > 0 { sniffed = try DropFormat.isoImage(drop, size: size) }
        guard let format = sniffed else {
            return .failure(Rejection(.unsupportedFormat, got == 0 ? "the drop is empty" : "not a ZIP, tar, compressed tar, 7z or keyed archive"))
        }
        if let refusal = configuration.formats.refusal(format) { return .failure(refusal) }
        if format == .keyed && size > configuration.keyed.maxBytes {
            var rejection = Rejection(.dropTooLarge, "the keyed archive is \(size) bytes, over the \(configuration.keyed.maxBytes)-byte limit")
            rejection.format = format.name
            return .failure(rejection)
        }
        return .success(format)
    }

    private func notRegular(_ status: FileStatus) -> Rejection {
        if status.kind == .regular {
            return Rejection(.notRegularFile, "the drop has \(status.linkCount) hard links")
        }
        return Rejection(.notRegularFile, "the drop is a \(status.kind), not a regular file")
    }

    private func decodeAndCommit(_ claim: Claim, drop: FileDescriptor, format: DropFormat, before: FileStatus,
                                 context: inout ReportContext, slot: DecodeSlot, awaitHash: @escaping @Sendable () -> String?) throws(SystemError) -> DropOutcome.Verdict {
        // Room for what the decoder may write: a keyed archive at most what the render
        // quotas let through; an archive at least its own size. Short of that the
        // drop waits (deferred) rather than failing half-way.
        let written = format == .keyed
            ? policy.renderedBound(dropSize: before.size, keepsOriginal: configuration.keyed.keepOriginal) : before.size
        let needed = written + (1 << 20)
        let available = try layout.staging.availableBytes()
        guard available >= UInt64(needed) else {
            return .deferred(detail: "\(available) bytes free on the root's filesystem, \(needed) needed to decode this drop")
        }
        let staging = try StagingDirectory(in: layout.staging, claim.idBytes)
        let verdict = try decode(claim, drop: drop, format: format, before: before, staging: staging.descriptor,
                                 context: &context, slot: slot, awaitHash: awaitHash)
        try staging.finish(verdict)
        return verdict
    }

    /// Runs the decoder into `staging` and judges what it left; staging's owner
    /// (the caller) removes it unless the drop was committed.
    private func decode(_ claim: Claim, drop: FileDescriptor, format: DropFormat, before: FileStatus, staging: FileDescriptor,
                        context: inout ReportContext, slot: DecodeSlot, awaitHash: @escaping @Sendable () -> String?) throws(SystemError) -> DropOutcome.Verdict {
        let display = showsProgress ? ProgressDisplay(name: claim.dropName) : nil
        defer { display?.finish() }
        // Large files are hashed as the child closes them, and what it writes is
        // synced ahead of the commit as it goes. Both borrow staging's
        // descriptor: they end before it closes.
        let headStart = SyncHeadStart.forStaging(staging, configuration, policy: policy)
        defer { headStart?.close() }
        let early = EarlyDigests(staging: staging, policy: policy)
        defer { early.close() }
        let run = try runDecoder(format, drop: drop, staging: staging, display: display, early: early, headStart: headStart)
        // Asked before anything else waits: the last large file is still being hashed.
        var syncingAll = false
        if case .success(let message) = run.message, case .accepted(let accepted) = message.outcome {
            syncingAll = headStart?.decoderExited(wroteAtLeast: accepted.bytesWritten, files: accepted.files) ?? false
        }
        early.finish()
        context.decoderMaxRSSKiB = run.maxRSSKiB
        DecoderConfinementState.observe(run, required: configuration.decoderConfinementRequired, log: log, state: layout.state)
        let after = try drop.status()
        var verdict = DecoderVerdict.interpret(run, timeoutSeconds: configuration.decoderTimeoutSeconds)
        context.types = DetectedTypes.from(run.message)
        context.classes = DetectedClasses.from(run.message)
        if !after.isUnchanged(comparedTo: before) {
            // Whatever the decoder concluded, it concluded about bytes that are no longer the drop's.
            verdict = .rejected(Rejection(.changedDuringIngest, "the drop changed while it was decoded"))
        }
        // The decoder has read the drop; once the hash has too, nothing does.
        if case .accepted = verdict { DropPages.release(drop, size: before.size, after: awaitHash) }
        switch verdict {
        case .rejected(var rejection):
            rejection.format = format.name
            return .rejected(rejection)
        case .deferred(let detail):
            return .deferred(detail: detail)
        case .accepted(let files, let bytes):
            return try auditAndCommit(claim, staging: staging, format: format, files: files, bytes: bytes,
                                      context: &context, early: early, startsWriteback: !syncingAll, slot: slot, awaitHash: awaitHash)
        }
    }

    /// Checks what an accepting decoder left in staging against what it reported
    /// and the content policy, then writes the manifest and commits to the outbox.
    private func auditAndCommit(_ claim: Claim, staging: FileDescriptor, format: DropFormat, files: Int64, bytes: Int64,
                                context: inout ReportContext, early: EarlyDigests, startsWriteback: Bool, slot: DecodeSlot,
                                awaitHash: @escaping @Sendable () -> String?) throws(SystemError) -> DropOutcome.Verdict {
        let findings: StagingAudit.Findings
        do {
            // The audit also gives each entry its outbox mode and group and hashes each file, in its one walk.
            findings = try StagingAudit(policy: configuration.decoderPolicy, fsyncEach: configuration.sync == .fsync, modes: configuration.outboxModes,
                                        early: early, startsWriteback: startsWriteback).audit(staging)
        } catch let failure as StagingAudit.Failure {
            return .rejected(Rejection(.decoderFailed, "the decoder left something it must not: \(failure.detail)"))
        } catch let error as SystemError {
            throw error
        } catch {
            preconditionFailure("unexpected error \(error)")
        }
        let audit = findings.totals
        guard audit.files == files, audit.bytes == bytes else {
            return .rejected(Rejection(.decoderFailed,
                "the decoder reported \(files) files and \(bytes) bytes, staging holds \(audit.files) and \(audit.bytes)"))
        }
        if let stop = judgeContent(staging, audit: audit, types: context.types, classes: context.classes) { return stop }
        do {
            // The manifest names the drop's hash: wait for it (computed beside the decoder).
            context.drop.sha256 = awaitHash()
            try Manifest.write(into: staging, context.drop, format: format.name, types: context.types, classes: context.classes,
                               files: findings.files, modes: configuration.outboxModes, fsyncEach: configuration.sync == .fsync)
            slot.release()
            let output = try settlement.commit(claim, staging: staging, files: audit.files, bytes: audit.bytes)
            return .accepted(output: output, files: audit.files, bytes: audit.bytes)
        } catch {
            try? claim.directory.removeTree(Claim.commitFile)
            throw error
        }
    }
}
