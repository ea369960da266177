// swift-tools-version:6.0
import PackageDescription

// One target per concern. Arrows point one way, and each target lists exactly the
// package targets it imports, nothing reached through another's (make check-imports):
//
//   airlock               -> AirlockWatcher -> AirlockDesk -> AirlockIntake
//   airlock-decoder       -> AirlockArchive -> AirlockFraming -> AirlockZip
//   airlock-keyed-decoder -> AirlockKeyed
//   airlock-publisher     -> AirlockPublisher -> AirlockJournal, CNats
//   AirlockIntake  -> AirlockQuarantine, AirlockDecoders
//   AirlockQuarantine -> AirlockJournal -> AirlockRoot -> AirlockConfiguration -> AirlockEvents
//   AirlockDecoders -> AirlockConfiguration
//   AirlockConfiguration, AirlockArchive, AirlockFraming, AirlockZip, AirlockKeyed -> AirlockChild -> AirlockPolicy, AirlockSystem
//   AirlockConfiguration, AirlockArchive, AirlockFraming, AirlockChild -> AirlockFormats
//   AirlockEvents -> AirlockPolicy, AirlockSystem;  AirlockPolicy -> AirlockText
//   AirlockSystem -> AirlockText, CAirlockShims
//
// (A target above may import any target below it on its path; Package.swift lists
// which.) AirlockText: hostile names as bytes (strict UTF-8, the one escaping).
// AirlockPolicy: what an entry may be, judged from the values handed to it.
// AirlockFormats: which archive format a drop is, from its bytes alone. (These
// three are pure Swift.) AirlockSystem: typed system calls, the only target that
// imports CAirlockShims. CAirlockSieve: the byte search the content classes run over
// every byte of every file, in SSE2 (Swift's SIMD types compile to one lane at a time
// here); only AirlockChild imports it. AirlockChild: what both decoder children share
// (confinement and limits, the drop reader, the staging writer, content classes and
// type detection, their arguments and verdicts). AirlockZip: the ZIP directory
// reader (end records, central and local records, extra fields, legacy names).
// AirlockFraming: second readers, which read an archive's own structure again
// without libarchive, so that the two readings can be compared (tar framing, GNU
// and pax sparse maps and long names, the 7z header, ISO 9660's descriptors and
// directories). AirlockArchive: the archive decoder (libarchive and what it is
// compared with, the RAR and cpio listings included, the ZIP entries' data, gzip
// by ISA-L). AirlockKeyed: the keyed-archive decoder.
//
// The supervisor, by concern, lowest first: AirlockEvents (a drop's outcome and
// rejection, the event log); AirlockConfiguration (airlock.json, its settings
// table, formats, content rules, outbox modes, receipts and publish settings);
// AirlockRoot (the root's layout and version, root access, the run lock, directory
// syncs); AirlockJournal (records, batches, generations, the event feed, publish
// progress); AirlockDecoders (starting and confining decoder children, reading
// their verdicts); AirlockQuarantine (the desk: reports, index, queries, release
// and purge); AirlockIntake (one drop from claim to outbox or quarantine, the
// worker pool); AirlockDesk (status, doctor, metrics, quarantine contents, outbox
// sweep). AirlockWatcher: the daemon around them. AirlockPublisher: `airlock
// publish`, the journal's outcomes to NATS JetStream (airlock execs
// airlock-publisher, the only program linking libnats); it does not link the intake.
// Libraries: only AirlockArchive links libarchive and ISA-L, and only it,
// AirlockFraming and AirlockZip liblzma, so airlock and airlock-keyed-decoder do
// not (make static-ldd checks); AirlockChild links libmagic, which the
// supervisor's status and doctor use too, and zlib, which the content classifier
// inflates PDF streams and Office parts with (libmagic links it already).
// AirlockText, AirlockSystem, AirlockPolicy, AirlockFormats, AirlockChild,
// AirlockZip, AirlockFraming and AirlockArchive do not import Foundation, so the
// decoder child starts quickly and its behaviour does not depend on Foundation's.
let package = Package(
    name: "airlock",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "airlock", targets: ["airlock"]),
        .executable(name: "airlock-decoder", targets: ["airlock-decoder"]),
        .executable(name: "airlock-keyed-decoder", targets: ["airlock-keyed-decoder"]),
        .executable(name: "airlock-publisher", targets: ["airlock-publisher"]),
    ],
    targets: [
        .systemLibrary(
            name: "CArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"])]
        ),
        .systemLibrary(
            name: "CInotifyTools",
            providers: [.apt(["libinotifytools0-dev"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CLzma",
            pkgConfig: "liblzma",
            providers: [.apt(["liblzma-dev"])]
        ),
        .systemLibrary(
            name: "CIsal",
            providers: [.apt(["libisal-dev"])]
        ),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .systemLibrary(
            name: "CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"])]
        ),
        .systemLibrary(
            name: "CMagic",
            pkgConfig: "libmagic",
            providers: [.apt(["libmagic-dev"])]
        ),
        .systemLibrary(
            name: "CNats",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(name: "CAirlockShims", linkerSettings: [.linkedLibrary("seccomp")]),
        .target(name: "CAirlockSieve"),
        .target(name: "AirlockText"),
        .target(name: "AirlockSystem", dependencies: ["AirlockText", "CAirlockShims"]),
        .target(name: "AirlockPolicy", dependencies: ["AirlockText"]),
        .target(name: "AirlockFormats"),
        .target(name: "AirlockChild", dependencies: [
            "AirlockFormats", "AirlockPolicy", "AirlockSystem", "AirlockText", "CAirlockSieve", "CMagic", "CZlib",
        ]),
        .target(name: "AirlockZip", dependencies: ["AirlockChild", "AirlockPolicy", "AirlockSystem", "AirlockText", "CLzma"]),
        .target(name: "AirlockFraming", dependencies: [
            "AirlockChild", "AirlockFormats", "AirlockPolicy", "AirlockSystem", "AirlockText", "AirlockZip", "CLzma",
        ]),
        .target(name: "AirlockArchive", dependencies: [
            "AirlockChild", "AirlockFormats", "AirlockFraming", "AirlockPolicy", "AirlockSystem", "AirlockText", "AirlockZip",
            "CArchive", "CIsal", "CLzma",
        ]),
        .target(name: "AirlockEvents", dependencies: ["AirlockPolicy", "AirlockSystem", "AirlockText"]),
        .target(name: "AirlockConfiguration", dependencies: [
            "AirlockChild", "AirlockEvents", "AirlockFormats", "AirlockPolicy", "AirlockSystem", "AirlockText", "CJansson",
        ]),
        .target(name: "AirlockRoot", dependencies: [
            "AirlockChild", "AirlockConfiguration", "AirlockEvents", "AirlockPolicy", "AirlockSystem",
        ]),
        .target(name: "AirlockJournal", dependencies: [
            "AirlockConfiguration", "AirlockEvents", "AirlockPolicy", "AirlockRoot", "AirlockSystem",
        ]),
        .target(name: "AirlockDecoders", dependencies: [
            "AirlockChild", "AirlockConfiguration", "AirlockEvents", "AirlockPolicy", "AirlockSystem",
        ]),
        .target(name: "AirlockQuarantine", dependencies: [
            "AirlockConfiguration", "AirlockEvents", "AirlockJournal", "AirlockPolicy", "AirlockRoot", "AirlockSystem", "AirlockText",
        ]),
        .target(name: "AirlockIntake", dependencies: [
            "AirlockConfiguration", "AirlockDecoders", "AirlockEvents", "AirlockFormats", "AirlockJournal", "AirlockPolicy",
            "AirlockQuarantine", "AirlockRoot", "AirlockSystem", "AirlockText", "CCrypto",
        ]),
        .target(name: "AirlockDesk", dependencies: [
            "AirlockChild", "AirlockConfiguration", "AirlockDecoders", "AirlockEvents", "AirlockFormats", "AirlockIntake",
            "AirlockJournal", "AirlockPolicy", "AirlockQuarantine", "AirlockRoot", "AirlockSystem", "AirlockText",
        ]),
        .target(name: "AirlockWatcher", dependencies: [
            "AirlockConfiguration", "AirlockDecoders", "AirlockDesk", "AirlockEvents", "AirlockIntake", "AirlockJournal",
            "AirlockPolicy", "AirlockRoot", "AirlockSystem", "AirlockText", "CInotifyTools", "CSystemd",
        ]),
        .executableTarget(name: "airlock", dependencies: [
            "AirlockWatcher", "AirlockConfiguration", "AirlockDecoders", "AirlockDesk", "AirlockEvents", "AirlockIntake",
            "AirlockJournal", "AirlockPolicy", "AirlockQuarantine", "AirlockRoot", "AirlockSystem", "AirlockText",
        ]),
        .executableTarget(name: "airlock-decoder", dependencies: ["AirlockArchive", "AirlockChild", "AirlockSystem"]),
        .target(name: "AirlockKeyed", dependencies: ["AirlockChild", "AirlockPolicy", "AirlockSystem", "AirlockText"]),
        .executableTarget(name: "airlock-keyed-decoder", dependencies: ["AirlockKeyed", "AirlockSystem"]),
        .target(name: "AirlockPublisher", dependencies: [
            "AirlockConfiguration", "AirlockEvents", "AirlockJournal", "AirlockRoot", "AirlockSystem", "CNats",
        ]),
        .executableTarget(name: "airlock-publisher", dependencies: [
            "AirlockPublisher", "AirlockConfiguration", "AirlockEvents", "AirlockRoot", "AirlockSystem",
        ]),
        // What the test targets share: the assertions, descriptorsOpen(beneath:) and Scratch.
        .target(name: "AirlockTestSupport", path: "Tests/AirlockTestSupport"),
        .testTarget(name: "AirlockTextTests", dependencies: ["AirlockText", "AirlockTestSupport"]),
        .testTarget(name: "AirlockSystemTests", dependencies: ["AirlockSystem", "AirlockTestSupport"]),
        .testTarget(name: "AirlockPolicyTests", dependencies: ["AirlockPolicy", "AirlockText", "AirlockTestSupport"]),
        .testTarget(name: "AirlockFormatsTests", dependencies: ["AirlockFormats", "AirlockTestSupport"]),
        .testTarget(name: "AirlockChildTests", dependencies: [
            "AirlockChild", "AirlockPolicy", "AirlockSystem", "AirlockTestSupport", "CAirlockSieve",
        ]),
        .testTarget(name: "AirlockZipTests", dependencies: ["AirlockZip", "AirlockChild", "AirlockSystem", "AirlockTestSupport"]),
        .testTarget(name: "AirlockArchiveTests", dependencies: [
            "AirlockArchive", "AirlockChild", "AirlockFormats", "AirlockFraming", "AirlockPolicy", "AirlockSystem", "AirlockTestSupport",
            "AirlockZip",
        ]),
        .testTarget(name: "AirlockKeyedTests", dependencies: ["AirlockKeyed", "AirlockPolicy", "AirlockTestSupport"]),
        .testTarget(name: "AirlockEventsTests", dependencies: ["AirlockEvents", "AirlockPolicy", "AirlockTestSupport"]),
        .testTarget(name: "AirlockConfigurationTests", dependencies: [
            "AirlockConfiguration", "AirlockChild", "AirlockEvents", "AirlockPolicy", "AirlockQuarantine", "AirlockSystem",
            "AirlockTestSupport",
        ]),
        .testTarget(name: "AirlockRootTests", dependencies: [
            "AirlockRoot", "AirlockConfiguration", "AirlockSystem", "AirlockTestSupport",
        ]),
        .testTarget(name: "AirlockJournalTests", dependencies: [
            "AirlockJournal", "AirlockConfiguration", "AirlockEvents", "AirlockPolicy", "AirlockSystem", "AirlockTestSupport",
        ]),
        .testTarget(name: "AirlockDecodersTests", dependencies: [
            "AirlockDecoders", "AirlockChild", "AirlockConfiguration", "AirlockEvents", "AirlockPolicy", "AirlockSystem",
            "AirlockTestSupport",
        ]),
        .testTarget(name: "AirlockQuarantineTests", dependencies: [
            "AirlockQuarantine", "AirlockConfiguration", "AirlockEvents", "AirlockPolicy", "AirlockRoot", "AirlockTestSupport",
        ]),
        .testTarget(name: "AirlockIntakeTests", dependencies: [
            "AirlockIntake", "AirlockConfiguration", "AirlockEvents", "AirlockPolicy", "AirlockQuarantine", "AirlockRoot",
            "AirlockSystem", "AirlockTestSupport",
        ]),
        .testTarget(name: "AirlockDeskTests", dependencies: ["AirlockDesk", "AirlockConfiguration", "AirlockRoot", "AirlockTestSupport"]),
        .testTarget(name: "AirlockWatcherTests", dependencies: [
            "AirlockWatcher", "AirlockConfiguration", "AirlockIntake", "AirlockSystem", "AirlockTestSupport",
        ]),
        .testTarget(name: "AirlockEndToEndTests", dependencies: ["AirlockSystem", "AirlockTestSupport"]),
    ]
)
