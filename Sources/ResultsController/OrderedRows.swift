/// The fetched rows in order — id, sort key and version — as a chunked sequence with order statistics.
///
/// A flat array would make every insert or delete in a million-row result shift megabytes and every
/// position change ripple through an index; here a change costs a binary search over chunk bounds,
/// a shift inside one chunk of at most `chunkCapacity` entries, and an update of the chunk offsets.
///
/// Rows restored from a cached snapshot start as the header's summary of each chunk (count, last key and
/// id): a chunk's entries are read and decoded from `source` the first time they are needed, so that a
/// build that changes one row decodes one chunk (decisions.md §39a). Every method that reads entries may
/// therefore throw `SnapshotDamage`, after which the rows are unusable and are fetched again.
struct OrderedRows: Sendable {
    /// One fetched row.
    struct Entry: Sendable, Hashable {
        var id: Int64
        var key: SortKey
        /// The row's version (e.g. a content hash column); 0 when the request names none.
        var version: Int64
    }

    static let chunkCapacity = 1024
    /// Half-full chunks leave room to insert without splitting at once.
    static let initialChunkFill = chunkCapacity / 2

    /// Each chunk's entries; empty for a chunk not yet decoded (`isLoaded` false).
    private(set) var chunks: [[Entry]] = []
    private var isLoaded: [Bool] = []
    private var counts: [Int] = []
    /// Each chunk's identity, which it keeps as long as it exists (the persisted index by id names it);
    /// the upper half of a split chunk is a new chunk. Random, so that one is never given twice under a
    /// cache name, not even by a fresh fetch that knows nothing of the stored chunks.
    private(set) var identities: [Int64] = []
    /// Each chunk's stored blob in the snapshot cache, 0 for a chunk changed since it was last given one
    /// (and so not saved as it is): the cache rewrites only those.
    private(set) var blobIDs: [Int64] = []
    /// The global offset of each chunk's first entry.
    private var chunkStarts: [Int] = []
    /// Each chunk's last key and id, kept apart so a search over chunks reads one contiguous array
    /// instead of one chunk buffer per probe (and needs no chunk decoded).
    private var lastKeys: [SortKey] = []
    private var lastIDs: [Int64] = []
    let ordering: RowOrdering
    /// Where undecoded chunks and the persisted index by id are read; `nil` for fetched rows.
    let source: ChunkSource?
    /// Names the fetch (or restored snapshot) the identities descend from: a save under another epoch
    /// rewrites the whole cache, the index by id included.
    let epoch: Int64
    /// The chunk identity of each row that entered a chunk since the fetch or restore (inserted, or moved
    /// by a split), 0 for a row removed: what the persisted index lacks.
    private(set) var movedIDs: [Int64: Int64] = [:]
    /// Each identity's chunk position, made when needed and dropped when chunks are added or removed.
    private var positions: [Int64: Int]?
    /// Each row's chunk identity, for fetched rows (no persisted index), made at the first lookup by id.
    private var fetchedIdentities: [Int64: Int64]?

    init(ordering: RowOrdering, sortedEntries: [Entry]) {
        self.ordering = ordering
        source = nil
        epoch = Self.randomIdentity()
        var start = 0
        while start < sortedEntries.count {
            let end = min(start + Self.initialChunkFill, sortedEntries.count)
            append(loadedChunk: Array(sortedEntries[start..<end]))
            start = end
        }
        recomputeStarts(from: 0)
    }

    /// Rows made a chunk at a time while a fetch reads them in order. Gathered in one array first, a
    /// million rows were held twice (the array, then the chunks copied from it) and the array grown by
    /// doubling: a fifth of a 1,000,000-record build's peak memory (decisions.md 39f).
    struct Filling {
        private var rows: OrderedRows
        private var pending: [Entry] = []

        /// No rows yet, ordered by `ordering`.
        init(ordering: RowOrdering) {
            rows = OrderedRows(ordering: ordering, sortedEntries: [])
            pending.reserveCapacity(OrderedRows.initialChunkFill)
        }

        /// How many rows were added.
        private(set) var count = 0

        /// Adds `entry`, which sorts after every row added before it.
        mutating func append(_ entry: Entry) {
            pending.append(entry)
            count += 1
            guard pending.count == OrderedRows.initialChunkFill else { return }
            rows.append(loadedChunk: pending)
            pending = []
            pending.reserveCapacity(OrderedRows.initialChunkFill)
        }

        /// The rows added, in their order.
        mutating func finish() -> OrderedRows {
            if !pending.isEmpty { rows.append(loadedChunk: pending) }
            pending = []
            rows.recomputeStarts(from: 0)
            return rows
        }
    }

