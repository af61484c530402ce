/// A typed view of the objects of one entity: what `ctxbus model swift` and the `ContextBusEntities` plugin
/// generate for each entity of a model, as Xcode generates an `NSManagedObject` subclass.
///
/// A generated type is a struct around the `ManagedObject` it shows, with a property per attribute (optional
/// where the model says so) and relationship, so that `device.address` reads what `device["address", as:
/// String.self]` reads. It lives on its object's context's queue like the object; `managedObject` is the
/// dynamic API underneath, for tools and for keys the type does not know.
///
/// ```swift
/// let device = context.insert(Device.self)
/// device.address = "AA:BB:CC:DD:EE:01"
/// let reading = context.insert(Reading.self)
/// reading.device = device                     // device.readings follows, as with the dynamic API
/// let nearby = try context.fetch(Device.fetchRequest(where: "name BEGINSWITH 'th'", sortedBy: [.name]))
/// ```
///
/// Two values are equal when they show the same object (the same instance, in one context).
public protocol ManagedEntity: Hashable, SendableMetatype {
    /// The entity's name in the model.
    static var entityName: String { get }
    /// The object underneath.
    var managedObject: ManagedObject { get }
    /// Shows `managedObject`, which must be an object of the entity `entityName`; the typed API only passes
    /// such objects, and generated types check it (a programmer error traps).
    init(wrapping managedObject: ManagedObject)
}

extension ManagedEntity {
    /// `managedObject` seen as this type, or `nil` when it is an object of another entity.
    public init?(_ managedObject: ManagedObject) {
        guard managedObject.entity.name == Self.entityName else { return nil }
        self.init(wrapping: managedObject)
    }

    /// The object's identity (`managedObject.objectID`).
    public var objectID: ObjectID { managedObject.objectID }
    /// The context the object is registered in; `nil` once it was removed.
    public var managedObjectContext: ObjectContext? { managedObject.managedObjectContext }
    /// Whether the object's values have not been loaded yet.
    public var isFault: Bool { managedObject.isFault }
    /// Whether the object was inserted in its context and not saved from it yet.
    public var isInserted: Bool { managedObject.isInserted }
    /// Whether the object has unsaved changes to its values (and is neither inserted nor deleted).
    public var isUpdated: Bool { managedObject.isUpdated }
    /// Whether the object was deleted from its context.
    public var isDeleted: Bool { managedObject.isDeleted }
    /// Whether the object is inserted, deleted or has changed values.
    public var hasChanges: Bool { managedObject.hasChanges }
    /// The committed version the object's values are based on; 0 before the first save.
    public var version: Int64 { managedObject.version }
}
