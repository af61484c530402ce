import Foundation

extension PredicateResolver {
    // MARK: - Binary attributes compared with numbers

    /// Whether `op` reads a binary attribute compared with numbers as a number.
    static func readsBytesAsNumbers(_ op: ObjectPredicate.ComparisonOperator) -> Bool {
        switch op {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .between, .in: return true
        case .beginsWith, .endsWith, .contains, .like, .matches: return false
        }
    }

    /// `operand`, reading its bytes as an unsigned little-endian integer when it is a binary
    /// attribute and `other` is a number: a number constant, a list whose non-nil items are
    /// all numbers (at least one), or a numeric key path. Otherwise `operand` unchanged, so
    /// a binary attribute compared with a string (base64), binary or `nil` compares bytes.
    static func readingBytesAsNumber(_ operand: Operand, against other: Operand) -> Operand {
        guard let path = operand.keyPath, let number = path.readingBytesAsUnsignedInteger else { return operand }
        func isNumber(_ value: PropertyValue) -> Bool {
            switch value {
            case .int, .double: return true
            default: return false
            }
        }
        let readsAsNumber: Bool
        switch other {
        case .value(let value): readsAsNumber = isNumber(value)
        case .values(let items):
            let present = items.filter { !$0.isNull }
            readsAsNumber = !present.isEmpty && present.allSatisfy(isNumber)
        case .keyPath(let otherPath): readsAsNumber = otherPath.type.isNumeric
        case .unbound: readsAsNumber = false
        }
        return readsAsNumber ? .keyPath(number) : operand
    }

    // MARK: - Coercion

    func coerce(
        _ operand: Operand, to type: OperandType, path: ResolvedKeyPath
    ) throws(ObjectPredicateError)
        -> ResolvedOperand
    {
        switch operand {
        case .keyPath(let k): return .keyPath(k)
        case .value(let v): return .constant(try coerce(v, to: type, path: path))
        case .values(let items):
            var result: [PredicateScalar] = []
            for item in items { result.append(try coerce(item, to: type, path: path)) }
            return .list(result)
        case .unbound: preconditionFailure("unbound operands are filtered out before coercion")
        }
    }

    /// A constant as a value of the key path's type, as the protocol reads JSON values:
    /// dates from RFC 3339 strings or seconds since 1970, UUIDs and base64 binary from
    /// strings, relationships from `"Entity/N"` strings, ints and doubles interchangeably,
    /// bools from `true`/`false` (or 1/0).
    func coerce(
        _ value: PropertyValue, to type: OperandType, path: ResolvedKeyPath
    ) throws(ObjectPredicateError)
        -> PredicateScalar
    {
        let literal = PredicateOperand.formatLiteral(value)
        func mismatch() -> ObjectPredicateError {
            .typeMismatch(keyPath: path.text, expected: type.name, value: literal)
        }
        func invalid() -> ObjectPredicateError {
            .invalidLiteral(keyPath: path.text, expected: type.name, value: literal)
        }
        if value.isNull { return .null }
        switch type {
        case .attribute(.string):
            guard case .string(let s) = value else { throw mismatch() }
            return .text(s)
        case .attribute(.int), .attribute(.double):
            switch value {
            case .int(let i): return .int(i)
            case .double(let d): return .double(d)
            default: throw mismatch()
            }
        case .attribute(.bool):
            switch value {
            case .bool(let b): return .bool(b)
            case .int(0): return .bool(false)
            case .int(1): return .bool(true)
            default: throw mismatch()
            }
        case .attribute(.date):
            switch value {
            case .date(let d): return .date(d)
            case .string(let s):
                guard let d = Date(rfc3339: s) else { throw invalid() }
                return .date(d)
            case .int(let i): return .date(Date(timeIntervalSince1970: Double(i)))
            case .double(let d): return .date(Date(timeIntervalSince1970: d))
            default: throw mismatch()
            }
        case .attribute(.binary):
            switch value {
            case .binary(let data): return .bytes(data)
            case .string(let s):
                guard let data = Data(base64Encoded: s) else { throw invalid() }
                return .bytes(data)
            default: throw mismatch()
            }
        case .attribute(.uuid):
            switch value {
            case .uuid(let u): return .text(u.uuidString.lowercased())
            case .string(let s):
                guard let u = UUID(uuidString: s) else { throw invalid() }
                return .text(u.uuidString.lowercased())
            default: throw mismatch()
            }
        case .attribute(.json):
            throw .typeMismatch(
                keyPath: path.text, expected: "a json attribute (compared only with nil)", value: literal)
        case .object(let entity):
            switch value {
            case .reference(let id):
                guard id.entity == entity else { throw mismatch() }
                return .object(id)
            case .string(let s):
                guard let id = ObjectID(string: s) else { throw invalid() }
                guard id.entity == entity else { throw mismatch() }
                return .object(id)
            case .json(let j):
                guard let id = ObjectID(json: j), id.entity == entity else { throw invalid() }
                return .object(id)
            default: throw mismatch()
            }
        }
    }
}
