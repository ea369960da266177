import AirlockChild

/// The archive decoder's typed scan: the detector and the typing sink are the
/// children's shared machinery, the scan is the archive code's.
extension ContentTypes {
    /// Runs `scan` into `sink`, through a typing sink when there is a detector.
    static func scan<Sink: EntrySink>(_ scan: inout ArchiveScan, into sink: Sink,
                                      detector: ContentTypeDetector?) -> (ScanOutcome, [(String, String)]?) {
        guard let detector else {
            var plain = sink
            return (scan.run(into: &plain), nil)
        }
        var typing = TypingSink(sink, detector: detector)
        let outcome = scan.run(into: &typing)
        return (outcome, typing.escapedTypes)
    }
}
