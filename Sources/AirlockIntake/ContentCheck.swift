import AirlockConfiguration
import AirlockEvents
import AirlockPolicy
import AirlockSystem
import AirlockText
import Foundation

/// The types a decoder child detected, as its verdict carries them: escaped entry
/// name to MIME type. Believed only when well-formed.
public enum DetectedTypes {
    /// The pairs, sorted by entry; nil when the verdict has none, or a malformed list.
    public static func parse(_ output: [UInt8]) -> [(entry: String, type: String)]? {
        from(VerdictMessage.read(output))
    }

    /// The same, from a verdict already decoded.
    static func from(_ read: Result<VerdictMessage, VerdictMessage.ReadFailure>) -> [(entry: String, type: String)]? {
        guard case .success(let message) = read, let types = message.types else { return nil }
        var pairs: [(entry: String, type: String)] = []
        for detected in types {
            guard MediaType.isWellFormed(detected.type), !detected.entry.isEmpty else { return nil }
            pairs.append((detected.entry, detected.type))
        }
        // The message keeps them sorted by entry.
        return pairs
    }
}

/// The content classes a decoder child gave the files it wrote: only those
/// with a class are listed.
public enum DetectedClasses {
    /// nil when the verdict has none (a child that did not classify).
    static func from(_ read: Result<VerdictMessage, VerdictMessage.ReadFailure>) -> [ClassifiedEntry]? {
        guard case .success(let message) = read else { return nil }
        return message.classes
    }
}

extension Configuration {
    /// The content rules' verdict on an accepted decoder run's classes and
    /// types, as `run` and `inspect` both reach it; nil when they pass. Classes
    /// are judged first: they need no libmagic and say more.
    func contentRejection(files: Int64, types: [(entry: String, type: String)]?, classes: [ClassifiedEntry]?) -> Rejection? {
        guard let classes, classes.count <= files else {
            return Rejection(.decoderFailed, "the decoder gave no content classes for its \(files) files")
        }
        if let violation = content.policy.judge(classes: classes) {
            return Rejection(violation.reason, violation.detail, entry: violation.entry.map { String(decoding: $0, as: UTF8.self) })
        }
        guard content.runsLibmagic else { return nil }
        guard let types, types.count == files else {
            return Rejection(.decoderFailed, "the decoder named the types of \(types?.count ?? 0) of \(files) files")
        }
        guard let violation = content.policy.judge(types) else { return nil }
        // The entry is the escaped name the decoder reported, so it is text already.
        return Rejection(violation.reason, violation.detail, entry: violation.entry.map { String(decoding: $0, as: UTF8.self) })
    }
}

extension DropDecision {
    /// The content rules and the virus scan, on staging that passed its audit:
    /// nil when the drop may be committed, otherwise the verdict (staging's owner
    /// then removes it). Run before the commit so that nothing half-judged reaches the outbox.
    func judgeContent(_ staging: FileDescriptor, audit: StagingAudit.Totals,
                      types: [(entry: String, type: String)]?, classes: [ClassifiedEntry]?) -> DropOutcome.Verdict? {
        guard let verdict = contentVerdict(staging, files: audit.files, types: types, classes: classes) else { return nil }
        if case .rejected(var rejection) = verdict {
            rejection.bytesWritten = audit.bytes
            return .rejected(rejection)
        }
        return verdict
    }

    private func contentVerdict(_ staging: FileDescriptor, files: Int64, types: [(entry: String, type: String)]?,
                                classes: [ClassifiedEntry]?) -> DropOutcome.Verdict? {
        if let rejection = configuration.contentRejection(files: files, types: types, classes: classes) { return .rejected(rejection) }
        guard let client = configuration.scan.client else { return nil }
        let result: StagingScan.Result
        do {
            result = try StagingScan(client: client).scan(staging)
        } catch {
            if ScanHealth.shared.record(up: false) { log.warning("virus scanning is down: \(error); drops wait until clamd answers") }
            return .deferred(detail: "virus scanning is down: \(error)")
        }
        if ScanHealth.shared.record(up: true) { log.info("virus scanning is back: clamd at \(client.socketPath) answers") }
        if case .found(let entry, let signature) = result {
            return .rejected(Rejection(.malwareFound, "clamd found \(signature) in \"\(EscapedName(entry).text)\"", entry: EscapedName(entry).text))
        }
        return nil
    }
}

/// Has clamd scan every file beneath a staging directory, walking it from its
/// descriptor in name order, and stops at the first detection, so the same tree
/// always gets the same answer. The staging audit has bounded the tree's depth
/// and size before the walk starts, and skips nothing: an unscanned file would
/// be an accepted one.
struct StagingScan {
    let client: ClamdClient

    enum Result: Equatable {
        case clean
        case found(entry: [UInt8], signature: String)
    }

    enum Failure: Error, CustomStringConvertible {
        case clamd(ClamdFailure)
        case system(SystemError)
        var description: String {
            switch self {
            case .clamd(let failure): return failure.description
            case .system(let error): return "reading staging for the scan: \(error)"
            }
        }
    }

    func scan(_ staging: FileDescriptor) throws(Failure) -> Result {
        try visit(staging, path: [])
    }

    private func visit(_ directory: FileDescriptor, path: [UInt8]) throws(Failure) -> Result {
        let names: [[UInt8]]
        do { names = try directory.entryNames() } catch { throw .system(error) }
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let child = path.isEmpty ? name : path + [UInt8(ascii: "/")] + name
            let result: Result
            do {
                let status = try directory.status(of: name)
                if status.kind == .directory {
                    let sub = OwnedDescriptor(try directory.openDirectory(name))
                    result = try visit(sub.descriptor, path: child)
                } else {
                    let file = OwnedDescriptor(try directory.open(forReading: name, [.readOnly, .noFollow, .nonBlocking]))
                    result = try scanFile(file.descriptor, child)
                }
            } catch let error as Failure {
                throw error
            } catch let error as SystemError {
                throw .system(error)
            } catch {
                preconditionFailure("unexpected error \(error)")
            }
            if result != .clean { return result }
        }
        return .clean
    }

    private func scanFile(_ file: FileDescriptor, _ path: [UInt8]) throws(Failure) -> Result {
        do {
            switch try client.scan(file) {
            case .clean: return .clean
            case .found(let signature): return .found(entry: path, signature: signature)
            }
        } catch {
            throw .clamd(error)
        }
    }
}
