/// How `store.fetch` (objects) and `store.get` give to-many relationships (`toMany` on the wire).
///
/// `toMany` is an addition to the design contract, documented in `docs/protocol.md` and `docs/decisions/tomany-faults.md`: a request
/// without it gets whole arrays, exactly as `docs/protocol.md` has it.
public enum ReadToMany: String, Sendable, Hashable, CaseIterable {
    /// Every to-many relationship as the whole array of member IDs (the default).
    case values
    /// To-many keys left out of `values`: the service never reads a to-many set to answer, and the client reads
    /// the members when it needs them (a context's to-many faults).
    case faults
}

extension JSONFields {
    /// The optional `toMany` field of a read: `.values` when absent or `null`.
    ///
    /// - Throws: `-32602` with `data.field` `toMany` for anything but `"values"` or `"faults"`.
    func readToMany() throws(RPCError) -> ReadToMany {
        try optionalEnum("toMany", cases: ReadToMany.allCases) ?? .values
    }
}
