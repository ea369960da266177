import AirlockConfiguration
import AirlockEvents
import AirlockPublisher
import AirlockRoot
import AirlockSystem
import Foundation

// airlock-publisher --root DIR [--config FILE]: what `airlock publish` runs once it
// has checked the root and its configuration. A program of its own so that only
// it links the NATS client: the intake binary has no network library.
let log = Log()
var arguments = Array(CommandLine.arguments.dropFirst())
var root: String?
var configFile: String?
while let option = arguments.first {
    arguments.removeFirst()
    guard let value = arguments.first, option == "--root" || option == "--config" else {
        log.error("usage: airlock-publisher --root DIR [--config FILE] (run by airlock publish)")
        CurrentProcess.exit(64)
    }
    arguments.removeFirst()
    if option == "--root" { root = value } else { configFile = value }
}
guard let root else {
    log.error("usage: airlock-publisher --root DIR [--config FILE] (run by airlock publish)")
    CurrentProcess.exit(64)
}
let configuration: Configuration
do {
    let file = configFile ?? root + "/airlock.json"
    configuration = configFile == nil && !FileManager.default.fileExists(atPath: file) ? Configuration() : try Configuration.load(path: file)
} catch {
    log.error(error.message)
    CurrentProcess.exit(78)
}
guard let settings = configuration.publish else {
    log.error("the configuration has no publish.nats section: nothing to publish")
    CurrentProcess.exit(78)
}
guard !InstanceToken.encode(settings.instanceName).isEmpty else {
    log.error("\(SettingDefinition.natsInstance.name) is empty and the host has no name: set \(SettingDefinition.natsInstance.name)")
    CurrentProcess.exit(78)
}
do {
    try Publisher.preflight(settings)
} catch {
    log.error(error.description)
    CurrentProcess.exit(78)
}
let layout: RootLayout
do {
    layout = try RootLayout.open(path: root)
} catch {
    log.error(error.message)
    CurrentProcess.exit(78)
}

// SIGTERM and SIGINT stop it between two publishes, after saving its cursor.
let stopping = StopRequest()
let sources = stopping.listen()
let status: Int32
do {
    status = try Publisher(layout: layout, configuration: configuration, settings: settings, stopping: stopping).run()
} catch {
    log.error("publisher: cannot read its cursor: \(error)")
    status = 74
}
// The layout's directories close with the process.
CurrentProcess.exit(status)
