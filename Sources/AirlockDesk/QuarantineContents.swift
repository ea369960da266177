import AirlockConfiguration
import AirlockDecoders
import AirlockFormats
import AirlockIntake
import AirlockPolicy
import AirlockQuarantine
import AirlockRoot
import AirlockSystem
import Foundation

/// `airlock quarantine contents ID`: what a quarantined archive holds, as its
/// headers say, listed by a confined decoder child that is given the original
/// read-only and no directory to write into. Nothing is extracted, and the
/// supervisor never parses the archive itself.
public struct QuarantineContents {
    public struct Listing {
        public var format: String
        /// Each entry as the child described it.
        public var entries: [ListedEntry]
        public var entryCount: Int
        public var truncated: Bool
        /// Why the listing stops early (an unreadable header), if it does.
        public var detail: String?
    }

    let desk: QuarantineDesk
    let configuration: Configuration
    let decoderDirectory: String

    public init(layout: RootLayout, configuration: Configuration, decoderDirectory: String) {
        desk = QuarantineDesk(layout: layout, configuration: configuration)
        self.configuration = configuration
        self.decoderDirectory = decoderDirectory
    }

    /// Lists the archive of entry `id`; throws `QuarantineDesk.Refusal` for an
    /// entry that holds no archive to list.
    public func list(_ id: String) throws -> Listing {
        _ = try desk.entry(id)
        let entry = try desk.layout.quarantine.openDirectory(Array(id.utf8))
        defer { entry.close() }
        let drop: FileDescriptor
        do {
            drop = try entry.open(QuarantineDesk.dropFile, [.readOnly, .noFollow, .nonBlocking])
        } catch where UnreadableDrop.applies(to: error) {
            let status = try? entry.status(of: QuarantineDesk.dropFile)
            let what = status.map { "owned by uid \($0.owner), mode \(UnreadableDrop.octal($0.permissions))" } ?? "its producer's"
            throw QuarantineDesk.Refusal("\(id)'s drop (\(what)) cannot be read by this process (\(error.errno)); the service "
                + "reads such drops with CAP_DAC_READ_SEARCH: run this command as root (it acts as the root's owner and keeps "
                + "that capability), or with the capability granted")
        } catch {
            throw QuarantineDesk.Refusal("\(id) holds no drop to list (released, or it was not a regular file)")
        }
        defer { drop.close() }
        guard try drop.status().kind == .regular else {
            throw QuarantineDesk.Refusal("\(id)'s drop is not a regular file; there is nothing to list")
        }
        guard let format = try QuarantineContents.archiveFormat(drop) else {
            throw QuarantineDesk.Refusal("\(id)'s drop is not a ZIP, tar or 7z archive; 'airlock quarantine show \(id)' gives its report")
        }
        let decoder = DecoderProcess(for: format, in: decoderDirectory, timeoutSeconds: configuration.decoderTimeoutSeconds)
        let run = try decoder.run(format.decoderRequest(configuration, mode: .list),
                                  drop: drop, staging: nil, progress: nil)
        guard run.termination == .exited(0), !run.timedOut, case .success(let message) = run.message,
              case .listing(let listed) = message.outcome else {
            throw QuarantineDesk.Refusal("the decoder could not list \(id): it \(run.timedOut ? "ran out of time" : "\(run.termination)")")
        }
        return Listing(format: format.name, entries: listed.headers?.entries ?? [], entryCount: Int(clamping: listed.headers?.count ?? 0),
                       truncated: listed.headers?.truncated ?? false, detail: listed.detail)
    }

    /// The drop's format by its first bytes, when it is one libarchive reads.
    static func archiveFormat(_ drop: FileDescriptor) throws(SystemError) -> DropFormat? {
        var prefix = [UInt8](repeating: 0, count: ArchiveFormat.sniffLength)
        let got = try prefix.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try drop.read(into: raw, at: 0) }
        }.get()
        guard let format = DropFormat.sniff(Array(prefix[0..<got])), case .archive = format else { return nil }
        return format
    }
}
