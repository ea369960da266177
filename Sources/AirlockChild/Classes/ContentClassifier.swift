import AirlockFormats
import AirlockPolicy

/// Gives one file its content classes from its bytes as they stream past (and
/// its name, for `script`), in bounded memory: its head decides executables,
/// script headers and nested archives; the whole file is searched for active
/// markup (in UTF-16 too, where it opens as UTF-16 markup does); PDFs, ZIP-based documents and OLE2 files are read by their own
/// scanners. Nothing here depends on libmagic or on the host.
struct ContentClassifier {
    private let name: [UInt8]
    private var head: [UInt8] = []
    private var headDecided = false
    private var offset = 0
    private var isoDescriptor: [UInt8] = []
    private var markup = MarkupScan()
    private var wideText = WideTextScan()
    private var pdf: PDFScan?
    private var zip: ZipPartScan?
    private var compound: CompoundFileScan?

    init(name: [UInt8]) {
        self.name = name
        head.reserveCapacity(FileHead.length)
    }

    mutating func feed(_ chunk: UnsafeRawBufferPointer) {
        guard !chunk.isEmpty else { return }
        markup.feed(chunk)
        wideText.feed(chunk)
        noteISODescriptor(chunk)
        offset += chunk.count
        if headDecided {
            feedStructured(chunk)
            return
        }
        let room = FileHead.length - head.count
        head.append(contentsOf: chunk.prefix(room))
        guard head.count == FileHead.length else { return }
        decideHead()
        if chunk.count > room { feedStructured(UnsafeRawBufferPointer(rebasing: chunk[room...])) }
    }

    /// The file's classes, once all of it has been fed.
    mutating func finish() -> Set<ContentClass> {
        if !headDecided { decideHead() }
        markup.finish()
        wideText.finish()
        pdf?.finish()
        zip?.finish()
        var classes = FileHead.classes(head)
        if ScriptNames.isScript(name) { classes.insert(.script) }
        // Windows Script Host and PowerShell read scripts in UTF-16 by their mark.
        if let wide = wideText.narrowedHead, ScriptHeader.matches(wide) { classes.insert(.script) }
        // A page or markup by its name is one whatever its head: a browser opens it so.
        let markupHead = MarkupHead.isMarkup(head) || MarkupNames.isMarkup(name)
        let htmlHead = MarkupHead.isHTML(head) || MarkupNames.isPage(name)
        if markup.isActive(markupHead: markupHead, htmlHead: htmlHead) || wideText.isActive()
            || pdf?.active == true {
            classes.insert(.activeContent)
        }
        if zip?.macros == true || compound?.macros == true { classes.insert(.macroDocument) }
        if ArchiveFormat.isISO9660Descriptor(isoDescriptor) { classes.insert(.archive) }
        return classes
    }

    /// Starts the scanners the head calls for and gives them the head.
    private mutating func decideHead() {
        headDecided = true
        if FileHead.isPDF(head) { pdf = PDFScan() }
        if FileHead.isZip(head) { zip = ZipPartScan() }
        if FileHead.isCompoundFile(head) { compound = CompoundFileScan() }
        head.withUnsafeBytes { feedStructured($0) }
    }

    private mutating func feedStructured(_ chunk: UnsafeRawBufferPointer) {
        pdf?.feed(chunk)
        zip?.feed(chunk)
        compound?.feed(chunk)
    }

    /// Keeps the bytes where an ISO 9660 image's first volume descriptor would be.
    private mutating func noteISODescriptor(_ chunk: UnsafeRawBufferPointer) {
        let start = Int(ArchiveFormat.isoDescriptorOffset)
        let end = start + 7
        guard offset < end, offset + chunk.count > start + isoDescriptor.count else { return }
        let from = start + isoDescriptor.count - offset
        let to = min(chunk.count, end - offset)
        if from >= 0, from < to { isoDescriptor.append(contentsOf: chunk[from..<to]) }
    }
}
