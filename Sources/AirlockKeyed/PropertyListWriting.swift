import Foundation

extension PropertyListValue {
    /// The bytes of this value as a property list in `format`.
    /// - Throws: what `PropertyListSerialization` throws, or
    ///   `CocoaError.propertyListWriteInvalid` for a value of no property-list type.
    package func propertyListData(format: PropertyListSerialization.PropertyListFormat) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: try foundationObject(), format: format, options: 0)
    }

    /// The object Foundation's property-list writer takes for this value.
    private func foundationObject() throws -> Any {
        switch self {
        case .dictionary(let fields): return try fields.mapValues { try $0.foundationObject() }
        case .array(let items): return try items.map { try $0.foundationObject() }
        case .string(let text): return text
        case .integer(let value): return value
        case .largeInteger(let value): return value
        case .real(let value): return value
        case .boolean(let value): return value
        case .data(let bytes): return bytes
        case .date(let date): return date
        case .uid(let index): return try PropertyListValue.foundationUID(index)
        case .other: throw CocoaError(.propertyListWriteInvalid)
        }
    }

    /// Foundation's UID object for `index`. Its class is internal to
    /// swift-corelibs-foundation and cannot be made directly, but the XML reader
    /// makes one from a dictionary whose one key is `CF$UID`.
    static func foundationUID(_ index: Int) throws -> Any {
        let xml = "<plist version=\"1.0\"><dict><key>CF$UID</key><integer>\(index)</integer></dict></plist>"
        return try PropertyListSerialization.propertyList(from: Data(xml.utf8), options: [], format: nil)
    }
}
