import AirlockSystem

/// How a decoder program's run begins: with its drop's arguments on its command
/// line and its descriptors in place (started with `posix_spawn`), or forked by
/// a template (`TemplateServer`) with the arguments it was sent.
public struct ChildStart: Sendable {
    /// A template's request socket; 3, 4 and 5 hold /dev/null in a template.
    public static let socketDescriptor = FileDescriptor(rawValue: 6)
    /// The exit status of a template that stops, and of a forked child whose go-ahead never came.
    public static let unusedStatus: Int32 = 75

    /// The arguments to run with.
    public var arguments: [String]
    /// CPU seconds the process spent before its drop, which the CPU limit adds
    /// to its allowance: what a forked child spent between its fork and its go-ahead.
    public var cpuSecondsSpent: Int64
    /// Whether this process has already tied itself to the supervisor
    /// (`Confinement.tieToSupervisor`): a forked child does, before its go-ahead.
    public var tiedToSupervisor = false
}
