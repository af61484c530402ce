/// How chains are scheduled and bounded: the service's command line, as the runner uses it.
struct ChainSettings: Sendable, Hashable {
    /// How chains are serialised (`--serialize`).
    enum Serialization: String, Sendable, Hashable, CaseIterable {
        /// One chain at a time per device, different devices concurrently (the default).
        case device
        /// One chain at a time overall.
        case global
    }

    /// The adapter chains use (`--adapter`).
    var adapter = "hci0"
    /// The most chains that run at once (`--max-concurrent`).
    var maxConcurrent = 4
    var serialization = Serialization.device
    /// Link set-ups in progress at once on the adapter (`--concurrent-connects`). One, the default, is what BlueZ
    /// and most controllers take: a second LE connection set up on an adapter before the first link is up is
    /// answered `InProgress`, or aborted. Adapters that set up several at once can be given more; an `InProgress`
    /// answered then is retried like any other (`retry`).
    var concurrentConnects = 1
    /// Retries of transient failures (`--retry`).
    var retry = RetryPolicy(retries: 3)
    /// A step's timeout when it names none (`--step-timeout-ms`).
    var stepTimeout: Duration = .seconds(10)
    /// A chain's timeout when it names none (`--chain-timeout-ms`).
    var chainTimeout: Duration = .seconds(120)
    /// How long a connection may take to resolve its services before it counts as failed and is retried
    /// (`--resolve-timeout-ms`); a connect step's own timeout bounds it too.
    var resolveTimeout: Duration = .seconds(5)
    /// How long the disconnect after a failed chain may take.
    var cleanupTimeout: Duration = .seconds(5)
}
