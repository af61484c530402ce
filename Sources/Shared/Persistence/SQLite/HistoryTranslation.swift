import ContextBusObjectGraph

/// How history rows written under an earlier model read under the current one: each entity of that model under
/// its current name, or left out when a later model removed it; each key under its current name, or left out.
///
/// Built once when the store opens from `Z_METADATA.previousVersions`: per previous model (an era of the
/// history, the rows after the previous era's `lastTxn` up to its own), every name the migrations since then
/// mention is followed through them. Names no migration mentions read as they are. Rows of the current model
/// (after the last era) are read without any lookup. docs/decisions/history-across-model-versions.md says why the
/// rows are translated when read rather than rewritten by the migration.
struct HistoryTranslation: Sendable {
    /// Where one entity of an earlier model is now.
    struct Entity: Sendable, Hashable {
        /// Its current name.
        var name: String
        /// Keys renamed since (old → current).
        var renamedKeys: [String: String] = [:]
        /// Keys removed since.
        var removedKeys: Set<String> = []

        /// The current name of `key`; `nil` when it was removed.
        func key(_ key: String) -> String? {
            if removedKeys.contains(key) { return nil }
            return renamedKeys[key] ?? key
        }
    }

    /// One earlier model's rows: up to `lastTxn`, each mentioned entity's translation (`nil`: removed since).
    struct Era: Sendable {
        var lastTxn: Int64
        var entities: [String: Entity?]

        /// The translation of the entity named `name` in this era: `.some(nil)` when it was removed since, `nil`
        /// when no migration since touched it.
        func entity(_ name: String) -> Entity?? { entities[name] }
    }

    /// Oldest first.
    let eras: [Era]

    /// No earlier model: every row reads as it is.
    static let none = HistoryTranslation(previousVersions: [])

    init(previousVersions: [PreviousModelVersion]) {
        let steps = previousVersions
        var eras: [Era] = []
        for k in steps.indices {
            let later = steps[k...]
            var names: Set<String> = []
            for step in later {
                names.formUnion(step.renamedEntities.keys)
                names.formUnion(step.renamedEntities.values)
                names.formUnion(step.removedEntities)
                names.formUnion(step.renamedKeys.keys)
                names.formUnion(step.removedKeys.keys)
            }
            var entities: [String: Entity?] = [:]
            for name in names {
                // The entity's name as each later migration knew it.
                var chain: [(step: PreviousModelVersion, name: String)] = []
                var current: String? = name
                for step in later {
                    guard let here = current else { break }
                    if step.removedEntities.contains(here) {
                        current = nil
                        break
                    }
                    chain.append((step, here))
                    current = step.renamedEntities[here] ?? here
                }
                guard let final = current else {
                    entities[name] = .some(nil)
                    continue
                }
                var translation = Entity(name: final)
                var keys: Set<String> = []
                for (step, here) in chain {
                    if let renamed = step.renamedKeys[here] {
                        keys.formUnion(renamed.keys)
                        keys.formUnion(renamed.values)
                    }
                    keys.formUnion(step.removedKeys[here] ?? [])
                }
                for key in keys {
                    var traced: String? = key
                    for (step, here) in chain {
                        guard let now = traced else { break }
                        let removed = step.removedKeys[here]?.contains(now) ?? false
                        traced = removed ? nil : step.renamedKeys[here]?[now] ?? now
                    }
                    if let traced {
                        if traced != key { translation.renamedKeys[key] = traced }
                    } else {
                        translation.removedKeys.insert(key)
                    }
                }
                if final != name || !translation.renamedKeys.isEmpty || !translation.removedKeys.isEmpty {
                    entities[name] = translation
                }
            }
            eras.append(Era(lastTxn: steps[k].lastTxn, entities: entities))
        }
        self.eras = eras
    }

    /// The era of the row of `txn`; `nil` for a row of the current model.
    func era(ofTxn txn: Int64) -> Era? {
        guard let last = eras.last, txn <= last.lastTxn else { return nil }
        return eras.first { txn <= $0.lastTxn }
    }
}
