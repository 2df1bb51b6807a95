import Foundation
import SiteStore

/// Persists controller snapshots in the database they describe, keyed by cache name, and valid only for
/// the same request (fingerprint), the same definitions of the tables it reads, and the same data generation.
///
/// A snapshot is a header, its `OrderedRows` chunks (a row each, under a blob id that changes whenever the
/// chunk does), and an index from each row id to its chunk's identity (`results_controller_ids`). The
/// header holds what a restore needs without reading a chunk: each chunk's identity, blob id, entry count
/// and last key and id (so a binary search over chunks works from it alone) and each section's key and
/// count. Chunks are read and decoded at first use, each checked then against a checksum of its own and
/// against the header; why at first use, and what a damaged one costs, is in decisions.md §39a.
/// A change touches a few chunks: saving after it writes those, the index rows of the rows that changed
/// chunk, and the header, not every entry again.
struct SnapshotCache {
    let database: Database
    static let formatVersion: UInt8 = 5

    /// What a save writes: the rows' chunks (the entries of those decoded), the blobs given since the last
    /// save, the rows that changed chunk since the fetch or restore, and the sections.
    struct Contents: Sendable {
        var epoch: Int64
        var chunks: [SnapshotHeader.Chunk]
        var newBlobs: Set<Int64>
        var movedIDs: [Int64: Int64]
        var sections: [SnapshotHeader.Section]
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
        try database.execute("""
            CREATE TABLE IF NOT EXISTS results_controller_ids (
                name TEXT NOT NULL, id INTEGER NOT NULL, chunk INTEGER NOT NULL, PRIMARY KEY (name, id)) WITHOUT ROWID
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

    /// Saves `contents` under `name`. When the stored snapshot descends from the same fetch (`epoch`), only
    /// the new blobs (and any listed blob not stored, after a save that failed), the moved rows' index
    /// entries and the header are written, and blobs no longer listed are deleted; otherwise everything
    /// is, which needs every chunk decoded (if one is not, the cache is deleted instead).
    func save(name: String, compiled: CompiledRequest, contents: Contents, generation: Int64) throws {
        try ensureTables()
        let storedHeader = try database.cachedStatement("SELECT snapshot FROM results_controller_cache WHERE name = ?")
            .fetchAll([.text(name)]).first.flatMap { row -> [UInt8]? in
                if case .blob(let bytes)? = row["snapshot"] { return bytes }
                return nil
            }
        let sameFetch = storedHeader.flatMap(SnapshotCoding.epoch) == contents.epoch
        if !sameFetch, contents.chunks.contains(where: { $0.entries == nil }) { return try delete(name: name) }
        let stored: Set<Int64>
        if sameFetch {
            stored = Set(try database.cachedStatement("SELECT chunk FROM results_controller_chunks WHERE name = ?")
                .fetchAll([.text(name)]).compactMap { $0["chunk"]?.int64Value })
        } else {
            try database.execute("DELETE FROM results_controller_chunks WHERE name = ?", [.text(name)])
            try database.execute("DELETE FROM results_controller_ids WHERE name = ?", [.text(name)])
            stored = []
        }
        let listed = Set(contents.chunks.map(\.blobID))
        let deleteChunk = try database.cachedStatement("DELETE FROM results_controller_chunks WHERE name = ? AND chunk = ?")
        for chunk in stored where !listed.contains(chunk) { try deleteChunk.execute([.text(name), .integer(chunk)]) }
        let insertChunk = try database.cachedStatement("INSERT OR REPLACE INTO results_controller_chunks (name, chunk, entries) VALUES (?, ?, ?)")
        for chunk in contents.chunks where contents.newBlobs.contains(chunk.blobID) || !stored.contains(chunk.blobID) {
            guard let entries = chunk.entries else { return try delete(name: name) }
            try insertChunk.execute([.text(name), .integer(chunk.blobID), .blob(SnapshotCoding.chunkBytes(entries))])
        }
        try writeIndex(name: name, contents: contents, whole: !sameFetch)
        try database.execute(
            "INSERT OR REPLACE INTO results_controller_cache (name, fingerprint, schema, generation, snapshot) VALUES (?, ?, ?, ?, ?)",
            [.text(name), .text(compiled.request.fingerprint), .text(try schemaFingerprint(compiled)), .integer(generation),
             .blob(SnapshotCoding.headerBytes(epoch: contents.epoch, chunks: contents.chunks, sections: contents.sections))])
    }

    /// Writes the index by id: every row's chunk (`whole`, in id order, which SQLite appends fastest), or
    /// only the rows that changed chunk.
    private func writeIndex(name: String, contents: Contents, whole: Bool) throws {
        let upsert = try database.cachedStatement("INSERT OR REPLACE INTO results_controller_ids (name, id, chunk) VALUES (?, ?, ?)")
        if whole {
            var pairs: [(id: Int64, chunk: Int64)] = []
            for chunk in contents.chunks { for entry in chunk.entries ?? [] { pairs.append((entry.id, chunk.identity)) } }
            pairs.sort { $0.id < $1.id }
            for pair in pairs { try upsert.execute([.text(name), .integer(pair.id), .integer(pair.chunk)]) }
            return
        }
        let remove = try database.cachedStatement("DELETE FROM results_controller_ids WHERE name = ? AND id = ?")
        for (id, chunk) in contents.movedIDs.sorted(by: { $0.key < $1.key }) {
            if chunk == 0 {
                try remove.execute([.text(name), .integer(id)])
            } else {
                try upsert.execute([.text(name), .integer(id), .integer(chunk)])
            }
        }
    }

    /// The cached header when it matches the request, the schema and `generation`; `nil` otherwise, or when
    /// it is damaged. No chunk is read: `ChunkSource` reads each at its first use.
    func restore(name: String, compiled: CompiledRequest, generation: Int64) throws -> SnapshotHeader? {
        guard try database.tableExists("results_controller_cache"), try database.tableExists("results_controller_ids") else { return nil }
        let schema = try schemaFingerprint(compiled)
        let rows = try database.cachedStatement(
            "SELECT fingerprint, schema, generation, snapshot FROM results_controller_cache WHERE name = ?").fetchAll([.text(name)])
        guard let row = rows.first, row.values.count == 4, row.values[0] == .text(compiled.request.fingerprint),
            row.values[1] == .text(schema), row.values[2] == .integer(generation), case .blob(let bytes) = row.values[3]
        else { return nil }
        return SnapshotCoding.header(bytes, keyCount: compiled.ordering.descriptors.count,
                                     sectionKeyCount: compiled.request.sectionKey == nil ? 0 : compiled.sectionOrderKeyCount,
                                     ordering: compiled.ordering)
    }

    /// Marks the snapshot cached under `name` as current at `generation`: the changes since touched none of
    /// its rows, so the entries are the same and need not be written again.
    func advance(name: String, to generation: Int64) throws {
        guard try database.tableExists("results_controller_cache") else { return }
        try database.execute("UPDATE results_controller_cache SET generation = ? WHERE name = ?", [.integer(generation), .text(name)])
    }

    private static let tables = ["results_controller_cache", "results_controller_chunks", "results_controller_ids"]

    func deleteAll() throws {
        for table in Self.tables where try database.tableExists(table) {
            try database.execute("DELETE FROM \(table)")
        }
    }

    func delete(name: String) throws {
        for table in Self.tables where try database.tableExists(table) {
            try database.execute("DELETE FROM \(table) WHERE name = ?", [.text(name)])
        }
    }
}

/// A restored snapshot's header: what the controller needs before (and mostly instead of) its chunks.
struct SnapshotHeader: Sendable {
    /// One chunk, as the header lists it; `entries` only when decoded (for a save).
    struct Chunk: Sendable {
        var identity: Int64
        var blobID: Int64
        var count: Int
        var lastKey: SortKey
        var lastID: Int64
        var entries: [OrderedRows.Entry]?
    }

    /// One section: the leading values of its rows' keys that name and order it, and its row count.
    struct Section: Sendable {
        var orderKey: SortKey
        var count: Int
    }

    var epoch: Int64
    var chunks: [Chunk]
    var sections: [Section]
}

/// Snapshot bytes (`ByteCoding`). The header: the format version, the epoch (a word), the number of
/// chunks, then per chunk its identity, blob id and entry count (varints), its last id (zigzag varint) and
/// last key (length and bytes as `SortKey` encodes them); the number of sections, then per section its
/// order key (length and bytes) and count; last, a checksum of all before it. A chunk: its entry count
/// (varint), then per entry its id (zigzag varint), its version (a word), the length of its key (varint)
/// and the key's bytes, so that a restored key can be a range of the chunk's bytes; last, a checksum.
/// Readers check every length against the bytes: damage is `nil`, never a crash.
enum SnapshotCoding {
    static func chunkBytes(_ entries: [OrderedRows.Entry]) -> [UInt8] {
        var bytes: [UInt8] = []
        // About an id, a version and a short key per row: grown once, not doubled a dozen times.
        bytes.reserveCapacity(entries.count * 48 + 16)
        ByteCoding.appendVarint(UInt64(entries.count), to: &bytes)
        for entry in entries {
            ByteCoding.appendVarint(ByteCoding.zigzag(entry.id), to: &bytes)
            ByteCoding.appendWord(UInt64(bitPattern: entry.version), to: &bytes)
            appendKey(entry.key, to: &bytes)
        }
        ByteCoding.appendChecksum(to: &bytes)
        return bytes
    }

    private static func appendKey(_ key: SortKey, to bytes: inout [UInt8]) {
        key.withUnsafeBytes { key in
            ByteCoding.appendVarint(UInt64(key.count), to: &bytes)
            bytes.append(contentsOf: key)
        }
    }

    static func headerBytes(epoch: Int64, chunks: [SnapshotHeader.Chunk], sections: [SnapshotHeader.Section]) -> [UInt8] {
        var bytes: [UInt8] = [SnapshotCache.formatVersion]
        ByteCoding.appendWord(UInt64(bitPattern: epoch), to: &bytes)
        ByteCoding.appendVarint(UInt64(chunks.count), to: &bytes)
        for chunk in chunks {
            ByteCoding.appendVarint(UInt64(chunk.identity), to: &bytes)
            ByteCoding.appendVarint(UInt64(chunk.blobID), to: &bytes)
            ByteCoding.appendVarint(UInt64(chunk.count), to: &bytes)
            ByteCoding.appendVarint(ByteCoding.zigzag(chunk.lastID), to: &bytes)
            appendKey(chunk.lastKey, to: &bytes)
        }
        ByteCoding.appendVarint(UInt64(sections.count), to: &bytes)
        for section in sections {
            appendKey(section.orderKey, to: &bytes)
            ByteCoding.appendVarint(UInt64(section.count), to: &bytes)
        }
        ByteCoding.appendChecksum(to: &bytes)
        return bytes
    }

    /// The epoch of a stored header of this format, without reading the rest.
    static func epoch(_ bytes: [UInt8]) -> Int64? {
        bytes.withUnsafeBytes { buffer in
            var position = 1
            guard buffer.first == SnapshotCache.formatVersion, let word = ByteCoding.readWord(buffer, at: &position) else { return nil }
            return Int64(bitPattern: word)
        }
    }

    /// A key of `count` values at `position`, sharing `bytes`.
    private static func key(_ bytes: [UInt8], _ buffer: UnsafeRawBufferPointer, at position: inout Int, count: Int) -> SortKey? {
        guard let length = ByteCoding.readVarint(buffer, at: &position), length <= UInt64(buffer.count - position) else { return nil }
        let range = position..<(position + Int(length))
        guard SortKey.validLength(of: UnsafeRawBufferPointer(rebasing: buffer[range]), count: count) == range.count else { return nil }
        position = range.upperBound
        return SortKey(sharing: bytes, range: range)
    }

    /// The header, checked: its checksum, every length, chunks of 1 to `chunkCapacity` entries with
    /// distinct identities and blob ids and bounds in order (O(chunks)), and sections that count every row.
    static func header(_ bytes: [UInt8], keyCount: Int, sectionKeyCount: Int, ordering: RowOrdering) -> SnapshotHeader? {
        // Keys share the header's bytes; past 4 GiB a key's range no longer fits its offsets.
        guard bytes.count < Int(UInt32.max) else { return nil }
        return bytes.withUnsafeBytes { whole -> SnapshotHeader? in
            guard let buffer = ByteCoding.verifiedBody(whole) else { return nil }
            var position = 1
            guard buffer.first == SnapshotCache.formatVersion, let epoch = ByteCoding.readWord(buffer, at: &position),
                let chunkCount = ByteCoding.readVarint(buffer, at: &position), chunkCount <= UInt64(buffer.count - position)
            else { return nil }
            var header = SnapshotHeader(epoch: Int64(bitPattern: epoch), chunks: [], sections: [])
            header.chunks.reserveCapacity(Int(chunkCount))
            var identities = Set<Int64>(), blobs = Set<Int64>(), total = 0
            for _ in 0..<chunkCount {
                guard let identity = ByteCoding.readVarint(buffer, at: &position), identity > 0, identity <= UInt64(Int64.max),
                    let blob = ByteCoding.readVarint(buffer, at: &position), blob > 0, blob <= UInt64(Int64.max),
                    let count = ByteCoding.readVarint(buffer, at: &position), count > 0, count <= UInt64(OrderedRows.chunkCapacity),
                    let lastID = ByteCoding.readVarint(buffer, at: &position),
                    let lastKey = key(bytes, buffer, at: &position, count: keyCount),
                    identities.insert(Int64(identity)).inserted, blobs.insert(Int64(blob)).inserted
                else { return nil }
                let chunk = SnapshotHeader.Chunk(identity: Int64(identity), blobID: Int64(blob), count: Int(count), lastKey: lastKey,
                                                 lastID: ByteCoding.unzigzag(lastID))
                if let previous = header.chunks.last, !ordering.precedes(previous.lastKey, previous.lastID, chunk.lastKey, chunk.lastID) {
                    return nil
                }
                header.chunks.append(chunk)
                total += Int(count)
            }
            guard let sectionCount = ByteCoding.readVarint(buffer, at: &position), sectionCount <= UInt64(buffer.count - position) else { return nil }
            var sectionTotal = 0
            for _ in 0..<sectionCount {
                guard let orderKey = key(bytes, buffer, at: &position, count: sectionKeyCount),
                    let count = ByteCoding.readVarint(buffer, at: &position), count > 0, count <= UInt64(total)
                else { return nil }
                header.sections.append(SnapshotHeader.Section(orderKey: orderKey, count: Int(count)))
                sectionTotal += Int(count)
            }
            guard position == buffer.count, sectionKeyCount == 0 || sectionTotal == total,
                Set(header.sections.map(\.orderKey)).count == header.sections.count
            else { return nil }
            return header
        }
    }

    /// The entries of one chunk, whose keys share `bytes`, when its checksum and lengths are right.
    static func chunk(_ bytes: [UInt8], keyCount: Int) -> [OrderedRows.Entry]? {
        guard bytes.count < Int(UInt32.max) else { return nil }
        return bytes.withUnsafeBytes { whole -> [OrderedRows.Entry]? in
            guard let buffer = ByteCoding.verifiedBody(whole) else { return nil }
            var position = 0
            // A chunk holds 1 to `chunkCapacity` entries, each of at least 10 bytes.
            guard let count = ByteCoding.readVarint(buffer, at: &position), count > 0, count <= UInt64(OrderedRows.chunkCapacity),
                count <= UInt64(buffer.count / 10)
            else { return nil }
            var entries: [OrderedRows.Entry] = []
            entries.reserveCapacity(Int(count))
            for _ in 0..<count {
                guard let id = ByteCoding.readVarint(buffer, at: &position), let version = ByteCoding.readWord(buffer, at: &position),
                    let key = key(bytes, buffer, at: &position, count: keyCount)
                else { return nil }
                entries.append(OrderedRows.Entry(id: ByteCoding.unzigzag(id), key: key, version: Int64(bitPattern: version)))
            }
            return position == buffer.count ? entries : nil
        }
    }
}
