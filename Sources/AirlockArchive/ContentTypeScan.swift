import AirlockChild
import AirlockPolicy

/// The archive decoder's inspecting scan: the classifier, the detector and
/// their sinks are the children's shared machinery, the scan is the archive code's.
extension ContentTypes {
    /// Runs `scan` into `sink` through a classifying sink, and a typing sink
    /// when there is a detector (typing on `threads` when there are some): the
    /// outcome, the types and the classified files.
    static func scan<Sink: EntrySink>(_ scan: inout ArchiveScan, into sink: Sink, detector: ContentTypeDetector?,
                                      threads: TypingThreads? = nil) -> (ScanOutcome, [(String, String)]?, [ClassifiedEntry]) {
        let (outcome, types, classifying) = typedScan(&scan, into: ClassifyingSink(sink), detector: detector, threads: threads)
        return (outcome, types, classifying.classified)
    }

    /// Runs `scan` into `sink`, through a typing sink when there is a detector:
    /// the outcome, the types, and the sink as the scan left it (closed).
    static func typedScan<Sink: EntrySink>(_ scan: inout ArchiveScan, into sink: Sink, detector: ContentTypeDetector?,
                                           threads: TypingThreads?) -> (ScanOutcome, [(String, String)]?, Sink) {
        guard let detector else {
            var sink = sink
            let outcome = scan.run(into: &sink)
            return (outcome, nil, sink)
        }
        var typing = TypingSink(sink, detector: detector, threads: threads)
        let outcome = scan.run(into: &typing)
        return (outcome, typing.escapedTypes, typing.inner)
    }
}
