import AirlockConfiguration
import AirlockJournal
import AirlockPolicy
import AirlockRoot
import AirlockSystem
import AirlockText
import Foundation

/// The operator's side of the quarantine: list, show, release, purge. Safe while a
/// daemon runs: the daemon only ever adds entries (by renaming a whole claim into
/// place) and never touches an existing one.
public struct QuarantineDesk {
    public struct Entry {
        public let id: String
        public let report: RejectionReport
        /// Whether the original is still there (it is gone once released).
        public let holdsDrop: Bool
        /// The bytes of the files the entry holds (the original and the report).
        public var heldBytes: Int64 = 0

        public var decidedAt: String { report.decided_at }
        public var reason: String { report.reason }
        public var drop: String { report.drop }
        public var size: Int64? { report.dropSize }
        public var entry: String? { report.entry }
        public var released: Bool { !holdsDrop || report.releasedAt != nil }
        public var history: [RejectionReport.HistoryEvent] { report.history ?? [] }

        /// When the verdict was given.
        public var date: Date? {
            try? Date(decidedAt, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
    }

    /// Why an operator's request cannot be done; exit status 65.
    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
        package init(_ description: String) { self.description = description }
    }

    static let purgingDirectory: [UInt8] = Array("purging".utf8)
    static let reportFile: [UInt8] = Array("report.json".utf8)
    package static let dropFile: [UInt8] = Array("drop".utf8)

    package let layout: RootLayout
    let journal: Journal

    public init(layout: RootLayout, configuration: Configuration) {
        self.layout = layout
        self.journal = Journal(layout, configuration)
    }

    package init(layout: RootLayout, journal: Journal) {
        self.layout = layout
        self.journal = journal
    }

    /// An id as airlock makes them: `YYYYMMDDTHHMMSSZ-xxxxxxxx`.
    public static func isWellFormed(_ id: String) -> Bool {
        isWellFormed(bytes: Array(id.utf8))
    }

    static func isWellFormed(bytes: [UInt8]) -> Bool {
        guard bytes.count == 25, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z"), bytes[16] == UInt8(ascii: "-") else { return false }
        let digit = { (byte: UInt8) in (0x30...0x39).contains(byte) }
        return bytes[0..<8].allSatisfy(digit) && bytes[9..<15].allSatisfy(digit)
            && bytes[17...].allSatisfy { digit($0) || (0x61...0x66).contains($0) }
    }

    /// Every entry, newest first.
    public func entries() throws(SystemError) -> [Entry] {
        var result: [Entry] = []
        for name in try layout.quarantine.entryNames() {
            let id = String(decoding: name, as: UTF8.self)
            guard QuarantineDesk.isWellFormed(id), let entry = try? load(id) else { continue }
            result.append(entry)
        }
        return result.sorted { ($0.decidedAt, $0.id) > ($1.decidedAt, $1.id) }
    }

    /// One entry; a malformed or unknown id is a refusal.
    public func entry(_ id: String) throws -> Entry {
        guard QuarantineDesk.isWellFormed(id) else {
            throw Refusal("\"\(EscapedName(Array(id.utf8)))\" is not a quarantine id (they look like 20261129T112331Z-3a1b51fc)")
        }
        do {
            return try load(id)
        } catch let error as SystemError where error.errno == .noEntry {
            throw Refusal("no quarantine entry \(id)")
        }
    }

    func load(_ id: String) throws -> Entry {
        let directory = try layout.quarantine.openDirectory(Array(id.utf8))
        defer { directory.close() }
        let bytes = try directory.open(QuarantineDesk.reportFile, [.readOnly, .noFollow]).closeAfter { (fd) throws(SystemError) in
            try fd.readAll(limit: 4 << 20)
        }
        let report: RejectionReport
        do {
            report = try RejectionReport.decode(bytes)
        } catch {
            throw Refusal("the report of \(id) is not a whole report: \(error)")
        }
        let drop = try? directory.status(of: QuarantineDesk.dropFile)
        var entry = Entry(id: id, report: report, holdsDrop: drop != nil)
        for file in (try? directory.entryNames()) ?? [] {
            if let status = try? directory.status(of: file), status.kind == .regular { entry.heldBytes += status.size }
        }
        return entry
    }

