import ContextBusWire

extension ChainStep {
    /// The step's own `timeoutMs`, when it names one (`wait` and `disconnect` steps have none on the wire).
    var timeoutMs: Int? {
        switch self {
        case .connect(let timeout), .read(_, let timeout), .write(_, _, _, let timeout), .notify(_, _, let timeout):
            return timeout
        case .wait, .disconnect:
            return nil
        }
    }
}
