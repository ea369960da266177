/// One 512-byte tar header block, read by airlock itself rather than through
/// libarchive, so that the type flag, the data size and the end-of-archive
/// marker are judged from the bytes and compared with what libarchive reports.
package struct TarHeader {
    package static let blockSize = 512

    /// What a type flag means to airlock. Types that airlock does not know are
    /// `.unknown`: libarchive reads them as regular files (as POSIX asks), which
    /// would turn, say, a GNU incremental directory listing into a file.
    package enum Kind: Equatable {
        case file, directory, hardLink, symbolicLink, special
        /// pax (`x`, `g`) and GNU long-name (`L`, `K`) headers: part of the next entry.
        case extensionHeader
        /// A GNU sparse file (`S`): its map may continue in extension blocks.
        case gnuSparse
        case unknown
    }

    package let bytes: UnsafeRawBufferPointer

    package init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    package var typeFlag: UInt8 { bytes[156] }

    package var kind: Kind {
        switch typeFlag {
        // '7' is POSIX's contiguous file, which every reader treats as regular.
        case 0, UInt8(ascii: "0"), UInt8(ascii: "7"): return .file
        case UInt8(ascii: "5"): return .directory
        case UInt8(ascii: "1"): return .hardLink
        case UInt8(ascii: "2"): return .symbolicLink
        case UInt8(ascii: "3"), UInt8(ascii: "4"), UInt8(ascii: "6"): return .special
        case UInt8(ascii: "x"), UInt8(ascii: "g"), UInt8(ascii: "L"), UInt8(ascii: "K"): return .extensionHeader
        case UInt8(ascii: "S"): return .gnuSparse
        default: return .unknown
        }
    }

    /// The type flag as it may be printed: the character, or its code.
    package var typeFlagText: String {
        (0x21...0x7E).contains(typeFlag) ? "'\(Character(Unicode.Scalar(typeFlag)))'" : "0x" + String(typeFlag, radix: 16)
    }

    package var isZero: Bool { bytes.allSatisfy { $0 == 0 } }

    /// `ustar\0` (POSIX) or `ustar ` (GNU) at offset 257.
    package var hasUstarMagic: Bool {
        bytes[257] == 0x75 && bytes[258] == 0x73 && bytes[259] == 0x74 && bytes[260] == 0x61 && bytes[261] == 0x72
            && (bytes[262] == 0 || bytes[262] == 0x20)
    }

    package var isPosixUstar: Bool { hasUstarMagic && bytes[262] == 0 }

    /// Whether the stored checksum matches the block, summed with the checksum
    /// field as spaces; both the unsigned sum (POSIX) and the signed one (some
    /// old writers) are accepted, as libarchive and GNU tar accept them.
    package var checksumMatches: Bool {
        guard let stored = TarHeader.octal(bytes[148..<156]) else { return false }
        var unsigned: Int64 = 0, signed: Int64 = 0
        for (index, byte) in bytes.enumerated() {
            let value = (148..<156).contains(index) ? 0x20 : byte
            unsigned += Int64(value)
            signed += Int64(Int8(bitPattern: value))
        }
        return stored == unsigned || stored == signed
    }

    /// The size field. Nil when it is not a number, or negative.
    package var size: Int64? { TarHeader.number(bytes[124..<136]) }

    /// Whether mode, owner, group, time and device numbers are numbers: readers differ on a
    /// field that is not (GNU tar refuses the archive, tarfile stops reading
    /// there, libarchive takes the digits before the first other byte).
    package var numericFieldsValid: Bool {
        // tarfile parses the device numbers of every header, whatever its type.
        [100..<108, 108..<116, 116..<124, 136..<148, 329..<337, 337..<345].allSatisfy { TarHeader.number(bytes[$0]) != nil }
    }

    /// The bytes that must be zero because readers disagree on what they mean:
    /// in a V7 header, everything after the link name but the device numbers
    /// (GNU tar writes zeros there); in a GNU header other than a sparse one,
    /// the time, sparse and size fields (GNU tar fills them only for incremental
    /// dumps and sparse files). None for POSIX ustar.
    package func unsharedFields(sparse: Bool) -> [Range<Int>] {
        if !hasUstarMagic { return [257..<329, 345..<500] }
        if isGnu && !sparse { return [345..<500] }
        return []
    }

    /// A GNU sparse header's file size (`realsize`).
    package var gnuRealSize: Int64? { TarHeader.number(bytes[483..<495]) }

    /// A numeric field: octal, or base-256 when its first byte has the high bit
    /// set (GNU, for values octal cannot hold). Nil when it is neither, or negative.
    package static func number(_ field: Slice<UnsafeRawBufferPointer>) -> Int64? {
        guard let first = field.first, first & 0x80 != 0 else { return octal(field) }
        guard first == 0x80 else { return nil }  // 0xFF: negative
        var value: Int64 = 0
        for byte in field.dropFirst() {
            guard value <= (Int64.max >> 8) else { return nil }
            value = value << 8 | Int64(byte)
        }
        return value
    }

    /// The name as the header alone spells it (ustar prefix included), for
    /// reports about entries libarchive never yields as they are.
    package var name: [UInt8] {
        func field(_ range: Range<Int>) -> [UInt8] { Array(bytes[range].prefix { $0 != 0 }) }
        let name = field(0..<100)
        guard isPosixUstar else { return name }
        let prefix = field(345..<500)
        return prefix.isEmpty ? name : prefix + [UInt8(ascii: "/")] + name
    }

    /// The link target as the header alone spells it.
    package var linkName: [UInt8] { Array(bytes[157..<257].prefix { $0 != 0 }) }

    /// Whether a GNU sparse header's map continues in another 512-byte block
    /// (`isextended`, at 482 in the header and at 504 in each continuation).
    package var gnuSparseContinues: Bool { bytes[482] != 0 }

    /// The GNU magic, `ustar  \0`, under which the sparse fields are defined.
    package var isGnu: Bool { hasUstarMagic && bytes[262] == 0x20 }

    package static func sparseBlockContinues(_ block: UnsafeRawBufferPointer) -> Bool { block[504] != 0 }

    /// An octal field as libarchive reads it: leading spaces skipped, digits up
    /// to the first space or NUL. Anything else in the field is not a number.
    package static func octal(_ field: Slice<UnsafeRawBufferPointer>) -> Int64? {
        var value: Int64 = 0
        var digits = 0
        var ended = false
        for byte in field {
            if byte == 0x20 && digits == 0 && !ended { continue }
            if byte == 0 || byte == 0x20 { ended = true; continue }
            guard !ended, (0x30...0x37).contains(byte), value <= (Int64.max >> 3) else { return nil }
            value = value << 3 | Int64(byte - 0x30)
            digits += 1
        }
        return value
    }

    /// Whether `prefix` starts with a whole ustar (or GNU) header whose checksum matches.
    package static func isChecksummedUstar(_ prefix: [UInt8]) -> Bool {
        guard prefix.count >= blockSize else { return false }
        return prefix.withUnsafeBytes { raw in
            let header = TarHeader(bytes: UnsafeRawBufferPointer(rebasing: raw[0..<blockSize]))
            return header.hasUstarMagic && header.checksumMatches
        }
    }

    /// Whether `prefix` starts with a tar header: the ustar magic, or, for V7
    /// tars that have none, a valid checksum over a header with a name.
    package static func starts(_ prefix: [UInt8]) -> Bool {
        guard prefix.count >= blockSize else { return false }
        return prefix.withUnsafeBytes { raw in
            let header = TarHeader(bytes: UnsafeRawBufferPointer(rebasing: raw[0..<blockSize]))
            if header.hasUstarMagic { return true }
            return header.bytes[0] != 0 && header.checksumMatches && header.size != nil
        }
    }
}
