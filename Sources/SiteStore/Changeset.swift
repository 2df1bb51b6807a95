/// What one committed load changed: per table, the row ids inserted, updated and deleted.
public struct Changeset: Sendable, Hashable {
    /// The changes to one table.
    public struct TableChanges: Sendable, Hashable {
        /// Ids of rows that are new.
        public var inserted: Set<Int64> = []
        /// Ids of rows whose content changed.
        public var updated: Set<Int64> = []
        /// Ids of rows that are gone.
        public var deleted: Set<Int64> = []

        /// Makes the changes of one table.
        public init(inserted: Set<Int64> = [], updated: Set<Int64> = [], deleted: Set<Int64> = []) {
            self.inserted = inserted
            self.updated = updated
            self.deleted = deleted
        }

        /// Whether nothing changed.
        public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
    }

    /// Table name to its changes; tables with no change are absent.
    public var tables: [String: TableChanges]
    /// The database generation the changes were made on, when tracked (see `Database.trackingChanges`).
    public var baseGeneration: Int64?
    /// The generation they produced.
    public var generation: Int64?

    /// Makes a changeset; tables without changes are dropped.
    public init(tables: [String: TableChanges] = [:]) {
        self.tables = tables.filter { !$0.value.isEmpty }
    }

    /// Whether no table changed.
    public var isEmpty: Bool { tables.isEmpty }

    /// Adds `other`'s changes to these (later changes to the same row win: insert then delete is nothing).
    public mutating func merge(_ other: Changeset) {
        if baseGeneration == nil { baseGeneration = other.baseGeneration }
        generation = other.generation ?? generation
        for (table, changes) in other.tables {
            // Taken out of the dictionary, so the sets are changed in place rather than copied per merge.
            var merged = tables.removeValue(forKey: table) ?? TableChanges()
            for id in changes.inserted {
                if merged.deleted.remove(id) != nil { merged.updated.insert(id) } else { merged.inserted.insert(id) }
            }
            for id in changes.updated where !merged.inserted.contains(id) { merged.updated.insert(id) }
            for id in changes.deleted {
                if merged.inserted.remove(id) == nil { merged.deleted.insert(id) }
                merged.updated.remove(id)
            }
            tables[table] = merged.isEmpty ? nil : merged
        }
    }
}
