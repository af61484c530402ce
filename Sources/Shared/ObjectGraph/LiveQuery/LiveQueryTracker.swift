import ContextBusReactive
import ContextBusSupport

/// The state of one started `LiveQuery.updates`: the previous result with each object's values, refreshed on the context's queue when a change set touches the query's
/// entities (bursts of change sets coalesce into one fetch).
final class LiveQueryTracker: Sendable {
    private struct Result {
        var snapshot: LiveQuerySnapshot
        /// Each object's values: an object whose values changed was updated.
        var values: [ObjectID: [String: PropertyValue]]
    }

    private struct State {
        var previous: Result?
        var isRefreshScheduled = false
    }

    private let query: LiveQuery
    private let observer: Observer<LiveQueryUpdate, StoreError>
    private let lifetime: Lifetime
    /// The entities whose changes can alter the result.
    private let relevantEntities: Set<String>
    private let state = Locked(State())

    init(query: LiveQuery, observer: Observer<LiveQueryUpdate, StoreError>, lifetime: Lifetime) {
        self.query = query
        self.observer = observer
        self.lifetime = lifetime
        relevantEntities = query.request.entitiesAffectingResult(
            in: query.context.model, alsoThroughRelationships: query.sectionKey?.contains(".") ?? false)
    }

    /// A change set reached the context: if it touches the query's entities, refresh soon.
    func noteChanges(_ changes: ChangeSet) {
        let relevant =
            changes.inserted.contains { relevantEntities.contains($0.id.entity) }
            || changes.updated.contains { relevantEntities.contains($0.snapshot.id.entity) }
            || changes.deleted.contains { relevantEntities.contains($0.id.entity) }
        guard relevant else { return }
        let schedule = state.withLock { state -> Bool in
            guard state.previous != nil, !state.isRefreshScheduled else { return false }
            state.isRefreshScheduled = true
            return true
        }
        if schedule { query.context.perform { self.refresh() } }
    }

    /// Fetches, and sends the result (with a diff when there was a previous one and it
    /// changed). On the context's queue.
    func refresh() {
        guard !lifetime.hasEnded else { return }
        let context = query.context
        let core = context.core
        let previous = state.withLock { state in
            state.isRefreshScheduled = false
            return state.previous
        }
        let result: Result
        do {
            result = try fetchResult()
        } catch {
            observer.send(error: (error as? StoreError) ?? .unavailable(String(describing: error)))
            return
        }
        state.withLock { $0.previous = result }
        guard let previous else {
            observer.send(value: LiveQueryUpdate(snapshot: result.snapshot, diff: nil))
            return
        }
        // Objects saved since have permanent IDs now: compare like with like.
        let rekeyed = LiveQuerySnapshot(
            sections: previous.snapshot.sections.map {
                LiveQuerySection(value: $0.value, objectIDs: $0.objectIDs.map(core.resolved))
            })
        var oldValues: [ObjectID: [String: PropertyValue]] = [:]
        oldValues.reserveCapacity(previous.values.count)
        for (id, values) in previous.values { oldValues[core.resolved(id)] = values }
        let diff = LiveQueryDiff.between(rekeyed, result.snapshot) { id in
            guard let old = oldValues[id], let new = result.values[id] else { return true }
            guard old != new else { return false }
            // Relationship values may only have had temporary IDs replaced.
            return old.mapValues { core.resolvingReferences(in: $0) } != new
        }
        guard !diff.isEmpty else { return }
        observer.send(value: LiveQueryUpdate(snapshot: result.snapshot, diff: diff))
    }

    private func fetchResult() throws -> Result {
        let objects = try query.context.fetch(query.request)
        var values: [ObjectID: [String: PropertyValue]] = [:]
        values.reserveCapacity(objects.count)
        for object in objects { values[object.objectID] = object.snapshot.values }
        guard let sectionKey = query.sectionKey else {
            let section = LiveQuerySection(value: .null, objectIDs: objects.map(\.objectID))
            return Result(snapshot: LiveQuerySnapshot(sections: [section]), values: values)
        }
        let path = sectionKey.split(separator: ".").map(String.init)
        var sections: [LiveQuerySection] = []
        for object in objects {
            let value = object.value(atKeyPath: path)
            if sections.last?.value == value {
                sections[sections.count - 1].objectIDs.append(object.objectID)
            } else {
                sections.append(LiveQuerySection(value: value, objectIDs: [object.objectID]))
            }
        }
        return Result(snapshot: LiveQuerySnapshot(sections: sections), values: values)
    }

}

extension ManagedObject {
    /// The value at `keyPath`: an attribute, through to-one relationships (`device.name`);
    /// `.null` when a relationship on the way is empty.
    func value(atKeyPath keyPath: [String]) -> PropertyValue {
        var object = self
        for key in keyPath.dropLast() {
            guard let next = object.relatedObject(forKey: key) else { return .null }
            object = next
        }
        return keyPath.last.map { object.value(forKey: $0) } ?? .null
    }
}

extension ContextCore {
    /// `value` with every temporary ID the context has seen replaced by its permanent ID.
    func resolvingReferences(in value: PropertyValue) -> PropertyValue {
        switch value {
        case .reference(let id): return .reference(resolved(id))
        case .references(let ids): return .references(ids.map(resolved).sorted())
        default: return value
        }
    }
}
