import AirlockText

/// What 7-Zip checks in an image's volume descriptors and El Torito boot
/// catalog, and refuses the whole image for, where libarchive reads on: the
/// date fields must be digits, and the boot catalog must open with a valid
/// validation entry and hold only boot entries and section headers. An image
/// one reader lists and the other refuses is refused here.
extension IsoDirectories {
    static func checkDescriptor(_ descriptor: [UInt8], _ reader: Reader) throws(Failure) {
        switch descriptor[0] {
        case 1, 2:
            // Creation, modification, expiration and effective dates: 16 digits and a zone offset, or all zero bytes.
            for start in [813, 830, 847, 864] {
                let digits = descriptor[start..<(start + 16)]
                guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) || descriptor[start..<(start + 17)].allSatisfy({ $0 == 0 }) else {
                    throw .malformed("a volume descriptor's date is not digits (7-Zip refuses the image)")
                }
            }
        case 0 where Array(descriptor[7..<30]) == Array("EL TORITO SPECIFICATION".utf8):
            try checkBootCatalog(at: Int64(descriptor.u32(0x47)) * 2048, reader)
        default:
            break
        }
    }

    /// The validation entry (header 1, key 55 AA, its 16-bit words summing to zero), the initial
    /// entry (bootable 0x88 or not 0x00), then section headers (0x90, the last 0x91) with their entries.
    private static func checkBootCatalog(at offset: Int64, _ reader: Reader) throws(Failure) {
        guard offset + 2048 <= reader.size else { throw .malformed("the El Torito boot catalog lies past the image") }
        let catalog = try reader.bytes(at: offset, count: 2048)
        let sum = stride(from: 0, to: 32, by: 2).reduce(0) { $0 &+ Int(catalog.u16($1)) }
        guard catalog[0] == 1, catalog[2] == 0, catalog[3] == 0, catalog[30] == 0x55, catalog[31] == 0xAA, sum & 0xFFFF == 0 else {
            throw .malformed("the El Torito boot catalog's validation entry is not valid (7-Zip refuses the image)")
        }
        guard catalog[32] == 0x88 || catalog[32] == 0 else { throw .malformed("the El Torito initial entry is not a boot entry") }
        var entry = 64
        while entry + 32 <= catalog.count, catalog[entry] == 0x90 || catalog[entry] == 0x91 {
            let last = catalog[entry] == 0x91, count = Int(catalog.u16(entry + 2))
            entry += 32
            for _ in 0..<count {
                guard entry + 32 <= catalog.count, catalog[entry] == 0x88 || catalog[entry] == 0 else {
                    throw .malformed("an El Torito section holds an entry that is not a boot entry")
                }
                entry += 32
            }
            if last { break }
        }
    }
}