    /// Rows as a snapshot's header describes them; every chunk is decoded from `source` when first needed.
    init(ordering: RowOrdering, header: SnapshotHeader, source: ChunkSource) {
        self.ordering = ordering
        self.source = source
        epoch = header.epoch
        for chunk in header.chunks {
            chunks.append([])
            isLoaded.append(false)
            counts.append(chunk.count)
            identities.append(chunk.identity)
            blobIDs.append(chunk.blobID)
            lastKeys.append(chunk.lastKey)
            lastIDs.append(chunk.lastID)
        }
        recomputeStarts(from: 0)
    }

    private mutating func append(loadedChunk entries: [Entry]) {
        chunks.append(entries)
        isLoaded.append(true)
        counts.append(entries.count)
        identities.append(Self.randomIdentity())
        blobIDs.append(0)
        lastKeys.append(entries[entries.count - 1].key)
        lastIDs.append(entries[entries.count - 1].id)
    }

    static func randomIdentity() -> Int64 {
        var random = SystemRandomNumberGenerator()
        return Int64.random(in: 1...Int64.max, using: &random)
    }

    var count: Int { chunks.isEmpty ? 0 : chunkStarts[chunks.count - 1] + counts[chunks.count - 1] }

    var chunkCount: Int { chunks.count }

    /// Whether every chunk is decoded (always, for fetched rows).
    var isFullyLoaded: Bool { !isLoaded.contains(false) }

    // MARK: Decoding

    /// Decodes chunk `index` if it is not yet, checking it against the header and its neighbours' bounds.
    private mutating func load(_ index: Int) throws {
        guard !isLoaded[index] else { return }
        guard let source else { throw SnapshotDamage() }
        let entries = try source.entries(ofBlob: blobIDs[index])
        // The header's summary, and the order across chunk bounds: what a whole-snapshot check would find wrong here.
        guard entries.count == counts[index], let last = entries.last, last.id == lastIDs[index], last.key == lastKeys[index],
            index == 0 || ordering.precedes(lastKeys[index - 1], lastIDs[index - 1], entries[0].key, entries[0].id)
        else { throw SnapshotDamage() }
        chunks[index] = entries
        isLoaded[index] = true
    }

    /// Decodes every chunk (O(n): for callers that want every entry).
    mutating func loadAll() throws {
        for index in chunks.indices { try load(index) }
    }

    /// The entry at global `offset`.
    mutating func entry(at offset: Int) throws -> Entry {
        let chunk = chunkIndex(containingOffset: offset)
        try load(chunk)
        return chunks[chunk][offset - chunkStarts[chunk]]
    }

    /// Calls `body` with the entries at `offsets`, in order, a chunk's slice at a time.
    mutating func forEachSlice(in offsets: Range<Int>, _ body: (ArraySlice<Entry>) -> Void) throws {
        guard !offsets.isEmpty else { return }
        var chunk = chunkIndex(containingOffset: offsets.lowerBound)
        while chunk < chunks.count, chunkStarts[chunk] < offsets.upperBound {
            try load(chunk)
            let start = max(offsets.lowerBound, chunkStarts[chunk]) - chunkStarts[chunk]
            let end = min(offsets.upperBound, chunkStarts[chunk] + counts[chunk]) - chunkStarts[chunk]
            body(chunks[chunk][start..<end])
            chunk += 1
        }
    }

    // MARK: Finding rows

