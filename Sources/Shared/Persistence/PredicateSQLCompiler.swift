import ContextBusObjectGraph

/// Compiles predicates to SQL `WHERE` fragments over the tables `SQLSchema` describes.
///
/// The fragment gives exactly the answer `ObjectPredicate.evaluate(values:entity:in:lookup:)`
/// gives for the same data: every comparison yields 0 or 1, never NULL (`IS`, `IS NOT`,
/// `COALESCE(…, 0)`), so `NOT` and `AND`/`OR` keep NSPredicate's two-valued logic; string
/// operators, and a binary attribute compared with numbers (`cb_uint_le`), call the
/// functions `PredicateSQLFunctions` registers, which run the same code as the in-memory
/// evaluator. The mapping is described in `docs/predicates.md`.
///
/// ```swift
/// let where = try PredicateSQLCompiler.compile(
///     ObjectPredicate(format: "device.name BEGINSWITH[c] $p").binding(["p": .string("th")]),
///     entity: "Reading", schema: schema, alias: "t")
/// // SELECT "t"."Z_PK" FROM "Reading" AS "t" WHERE <where.sql>, binding where.bindings
/// ```
public enum PredicateSQLCompiler {
    /// Compiles a bound predicate for the table of `entity`, aliased `alias` in the query.
    ///
    /// - Parameters:
    ///   - alias: the (unquoted) alias of the entity's table. Subqueries use aliases made by
    ///     appending `_1`, `_2`, … to it, so the caller should not use such names itself.
    /// - Throws: what `ObjectPredicate.validate(for:in:)` throws, and `.unboundVariable`.
    public static func compile(
        _ predicate: ObjectPredicate, entity: String, schema: SQLSchema, alias: String
    )
        throws(ObjectPredicateError) -> SQLFragment
    {
        let resolved = try PredicateResolver(model: schema.model, allowsVariables: false)
            .resolve(predicate, entity: entity)
            .mergingEqualitiesIntoLists()
        var builder = PredicateSQLBuilder(schema: schema, aliasBase: alias)
        builder.predicate(resolved, alias: SQLSchema.quote(alias), entity: entity)
        guard builder.deepestNesting <= PredicateSQLBuilder.nestingBudget else {
            throw .nestingTooDeep(limit: ObjectPredicate.maximumNestingDepth)
        }
        return SQLFragment(sql: builder.sql, bindings: builder.bindings)
    }
}

/// Appends SQL text and its bindings in order. Key path expressions never carry bindings,
/// so they can be built as strings and placed anywhere.
struct PredicateSQLBuilder {
    let schema: SQLSchema
    let aliasBase: String
    var sql = ""
    var bindings: [PropertyValue] = []
    private var aliasCount = 0

    /// SQLite's parser stack (YYSTACKDEPTH, 100 in the system library) overflows on deeply
    /// nested SQL. Measured with SQLite 3.40: about 26 nested parenthesised groups, or 19
    /// levels of `NOT (… OR …)`, or 79 chained `NOT`s. Counting a group as 4 and a `NOT` as
    /// 1, this budget keeps a margin; deeper SQL is refused before SQLite sees it.
    static let nestingBudget = 90
    private var nesting = 0
    private(set) var deepestNesting = 0

    private mutating func enter(_ cost: Int) {
        nesting += cost
        deepestNesting = max(deepestNesting, nesting)
    }

    init(schema: SQLSchema, aliasBase: String) {
        self.schema = schema
        self.aliasBase = aliasBase
    }

    private mutating func makeAlias() -> String {
        aliasCount += 1
        return SQLSchema.quote("\(aliasBase)_\(aliasCount)")
    }

    private static let pk = SQLSchema.quote(SQLSchema.primaryKeyColumn)

    // MARK: - Predicates

    // Every emitted predicate binds at least as tightly as `NOT`: comparisons, function calls,
    // `EXISTS (…)`, constants, or a parenthesised AND/OR group. So `NOT` needs no parentheses
    // of its own, and groups need only their outer pair. This matters: SQLite's parser stack
    // holds about 100 symbols, and every redundant parenthesis and `NOT (` spends some.

    mutating func predicate(_ p: ResolvedPredicate, alias: String, entity: String) {
        switch p {
        case .constant(let b): sql += b ? "1" : "0"
        case .not(let inner):
            sql += "NOT "
            enter(1)
            predicate(inner, alias: alias, entity: entity)
            nesting -= 1
        case .and(let items): group(items[...], "AND", alias: alias, entity: entity)
        case .or(let items): group(items[...], "OR", alias: alias, entity: entity)
        case .comparison(let c): comparison(c, alias: alias, entity: entity)
        }
    }

