import CSQLite

/// Change tracking through SQLite's session extension: the net rows inserted, updated and deleted by one
/// transaction, per table, as SQLite itself recorded them (so raw SQL, triggers and cascades are seen too).
///
/// Only tables with a declared PRIMARY KEY are tracked (a session's requirement); every committed
/// tracked transaction that changes something also advances the database's `generation`.
extension Database {
    /// Runs `body` in one transaction and returns what it changed. On error nothing is committed.
    public func trackingChanges<T>(_ body: () throws -> T) throws -> (value: T, changeset: Changeset) {
        try ensureGenerationTable()
        try execute("BEGIN IMMEDIATE")
        var session: OpaquePointer?
        do {
            var code = sqlite3session_create(handle, "main", &session)
            guard code == SQLITE_OK, let session else { throw SQLiteError(code: code, message: "cannot create a change-tracking session") }
            defer { sqlite3session_delete(session) }
            code = sqlite3session_attach(session, nil)
            guard code == SQLITE_OK else { throw SQLiteError(code: code, message: lastErrorMessage) }
            let value = try body()
            var changeset = try Self.changeset(of: session)
            changeset.tables["sitegen_generation"] = nil
            let base = generation
            if !changeset.isEmpty {
                try execute("UPDATE sitegen_generation SET value = value + 1")
                changeset.baseGeneration = base
                changeset.generation = base + 1
            } else {
                changeset.baseGeneration = base
                changeset.generation = base
            }
            try execute("COMMIT")
            return (value, changeset)
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// A counter advanced by every tracked transaction that changed something; caches record it to know
    /// whether the data they describe is still current.
    public var generation: Int64 {
        (try? fetchValue("SELECT value FROM sitegen_generation"))??.int64Value ?? 0
    }

    /// Stamps `changeset`, made by the transaction now open (its changes were gathered by hand rather than
    /// by a session), with the generation it starts from, and advances the generation when it changed
    /// something: controllers cached at the base generation can then catch up with it.
    public func advanceGeneration(for changeset: inout Changeset) throws {
        try ensureGenerationTable()
        let base = generation
        changeset.baseGeneration = base
        changeset.generation = base
        if !changeset.isEmpty {
            try execute("UPDATE sitegen_generation SET value = value + 1")
            changeset.generation = base + 1
        }
    }

    private func ensureGenerationTable() throws {
        if try !tableExists("sitegen_generation") {
            try executeScript("""
                CREATE TABLE IF NOT EXISTS sitegen_generation (value INTEGER NOT NULL);
                INSERT INTO sitegen_generation (value) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM sitegen_generation);
                """)
        }
    }

    /// A changeset's value (the session's own copy, valid while the iterator is on its row).
    private static func databaseValue(_ value: OpaquePointer) -> DatabaseValue {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: return .real(sqlite3_value_double(value))
        case SQLITE_TEXT: return .text(sqlite3_value_text(value).map { String(cString: $0) } ?? "")
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0, let bytes = sqlite3_value_blob(value) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }

    private static func changeset(of session: OpaquePointer) throws -> Changeset {
        var size: Int32 = 0
        var buffer: UnsafeMutableRawPointer?
        var code = sqlite3session_changeset(session, &size, &buffer)
        defer { sqlite3_free(buffer) }
        guard code == SQLITE_OK else { throw SQLiteError(code: code, message: "cannot read the session's changeset") }
        var tables: [String: Changeset.TableChanges] = [:]
        guard size > 0, let buffer else { return Changeset() }
        var iterator: OpaquePointer?
        code = sqlite3changeset_start(&iterator, size, buffer)
        guard code == SQLITE_OK, let iterator else { throw SQLiteError(code: code, message: "cannot iterate the changeset") }
        defer { sqlite3changeset_finalize(iterator) }
        while sqlite3changeset_next(iterator) == SQLITE_ROW {
            var name: UnsafePointer<CChar>?
            var columns: Int32 = 0
            var operation: Int32 = 0
            var indirect: Int32 = 0
            sqlite3changeset_op(iterator, &name, &columns, &operation, &indirect)
            var primaryKey: UnsafeMutablePointer<UInt8>?
            sqlite3changeset_pk(iterator, &primaryKey, &columns)
            guard let name, let primaryKey, let keyColumn = (0..<Int(columns)).first(where: { primaryKey[$0] != 0 }) else { continue }
            var value: OpaquePointer?
            if operation == SQLITE_INSERT {
                sqlite3changeset_new(iterator, Int32(keyColumn), &value)
            } else {
                sqlite3changeset_old(iterator, Int32(keyColumn), &value)
            }
            guard let value else { continue }
            let id = sqlite3_value_int64(value)
            let table = String(cString: name)
            switch operation {
            case SQLITE_INSERT: tables[table, default: .init()].inserted.insert(id)
            case SQLITE_DELETE:
                tables[table, default: .init()].deleted.insert(id)
                tables[table, default: .init()].deletedValues[id] = (0..<columns).map { column in
                    var old: OpaquePointer?
                    sqlite3changeset_old(iterator, column, &old)
                    return old.map(Self.databaseValue) ?? .null
                }
            default:
                tables[table, default: .init()].updated.insert(id)
                // The old values of the columns that changed (a key among them: the id reused by another row).
                tables[table, default: .init()].deletedValues[id] = (0..<columns).map { column in
                    var old: OpaquePointer?
                    sqlite3changeset_old(iterator, column, &old)
                    return old.map(Self.databaseValue) ?? .null
                }
            }
        }
        return Changeset(tables: tables)
    }
}
