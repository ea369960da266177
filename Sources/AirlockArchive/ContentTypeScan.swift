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
        guard let detector else {
            var classifying = ClassifyingSink(sink)
            let outcome = scan.run(into: &classifying)
            return (outcome, nil, classifying.classified)
        }
        var classifying = ClassifyingSink(TypingSink(sink, detector: detector, threads: threads))
        let outcome = scan.run(into: &classifying)
        return (outcome, classifying.inner.escapedTypes, classifying.classified)
    }
}