    /// How many items one flat `a OR b OR …` chain may hold. SQLite parses a flat chain in
    /// constant parser stack, but it becomes an expression tree as deep as the chain, and
    /// SQLite limits expression depth (1000 by default).
    static let maximumChainLength = 32

    /// `(a AND b AND …)`; a longer list becomes a chain of parenthesised chains, recursively,
    /// so that 10,000 items nest about two levels deep.
    private mutating func group(
        _ items: ArraySlice<ResolvedPredicate>, _ op: String, alias: String, entity: String
    ) {
        let chunk = Self.maximumChainLength
        enter(4)
        defer { nesting -= 4 }
        sql += "("
        if items.count <= chunk {
            for (i, item) in items.enumerated() {
                if i > 0 { sql += " \(op) " }
                predicate(item, alias: alias, entity: entity)
            }
        } else {
            // Split into at most `chunk` groups of (almost) equal size.
            var size = chunk
            while (items.count + size - 1) / size > chunk { size *= chunk }
            var start = items.startIndex
            while start < items.endIndex {
                let end = min(start + size, items.endIndex)
                if start > items.startIndex { sql += " \(op) " }
                if end - start == 1 {
                    predicate(items[start], alias: alias, entity: entity)
                } else {
                    group(items[start..<end], op, alias: alias, entity: entity)
                }
                start = end
            }
        }
        sql += ")"
    }

    // MARK: - Comparisons

    /// A comparison operand: SQL text without bindings (a key path), or constants to bind.
    private enum Operand {
        case expression(String)
        case constant(PredicateScalar)
        case list([PredicateScalar])
    }

    private mutating func comparison(_ c: ResolvedComparison, alias: String, entity: String) {
        guard let side = c.collectionSide else {
            test(c, operand(c.lhs, alias: alias, entity: entity), operand(c.rhs, alias: alias, entity: entity))
            return
        }
        let path = (side == .lhs ? c.lhs : c.rhs).keyPath!
        let other = operand(side == .lhs ? c.rhs : c.lhs, alias: alias, entity: entity)
        // ANY: some element passes. ALL: no element fails (true for an empty collection).
        let all = c.quantifier == .all
        let chain = joins(path.steps, from: alias)
        let element = Operand.expression(
            terminal(path.terminal, alias: chain.alias, entity: path.steps.last?.destination ?? entity))
        sql += (all ? "NOT EXISTS" : "EXISTS") + " (SELECT 1 FROM " + chain.tables.joined(separator: ", ")
        sql += " WHERE " + chain.links.joined(separator: " AND ") + (all ? " AND NOT " : " AND ")
        if side == .lhs { test(c, element, other) } else { test(c, other, element) }
        sql += ")"
    }

    private mutating func operand(_ o: ResolvedOperand, alias: String, entity: String) -> Operand {
        switch o {
        case .constant(let s): return .constant(s)
        case .list(let items): return .list(items)
        case .keyPath(let path): return .expression(scalar(path, alias: alias, entity: entity))
        }
    }

    /// Emits one comparison of two single values, always 0 or 1.
    private mutating func test(_ c: ResolvedComparison, _ l: Operand, _ r: Operand) {
        let options = c.options
        switch c.op {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            let symbol: String
            switch c.op {
            case .equal: symbol = "IS"
            case .notEqual: symbol = "IS NOT"
            case .less: symbol = "<"
            case .lessOrEqual: symbol = "<="
            case .greater: symbol = ">"
            default: symbol = ">="
            }
            let isEquality = c.op == .equal || c.op == .notEqual
            if !isEquality { sql += "COALESCE(" }
            value(l, folding: options)
            sql += " \(symbol) "
            value(r, folding: options)
            if !isEquality { sql += ", 0)" }
        case .between:
            guard case .list(let bounds) = r, bounds.count == 2 else {
                sql += "0"
                return
            }
            sql += "COALESCE("
            value(l, folding: options)
            sql += " >= "
            value(.constant(bounds[0]), folding: options)
            sql += " AND "
            value(l, folding: options)
            sql += " <= "
            value(.constant(bounds[1]), folding: options)
            sql += ", 0)"
        case .in:
            guard case .list(let items) = r else {
                sql += "0"
                return
            }
            // `x IN (…)` is NULL only when x is; then the answer is whether the list holds nil.
            let present = items.filter { !$0.isNull }
            let hasNull = present.count != items.count
            guard !present.isEmpty else {
                if hasNull {
                    value(l, folding: [])
                    sql += " IS NULL"
                } else {
                    sql += "0"
                }
                return
            }
            sql += "COALESCE("
            value(l, folding: options)
            sql += " IN ("
            for (i, item) in present.enumerated() {
                if i > 0 { sql += ", " }
                value(.constant(item), folding: options)
            }
            sql += "), "
            if hasNull {
                value(l, folding: [])
                sql += " IS NULL)"
            } else {
                sql += "0)"
            }
        case .beginsWith, .endsWith, .contains, .like, .matches:
            sql += PredicateSQLFunctions.name(of: c.op) + "("
            value(l, folding: [])
            sql += ", "
            value(r, folding: [])
            sql += ", \(options.rawValue))"
        }
    }

