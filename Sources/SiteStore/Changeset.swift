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
        /// The column values (in the table's column order) that rows had before the changes, by id, as the
        /// session recorded them: every column of a deleted row; of an updated row, the columns that changed
        /// (NULL for the others). A row that referred to a row by one of its keys is found by the key it named,
        /// when that row is deleted or its key changed (its id taken by another row). Only a tracked
        /// transaction fills it; `encoded` does not keep it, and a merge keeps a row's first values (its key
        /// before the changesets), even when the id is inserted again. Not part of equality: it describes
        /// the rows, not what changed.
        public var deletedValues: [Int64: [DatabaseValue]] = [:]

        /// Makes the changes of one table.
        public init(inserted: Set<Int64> = [], updated: Set<Int64> = [], deleted: Set<Int64> = []) {
            self.inserted = inserted
            self.updated = updated
            self.deleted = deleted
        }

        /// Whether nothing changed.
        public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

        public static func == (lhs: TableChanges, rhs: TableChanges) -> Bool {
            lhs.inserted == rhs.inserted && lhs.updated == rhs.updated && lhs.deleted == rhs.deleted
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(inserted)
            hasher.combine(updated)
            hasher.combine(deleted)
        }
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
            for (id, values) in changes.deletedValues where merged.deletedValues[id] == nil { merged.deletedValues[id] = values }
            for id in changes.deleted {
                if merged.inserted.remove(id) == nil { merged.deleted.insert(id) }
                merged.updated.remove(id)
            }
            tables[table] = merged.isEmpty ? nil : merged
        }
    }

    /// The changes as text, for a build to keep for the next one (`init(encoded:)` reads it back): the
    /// generations on the first line, then a line per table and one per kind of change.
    public var encoded: String {
        var lines = ["\(baseGeneration.map(String.init) ?? "-") \(generation.map(String.init) ?? "-")"]
        for (table, changes) in tables.sorted(by: { $0.key < $1.key }) {
            lines.append("table " + table)
            for (kind, ids) in [("inserted", changes.inserted), ("updated", changes.updated), ("deleted", changes.deleted)] where !ids.isEmpty {
                lines.append(kind + " " + ids.sorted().map(String.init).joined(separator: ","))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Reads what `encoded` wrote; nil for text it did not write.
    public init?(encoded text: String) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
        guard let first = lines.popFirst() else { return nil }
        let generations = first.split(separator: " ")
        guard generations.count == 2 else { return nil }
        self.init()
        baseGeneration = Int64(generations[0])
        generation = Int64(generations[1])
        var table: String?
        for line in lines {
            guard let space = line.firstIndex(of: " ") else { return nil }
            let kind = line[..<space], rest = line[line.index(after: space)...]
            if kind == "table" { table = String(rest); continue }
            guard let table else { return nil }
            var ids = Set<Int64>()
            for part in rest.split(separator: ",") {
                guard let id = Int64(part) else { return nil }
                ids.insert(id)
            }
            switch kind {
            case "inserted": tables[table, default: TableChanges()].inserted = ids
            case "updated": tables[table, default: TableChanges()].updated = ids
            case "deleted": tables[table, default: TableChanges()].deleted = ids
            default: return nil
            }
        }
    }
}
