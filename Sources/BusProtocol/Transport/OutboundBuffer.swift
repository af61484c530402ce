/// The bytes a connection still has to send, in order: a contiguous array consumed from the front.
///
/// Appending copies once; consuming only moves `head` and compacts when more than half is consumed, so both are
/// amortised O(bytes).
struct OutboundBuffer {
    private var storage: [UInt8] = []
    private var head = 0

    /// Bytes not yet sent.
    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }

    mutating func append(_ bytes: some Collection<UInt8>) {
        storage.append(contentsOf: bytes)
    }

    /// Appends what `write` appends to the storage it is given (which already holds the unsent bytes, and
    /// possibly sent ones before them: `write` must only append).
    mutating func append(byWriting write: (inout [UInt8]) -> Void) {
        write(&storage)
    }

    /// Calls `body` with the unsent bytes; returns what it returns.
    func withUnsentBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        storage.withUnsafeBytes { raw in body(UnsafeRawBufferPointer(rebasing: raw[head...])) }
    }

    /// Marks the first `byteCount` unsent bytes as sent.
    mutating func consume(_ byteCount: Int) {
        precondition(byteCount <= count, "consumed more than was queued")
        head += byteCount
        if head == storage.count {
            // Give back a large buffer (e.g. after one big write); keep a small one for reuse.
            storage.removeAll(keepingCapacity: storage.capacity <= 1 << 20)
            head = 0
        } else if head >= 64 * 1024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }

    mutating func removeAll() {
        storage = []
        head = 0
    }
}