    /// An operand's SQL; with string options, folded (`cb_fold` in SQL, the same fold in Swift
    /// for constants, which are then bound already folded).
    private mutating func value(_ o: Operand, folding options: ObjectPredicate.StringOptions) {
        switch o {
        case .expression(let e):
            sql += options.isEmpty ? e : "\(PredicateSQLFunctions.foldName)(\(e), \(options.rawValue))"
        case .constant(let s):
            if s.isNull {
                sql += "NULL"
                return
            }
            if !options.isEmpty, case .text(let text) = s {
                bindings.append(.string(PredicateStringMatching.fold(text, options)))
            } else {
                bindings.append(s.binding)
            }
            sql += "?"
        case .list:
            sql += "NULL"
        }
    }

    // MARK: - Key paths

    /// A key path that crosses no to-many relationship, as a scalar SQL expression: a column
    /// of `alias`, or a correlated subquery through the to-one relationships (NULL when one
    /// of them is empty or points at a missing row).
    private mutating func scalar(_ path: ResolvedKeyPath, alias: String, entity: String) -> String {
        guard !path.steps.isEmpty else { return terminal(path.terminal, alias: alias, entity: entity) }
        let chain = joins(path.steps, from: alias)
        let value = terminal(path.terminal, alias: chain.alias, entity: path.steps.last!.destination)
        return "(SELECT \(value) FROM \(chain.tables.joined(separator: ", ")) WHERE "
            + chain.links.joined(separator: " AND ") + ")"
    }

    /// The tables and join conditions that walk `steps` from the row `alias`.
    private mutating func joins(
        _ steps: [ResolvedKeyPath.Step], from alias: String
    )
        -> (alias: String, tables: [String], links: [String])
    {
        var current = alias
        var tables: [String] = []
        var links: [String] = []
        for step in steps {
            let destination = SQLSchema.quote(schema.table(for: step.destination))
            let next = makeAlias()
            switch schema.storage(ofRelationship: step.key, in: step.entity) {
            case .foreignKey(let column):
                tables.append("\(destination) AS \(next)")
                links.append("\(next).\(Self.pk) = \(current).\(SQLSchema.quote(column))")
            case .inverseForeignKey(let table, let column):
                tables.append("\(SQLSchema.quote(table)) AS \(next)")
                links.append("\(next).\(SQLSchema.quote(column)) = \(current).\(Self.pk)")
            case .joinTable(let table, let source, let target):
                let join = makeAlias()
                tables.append("\(SQLSchema.quote(table)) AS \(join)")
                tables.append("\(destination) AS \(next)")
                links.append("\(join).\(SQLSchema.quote(source)) = \(current).\(Self.pk)")
                links.append("\(next).\(Self.pk) = \(join).\(SQLSchema.quote(target))")
            }
            current = next
        }
        return (current, tables, links)
    }

    /// What a key path yields from the row `alias` of `entity`.
    private mutating func terminal(_ terminal: ResolvedKeyPath.Terminal, alias: String, entity: String) -> String {
        switch terminal {
        case .attribute(let key, _):
            return "\(alias).\(SQLSchema.quote(schema.column(for: key)))"
        case .unsignedInteger(let key):
            return "\(PredicateSQLFunctions.unsignedIntegerName)(\(alias).\(SQLSchema.quote(schema.column(for: key))))"
        case .reference(let key, _):
            guard case .foreignKey(let column) = schema.storage(ofRelationship: key, in: entity) else {
                preconditionFailure("a to-one relationship is stored as a foreign key")
            }
            return "\(alias).\(SQLSchema.quote(column))"
        case .count(let key, _):
            let counted = makeAlias()
            switch schema.storage(ofRelationship: key, in: entity) {
            case .inverseForeignKey(let table, let column):
                return "(SELECT COUNT(*) FROM \(SQLSchema.quote(table)) AS \(counted) WHERE "
                    + "\(counted).\(SQLSchema.quote(column)) = \(alias).\(Self.pk))"
            case .joinTable(let table, let source, _):
                return "(SELECT COUNT(*) FROM \(SQLSchema.quote(table)) AS \(counted) WHERE "
                    + "\(counted).\(SQLSchema.quote(source)) = \(alias).\(Self.pk))"
            case .foreignKey:
                preconditionFailure("@count is only resolved for to-many relationships")
            }
        case .object:
            return "\(alias).\(Self.pk)"
        }
    }
}
