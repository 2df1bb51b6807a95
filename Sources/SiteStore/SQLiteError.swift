import CSQLite

/// An error reported by SQLite, with the statement and arguments that caused it.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The primary result code (`SQLITE_CONSTRAINT`, `SQLITE_INTERRUPT`, …).
    public let code: Int32
    /// SQLite's own message.
    public let message: String
    /// The SQL being prepared or run, when there was one.
    public let sql: String?
    /// The arguments bound to it.
    public let arguments: [DatabaseValue]

    /// Makes an error from SQLite's result code and message.
    public init(code: Int32, message: String, sql: String? = nil, arguments: [DatabaseValue] = []) {
        self.code = code
        self.message = message
        self.sql = sql
        self.arguments = arguments
    }

    /// Whether the statement was stopped by `sqlite3_interrupt` (a cancelled task).
    public var isInterrupt: Bool { code & 0xff == SQLITE_INTERRUPT }

    /// Whether `code` says the database's file failed (a full disk, a read-only folder, an I/O error)
    /// rather than the SQL: then the statement is no help to whoever reads the error.
    static func isAboutTheFile(_ code: Int32) -> Bool {
        [SQLITE_IOERR, SQLITE_FULL, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM].contains(code & 0xff)
    }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if Self.isAboutTheFile(code) { return text }
        if let sql { text += " — while executing `\(sql)`" }
        if !arguments.isEmpty { text += " with arguments \(arguments)" }
        return text
    }
}
