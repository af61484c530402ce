/// `ctxbus model …`: working with model files, without a service.
enum ModelCommands {
    static let group = CommandGroup(
        name: "model",
        abstract: "Work with model files: generate the Swift types of their entities.",
        commands: [ModelSwiftCommand.self])
}
