// swift-tools-version:6.0
import PackageDescription

// Dependency arrows point one way:
//   airlock -> AirlockWatcher -> AirlockCore -> AirlockDecoding -> AirlockPolicy -> AirlockSystem -> C shims
//   airlock-decoder (the disposable child) -> AirlockDecoding
//   airlock-keyed-decoder (the child for NSKeyedArchiver drops) -> AirlockKeyed -> AirlockDecoding
// AirlockSystem, AirlockPolicy and AirlockDecoding do not import Foundation, so the
// decoder child starts quickly and its behaviour does not depend on Foundation's.
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
        .target(name: "AirlockSystem", dependencies: ["CAirlockShims"]),
        .target(name: "AirlockPolicy", dependencies: ["AirlockSystem"]),
        .target(name: "AirlockDecoding", dependencies: ["AirlockPolicy", "AirlockSystem", "CArchive", "CIsal", "CLzma", "CMagic", "CAirlockShims"]),
        .target(name: "AirlockCore", dependencies: ["AirlockDecoding", "AirlockPolicy", "AirlockSystem", "CCrypto", "CJansson", "CAirlockShims"]),
        .target(name: "AirlockWatcher", dependencies: ["AirlockCore", "AirlockSystem", "CInotifyTools", "CSystemd", "CAirlockShims"]),
        .executableTarget(name: "airlock", dependencies: ["AirlockWatcher", "AirlockCore"]),
        .executableTarget(name: "airlock-decoder", dependencies: ["AirlockDecoding"]),
        .target(name: "AirlockKeyed", dependencies: ["AirlockDecoding", "AirlockPolicy", "AirlockSystem"]),
        .executableTarget(name: "airlock-keyed-decoder", dependencies: ["AirlockKeyed"]),
        .testTarget(name: "AirlockPolicyTests", dependencies: ["AirlockPolicy", "AirlockDecoding", "AirlockCore", "AirlockKeyed", "AirlockWatcher"]),
        .testTarget(name: "AirlockEndToEndTests", dependencies: ["AirlockSystem"]),
    ]
)
