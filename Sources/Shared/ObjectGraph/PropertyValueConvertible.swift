import ContextBusSupport
public import Foundation

/// A Swift type that reads from and writes to an attribute value.
///
/// Used by the typed accessors of `ManagedObject`, for example `object["name", as: String.self]`.
public protocol PropertyValueConvertible {
    /// The value as a `PropertyValue`.
    var propertyValue: PropertyValue { get }
    /// Reads `value`; `nil` when it holds another type (or `null`).
    init?(propertyValue value: PropertyValue)
}

extension String: PropertyValueConvertible {
    public var propertyValue: PropertyValue { .string(self) }
    public init?(propertyValue value: PropertyValue) {
        guard case .string(let s) = value else { return nil }
        self = s
    }
}

extension Int64: PropertyValueConvertible {
    public var propertyValue: PropertyValue { .int(self) }
    public init?(propertyValue value: PropertyValue) {
        guard case .int(let i) = value else { return nil }
        self = i
    }
}

extension Int: PropertyValueConvertible {
    public var propertyValue: PropertyValue { .int(Int64(self)) }
    public init?(propertyValue value: PropertyValue) {
        guard case .int(let i) = value, let n = Int(exactly: i) else { return nil }
        self = n
    }
}

extension Double: PropertyValueConvertible {
    public var propertyValue: PropertyValue { .double(self) }
    public init?(propertyValue value: PropertyValue) {
        guard case .double(let d) = value else { return nil }
        self = d
    }
}

extension Bool: PropertyValueConvertible {
    public var propertyValue: PropertyValue { .bool(self) }
    public init?(propertyValue value: PropertyValue) {
        guard case .bool(let b) = value else { return nil }
        self = b
    }
}

extension Date: PropertyValueConvertible {
    public var propertyValue: PropertyValue { .date(self) }
    public init?(propertyValue value: PropertyValue) {
        guard case .date(let d) = value else { return nil }
        self = d
    }
}

extension Data: PropertyValueConvertible {
    public var propertyValue: PropertyValue { .binary(self) }
    public init?(propertyValue value: PropertyValue) {
        guard case .binary(let d) = value else { return nil }
        self = d
    }
}

extension UUID: PropertyValueConvertible {
    public var propertyValue: PropertyValue { .uuid(self) }
    public init?(propertyValue value: PropertyValue) {
        guard case .uuid(let u) = value else { return nil }
        self = u
    }
}

extension JSONValue: PropertyValueConvertible {
    public var propertyValue: PropertyValue { .json(self) }
    public init?(propertyValue value: PropertyValue) {
        guard case .json(let j) = value else { return nil }
        self = j
    }
}
