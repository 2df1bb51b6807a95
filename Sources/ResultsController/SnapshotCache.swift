import Foundation
import SiteStore

/// Persists controller snapshots in the database they describe, keyed by cache name, and valid only for
/// the same request (fingerprint), the same definitions of the tables it reads, and the same data generation.
struct SnapshotCache {
    let database: Database
    private static let formatVersion: UInt8 = 1

    private func ensureTable() throws {
        try database.execute("""
            CREATE TABLE IF NOT EXISTS results_controller_cache (
                name TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, schema TEXT NOT NULL,
                generation INTEGER NOT NULL, snapshot BLOB NOT NULL)
            """)
    }

    /// The definitions of the tables the request reads; unrelated schema changes leave the cache valid.
    private func schemaFingerprint(_ compiled: CompiledRequest) throws -> String {
        let tables = [compiled.request.table] + compiled.request.relationships.map(\.table)
        let list = Array(repeating: "?", count: tables.count).joined(separator: ",")
        return try database.fetchAll(
            "SELECT type, name, sql FROM sqlite_master WHERE tbl_name IN (\(list)) AND type = 'table' ORDER BY name",
            tables.map { .text($0) }
        ).map { "\($0["name"]?.stringValue ?? ""): \($0["sql"]?.stringValue ?? "")" }.joined(separator: "\n")
    }

    func save(name: String, compiled: CompiledRequest, rows: OrderedRows, generation: Int64) throws {
        try ensureTable()
        var writer = SnapshotWriter()
        // About an id, a version and a short key per row: grown once, not doubled a dozen times.
        writer.bytes.reserveCapacity(rows.count * 48)
        writer.byte(Self.formatVersion)
        writer.integer(Int64(rows.count))
        for chunk in rows.chunks { for entry in chunk { writer.entry(entry) } }
        try database.execute(
            "INSERT OR REPLACE INTO results_controller_cache (name, fingerprint, schema, generation, snapshot) VALUES (?, ?, ?, ?, ?)",
            [.text(name), .text(compiled.request.fingerprint), .text(try schemaFingerprint(compiled)), .integer(generation), .blob(writer.bytes)])
    }

    /// The cached entries when they match the request, the schema and `generation`; `nil` otherwise.
    func restore(name: String, compiled: CompiledRequest, generation: Int64) throws -> [OrderedRows.Entry]? {
        guard try database.tableExists("results_controller_cache") else { return nil }
        let rows = try database.fetchAll(
            "SELECT fingerprint, schema, generation, snapshot FROM results_controller_cache WHERE name = ?", [.text(name)])
        guard let row = rows.first, row["fingerprint"] == .text(compiled.request.fingerprint),
            row["schema"] == .text(try schemaFingerprint(compiled)), row["generation"]?.int64Value == generation,
            case .blob(let bytes)? = row["snapshot"]
        else { return nil }
        var reader = SnapshotReader(bytes: bytes)
        guard reader.byte() == Self.formatVersion, let count = reader.integer(), count >= 0 else { return nil }
        var entries: [OrderedRows.Entry] = []
        entries.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let entry = reader.entry() else { return nil }
            entries.append(entry)
        }
        return entries
    }

    /// Marks the snapshot cached under `name` as current at `generation`: the changes since touched none of
    /// its rows, so the entries are the same and need not be written again.
    func advance(name: String, to generation: Int64) throws {
        guard try database.tableExists("results_controller_cache") else { return }
        try database.execute("UPDATE results_controller_cache SET generation = ? WHERE name = ?", [.integer(generation), .text(name)])
    }

    func deleteAll() throws {
        guard try database.tableExists("results_controller_cache") else { return }
        try database.execute("DELETE FROM results_controller_cache")
    }

    func delete(name: String) throws {
        guard try database.tableExists("results_controller_cache") else { return }
        try database.execute("DELETE FROM results_controller_cache WHERE name = ?", [.text(name)])
    }
}

/// Little-endian encoding of snapshot entries: id, version, key count, then each key value tagged by type.
private struct SnapshotWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func integer(_ value: Int64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func entry(_ entry: OrderedRows.Entry) {
        integer(entry.id)
        integer(entry.version)
        byte(UInt8(entry.key.values.count))
        for value in entry.key.values {
            switch value {
            case .null: byte(0)
            case .integer(let number): byte(1); integer(number)
            case .real(let number): byte(2); integer(Int64(bitPattern: number.bitPattern))
            case .text(let text): byte(3); integer(Int64(text.utf8.count)); bytes.append(contentsOf: text.utf8)
            case .blob(let blob): byte(4); integer(Int64(blob.count)); bytes.append(contentsOf: blob)
            }
        }
    }
}

private struct SnapshotReader {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func byte() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func integer() -> Int64? {
        guard position + 8 <= bytes.count else { return nil }
        var value: Int64 = 0
        for index in 0..<8 { value |= Int64(bytes[position + index]) << (8 * index) }
        position += 8
        return value
    }

    mutating func entry() -> OrderedRows.Entry? {
        guard let id = integer(), let version = integer(), let count = byte() else { return nil }
        var values: [DatabaseValue] = []
        values.reserveCapacity(Int(count))
        for _ in 0..<count {
            switch byte() {
            case 0: values.append(.null)
            case 1: guard let number = integer() else { return nil }; values.append(.integer(number))
            case 2: guard let bits = integer() else { return nil }; values.append(.real(Double(bitPattern: UInt64(bitPattern: bits))))
            case 3, 4:
                let tag = bytes[position - 1]
                guard let length = integer(), length >= 0, position + Int(length) <= bytes.count else { return nil }
                let range = position..<(position + Int(length))
                position += Int(length)
                // Texts straight from the snapshot's bytes: a restore decodes hundreds of thousands of keys.
                values.append(tag == 3 ? .text(bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) })
                                       : .blob(Array(bytes[range])))
            default: return nil
            }
        }
        return OrderedRows.Entry(id: id, key: SortKey(values), version: version)
    }
}
