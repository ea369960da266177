import AirlockConfiguration
import AirlockDecoders
import AirlockDesk
import AirlockPolicy
import AirlockRoot
import AirlockSystem
import AirlockWatcher
import Foundation

extension CommandRunner {
    static func doctor(_ choice: Command.RootChoice, json: Bool) -> Int32 {
        let status = withDecoders(choice) { doctor($0, decoder: $1, json: json, fleet: FleetFindings.probe(choice, $0)) }
        // What the intake of this root last met: children it could not start (a
        // pids cgroup or memory full where it runs, which this probe may not share).
        if let root = try? resolveAsOwner(choice).root, let state = try? OwnedDescriptor(FileDescriptor.openDirectory(path: root + "/state")) {
            if let failing = DecoderStartHealth.recorded(in: state.descriptor) {
                log.warning("the intake cannot start decoder children since \(failing.since): \(failing.detail); "
                    + "drops wait, claimed, and are retried")
            }
        }
        return status
    }

    private static func doctor(_ configuration: Configuration, decoder: String, json: Bool, fleet: FleetFindings?) -> Int32 {
        let content = ContentHealth.check(configuration)
        if !content.healthy { log.warning("drops will wait: types \(content.types); scanning \(content.scanning)") }
        let found: Doctor.Findings
        do {
            found = try Doctor(configuration: configuration, decoderDirectory: decoder).probe()
        } catch where error.errno == .wouldBlock || error.errno == .outOfMemory {
            log.error("decoder children cannot be started here: \(error); the host refuses new processes or memory "
                + "(a pids cgroup, RLIMIT_NPROC or memory full): drops wait, claimed, until they can")
            return ExitStatus.unavailable
        } catch {
            log.error("the decoder probe failed: \(error)")
            return ExitStatus.unavailable
        }
        let state = found.confinement
        let held = try? Capabilities.current()
        if let warning = TemporaryNames.droppedDefaultsWarning(configuration.watch.ignore) { log.warning(warning) }
        if json {
            var line = doctorLine(found, decoder: decoder, configuration: configuration, content: content, held: held)
            fleet?.add(to: &line)
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
                \(state.required ? "required (\(SettingDefinition.decoderConfinement.name))" : "best-effort (\(SettingDefinition.decoderConfinement.name))")
                """)
            if let problems = found.problems { print("problems:      \(problems)") }
            print("classes:       \(content.classes)\ntypes:         \(content.types)\nscanning:      \(content.scanning)")
            print("completion:    " + ProducerFileAccess.describe(configuration.watch.completion))
            print("capabilities:  " + capabilityLine(held, configuration.watch.completion))
            if let fleet { print("fleet:         " + fleet.line) }
            if let publish = configuration.publish {
                print("publish:       airlock publish sends outcomes to stream \(publish.stream) on \(publish.subject(event: "*")) via "
                      + "\(publish.servers.joined(separator: ", ")); airlock status says how far behind it is")
            }
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

    /// What this process holds of the two capabilities `airlock run` needs.
    private static func capabilityLine(_ held: Capabilities?, _ rule: Completion) -> String {
        guard let held else { return "unknown (capget failed)" }
        let lease = held.holds(Capabilities.lease)
            ? "CAP_LEASE held" : "no CAP_LEASE (\(rule == .lease ? "airlock run would refuse to start" : "not needed by watch.completion"))"
        let read = held.holds(Capabilities.dacReadSearch)
            ? "CAP_DAC_READ_SEARCH held" : "no CAP_DAC_READ_SEARCH (mode-0600 drops would be quarantined unreadable-drop)"
        return "here: \(lease); \(read); decoders hold none"
    }

    /// `doctor --json`: one line.
    private static func doctorLine(_ found: Doctor.Findings, decoder: String, configuration: Configuration, content: ContentHealth,
                                   held: Capabilities?) -> JSONObjectWriter {
        let state = found.confinement
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
        line.add("completion", configuration.watch.completion.rawValue)
        line.add("cap_lease", held?.holds(Capabilities.lease) ?? false)
        line.add("cap_dac_read_search", held?.holds(Capabilities.dacReadSearch) ?? false)
        line.add("content_classes", content.classes)
        line.add("type_detection", content.types)
        line.add("scanning", content.scanning)
        if let publish = configuration.publish { line.add("publish_subjects", publish.subject(event: "*")) }
        return line
    }
}
