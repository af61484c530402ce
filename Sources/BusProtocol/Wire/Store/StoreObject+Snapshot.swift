import ContextBusObjectGraph
import ContextBusSupport

extension StoreObject {
    /// The snapshot an event's object describes, each value read with the type `model` gives its key (its
    /// `toManyChanges` are not part of it).
    ///
    /// - Throws: `-32602` naming `path.values.<key>` for an unknown entity or key or a value of the wrong type.
    public func snapshot(in model: Model, path: String = "object") throws(RPCError) -> ObjectSnapshot {
        ObjectSnapshot(id: id, version: version, values: try model.typedValues(values, of: id.entity, path: path))
    }
}
