import CSQLite

/// A prepared SQL statement: bind arguments, step through rows, reset, run again.
///
/// A statement belongs to the `Database` that prepared it and must be used on the thread that uses
/// that database; it is finalized when released.
public final class Statement {
    /// The SQL text it was prepared from.
    public let sql: String
    private let handle: OpaquePointer
    private unowned let database: Database
    private var arguments: [DatabaseValue] = []

    init(database: Database, sql: String) throws {
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard code == SQLITE_OK, let handle else {
            throw SQLiteError(code: code, message: database.message(for: code), sql: sql)
        }
        self.sql = sql
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// The names of the result columns, in order.
    public lazy var columnNames: [String] = (0..<sqlite3_column_count(handle)).map {
        String(cString: sqlite3_column_name(handle, $0))
    }

    /// Resets the statement and binds `arguments` to its parameters, in order.
    public func bind(_ arguments: [DatabaseValue]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        self.arguments = arguments
        for (offset, value) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .null: code = sqlite3_bind_null(handle, index)
            case .integer(let number): code = sqlite3_bind_int64(handle, index, number)
            case .real(let number): code = sqlite3_bind_double(handle, index, number)
            case .text(let text):
                // Not the implicit String-to-pointer conversion: for a string of up to 15 bytes (a key, a date,
                // a state, a tag) that allocates a copy; `withCString` lends those from the stack.
                // With its length, not up to the first NUL: a NUL inside a value must not cut the rest off.
                code = text.withCString { sqlite3_bind_text(handle, index, $0, Int32(text.utf8.count), SQLITE_TRANSIENT) }
            case .blob(let bytes):
                code = bytes.withUnsafeBytes {
                    sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), SQLITE_TRANSIENT)
                }
            }
            guard code == SQLITE_OK else { throw error(code) }
        }
    }

    /// Advances to the next row; `false` when the statement is done.
    public func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw error(code)
        }
    }

    /// Ends the current run, releasing the read it holds (a statement left mid-result keeps its tables locked).
    public func reset() {
        sqlite3_reset(handle)
    }

    /// Runs the statement to completion with `arguments`, ignoring any rows.
    public func execute(_ arguments: [DatabaseValue] = []) throws {
        try bind(arguments)
        while try step() {}
    }

    /// Runs the query with `arguments` and calls `body` for each row.
    public func forEachRow(_ arguments: [DatabaseValue] = [], _ body: (Statement) throws -> Void) throws {
        try bind(arguments)
        while try step() { try body(self) }
    }

    /// Runs the query and returns every row, each as a `Row` of column name to value.
    public func fetchAll(_ arguments: [DatabaseValue] = []) throws -> [Row] {
        var rows: [Row] = []
        let names = columnNames
        try forEachRow(arguments) { statement in
            rows.append(Row(columns: names, values: (0..<names.count).map { statement.value(at: $0) }))
        }
        return rows
    }

    /// The value of column `index` of the current row.
    public func value(at index: Int) -> DatabaseValue {
        let column = Int32(index)
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT: return .text(text(at: column))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let base = sqlite3_column_blob(handle, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: base, count: count)))
        default: return .null
        }
    }

    /// Column `index` of the current row as an integer (0 when NULL), without boxing.
    public func int64(at index: Int) -> Int64 { sqlite3_column_int64(handle, Int32(index)) }

    /// Column `index` of the current row as a real number (0 when NULL).
    public func double(at index: Int) -> Double { sqlite3_column_double(handle, Int32(index)) }

    /// Calls `body` with the UTF-8 bytes of column `index` of the current row, without making a string.
    public func withText<T>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let column = Int32(index)
        let base = sqlite3_column_text(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return try body(UnsafeRawBufferPointer(start: base, count: base == nil ? 0 : count))
    }

    /// The storage class of column `index` of the current row.
    public func storageClass(at index: Int) -> DatabaseValue.StorageClass {
        switch sqlite3_column_type(handle, Int32(index)) {
        case SQLITE_INTEGER: return .integer
        case SQLITE_FLOAT: return .real
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }

    /// Calls `body` with the bytes of blob column `index` of the current row, without copying them.
    public func withBlob<T>(at index: Int, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        let column = Int32(index)
        let base = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return body(UnsafeRawBufferPointer(start: base, count: base == nil ? 0 : count))
    }

    /// Whether column `index` of the current row is NULL.
    public func isNull(at index: Int) -> Bool { sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL }

    /// Column `index` of the current row as text, `nil` when NULL.
    public func string(at index: Int) -> String? {
        sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL ? nil : text(at: Int32(index))
    }

    /// The text of `column`, all its bytes (a NUL inside it included, which a C string would end at).
    private func text(at column: Int32) -> String {
        guard let base = sqlite3_column_text(handle, column) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: base, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
    }

    private func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, message: database.message(for: code), sql: sql, arguments: arguments)
    }
}

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
private let SQLITE_TRANSIENT = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
