import AirlockChild

/// What a decoder template does once, before its first child, so that each
/// child starts with it done: first uses that cost the same for every drop.
/// It reads nothing of any drop: only bytes built into the program.
enum DecoderWarmUp {
    /// Heads of common file types (text, PNG, PDF, ZIP): libmagic's first
    /// matches allocate and compile what later ones reuse.
    static let samples: [[UInt8]] = [
        Array("plain text, as most drops hold\n".utf8),
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52],
        Array("%PDF-1.7\n%\u{00E2}\u{00E3}\n".utf8),
        [0x50, 0x4B, 0x03, 0x04, 0x14, 0, 0, 0, 0, 0],
    ]

    static func run(_ detector: ContentTypeDetector?) {
        // The content classifier's tables (the script extensions among them) are
        // built on first use: here, once, rather than in every child.
        for (index, sample) in samples.enumerated() { _ = ContentClasses.of(name: Array("warm-up-\(index).txt".utf8), bytes: sample) }
        guard let detector else { return }
        for sample in samples { _ = detector.type(of: sample) }
    }
}
