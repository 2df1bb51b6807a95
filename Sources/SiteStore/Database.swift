import CSQLite
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A connection to one SQLite database file: the only place sitegen opens SQLite.
///
/// ```swift
/// let db = try Database(path: ".sitegen/store.sqlite")
/// try db.transaction {
///     try db.execute("INSERT INTO t(name) VALUES (?)", ["a"])
/// }
/// ```
/// A connection is used by one task at a time; it is closed when released.
public final class Database {
    let handle: OpaquePointer
    private var statementCache: [String: Statement] = [:]
    private var traceCounter: UnsafeMutablePointer<Int>

    /// Opens (creating if needed) the database at `path`; `":memory:"` opens a private in-memory one.
    /// `readOnly` opens an existing database for reading beside a connection that writes it.
    public init(path: String, readOnly: Bool = false) throws {
        _ = Self.configureSQLite
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw SQLiteError(code: code, message: "cannot open \(path): \(message)")
        }
        self.handle = handle
        traceCounter = .allocate(capacity: 1)
        traceCounter.initialize(to: 0)
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5_000)
        // Each statement run is counted so tests can assert how many queries an operation costs.
        sqlite3_trace_v2(handle, UInt32(SQLITE_TRACE_STMT), { _, context, _, _ in
            context?.assumingMemoryBound(to: Int.self).pointee += 1
            return 0
        }, traceCounter)
        try execute("PRAGMA foreign_keys = ON")
        // Savepoints (of the files loaded, decisions.md 23) and sorts spill to temporary files otherwise, written
        // through the kernel to /tmp: a fifth of the main thread's time in a load of Markdown files.
        try execute("PRAGMA temp_store = MEMORY")
        // A build reads every row of a large collection a few times over (listings, taxonomies, detail
        // pages); 2 MB of cache sent most of those reads back to the kernel.
        try execute("PRAGMA cache_size = -32768")
        // A reader finds the journal mode in the file (WAL, set by the writer) and changes nothing.
        if path != ":memory:" && !readOnly {
            try execute("PRAGMA journal_mode = WAL")
            try execute("PRAGMA synchronous = NORMAL")
        }
    }

    /// Set once, before the first connection (SQLite refuses configuration once it is initialized).
    /// Without memory statistics, which sitegen never reads, SQLite's allocations take no process-wide
    /// lock: Debian builds it thread-safe, and every connection's every allocation took and released it
    /// (2.4% of the build thread's samples while it loads).
    private static let configureSQLite: Void = {
        _ = sitegen_sqlite3_config_memstatus(0)
    }()

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
        traceCounter.deallocate()
    }

    /// How many statements have started executing on this connection (for cost assertions in tests).
    public var executedStatementCount: Int { traceCounter.pointee }

    var lastErrorMessage: String { message(for: sqlite3_extended_errcode(handle)) }

    /// SQLite's message for the failure `code` just returned, with, when the database's file failed, what
    /// the system said and which file it was: "disk I/O error" alone reads as failing hardware.
    func message(for code: Int32, _ given: String? = nil) -> String {
        let message = given ?? String(cString: sqlite3_errmsg(handle))
        guard SQLiteError.isAboutTheFile(code) else { return message }
        let system = sqlite3_system_errno(handle)
        let file = sqlite3_db_filename(handle, "main").map { String(cString: $0) } ?? ""
        return message + (system != 0 ? " (\(String(cString: strerror(system))))" : "") + (file.isEmpty ? "" : " in \(file)")
    }

    /// Prepares `sql`, reusing a cached statement for the same text.
    public func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statementCache[sql] { return statement }
        let statement = try Statement(database: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    /// Prepares `sql` as a new statement that the caller owns.
    public func makeStatement(_ sql: String) throws -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// Ends every statement's run on this connection, so that none holds a read of the store open: a
    /// connection kept for later work must see what is committed after now.
    public func endReads() {
        var statement = sqlite3_next_stmt(handle, nil)
        while let current = statement {
            sqlite3_reset(current)
            statement = sqlite3_next_stmt(handle, current)
        }
    }

    /// Runs one statement with bound `arguments`.
    public func execute(_ sql: String, _ arguments: [DatabaseValue] = []) throws {
        try cachedStatement(sql).execute(arguments)
    }

    /// Runs several `;`-separated statements that take no arguments (schema scripts).
    public func executeScript(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            throw SQLiteError(code: code, message: self.message(for: code, message.map { String(cString: $0) }), sql: sql)
        }
    }

    /// Runs `sql` and returns every row.
    public func fetchAll(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> [Row] {
        try cachedStatement(sql).fetchAll(arguments)
    }

    /// Runs `sql` and returns the first column of the first row, or `nil` when there is none.
    public func fetchValue(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> DatabaseValue? {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        return try statement.step() ? statement.value(at: 0) : nil
    }

    /// The rowid of the last row inserted on this connection.
    public var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// How many rows the last INSERT, UPDATE or DELETE changed.
    public var changesCount: Int { Int(sqlite3_changes(handle)) }

    /// Whether a transaction is open.
    public var isInsideTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body` inside one transaction: committed when it returns, rolled back when it throws.
    /// Inside another transaction it is a savepoint of that one, so that a dry run can hold a whole build
    /// in one transaction and roll it back.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        let nested = sqlite3_get_autocommit(handle) == 0
        try execute(nested ? "SAVEPOINT sitegen_nested" : "BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute(nested ? "RELEASE sitegen_nested" : "COMMIT")
            return result
        } catch {
            if nested {
                try? execute("ROLLBACK TO sitegen_nested")
                try? execute("RELEASE sitegen_nested")
            } else {
                try? execute("ROLLBACK")
            }
            throw error
        }
    }

    /// Asks any running statement on this connection to stop; it fails with `SQLITE_INTERRUPT`.
    /// Safe to call from another thread.
    public func interrupt() { sqlite3_interrupt(handle) }

    /// A value another task may hold to interrupt this connection's running statement (a cancelled fetch).
    public var interrupter: Interrupter { Interrupter(handle: handle) }

    /// Whether `table` exists in the main schema.
    public func tableExists(_ table: String) throws -> Bool {
        try fetchValue("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(table)]) != nil
    }

    /// The columns of `table`'s PRIMARY KEY with their declared types (empty for a table without one, and
    /// for a view or a table that does not exist).
    public func primaryKey(of table: String) throws -> [(name: String, type: String)] {
        try fetchAll("SELECT name, type FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", [.text(table)]).map {
            guard case .text(let name) = $0.values[0] else { return ("", "") }
            guard case .text(let type) = $0.values[1] else { return (name, "") }
            return (name, type)
        }
    }

    /// The collation `column` of `table` declares (`BINARY` when it names none; the aliased column's for
    /// `rowid`); nil when there is no such table or column.
    public func declaredCollation(of column: String, in table: String) -> String? {
        var type: UnsafePointer<CChar>?, collation: UnsafePointer<CChar>?
        var notNull: Int32 = 0, primaryKey: Int32 = 0, autoIncrement: Int32 = 0
        guard sqlite3_table_column_metadata(handle, "main", table, column, &type, &collation, &notNull, &primaryKey,
                                            &autoIncrement) == SQLITE_OK
        else { return nil }
        return collation.map { String(cString: $0) } ?? "BINARY"
    }
}

/// Quotes `identifier` for use as an SQL table or column name.
public func quoteIdentifier(_ identifier: String) -> String {
    // Without Foundation's search and replace: statements are built per source file, and names rarely hold quotes.
    "\"" + (identifier.utf8.contains(UInt8(ascii: "\"")) ? identifier.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") : identifier) + "\""
}

/// Interrupts one connection's running statement from any thread; `sqlite3_interrupt` is documented as safe for that.
public struct Interrupter: @unchecked Sendable {
    fileprivate let handle: OpaquePointer

    /// Makes the running statement, if any, fail with `SQLITE_INTERRUPT`.
    public func interrupt() { sqlite3_interrupt(handle) }
}
