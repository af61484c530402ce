/// How far a connection attempt has come, before it completes with the device's services resolved.
///
/// BlueZ (the controller, really) sets up one LE connection at a time per adapter; once the link is up, service
/// discovery runs on that link alone. The chain runner holds the adapter's connection slot until `.linkUp`.
enum ConnectStage: Sendable, Equatable {
    /// The link is established: BlueZ reported `Connected` true, or answered `Connect`.
    case linkUp
}
