import SiteStore

extension FetchRequest {
    /// SQLite's collations that the controller's own comparison knows (`RowOrdering.Collation`).
    static let knownCollations: Set<String> = ["BINARY", "NOCASE", "RTRIM"]

    /// The request as SQLite will order it: each sort key without a collation of its own takes the one its
    /// column declares (`name TEXT COLLATE NOCASE`), so that the controller's comparison of rows agrees
    /// with the query's order. Refuses a collation the comparison does not know, and a section key under
    /// any but BINARY: NOCASE puts `b`, `B`, `b` side by side while sections are named by the exact value,
    /// so they would not be contiguous (NSFetchedResultsController refuses such section names too).
    func resolved(in database: Database) throws -> FetchRequest {
        var resolved = self
        for index in resolved.sortDescriptors.indices where resolved.sortDescriptors[index].collation == nil {
            let key = resolved.sortDescriptors[index].key
            let (table, column) = tableAndColumn(of: key)
            if let declared = database.declaredCollation(of: column, in: table), declared.uppercased() != "BINARY" {
                resolved.sortDescriptors[index].collation = declared
            }
        }
        for descriptor in resolved.sortDescriptors {
            guard let collation = descriptor.collation, !Self.knownCollations.contains(collation.uppercased()) else { continue }
            throw ResultsControllerError.invalidRequest(
                "'\(descriptor.key)' sorts under the collation \(collation); a controller compares rows under BINARY, NOCASE or RTRIM only")
        }
        if let sectionKey, let collation = resolved.sortDescriptors.first?.collation, collation.uppercased() != "BINARY" {
            throw ResultsControllerError.invalidRequest(
                "the section key '\(sectionKey)' sorts under the collation \(collation), which puts values that differ "
                    + "(as 'b' and 'B' do) side by side, while sections are named by the exact value; sort it BINARY "
                    + "(store the value as the sections should be named, e.g. lower-cased)")
        }
        return resolved
    }

    /// Why changesets cannot name the request's rows, if they cannot: the table (and each related table)
    /// needs a single INTEGER PRIMARY KEY, which a session names rows by, and `idColumn` must be that key
    /// (or the rowid it is another name for). A text key read as an id is 0, and a table without a key is
    /// not tracked at all: either way every delta would be empty. A table that does not exist is left to
    /// the fetch, which says so.
    func trackingProblem(in database: Database) -> ResultsControllerError? {
        do {
            try checkTracking(in: database)
            return nil
        } catch let error as ResultsControllerError {
            return error
        } catch {
            return nil
        }
    }

    private func checkTracking(in database: Database) throws {
        for table in [self.table] + relationships.map(\.table) where try database.tableExists(table) {
            let key = try database.primaryKey(of: table)
            guard key.count == 1, key[0].type.uppercased() == "INTEGER" else {
                throw ResultsControllerError.invalidRequest(
                    "table '\(table)' has no INTEGER PRIMARY KEY, by which changesets name its rows "
                        + "(declare one, e.g. `id INTEGER PRIMARY KEY`)")
            }
            guard table == self.table else { continue }
            let id = idColumn.lowercased()
            guard id == key[0].name.lowercased() || ["rowid", "oid", "_rowid_"].contains(id) else {
                throw ResultsControllerError.invalidRequest(
                    "the id column '\(idColumn)' is not the primary key of '\(table)' ('\(key[0].name)'), by which changesets name its rows")
            }
        }
    }

    /// The table and column a sort key reads: `details.closed` is `closed` of the related table.
    private func tableAndColumn(of key: String) -> (table: String, column: String) {
        guard let dot = key.firstIndex(of: "."), let relationship = relationships.first(where: { $0.name == key[..<dot] }) else {
            return (table, key)
        }
        return (relationship.table, String(key[key.index(after: dot)...]))
    }
}
