import Foundation
import SiteStore

/// Persists controller snapshots in the database they describe, keyed by cache name, and valid only for
/// the same request (fingerprint), the same definitions of the tables it reads, and the same data generation.
struct SnapshotCache {
    let database: Database
    static let formatVersion: UInt8 = 2

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
    /// They come in `OrderedRows` chunks, and their keys are ranges of the cached bytes, not copies.
    func restore(name: String, compiled: CompiledRequest, generation: Int64) throws -> [[OrderedRows.Entry]]? {
        guard try database.tableExists("results_controller_cache") else { return nil }
        let rows = try database.fetchAll(
            "SELECT fingerprint, schema, generation, snapshot FROM results_controller_cache WHERE name = ?", [.text(name)])
        guard let row = rows.first, row["fingerprint"] == .text(compiled.request.fingerprint),
            row["schema"] == .text(try schemaFingerprint(compiled)), row["generation"]?.int64Value == generation,
            case .blob(let bytes)? = row["snapshot"]
        else { return nil }
        return SnapshotReader(bytes: bytes).entries(keyCount: compiled.ordering.descriptors.count)
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

/// Snapshot bytes: the format version, the entry count (8 bytes, little-endian), then per entry its id
/// (zigzag varint), its version (8 bytes), the length of its key (varint) and the key's bytes as
/// `SortKey` encodes them, so that a restored key can be a range of the snapshot.
private struct SnapshotWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func integer(_ value: Int64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func entry(_ entry: OrderedRows.Entry) {
        varint(UInt64(bitPattern: (entry.id << 1) ^ (entry.id >> 63)))
        integer(entry.version)
        entry.key.withUnsafeBytes { key in
            varint(UInt64(key.count))
            bytes.append(contentsOf: key)
        }
    }
}

/// Reads what `SnapshotWriter` wrote, checking every length against the bytes: a damaged snapshot is
/// `nil`, never a crash.
private struct SnapshotReader {
    let bytes: [UInt8]

    func entries(keyCount: Int) -> [[OrderedRows.Entry]]? {
        bytes.withUnsafeBytes { buffer -> [[OrderedRows.Entry]]? in
            // Keys share the snapshot's bytes; past 4 GiB a key's range no longer fits its offsets.
            guard buffer.count < Int(UInt32.max), buffer.count >= 9, buffer[0] == SnapshotCache.formatVersion else { return nil }
            var count: UInt64 = 0
            withUnsafeMutableBytes(of: &count) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[1..<9])) }
            count = UInt64(littleEndian: count)
            // Every entry takes at least 10 bytes: a count beyond that is damage, not a reason to reserve.
            guard count <= UInt64(buffer.count / 10) else { return nil }
            let fill = OrderedRows.initialChunkFill
            var chunks: [[OrderedRows.Entry]] = []
            chunks.reserveCapacity((Int(count) + fill - 1) / fill)
            var chunk: [OrderedRows.Entry] = []
            var position = 9
            for _ in 0..<count {
                if chunk.count == fill {
                    chunks.append(chunk)
                    chunk = []
                }
                if chunk.isEmpty { chunk.reserveCapacity(fill) }
                guard let zigzag = varint(buffer, &position), position + 8 <= buffer.count else { return nil }
                let id = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
                var version: Int64 = 0
                withUnsafeMutableBytes(of: &version) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[position..<(position + 8)])) }
                position += 8
                guard let length = varint(buffer, &position), length <= UInt64(buffer.count - position) else { return nil }
                let range = position..<(position + Int(length))
                guard SortKey.validLength(of: UnsafeRawBufferPointer(rebasing: buffer[range]), count: keyCount) == range.count else { return nil }
                position = range.upperBound
                chunk.append(OrderedRows.Entry(id: id, key: SortKey(sharing: bytes, range: range), version: Int64(littleEndian: version)))
            }
            if !chunk.isEmpty { chunks.append(chunk) }
            return position == buffer.count ? chunks : nil
        }
    }

    private func varint(_ buffer: UnsafeRawBufferPointer, _ position: inout Int) -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: UInt64(0), to: 70, by: 7) {
            guard position < buffer.count else { return nil }
            let byte = buffer[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
        }
        return nil
    }
}
