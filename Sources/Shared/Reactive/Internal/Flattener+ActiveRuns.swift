extension Flattener {
    /// How one running inner signal was started, to dispose it.
    @usableFromInline
    enum Run {
        /// Started as a nested run (`startNested`); its disposable once `startNested` has returned.
        case nested(CompositeDisposable?)
        /// The producer of a `Signal { observer, lifetime in … }`, with the observer handed to it.
        case flattened(FlattenedRun<Value, Failure>, Observer<Value, Failure>)

        @inlinable
        func dispose() {
            switch self {
            case .nested(let run): run?.dispose()
            case .flattened(let run, _): run.dispose()
            }
        }
    }

    /// The running inner signals. The first one sits in a field of its own, so that `.concat` and `.latest`
    /// (one at a time) and a `.merge` whose inners finish before the next arrives never hash an ID.
    @usableFromInline
    struct ActiveRuns {
        @usableFromInline
        var first: (id: InnerID, run: Run)?
        @usableFromInline
        var others: [InnerID: Run] = [:]

        @inlinable
        init() {}

        @inlinable
        var isEmpty: Bool { first == nil && others.isEmpty }

        @inlinable
        func contains(_ id: InnerID) -> Bool {
            first?.id == id || (!others.isEmpty && others[id] != nil)
        }

        @inlinable
        mutating func insert(_ run: Run, as id: InnerID) {
            if first == nil { first = (id, run) } else { others[id] = run }
        }

        /// Records the disposable of nested run `id`, unless `id` is no longer running.
        @inlinable
        mutating func setNestedRun(_ run: CompositeDisposable, of id: InnerID) {
            if first?.id == id {
                first!.run = .nested(run)
            } else if !others.isEmpty, others[id] != nil {
                others[id] = .nested(run)
            }
        }

        /// Removes `id`; returns its run, or nil when it was not running.
        @inlinable
        mutating func remove(_ id: InnerID) -> Run? {
            if let first, first.id == id {
                self.first = nil
                return first.run
            }
            return others.isEmpty ? nil : others.removeValue(forKey: id)
        }

        /// Removes every run and returns them, to dispose.
        @inlinable
        mutating func removeAll() -> ActiveRuns {
            defer { self = ActiveRuns() }
            return self
        }

        @inlinable
        func disposeAll() {
            first?.run.dispose()
            for run in others.values { run.dispose() }
        }
    }
}
