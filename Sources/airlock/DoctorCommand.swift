import AirlockCore
import AirlockPolicy
import AirlockSystem
import AirlockWatcher
import Foundation

extension CommandRunner {
    static func doctor(_ choice: Command.RootChoice, json: Bool) -> Int32 {
        withDecoders(choice) { doctor($0, decoder: $1, json: json) }
    }

    private static func doctor(_ configuration: Configuration, decoder: String, json: Bool) -> Int32 {
        let content = ContentHealth.check(configuration)
        if !content.healthy { log.warning("drops will wait: types \(content.types); scanning \(content.scanning)") }
        let found: Doctor.Findings
        do {
            found = try Doctor(configuration: configuration, decoderDirectory: decoder).probe()
        } catch {
            log.error("the decoder probe failed: \(error)")
            return ExitStatus.unavailable
        }
        let state = found.confinement
        if json {
            var line = JSONObjectWriter()
            line.add("decoders", decoder)
            line.add("landlock_abi", Int64(found.landlockABI))
            line.add("landlock", found.landlock)
            line.add("seccomp", found.seccomp)
            line.add("landlock_state", state.landlock)
            line.add("seccomp_state", state.seccomp)
            line.add("confinement_mode", configuration.decoderConfinementRequired ? "required" : "best-effort")
            line.add("decoders_withheld", state.withholdsDecoding)
            line.add("confine_microseconds", Int64(found.confineMicroseconds))
            for key in found.limits.keys.sorted() { line.add("limit_" + key, found.limits[key]!) }
            if let problems = found.problems { line.add("problems", problems) }
            line.add("content_classes", content.classes)
            line.add("type_detection", content.types)
            line.add("scanning", content.scanning)
            events.emit(line.text)
        } else {
            let landlock = Doctor.describe(state.landlock, "ABI \(found.landlockABI), writes only beneath the drop's staging directory, no other file access"
                + (found.landlockABI >= 4 ? ", no TCP" : "") + (found.landlockABI >= 6 ? ", no signals or abstract sockets outside" : ""),
                required: state.required)
            let seccomp = Doctor.describe(state.seccomp, "sockets, exec, ptrace, mounts, bpf, keys and the like kill the decoder (SIGSYS)",
                                          required: state.required)
            print("""
                decoders:      \(decoder)
                no_new_privs:  on
                landlock:      \(landlock)
                seccomp:       \(seccomp)
                limits:        address space \(found.limits["address_space_bytes"]!) bytes, CPU \(found.limits["cpu_seconds"]!) s, \
                open files \(found.limits["open_files"]!), file size \(found.limits["file_size_bytes"]!) bytes, no core dumps, no new processes
                confinement:   \(String(format: "%.2f", Double(found.confineMicroseconds) / 1000)) ms per decoder start, \
                \(state.required ? "required (decoder.confinement)" : "best-effort (decoder.confinement)")
                """)
            if let problems = found.problems { print("problems:      \(problems)") }
            print("classes:       \(content.classes)\ntypes:         \(content.types)\nscanning:      \(content.scanning)")
        }
        if state.withholdsDecoding {
            log.error("no decoder runs here: confinement is required and something refuses what the kernel offers")
            return ExitStatus.unavailable
        }
        if !state.isComplete {
            log.warning("decoders run with partial confinement on this machine")
        }
        return ExitStatus.ok
    }
}
