// swift-tools-version:6.0
import PackageDescription

// One target per concern; every arrow points down, and each target names every
// module it imports (nothing is reached through another target's imports):
//
//   airlock -> AirlockWatcher -> AirlockCore -+-> AirlockChild -> AirlockPolicy -> AirlockText
//                                             +-> AirlockFormats
//   airlock-decoder -> AirlockArchive -> AirlockChild, AirlockFormats; libarchive, ISA-L, liblzma
//   airlock-keyed-decoder -> AirlockKeyed -> AirlockChild
//   AirlockSystem (the only door to the kernel) -> AirlockText, C shims; used by all but AirlockPolicy,
//   AirlockFormats and AirlockText, which are pure.
//
// AirlockText: hostile names as bytes (strict UTF-8, one escaping). AirlockPolicy:
// what an entry may be, judged from values handed to it. AirlockFormats: which
// archive format a drop is, from its bytes alone. AirlockChild: what every decoder
// child shares (confinement and limits, the drop reader, the staging writer, type
// detection, its arguments and verdicts). AirlockArchive: the archive code (the ZIP,
// tar and 7z readers, libarchive, gzip by ISA-L); only airlock-decoder links it, so
// airlock and airlock-keyed-decoder link neither libarchive nor ISA-L (make
// static-ldd checks). AirlockCore: the supervisor's intake, reports and
// configuration. AirlockWatcher: the daemon around it.
// AirlockSystem, AirlockPolicy, AirlockFormats, AirlockChild and AirlockArchive do not
// import Foundation, so the decoder child starts quickly and its behaviour does not
// depend on Foundation's.
let package = Package(
    name: "airlock",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "airlock", targets: ["airlock"]),
        .executable(name: "airlock-decoder", targets: ["airlock-decoder"]),
        .executable(name: "airlock-keyed-decoder", targets: ["airlock-keyed-decoder"]),
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
        .target(name: "CAirlockShims", linkerSettings: [.linkedLibrary("seccomp")]),
        .target(name: "AirlockText"),
        .target(name: "AirlockSystem", dependencies: ["AirlockText", "CAirlockShims"]),
        .target(name: "AirlockPolicy", dependencies: ["AirlockText"]),
        .target(name: "AirlockFormats"),
        .target(name: "AirlockChild", dependencies: ["AirlockPolicy", "AirlockSystem", "AirlockText", "CMagic", "CAirlockShims"]),
        .target(name: "AirlockArchive", dependencies: [
            "AirlockChild", "AirlockFormats", "AirlockPolicy", "AirlockSystem", "AirlockText", "CArchive", "CIsal", "CLzma",
        ]),
        .target(name: "AirlockCore", dependencies: [
            "AirlockChild", "AirlockFormats", "AirlockPolicy", "AirlockSystem", "AirlockText", "CCrypto", "CJansson", "CAirlockShims",
        ]),
        .target(name: "AirlockWatcher", dependencies: [
            "AirlockCore", "AirlockPolicy", "AirlockSystem", "AirlockText", "CInotifyTools", "CSystemd", "CAirlockShims",
        ]),
        .executableTarget(name: "airlock", dependencies: ["AirlockWatcher", "AirlockCore", "AirlockPolicy", "AirlockSystem", "AirlockText"]),
        .executableTarget(name: "airlock-decoder", dependencies: ["AirlockArchive", "AirlockChild"]),
        .target(name: "AirlockKeyed", dependencies: ["AirlockChild", "AirlockPolicy", "AirlockSystem", "AirlockText"]),
        .executableTarget(name: "airlock-keyed-decoder", dependencies: ["AirlockKeyed"]),
        .testTarget(name: "AirlockTextTests", dependencies: ["AirlockText"]),
        .testTarget(name: "AirlockPolicyTests", dependencies: ["AirlockPolicy"]),
        .testTarget(name: "AirlockArchiveTests", dependencies: ["AirlockArchive", "AirlockFormats", "AirlockPolicy"]),
        .testTarget(name: "AirlockKeyedTests", dependencies: ["AirlockKeyed", "AirlockPolicy"]),
        .testTarget(name: "AirlockCoreTests", dependencies: ["AirlockCore", "AirlockChild", "AirlockPolicy", "AirlockSystem"]),
        .testTarget(name: "AirlockWatcherTests", dependencies: ["AirlockWatcher"]),
        .testTarget(name: "AirlockEndToEndTests", dependencies: ["AirlockSystem"]),
    ]
)
