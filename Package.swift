// swift-tools-version:6.0
import PackageDescription

// One target per concern. Arrows point one way, and each target lists exactly the
// package targets it imports, nothing reached through another's (make check-imports):
//
//   airlock               -> AirlockWatcher -> AirlockCore
//   airlock-decoder       -> AirlockArchive
//   airlock-keyed-decoder -> AirlockKeyed
//   airlock-publisher     -> AirlockPublisher -> AirlockCore, CNats
//   AirlockCore, AirlockArchive, AirlockKeyed -> AirlockChild -> AirlockPolicy, AirlockSystem
//   AirlockCore, AirlockArchive, AirlockChild -> AirlockFormats
//   AirlockPolicy -> AirlockText;  AirlockSystem -> AirlockText, CAirlockShims
//
// AirlockText: hostile names as bytes (strict UTF-8, the one escaping). AirlockPolicy:
// what an entry may be, judged from the values handed to it. AirlockFormats: which
// archive format a drop is, from its bytes alone. (These three are pure Swift.)
// AirlockSystem: typed system calls, the only target that imports CAirlockShims.
// AirlockChild: what both decoder children share
// (confinement and limits, the drop reader, the staging writer, content classes and
// type detection, their arguments and verdicts). AirlockArchive: the archive decoder (the ZIP, tar and 7z
// readers, libarchive, gzip by ISA-L). AirlockKeyed: the keyed-archive decoder.
// AirlockCore: the supervisor (intake, reports, configuration). AirlockWatcher: the
// daemon around it. AirlockPublisher: `airlock publish`, the journal's outcomes to
// NATS JetStream (airlock execs airlock-publisher, the only program linking libnats).
// Libraries: only AirlockArchive links libarchive, ISA-L and liblzma, so airlock and
// airlock-keyed-decoder do not (make static-ldd checks); AirlockChild links libmagic,
// which the supervisor's status and doctor use too, and zlib, which the content
// classifier inflates PDF streams and Office parts with (libmagic links it already).
// AirlockText, AirlockSystem, AirlockPolicy, AirlockFormats, AirlockChild and
// AirlockArchive do not import Foundation, so the decoder child starts quickly and its
// behaviour does not depend on Foundation's.
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
        .target(name: "AirlockText"),
        .target(name: "AirlockSystem", dependencies: ["AirlockText", "CAirlockShims"]),
        .target(name: "AirlockPolicy", dependencies: ["AirlockText"]),
        .target(name: "AirlockFormats"),
        .target(name: "AirlockChild", dependencies: ["AirlockFormats", "AirlockPolicy", "AirlockSystem", "AirlockText", "CMagic", "CZlib"]),
        .target(name: "AirlockArchive", dependencies: [
            "AirlockChild", "AirlockFormats", "AirlockPolicy", "AirlockSystem", "AirlockText", "CArchive", "CIsal", "CLzma",
        ]),
        .target(name: "AirlockCore", dependencies: [
            "AirlockChild", "AirlockFormats", "AirlockPolicy", "AirlockSystem", "AirlockText", "CCrypto", "CJansson",
        ]),
        .target(name: "AirlockWatcher", dependencies: [
            "AirlockCore", "AirlockPolicy", "AirlockSystem", "AirlockText", "CInotifyTools", "CSystemd",
        ]),
        .executableTarget(name: "airlock", dependencies: ["AirlockWatcher", "AirlockCore", "AirlockPolicy", "AirlockSystem", "AirlockText"]),
        .executableTarget(name: "airlock-decoder", dependencies: ["AirlockArchive", "AirlockChild", "AirlockSystem"]),
        .target(name: "AirlockKeyed", dependencies: ["AirlockChild", "AirlockPolicy", "AirlockSystem", "AirlockText"]),
        .executableTarget(name: "airlock-keyed-decoder", dependencies: ["AirlockKeyed", "AirlockSystem"]),
        .target(name: "AirlockPublisher", dependencies: ["AirlockCore", "AirlockSystem", "CNats"]),
        .executableTarget(name: "airlock-publisher", dependencies: ["AirlockPublisher", "AirlockCore", "AirlockSystem"]),
        .testTarget(name: "AirlockTextTests", dependencies: ["AirlockText"]),
        .testTarget(name: "AirlockSystemTests", dependencies: ["AirlockSystem"]),
        .testTarget(name: "AirlockPolicyTests", dependencies: ["AirlockPolicy", "AirlockText"]),
        .testTarget(name: "AirlockFormatsTests", dependencies: ["AirlockFormats"]),
        .testTarget(name: "AirlockChildTests", dependencies: ["AirlockChild", "AirlockPolicy", "AirlockSystem"]),
        .testTarget(name: "AirlockArchiveTests", dependencies: ["AirlockArchive", "AirlockChild", "AirlockFormats", "AirlockPolicy", "AirlockSystem"]),
        .testTarget(name: "AirlockKeyedTests", dependencies: ["AirlockKeyed", "AirlockPolicy"]),
        .testTarget(name: "AirlockCoreTests", dependencies: ["AirlockCore", "AirlockChild", "AirlockPolicy", "AirlockSystem"]),
        .testTarget(name: "AirlockWatcherTests", dependencies: ["AirlockWatcher", "AirlockCore", "AirlockSystem"]),
        .testTarget(name: "AirlockEndToEndTests", dependencies: ["AirlockSystem"]),
    ]
)
