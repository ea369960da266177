/// How keyed-archive (NSKeyedArchiver) drops are judged.
public struct KeyedSettings: Sendable, Equatable {
    /// Archived class names accepted for a Memo record, each mapped explicitly.
    public var classNames: [String] = ["Memo"]
    /// The drop's size limit, checked before decoding.
    public var maxBytes: Int64 = 1 << 20
    /// Items in an array of memos.
    public var maxItems: Int64 = 1000
    /// A memo's text, in UTF-16 code units.
    public var maxTextUnits: Int64 = 4096
    /// Keep the original archive beside the rendered JSON.
    public var keepOriginal = false

    public init() {}

    /// The settings as `key=value` arguments for the keyed decoder child.
    public var arguments: [String] {
        classNames.map { "class_name=" + $0 } + [
            "max_bytes=\(maxBytes)", "max_items=\(maxItems)", "max_text_units=\(maxTextUnits)",
            "keep_original=\(keepOriginal ? 1 : 0)",
        ]
    }

    /// Takes the arguments `arguments` produced out of `list`; nil on a malformed one.
    public init?(taking list: inout [String]) {
        classNames = []
        var rest: [String] = []
        for argument in list {
            if argument.hasPrefix("class_name=") {
                let name = String(argument.dropFirst("class_name=".count))
                guard !name.isEmpty else { return nil }
                classNames.append(name)
                continue
            }
            let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let value = Int64(parts[1]) else { rest.append(argument); continue }
            switch parts[0] {
            case "max_bytes": maxBytes = value
            case "max_items": maxItems = value
            case "max_text_units": maxTextUnits = value
            case "keep_original": keepOriginal = value != 0
            default: rest.append(argument)
            }
        }
        guard !classNames.isEmpty else { return nil }
        list = rest
    }
}
