extension ContextCore {
    /// Checks every pending change against the model: attribute types, required attributes and
    /// `deny` delete rules.
    ///
    /// - Returns: every failure found, each naming the object, the key and the reason.
    func validationFailures() -> [StoreError.ValidationFailure] {
        var failures: [StoreError.ValidationFailure] = []
        for object in changedObjects {
            if object.deletedFlag {
                failures += denyFailures(of: object)
                continue
            }
            let keys: [String] =
                object.insertedFlag ? object.entity.attributes.map(\.name) : object.changes.keys.sorted()
            for key in keys {
                guard let attribute = object.entity.attribute(named: key) else { continue }
                let value = object.currentValue(forKey: key)
                if let failure = Self.check(value, against: attribute) {
                    failures.append(.init(id: object.objectID, key: key, reason: failure))
                }
            }
        }
        return failures
    }

    /// Why `value` does not fit `attribute`, or `nil` when it does.
    static func check(_ value: PropertyValue, against attribute: AttributeDescription) -> String? {
        if value.isNull {
            return attribute.isOptional ? nil : "is required (not optional) but is nil"
        }
        guard let type = value.attributeType else {
            return "expects a \(attribute.type.rawValue) value, not the object reference \(value)"
        }
        guard type == attribute.type else {
            return "expects a \(attribute.type.rawValue) value, not a \(type.rawValue) (\(value))"
        }
        return nil
    }

    private func denyFailures(of object: ManagedObject) -> [StoreError.ValidationFailure] {
        var failures: [StoreError.ValidationFailure] = []
        for relationship in object.entity.relationships where relationship.deleteRule == .deny {
            let remaining = object.currentValue(forKey: relationship.name).referencedIDs.filter { id in
                !(registry[resolved(id)]?.deletedFlag ?? false)
            }
            if !remaining.isEmpty {
                failures.append(
                    .init(
                        id: object.objectID, key: relationship.name,
                        reason:
                            "cannot be deleted while it has related \(relationship.destination) objects "
                            + "(delete rule deny): \(remaining.map(\.description).joined(separator: ", "))"))
            }
        }
        return failures
    }
}
