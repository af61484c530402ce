/// What a `CompositeDisposable` (and so a `Lifetime`) holds: disposables and plain actions, in insertion order.
@usableFromInline
struct DisposalBag {
    @usableFromInline
    enum Entry: Sendable {
        case disposable(any Disposable)
        case action(@Sendable () -> Void)

        func run() {
            switch self {
            case .disposable(let disposable): disposable.dispose()
            case .action(let action): action()
            }
        }
    }

    /// A key that removes one entry. Keys are never reused within one bag.
    @usableFromInline
    typealias Key = UInt64

    private var entries: [(key: Key, entry: Entry)] = []
    private var nextKey: Key = 0

    var isEmpty: Bool { entries.isEmpty }

    mutating func insert(_ entry: Entry) -> Key {
        let key = nextKey
        nextKey += 1
        entries.append((key, entry))
        return key
    }

    /// Removes the entry for `key`. Most removals are of recent entries, so the search starts at the end.
    @discardableResult
    mutating func remove(_ key: Key) -> Entry? {
        guard let index = entries.lastIndex(where: { $0.key == key }) else { return nil }
        return entries.remove(at: index).entry
    }

    mutating func removeAll() -> [Entry] {
        defer { entries = [] }
        return entries.map(\.entry)
    }
}