    /// The first chunk whose last entry does not precede (`key`, `id`); `chunks.count` when every one does.
    private func firstChunk(notBefore key: SortKey, id: Int64) -> Int {
        var low = 0, high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if ordering.precedes(lastKeys[middle], lastIDs[middle], key, id) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The global offset at which an entry with `key` and `id` is, or would be inserted.
    mutating func insertionOffset(key: SortKey, id: Int64) throws -> Int {
        guard !chunks.isEmpty else { return 0 }
        let low = firstChunk(notBefore: key, id: id)
        guard low < chunks.count else { return count }
        try load(low)
        return chunkStarts[low] + insertionIndex(of: key, id: id, inChunk: low)
    }

    private func insertionIndex(of key: SortKey, id: Int64, inChunk chunk: Int) -> Int {
        var lowEntry = 0, highEntry = chunks[chunk].count
        while lowEntry < highEntry {
            let middle = (lowEntry + highEntry) / 2
            let probe = chunks[chunk][middle]
            if ordering.precedes(probe.key, probe.id, key, id) { lowEntry = middle + 1 } else { highEntry = middle }
        }
        return lowEntry
    }

    /// The offset of the entry with exactly `key` and `id`, or `nil` when there is none.
    mutating func offset(ofKey key: SortKey, id: Int64) throws -> Int? {
        let offset = try insertionOffset(key: key, id: id)
        guard offset < count, try entry(at: offset).id == id else { return nil }
        return offset
    }

    /// Where the entries with `ids` are, by id: first by `keyHints` (a row's sort key now, which is its old
    /// one when only its content changed), then by the chunk the index by id names, in which the entry is
    /// looked for (O(chunk)). Each lookup decodes at most one chunk.
    mutating func places(ofIDs ids: Set<Int64>, keyHints: [Int64: SortKey] = [:]) throws -> [Int64: (offset: Int, entry: Entry)] {
        var found: [Int64: (offset: Int, entry: Entry)] = [:]
        var unresolved: [Int64] = []
        for id in ids {
            if let key = keyHints[id], let offset = try offset(ofKey: key, id: id) {
                found[id] = (offset, try entry(at: offset))
            } else {
                unresolved.append(id)
            }
        }
        guard !unresolved.isEmpty else { return found }
        let identities = try chunkIdentities(of: unresolved)
        if positions == nil { positions = Dictionary(uniqueKeysWithValues: self.identities.enumerated().map { ($1, $0) }) }
        for id in unresolved {
            guard let identity = identities[id] else { continue }
            // The index names a chunk that does not hold the row only when it is not this snapshot's.
            guard let chunk = positions?[identity] else { throw SnapshotDamage() }
            try load(chunk)
            guard let index = chunks[chunk].firstIndex(where: { $0.id == id }) else { throw SnapshotDamage() }
            found[id] = (chunkStarts[chunk] + index, chunks[chunk][index])
        }
        return found
    }

    /// The chunk identity of each of `ids` that is listed.
    private mutating func chunkIdentities(of ids: [Int64]) throws -> [Int64: Int64] {
        var result: [Int64: Int64] = [:]
        var unknown: [Int64] = []
        for id in ids {
            if let identity = movedIDs[id] {
                if identity != 0 { result[id] = identity }
            } else {
                unknown.append(id)
            }
        }
        guard !unknown.isEmpty else { return result }
        if let source {
            result.merge(try source.chunkIdentities(of: unknown)) { new, _ in new }
        } else {
            if fetchedIdentities == nil {
                var all: [Int64: Int64] = [:]
                all.reserveCapacity(count)
                for (chunk, identity) in zip(chunks, identities) { for entry in chunk { all[entry.id] = identity } }
                fetchedIdentities = all
            }
            for id in unknown { if let identity = fetchedIdentities?[id] { result[id] = identity } }
        }
        return result
    }

    // MARK: Changing rows

    private mutating func refreshLast(_ chunk: Int) {
        lastKeys[chunk] = chunks[chunk][chunks[chunk].count - 1].key
        lastIDs[chunk] = chunks[chunk][chunks[chunk].count - 1].id
    }

    private mutating func splitIfFull(_ chunk: Int) {
        guard chunks[chunk].count > Self.chunkCapacity else { return }
        let upper = Array(chunks[chunk][(Self.chunkCapacity / 2)...])
        chunks[chunk].removeSubrange((Self.chunkCapacity / 2)...)
        counts[chunk] = chunks[chunk].count
        let identity = Self.randomIdentity()
        chunks.insert(upper, at: chunk + 1)
        isLoaded.insert(true, at: chunk + 1)
        counts.insert(upper.count, at: chunk + 1)
        identities.insert(identity, at: chunk + 1)
        blobIDs.insert(0, at: chunk + 1)
        blobIDs[chunk] = 0
        chunkStarts.insert(0, at: chunk + 1)
        lastKeys.insert(upper[upper.count - 1].key, at: chunk + 1)
        lastIDs.insert(upper[upper.count - 1].id, at: chunk + 1)
        positions = nil
        for entry in upper { movedIDs[entry.id] = identity }
        refreshLast(chunk)
    }

    private mutating func removeEntry(inChunk chunk: Int, at index: Int) {
        movedIDs[chunks[chunk][index].id] = 0
        chunks[chunk].remove(at: index)
        counts[chunk] -= 1
        blobIDs[chunk] = 0
        if chunks[chunk].isEmpty {
            chunks.remove(at: chunk)
            isLoaded.remove(at: chunk)
            counts.remove(at: chunk)
            identities.remove(at: chunk)
            blobIDs.remove(at: chunk)
            chunkStarts.remove(at: chunk)
            lastKeys.remove(at: chunk)
            lastIDs.remove(at: chunk)
            positions = nil
        } else if index == chunks[chunk].count {
            refreshLast(chunk)
        }
    }

    /// Inserts `entry` in order; returns its offset.
    @discardableResult
    mutating func insert(_ entry: Entry) throws -> Int {
        try insert(contentsOf: [entry])
        return try offset(ofKey: entry.key, id: entry.id)!
    }

    /// Removes the entries at `offsets`, which must be sorted from highest to lowest; offsets are
    /// recomputed once at the end (removing from the back leaves earlier chunks' offsets valid meanwhile).
    mutating func remove(descendingOffsets offsets: [Int]) throws {
        var lowestTouched = chunks.count
        for offset in offsets {
            let chunk = chunkIndex(containingOffset: offset)
            try load(chunk)
            removeEntry(inChunk: chunk, at: offset - chunkStarts[chunk])
            lowestTouched = min(lowestTouched, chunk)
        }
        recomputeStarts(from: max(0, lowestTouched - 1))
    }

    /// Inserts `entries` in order, each found by its key alone; offsets are recomputed once at the end.
    mutating func insert(contentsOf entries: [Entry]) throws {
        guard !entries.isEmpty else { return }
        var lowestTouched = chunks.count
        for entry in entries {
            if chunks.isEmpty {
                append(loadedChunk: [entry])
                chunkStarts = [0]
                positions = nil
                movedIDs[entry.id] = identities[0]
                lowestTouched = 0
                continue
            }
            let chunk = min(firstChunk(notBefore: entry.key, id: entry.id), chunks.count - 1)
            try load(chunk)
            let index = insertionIndex(of: entry.key, id: entry.id, inChunk: chunk)
            chunks[chunk].insert(entry, at: index)
            counts[chunk] += 1
            blobIDs[chunk] = 0
            movedIDs[entry.id] = identities[chunk]
            if index == chunks[chunk].count - 1 { refreshLast(chunk) }
            splitIfFull(chunk)
            lowestTouched = min(lowestTouched, chunk)
        }
        recomputeStarts(from: lowestTouched)
    }

    /// Replaces the entry at `offset` with one of the same id and key (a new version).
    mutating func replace(at offset: Int, with entry: Entry) throws {
        let chunk = chunkIndex(containingOffset: offset)
        try load(chunk)
        chunks[chunk][offset - chunkStarts[chunk]] = entry
        blobIDs[chunk] = 0
    }

    /// Gives every chunk changed since its last blob id a new one; returns the ids given.
    mutating func assignBlobIDs() -> Set<Int64> {
        var given = Set<Int64>()
        var used = Set(blobIDs)
        for index in blobIDs.indices where blobIDs[index] == 0 {
            var id: Int64
            repeat { id = Self.randomIdentity() } while !used.insert(id).inserted
            blobIDs[index] = id
            given.insert(id)
        }
        return given
    }

    /// What a save writes: each chunk's summary, with its entries when decoded.
    var summaries: [SnapshotHeader.Chunk] {
        chunks.indices.map { index in
            SnapshotHeader.Chunk(identity: identities[index], blobID: blobIDs[index], count: counts[index], lastKey: lastKeys[index],
                                 lastID: lastIDs[index], entries: isLoaded[index] ? chunks[index] : nil)
        }
    }

    /// Removes the entry at `offset`.
    mutating func remove(at offset: Int) throws {
        try remove(descendingOffsets: [offset])
    }

    private func chunkIndex(containingOffset offset: Int) -> Int {
        var low = 0, high = chunks.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if chunkStarts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// Checks, in debug builds, that the kept counts, last keys and ids match the decoded chunks.
    func checkInvariants() {
        assert(lastKeys.count == chunks.count && lastIDs.count == chunks.count && blobIDs.count == chunks.count
               && identities.count == chunks.count && counts.count == chunks.count && isLoaded.count == chunks.count)
        for index in chunks.indices where isLoaded[index] {
            assert(chunks[index].count == counts[index] && chunks[index].last?.id == lastIDs[index])
        }
    }

    private mutating func recomputeStarts(from chunk: Int) {
        if chunkStarts.count != chunks.count { chunkStarts = Array(repeating: 0, count: chunks.count) }
        guard chunk < chunks.count else { return }
        var start = chunk == 0 ? 0 : chunkStarts[chunk - 1] + counts[chunk - 1]
        for index in chunk..<chunks.count {
            chunkStarts[index] = start
            start += counts[index]
        }
    }
}

/// Thrown when a cached chunk, read at its first use, is not what its snapshot's header says (damaged,
/// or gone because another save replaced the snapshot): the results are fetched again.
struct SnapshotDamage: Error {}
