/// What a file is, as airlock's own structural checks decide from its bytes
/// (and, for `script`, its name): the basis of `content.deny_classes`. Unlike a
/// MIME type, which describes what a file most resembles, a class says what a
/// program could do with it, and a file may have several (a GIF that is also an
/// HTML page is `active-content`).
public enum ContentClass: String, Sendable, CaseIterable, Comparable {
    /// What an operating system would run: ELF, `#!`, PE/MZ, Mach-O, Java class, WebAssembly.
    case executable
    /// A dangerous extension as mail gateways list them, or a script's header under another name.
    case script
    /// HTML, XHTML, SVG with script, PDF with JavaScript, launch or embedded-file actions.
    case activeContent = "active-content"
    /// VBA or Excel 4.0 macros in OOXML or OLE2, Basic in ODF.
    case macroDocument = "macro-document"
    /// A nested archive in a format airlock reads.
    case archive

    public static func < (lhs: ContentClass, rhs: ContentClass) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// Classes as the verdict and the manifest write them: names in table order, space-separated.
    public static func text(_ classes: Set<ContentClass>) -> String {
        classes.sorted().map(\.rawValue).joined(separator: " ")
    }

    /// The classes of `text`; nil when a word is not a class (or repeats one).
    public static func parse(_ text: String) -> Set<ContentClass>? {
        var classes = Set<ContentClass>()
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            guard let found = ContentClass(rawValue: String(word)), classes.insert(found).inserted else { return nil }
        }
        return classes
    }
}

/// One file's classes, as a decoder child reports them.
public struct ClassifiedEntry: Sendable, Equatable {
    /// The escaped entry name.
    public var entry: String
    public var classes: Set<ContentClass>

    public init(entry: String, classes: Set<ContentClass>) {
        self.entry = entry
        self.classes = classes
    }
}

extension ContentPolicy {
    /// The violation for the first file, in entry order, that has a class
    /// `content.deny_classes` lists; nil when none has.
    ///
    /// - Parameter files: each classified file's escaped entry name and classes.
    public func judge(classes files: [ClassifiedEntry]) -> Violation? {
        guard !denyClasses.isEmpty else { return nil }
        let ordered = files.sorted { $0.entry.utf8.lexicographicallyPrecedes($1.entry.utf8) }
        for file in ordered {
            guard let denied = ContentClass.allCases.first(where: { file.classes.contains($0) && denyClasses.contains($0) }) else { continue }
            return Violation(.disallowedType, "\"\(file.entry)\" is \(denied.rawValue), which content.deny_classes names",
                             entry: Array(file.entry.utf8))
        }
        return nil
    }
}
