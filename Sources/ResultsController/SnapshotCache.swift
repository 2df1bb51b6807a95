import Foundation
import SiteStore

/// Persists controller snapshots in the database they describe, keyed by cache name, and valid only for
/// the same request (fingerprint), the same definitions of the tables it reads, and the same data generation.
///
/// A snapshot is stored as its `OrderedRows` chunks, a row each, and a header that lists them in order.
/// A change touches a few chunks: saving after it writes those and the header, not every entry again
/// (at 100,000 records, rewriting whole snapshots wrote 46 MB a build, twice over with the WAL).
struct SnapshotCache {
    let database: Database
    static let formatVersion: UInt8 = 4

    /// What a restore finds: the entries in chunks, and each chunk's id.
    struct Restored {
        var chunks: [[OrderedRows.Entry]]
        var chunkIDs: [Int64]
    }

    private func ensureTables() throws {
        try database.execute("""
            CREATE TABLE IF NOT EXISTS results_controller_cache (
                name TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, schema TEXT NOT NULL,
                generation INTEGER NOT NULL, snapshot BLOB NOT NULL)
            """)
        try database.execute("""
            CREATE TABLE IF NOT EXISTS results_controller_chunks (
                name TEXT NOT NULL, chunk INTEGER NOT NULL, entries BLOB NOT NULL, PRIMARY KEY (name, chunk))
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

    /// Saves `rows` under `name`: the chunks whose ids are in `newChunks` (given since the last save) or
    /// not stored (a save that failed), the header listing every chunk, and no chunk of `name` that is no
    /// longer listed. A stored chunk with a listed id holds what it did when the id was given.
    func save(name: String, compiled: CompiledRequest, rows: OrderedRows, newChunks: Set<Int64>, generation: Int64) throws {
        try ensureTables()
        let listed = Set(rows.chunkIDs)
        let stored = Set(try database.cachedStatement("SELECT chunk FROM results_controller_chunks WHERE name = ?")
            .fetchAll([.text(name)]).compactMap { $0["chunk"]?.int64Value })
        let delete = try database.cachedStatement("DELETE FROM results_controller_chunks WHERE name = ? AND chunk = ?")
        for chunk in stored where !listed.contains(chunk) { try delete.execute([.text(name), .integer(chunk)]) }
        let insert = try database.cachedStatement("INSERT OR REPLACE INTO results_controller_chunks (name, chunk, entries) VALUES (?, ?, ?)")
        for (chunk, id) in zip(rows.chunks, rows.chunkIDs) where newChunks.contains(id) || !stored.contains(id) {
            var writer = SnapshotWriter()
            // About an id, a version and a short key per row: grown once, not doubled a dozen times.
            writer.bytes.reserveCapacity(chunk.count * 48)
            writer.varint(UInt64(chunk.count))
            for entry in chunk { writer.entry(entry) }
            try insert.execute([.text(name), .integer(id), .blob(writer.bytes)])
        }
        var header = SnapshotWriter()
        header.byte(Self.formatVersion)
        header.word(Int64(rows.count))
        header.varint(UInt64(rows.chunkIDs.count))
        for id in rows.chunkIDs { header.varint(UInt64(id)) }
        try database.execute(
            "INSERT OR REPLACE INTO results_controller_cache (name, fingerprint, schema, generation, snapshot) VALUES (?, ?, ?, ?, ?)",
            [.text(name), .text(compiled.request.fingerprint), .text(try schemaFingerprint(compiled)), .integer(generation), .blob(header.bytes)])
    }

    /// The cached entries when they match the request, the schema and `generation`; `nil` otherwise, or
    /// when anything stored is damaged. Their keys are ranges of the stored chunks' bytes, not copies.
    func restore(name: String, compiled: CompiledRequest, generation: Int64) throws -> Restored? {
        guard try database.tableExists("results_controller_cache"), try database.tableExists("results_controller_chunks") else { return nil }
        let schema = try schemaFingerprint(compiled)
        // One statement, so that the header and the chunks come from the same state of the store even
        // while another connection saves.
        let statement = try database.cachedStatement("""
            SELECT h.fingerprint, h.schema, h.generation, h.snapshot, c.chunk, c.entries FROM results_controller_cache AS h
            LEFT JOIN results_controller_chunks AS c ON c.name = h.name WHERE h.name = ?
            """)
        var header: [UInt8]?
        var stored: [Int64: [UInt8]] = [:]
        do {
            try statement.forEachRow([.text(name)]) { row in
                if header == nil {
                    guard row.value(at: 0) == .text(compiled.request.fingerprint), row.value(at: 1) == .text(schema),
                        row.value(at: 2) == .integer(generation), case .blob(let bytes) = row.value(at: 3)
                    else { throw StopReading() }
                    header = bytes
                }
                guard case .blob(let bytes) = row.value(at: 5) else { return }
                stored[row.int64(at: 4)] = bytes
            }
        } catch is StopReading {
            // The first row says the cache does not match: its chunks need not be read.
            statement.reset()
            return nil
        }
        guard let header, let layout = SnapshotReader.header(header) else { return nil }
        var restored = Restored(chunks: [], chunkIDs: layout.chunkIDs)
        restored.chunks.reserveCapacity(layout.chunkIDs.count)
        let keyCount = compiled.ordering.descriptors.count
        for id in layout.chunkIDs {
            guard let bytes = stored[id], let chunk = SnapshotReader.chunk(bytes, keyCount: keyCount) else { return nil }
            restored.chunks.append(chunk)
        }
        guard restored.chunks.reduce(0, { $0 + $1.count }) == layout.count else { return nil }
        // Bytes changed in a way that still decodes (a disk's error, a hand's edit) would put rows out of
        // order, where binary searches go wrong: in order, each row strictly after the one before (O(n),
        // a fraction of the fetch it saves), or the cache is damaged.
        var previous: OrderedRows.Entry?
        for chunk in restored.chunks {
            for entry in chunk {
                if let previous, !compiled.ordering.precedes(previous.key, previous.id, entry.key, entry.id) { return nil }
                previous = entry
            }
        }
        return restored
    }

    /// Marks the snapshot cached under `name` as current at `generation`: the changes since touched none of
    /// its rows, so the entries are the same and need not be written again.
    func advance(name: String, to generation: Int64) throws {
        guard try database.tableExists("results_controller_cache") else { return }
        try database.execute("UPDATE results_controller_cache SET generation = ? WHERE name = ?", [.integer(generation), .text(name)])
    }

    func deleteAll() throws {
        for table in ["results_controller_cache", "results_controller_chunks"] where try database.tableExists(table) {
            try database.execute("DELETE FROM \(table)")
        }
    }

    func delete(name: String) throws {
        for table in ["results_controller_cache", "results_controller_chunks"] where try database.tableExists(table) {
            try database.execute("DELETE FROM \(table) WHERE name = ?", [.text(name)])
        }
    }
}

/// Thrown to end a read early: the first row already says the cache does not match.
private struct StopReading: Error {}

/// Snapshot bytes (`ByteCoding`). The header: the format version, the entry count (an 8-byte word), the
/// number of chunks (varint), then each chunk's id in order (varints). A chunk: its entry count (varint),
/// then per entry its id (zigzag varint), its version (a word), the length of its key (varint) and the
/// key's bytes as `SortKey` encodes them, so that a restored key can be a range of the chunk's bytes.
private struct SnapshotWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func word(_ value: Int64) { ByteCoding.appendWord(UInt64(bitPattern: value), to: &bytes) }

    mutating func varint(_ value: UInt64) { ByteCoding.appendVarint(value, to: &bytes) }

    mutating func entry(_ entry: OrderedRows.Entry) {
        varint(ByteCoding.zigzag(entry.id))
        word(entry.version)
        entry.key.withUnsafeBytes { key in
            varint(UInt64(key.count))
            bytes.append(contentsOf: key)
        }
    }
}

/// Reads what `SnapshotWriter` wrote, checking every length against the bytes: damage is `nil`, never a
/// crash.
private enum SnapshotReader {
    /// The header's entry count and chunk ids.
    static func header(_ bytes: [UInt8]) -> (count: Int, chunkIDs: [Int64])? {
        bytes.withUnsafeBytes { buffer in
            var position = 1
            guard buffer.first == SnapshotCache.formatVersion, let entries = ByteCoding.readWord(buffer, at: &position),
                entries <= UInt64(Int.max), let chunkCount = ByteCoding.readVarint(buffer, at: &position),
                chunkCount <= UInt64(buffer.count - position)
            else { return nil }
            var ids: [Int64] = []
            ids.reserveCapacity(Int(chunkCount))
            for _ in 0..<chunkCount {
                guard let id = ByteCoding.readVarint(buffer, at: &position), id > 0, id <= UInt64(Int64.max) else { return nil }
                ids.append(Int64(id))
            }
            guard position == buffer.count, Set(ids).count == ids.count else { return nil }
            return (Int(entries), ids)
        }
    }

    /// The entries of one chunk, whose keys share `bytes`.
    static func chunk(_ bytes: [UInt8], keyCount: Int) -> [OrderedRows.Entry]? {
        bytes.withUnsafeBytes { buffer -> [OrderedRows.Entry]? in
            // Keys share the chunk's bytes; past 4 GiB a key's range no longer fits its offsets.
            guard buffer.count < Int(UInt32.max) else { return nil }
            var position = 0
            // A chunk holds 1 to `chunkCapacity` entries, each of at least 10 bytes.
            guard let count = ByteCoding.readVarint(buffer, at: &position), count > 0, count <= UInt64(OrderedRows.chunkCapacity),
                count <= UInt64(buffer.count / 10)
            else { return nil }
            var entries: [OrderedRows.Entry] = []
            entries.reserveCapacity(Int(count))
            for _ in 0..<count {
                guard let id = ByteCoding.readVarint(buffer, at: &position), let version = ByteCoding.readWord(buffer, at: &position),
                    let length = ByteCoding.readVarint(buffer, at: &position), length <= UInt64(buffer.count - position)
                else { return nil }
                let range = position..<(position + Int(length))
                guard SortKey.validLength(of: UnsafeRawBufferPointer(rebasing: buffer[range]), count: keyCount) == range.count else { return nil }
                position = range.upperBound
                entries.append(OrderedRows.Entry(id: ByteCoding.unzigzag(id), key: SortKey(sharing: bytes, range: range),
                                                 version: Int64(bitPattern: version)))
            }
            return position == buffer.count ? entries : nil
        }
    }
}
