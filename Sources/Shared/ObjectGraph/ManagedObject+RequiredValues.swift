extension ManagedObject {
    /// The value of the required (non-optional) attribute `key` as a `T`: what a generated type's non-optional
    /// property reads.
    ///
    /// A required attribute holds `null` only in an object inserted without it (and with no default in the model),
    /// or in an object whose fault found nothing (deleted in the store); reading it then is a programmer error and
    /// traps with a message naming the entity, the key and the object. `object[key, as: T.self]` reads it as an
    /// optional instead.
    public func requiredValue<T: PropertyValueConvertible>(forKey key: String, as type: T.Type) -> T {
        let value = self.value(forKey: key)
        guard let typed = T(propertyValue: value) else {
            if value.isNull {
                preconditionFailure(
                    "\(entity.name).\(key) is required, but \(objectID) holds nil: set it before reading it "
                        + "(or the object is gone from the store)")
            }
            preconditionFailure("\(entity.name).\(key) of \(objectID) holds \(value), not a \(T.self)")
        }
        return typed
    }
}
