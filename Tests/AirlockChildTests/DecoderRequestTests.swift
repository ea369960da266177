import AirlockChild
import AirlockPolicy
import AirlockTestSupport
import Testing

/// The request crosses a process boundary (a command line, or the message a
/// template forks a child for): what the supervisor encodes must be what the child decodes,
/// every field present, and anything else refused, never defaulted.
@Suite("The decoder request: one encoder, one decoder, versioned, every field required")
struct DecoderRequestTests {
    static func sample(_ mode: DecoderRequest.Mode = .decode) -> DecoderRequest {
        var policy = Policy()
        policy.maxEntries = 5
        policy.privateModes = true
        policy.stagedFileMode = 0o640
        policy.stagedDirectoryMode = 0o750
        var keyed = KeyedSettings()
        keyed.classNames = ["Memo", "Notes,App.Memo=1"]
        keyed.keepOriginal = true
        return DecoderRequest(mode: mode, format: "zip", progress: true, magicDatabase: "/usr/lib/file/magic.mgc",
                              limits: DecoderLimits(addressSpaceBytes: 1 << 30, cpuSeconds: 60, openFiles: 64, fileSizeBytes: 99,
                                                    requiresConfinement: false),
                              policy: policy, zipLegacyEncoding: "CP437", tarLegacyEncoding: nil, keyed: keyed)
    }

    static let requests: [DecoderRequest] = {
        var none = sample(.probe)
        none.format = "none"
        none.magicDatabase = nil
        none.tarLegacyEncoding = "ISO-8859-1"
        return [sample(), sample(.inspect), sample(.list), none]
    }()

    @Test("what is encoded decodes to the same request", arguments: requests)
    func roundTrip(_ request: DecoderRequest) throws {
        try expectEqual(DecoderRequest(decoding: request.encoded), request)
    }

    @Test("the bytes are pinned: version first, every key once, in Key order")
    func pinnedBytes() {
        let pinned = [
            "request_version=4", "mode=decode", "format=zip", "progress=1",
            "magic_database=2f7573722f6c69622f66696c652f6d616769632e6d6763",
            "limit_as=1073741824", "limit_cpu=60", "limit_nofile=64", "limit_fsize=99", "confinement=best-effort",
            "max_entries=5", "max_file_bytes=20971520", "max_total_bytes=104857600", "max_drop_bytes=104857600",
            "max_component_bytes=255", "max_path_bytes=1024", "max_depth=32", "max_ratio=100", "ratio_min_bytes=1048576",
            "private_modes=1", "staged_file_mode=640", "staged_directory_mode=750", "zip_legacy_encoding=4350343337", "tar_legacy_encoding=",
            "keyed_class_names=4d656d6f,4e6f7465732c4170702e4d656d6f3d31", "keyed_max_bytes=1048576", "keyed_max_items=1000",
            "keyed_max_text_units=4096", "keyed_keep_original=1",
        ]
        expectEqual(Self.sample().encoded, pinned)
        expectEqual(DecoderRequest.Key.allCases.map(\.rawValue), pinned.map { String($0.prefix { $0 != "=" }) })
    }

    @Test("another version, or none, is refused as a version: first, whatever follows")
    func versions() {
        var older = Self.sample().encoded
        older[0] = "request_version=1"
        #expect(throws: DecoderRequest.Refusal.version(1)) { try DecoderRequest(decoding: older) }
        var newer = Self.sample().encoded + ["a_later_key=1"]
        newer[0] = "request_version=\(DecoderRequest.currentVersion + 1)"
        #expect(throws: DecoderRequest.Refusal.version(DecoderRequest.currentVersion + 1)) { try DecoderRequest(decoding: newer) }
        #expect(throws: DecoderRequest.Refusal.version(nil)) { try DecoderRequest(decoding: Array(Self.sample().encoded.dropFirst())) }
        #expect(throws: DecoderRequest.Refusal.version(nil)) { try DecoderRequest(decoding: ["zip", "--limit-as=1"]) }
    }

    @Test("each key missing is refused by name: nothing takes a default", arguments: DecoderRequest.Key.allCases.filter { $0 != .version })
    func missing(_ key: DecoderRequest.Key) {
        let without = Self.sample().encoded.filter { !$0.hasPrefix(key.rawValue + "=") }
        #expect(throws: DecoderRequest.Refusal.missing(key)) { try DecoderRequest(decoding: without) }
    }

    @Test("a repeated, unknown or malformed field is refused")
    func malformed() {
        let encoded = Self.sample().encoded
        #expect(throws: DecoderRequest.Refusal.repeated(.maxDepth)) { try DecoderRequest(decoding: encoded + ["max_depth=3"]) }
        #expect(throws: DecoderRequest.Refusal.unknown("max_speed")) { try DecoderRequest(decoding: encoded + ["max_speed=3"]) }
        #expect(throws: DecoderRequest.Refusal.unknown("--inspect")) { try DecoderRequest(decoding: encoded + ["--inspect"]) }
        func replacing(_ key: DecoderRequest.Key, _ value: String) -> [String] {
            encoded.map { $0.hasPrefix(key.rawValue + "=") ? key.rawValue + "=" + value : $0 }
        }
        for (key, value) in [(DecoderRequest.Key.mode, "judge"), (.limitCPU, "0"), (.limitCPU, "-1"), (.maxEntries, "05"),
                             (.progress, "yes"), (.confinement, "maybe"), (.magicDatabase, "2F"), (.magicDatabase, "ff"),
                             (.zipLegacyEncoding, ""), (.keyedClassNames, "4d,"), (.format, ""),
                             // Staged modes: octal as written, within 0644 and 0755, keeping the owner's 0600 and 0700.
                             (.stagedFileMode, "0640"), (.stagedFileMode, "9"), (.stagedFileMode, "666"), (.stagedFileMode, "400"),
                             (.stagedFileMode, "4644"), (.stagedDirectoryMode, "777"), (.stagedDirectoryMode, "500"), (.stagedDirectoryMode, "")] {
            #expect(throws: DecoderRequest.Refusal.malformed(key, value)) { try DecoderRequest(decoding: replacing(key, value)) }
        }
    }
}