    /// Sends the original back through intake: renamed atomically into the inbox
    /// under its name (or `name-2.ext`, …, when taken), recorded in the report's
    /// history and the journal. Releasing twice is refused. The steps and what a
    /// stop between them leaves are in QuarantineSettlement.swift.
    @discardableResult
    public func release(_ id: String, by analyst: String? = nil, note: String? = nil) throws -> [UInt8] {
        let lock = try holdDesk()
        defer { lock.close() }
        try recoverHoldingDesk()
        let entry = try self.entry(id)
        if entry.released {
            let when = entry.report.releasedAt
            throw Refusal("\(id) was already released\(when.map { " at \($0)" } ?? "")")
        }
        guard let name = [UInt8](hex: entry.report.drop_hex), !name.isEmpty,
              !name.contains(0), !name.contains(UInt8(ascii: "/")) else {
            throw Refusal("the report of \(id) does not record the drop's name")
        }
        guard let inbox = try layout.openInbox() else { throw Refusal("the inbox is missing") }
        defer { inbox.close() }
        guard let released = try moveToInbox(id, inbox: inbox, name, by: analyst, note: note) else {
            throw Refusal("no free name for \(EscapedName(name)) in the inbox")
        }
        return released
    }

    /// `name`, then `stem-2.ext`, `stem-3.ext`, … (the suffix kept so the outbox name follows).
    static func inboxCandidates(_ name: [UInt8]) -> [[UInt8]] {
        // Each short enough for a directory entry, numbered as outbox names are.
        let (stem, suffix) = NameCandidates.split(name)
        return [name] + NameCandidates.candidates(stem: stem, suffix: suffix).dropFirst()
    }

    func writeReport(_ report: RejectionReport, in directory: FileDescriptor) throws(SystemError) {
        let data: Data
        do {
            data = try report.encoded()
        } catch {
            preconditionFailure("a report always encodes: \(error)")
        }
        try directory.replaceAtomically(QuarantineDesk.reportFile, with: Array(data),
                                        temporary: Array("report.json.tmp".utf8), .init(mode: 0o600))
    }

    /// Removes entries: each is first renamed out of view into state/purging (so a
    /// reader never sees half an entry), recorded in the journal, then deleted.
    public func purge(_ entries: [Entry], note: String? = nil, by analyst: String? = nil) throws(SystemError) {
        let lock = try holdDesk()
        defer { lock.close() }
        try recoverHoldingDesk()
        let purging = try openPurging()
        defer { purging.close() }
        for entry in entries {
            try purge(Array(entry.id.utf8), into: purging, note: note, by: analyst)
        }
    }
}

/// `30s`, `15m`, `12h`, `7d`, `2w` as seconds, at most `maxSeconds`.
public enum DurationText {
    /// 36500 days: a hundred years, longer than anything is kept.
    public static let maxSeconds: Int64 = 36_500 * 86_400
    public static let maxText = "36500d"

    /// nil for anything but digits and one unit, or a duration over `maxSeconds`.
    public static func seconds(_ text: String) -> Int64? {
        let digits = text.utf8.dropLast()
        guard let unit = text.last, !digits.isEmpty, digits.count <= 18,
              digits.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int64(String(decoding: digits, as: UTF8.self)) else { return nil }
        let scale: Int64
        switch unit {
        case "s": scale = 1
        case "m": scale = 60
        case "h": scale = 3600
        case "d": scale = 86400
        case "w": scale = 604_800
        default: return nil
        }
        let (seconds, overflow) = value.multipliedReportingOverflow(by: scale)
        return overflow || seconds > maxSeconds ? nil : seconds
    }
}
