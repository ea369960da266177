import AirlockChild
import AirlockPolicy
import AirlockSystem
import CLzma

/// A 7z archive's header, read by airlock itself beside libarchive, for what
/// 7-Zip reads otherwise than libarchive does:
/// - deletion markers ("anti-items", which `7z u -u-... '-up0q3x2z0!diff.7z'`
///   writes for files deleted since the base archive): 7-Zip applies one by
///   deleting the file; libarchive yields an empty file or directory;
/// - which entries are directories: 7-Zip takes it from the empty-stream and
///   empty-file vectors, libarchive from the attributes too;
/// - an attribute marking a reparse point, whose data 7-Zip makes a link;
/// - a header 7-Zip refuses where libarchive reads on: a file property longer
///   than its fields, padding that is not zeros, a property neither defines or
///   only 7-Zip reads (start positions), more or fewer data streams than
///   entries with data, an empty stream with the CRC of some data, a packed
///   header that does not end exactly where its sizes say.
/// Readers that disagree on what an entry is make the archive corrupt.
package struct SevenZipHeader {
    /// The anti-items' names (UTF-8), in header order.
    package private(set) var antiItems: [[UInt8]] = []
    /// How many entries (files and directories) the header lists.
    package private(set) var fileCount = 0
    /// Every entry's name (UTF-8, converted from the header's UTF-16 as it
    /// stands), in header order, which is the order libarchive yields them in;
    /// empty when the header holds no names.
    package private(set) var names: [[UInt8]] = []
    /// Whether 7-Zip takes each entry, in header order, for a directory: one
    /// with no stream that the empty-file vector does not mark as a file.
    package private(set) var directories: [Bool] = []

    package struct Failure: Error {
        package let reason: Reason
        package let detail: String
        package let entry: [UInt8]?
        init(_ detail: String, _ reason: Reason = .corruptArchive, entry: [UInt8]? = nil) {
            self.reason = reason
            self.detail = detail
            self.entry = entry
        }
    }

    /// Headers are small: a thousand entries with long names fit in well under this.
    static let maxHeaderBytes: UInt64 = 8 << 20

    /// Reads the header of the 7z `drop`. Nil when the header is encrypted, which
    /// libarchive reports as such.
    package static func read(drop: DropFile, dropSize: Int64) throws(SystemError) -> Result<SevenZipHeader?, Failure> {
        let start = try SevenZipHeader.bytes(drop, at: 0, count: 32, dropSize: dropSize)
        guard let start else { return .failure(Failure("the 7z signature header is truncated")) }
        // 7-Zip refuses a format major version other than 0; libarchive ignores it.
        guard start[6] == 0 else { return .failure(Failure("the 7z format's major version is \(start[6]), not 0")) }
        // 7-Zip refuses an archive whose start header or header fails its CRC; libarchive may read on.
        func stored(_ at: Int) -> UInt32 { start[at..<(at + 4)].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
        guard lzma_crc32(Array(start[12..<32]), 20, 0) == stored(8) else {
            return .failure(Failure("the 7z start header's CRC does not match"))
        }
        var cursor = SevenZipCursor(start[12..<32])
        let offset = cursor.fixed64(), size = cursor.fixed64()
        guard size <= maxHeaderBytes, offset <= UInt64(dropSize) else { return .failure(Failure("the 7z header is too large")) }
        if size == 0 { return .success(SevenZipHeader()) }
        guard var header = try bytes(drop, at: 32 + Int64(offset), count: Int(size), dropSize: dropSize) else {
            return .failure(Failure("the 7z header lies beyond the end of the drop"))
        }
        guard lzma_crc32(header, header.count, 0) == stored(28) else {
            return .failure(Failure("the 7z header's CRC does not match"))
        }
        // An encoded header is a packed stream holding the real one; 7-Zip nests it once.
        for _ in 0..<4 {
            guard header.first == 0x17 else { break }
            do {
                var cursor = SevenZipCursor(header[1...])
                let info = try SevenZipStreams(&cursor)
                guard let decoded = try decode(info, drop: drop, dropSize: dropSize) else { return .success(nil) }
                header = decoded
            } catch let failure as Failure {
                return .failure(failure)
            } catch {
                return .failure(Failure("reading the 7z header: \(error)"))
            }
        }
        do {
            var cursor = SevenZipCursor(header[...])
            return .success(try SevenZipHeader(&cursor))
        } catch let failure as Failure {
            return .failure(failure)
        } catch {
            return .failure(Failure("reading the 7z header: \(error)"))
        }
    }

    init() {}

    /// Parses a plain header (`kHeader`) up to and through its files.
    private init(_ cursor: inout SevenZipCursor) throws {
        guard try cursor.byte() == 0x01 else { throw Failure("the 7z header does not start with kHeader") }
        var type = try cursor.number()
        if type == 0x02 {  // archive properties: (type, size, bytes) until 0
            while try cursor.number() != 0 { try cursor.skip(try cursor.number()) }
            type = try cursor.number()
        }
        if type == 0x03 { _ = try SevenZipStreams(&cursor); type = try cursor.number() }
        var streams = SevenZipStreams()
        if type == 0x04 { streams = try SevenZipStreams(&cursor); type = try cursor.number() }
        if type == 0x05 { try readFiles(&cursor, streams: streams); type = try cursor.number() }
        guard type == 0 else { throw Failure("the 7z header holds an unexpected property \(type)") }
    }

    /// The FilesInfo block: how many entries, which are directories, their names
    /// and the names of those it marks as anti-items.
    ///
    /// Each property must hold exactly what its fields take, as 7-Zip requires
    /// (it refuses the header otherwise, where libarchive reads on); a padding
    /// property (kDummy) must be zeros, names must fill their property, and a
    /// property neither reader defines is refused, since what it means is
    /// anybody's guess. `streams` are the main streams: one for each entry with
    /// data, or 7-Zip refuses the archive.
    private mutating func readFiles(_ cursor: inout SevenZipCursor, streams: SevenZipStreams) throws {
        let files = try cursor.count()
        var emptyStream = [Bool](repeating: false, count: files)
        var emptyFile: [Bool] = [], anti: [Bool] = []
        var reparsePoint: Int?
        while true {
            let type = try cursor.number()
            if type == 0 { break }
            var property = SevenZipCursor(try cursor.take(try cursor.number()))
            let empties = emptyStream.filter { $0 }.count
            switch type {
            case 0x0E:
                emptyStream = try property.bits(files)
                emptyFile = [Bool](repeating: false, count: emptyStream.filter { $0 }.count)
                anti = emptyFile
            case 0x0F: emptyFile = try property.bits(empties)
            case 0x10: anti = try property.bits(empties)
            case 0x11:
                guard try property.byte() == 0 else { throw Failure("7z names stored outside the header", .unsupportedFormat) }
                names = try property.utf16Names(files)
            case 0x12, 0x13, 0x14:  // creation, access and modification times
                try property.definedValues(files, size: 8)
            case 0x18:  // 7-Zip never writes it, and will not extract a file with one
                throw Failure("a 7z start-position property: 7-Zip reads it, libarchive ignores it")
            case 0x15:  // attributes: Windows' in the low 16 bits
                let reparse = try property.definedValues(files, size: 4).firstIndex { $0.map { $0[$0.startIndex + 1] & 0x04 != 0 } ?? false }
                if let reparse { reparsePoint = reparse }
            case 0x19:
                guard try property.take(UInt64(property.remaining)).allSatisfy({ $0 == 0 }) else {
                    throw Failure("a 7z padding property holds bytes other than zero")
                }
            default:
                throw Failure("the 7z header holds a file property no reader agrees on (type \(type))")
            }
            guard property.remaining == 0 else {
                throw Failure("a 7z file property (type \(type)) holds \(property.remaining) bytes more than its fields")
            }
        }
        if let reparsePoint {
            throw Failure("a 7z entry marked as a reparse point: 7-Zip makes it a link, libarchive a regular file",
                          entry: reparsePoint < names.count ? names[reparsePoint] : nil)
        }
        try settle(emptyStream: emptyStream, emptyFile: emptyFile, anti: anti, streams: streams)
    }

    /// Checks the entries with data against the streams, then notes which
    /// entries are directories and which anti-items, from the vectors read.
    private mutating func settle(emptyStream: [Bool], emptyFile: [Bool], anti: [Bool], streams: SevenZipStreams) throws {
        let files = emptyStream.count
        let withData = emptyStream.indices.filter { !emptyStream[$0] }
        guard withData.count == streams.unpackStreams else {
            throw Failure("the 7z header lists \(streams.unpackStreams) data streams for \(withData.count) entries with data")
        }
        // No data has the CRC 0: 7-Zip reports a CRC error for an empty stream
        // with another, libarchive yields an empty file.
        if let empty = zip(withData, streams.streams).first(where: { $0.1.size == 0 && ($0.1.crc ?? 0) != 0 }) {
            throw Failure("the 7z header gives entry \(empty.0 + 1) no data but a CRC of some")
        }
        fileCount = files
        let emptyIndices = emptyStream.indices.filter { emptyStream[$0] }
        var directories = [Bool](repeating: false, count: files)
        for (order, file) in emptyIndices.enumerated() where order >= emptyFile.count || !emptyFile[order] { directories[file] = true }
        self.directories = directories
        antiItems = emptyIndices.indices.filter { $0 < anti.count && anti[$0] }.map { order in
            let file = emptyIndices[order]
            return file < names.count ? names[file] : Array("file \(file + 1)".utf8)
        }
    }

    /// Decodes the packed stream an encoded header points to; nil when it is encrypted.
    private static func decode(_ info: SevenZipStreams, drop: DropFile, dropSize: Int64) throws -> [UInt8]? {
        // An encrypted header (AES in the chain): libarchive reports it as encrypted.
        if info.folders.contains(where: { $0.coders.contains { $0.id == [0x06, 0xF1, 0x07, 0x01] } }) { return nil }
        guard info.folders.count == 1, let folder = info.folders.first, folder.coders.count == 1,
              info.packSizes.count == 1, let unpacked = folder.unpackSizes.first else {
            throw Failure("a 7z encoded header that is not one packed stream", .unsupportedFormat)
        }
        let coder = folder.coders[0]
        guard info.packSizes[0] <= maxHeaderBytes, unpacked <= 2 * maxHeaderBytes,
              info.packPosition <= UInt64(Int64.max - 32) else {
            throw Failure("the 7z encoded header is too large")
        }
        guard let packed = try bytes(drop, at: 32 + Int64(info.packPosition), count: Int(info.packSizes[0]), dropSize: dropSize) else {
            throw Failure("the 7z encoded header lies beyond the end of the drop")
        }
        let header = try SevenZipHeader.unpack(packed, coder: coder, size: Int(unpacked))
        if let crc = folder.crc, lzma_crc32(header, header.count, 0) != crc {
            throw Failure("the 7z header's CRC does not match")
        }
        return header
    }

    /// Runs the header's coder: LZMA (what 7-Zip writes), LZMA2, or copy.
    private static func unpack(_ packed: [UInt8], coder: SevenZipStreams.Coder, size: Int) throws -> [UInt8] {
        if coder.id == [0x00] { return packed }
        var options = lzma_options_lzma()
        let filterID: UInt64
        if coder.id == [0x03, 0x01, 0x01], coder.properties.count == 5, coder.properties[0] < 9 * 5 * 5 {
            // LZMA_FILTER_LZMA1EXT with the size known: the range coder must end
            // cleanly there, as 7-Zip requires (plain LZMA1 stops at the size).
            filterID = 0x4000_0000_0000_0002
            options.ext_flags = 1  // LZMA_LZMA1EXT_ALLOW_EOPM: 7-Zip accepts an end marker too
            options.ext_size_low = UInt32(truncatingIfNeeded: size)
            options.ext_size_high = UInt32(truncatingIfNeeded: UInt64(size) >> 32)
            let byte = UInt32(coder.properties[0])
            options.lc = byte % 9
            options.lp = (byte / 9) % 5
            options.pb = byte / 45
            options.dict_size = coder.properties[1..<5].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        } else if coder.id == [0x21], coder.properties.count == 1, coder.properties[0] <= 40 {
            filterID = 0x21  // LZMA_FILTER_LZMA2
            let bits = UInt32(coder.properties[0])
            options.dict_size = bits == 40 ? UInt32.max : (2 | (bits & 1)) << (bits / 2 + 11)
        } else {
            throw Failure("a 7z header packed with a method airlock does not read", .unsupportedFormat)
        }
        // The dictionary need not exceed what it decodes: a hostile size costs no memory.
        options.dict_size = max(4096, min(options.dict_size, UInt32(clamping: size)))
        return try withUnsafeMutablePointer(to: &options) { pointer in
            var filters = [lzma_filter(id: filterID, options: pointer), lzma_filter(id: UInt64.max, options: nil)]
            var stream = lzma_stream()
            guard lzma_raw_decoder(&stream, &filters) == LZMA_OK else { throw Failure("liblzma cannot decode the 7z header") }
            defer { lzma_end(&stream) }
            // One byte of room more than the size: the stream must end at the size, not merely reach it.
            var output = [UInt8](repeating: 0, count: size + 1)
            let status = packed.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { out in
                    stream.next_in = input.baseAddress
                    stream.avail_in = input.count
                    stream.next_out = out.baseAddress
                    stream.avail_out = out.count
                    return lzma_code(&stream, LZMA_FINISH)
                }
            }
            guard status == LZMA_STREAM_END || status == LZMA_OK || status == LZMA_BUF_ERROR, stream.total_out == UInt64(size) else {
                throw Failure("the 7z header does not decompress")
            }
            // 7-Zip refuses a packed header that does not end exactly where its sizes say.
            guard status == LZMA_STREAM_END, stream.avail_in == 0 else {
                throw Failure("the 7z header's packed stream does not end where its sizes say")
            }
            return Array(output[..<size])
        }
    }

    /// `count` bytes at `offset`, or nil when the drop ends first.
    private static func bytes(_ drop: DropFile, at offset: Int64, count: Int, dropSize: Int64) throws(SystemError) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset <= dropSize - Int64(count) else { return nil }
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = try buffer.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in
                    try drop.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[done...]), at: offset + Int64(done))
                }
            }.get()
            if n == 0 { return nil }
            done += n
        }
        return buffer
    }
}
