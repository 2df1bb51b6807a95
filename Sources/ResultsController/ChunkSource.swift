import SiteStore

/// Reads a restored snapshot's chunks and its index by id from the cache, one chunk at a time, when the
/// controller first needs them (decisions.md §39a).
///
/// Used on the controller's connection and thread only. A chunk's blob is never rewritten under its id
/// (a changed chunk is stored under a new one), so a chunk read later is the one the header listed, or
/// gone when a later save of another fetch replaced the snapshot: `SnapshotDamage` either way.
final class ChunkSource: @unchecked Sendable {
    /// Weak: results let go of (`releaseResults`) are freed on another thread, and must not keep the
    /// connection open after the build that used it (the controller holds it while it reads).
    private weak var connection: Database?
    private var database: Database {
        get throws {
            guard let connection else { throw SnapshotDamage() }
            return connection
        }
    }
    let name: String
    let keyCount: Int
    let ordering: RowOrdering
    /// How many entries have been decoded: a test's measure of the work a restore does.
    private(set) var decodedEntries = 0

    init(database: Database, name: String, keyCount: Int, ordering: RowOrdering) {
        connection = database
        self.name = name
        self.keyCount = keyCount
        self.ordering = ordering
    }

    /// The entries of the chunk stored as `blobID`, checked against their checksum and in order.
    func entries(ofBlob blobID: Int64) throws -> [OrderedRows.Entry] {
        let statement = try database.cachedStatement("SELECT entries FROM results_controller_chunks WHERE name = ? AND chunk = ?")
        var bytes: [UInt8]?
        try statement.forEachRow([.text(name), .integer(blobID)]) { row in
            if case .blob(let blob) = row.value(at: 0) { bytes = blob }
        }
        guard let bytes, let entries = SnapshotCoding.chunk(bytes, keyCount: keyCount) else { throw SnapshotDamage() }
        decodedEntries += entries.count
        // Within the chunk, in order (O(chunk)); across chunks, `OrderedRows` checks the bounds.
        for index in entries.indices.dropFirst()
            where !ordering.precedes(entries[index - 1].key, entries[index - 1].id, entries[index].key, entries[index].id) {
            throw SnapshotDamage()
        }
        return entries
    }

    /// The chunk identity of each of `ids` the persisted index lists (O(log n) each, 500 ids a statement).
    func chunkIdentities(of ids: [Int64]) throws -> [Int64: Int64] {
        var found: [Int64: Int64] = [:]
        for start in stride(from: 0, to: ids.count, by: ResultsController.idsPerQuery) {
            let slice = ids[start..<min(start + ResultsController.idsPerQuery, ids.count)]
            let list = Array(repeating: "?", count: slice.count).joined(separator: ",")
            let statement = try database.cachedStatement(
                "SELECT id, chunk FROM results_controller_ids WHERE name = ? AND id IN (\(list))")
            try statement.forEachRow([.text(name)] + slice.map { .integer($0) }) { row in
                found[row.int64(at: 0)] = row.int64(at: 1)
            }
        }
        return found
    }
}
