/// The fetched rows in order — id, sort key and version — as a chunked sequence with order statistics.
///
/// A flat array would make every insert or delete in a million-row result shift megabytes and every
/// position change ripple through an index; here a change costs a binary search over chunk bounds,
/// a shift inside one chunk of at most `chunkCapacity` entries, and an update of the chunk offsets.
struct OrderedRows: Sendable {
    /// One fetched row.
    struct Entry: Sendable, Hashable {
        var id: Int64
        var key: SortKey
        /// The row's version (e.g. a content hash column); 0 when the request names none.
        var version: Int64
    }

    static let chunkCapacity = 1024

    private(set) var chunks: [[Entry]] = []
    /// Each chunk's id in the snapshot cache, 0 for a chunk changed since it was last given one (and so
    /// not saved as it is): the cache rewrites only those. Ids are random, so that one is never given
    /// twice under a cache name, not even after a fresh fetch that knows nothing of the stored chunks.
    private(set) var chunkIDs: [Int64] = []
    /// The global offset of each chunk's first entry.
    private var chunkStarts: [Int] = []
    /// Each chunk's last key and id, kept apart so a search over chunks reads one contiguous array
    /// instead of one chunk buffer per probe.
    private var lastKeys: [SortKey] = []
    private var lastIDs: [Int64] = []
    let ordering: RowOrdering

    /// Half-full chunks leave room to insert without splitting at once.
    static let initialChunkFill = chunkCapacity / 2

    init(ordering: RowOrdering, sortedEntries: [Entry]) {
        var chunks: [[Entry]] = []
        var start = 0
        while start < sortedEntries.count {
            let end = min(start + Self.initialChunkFill, sortedEntries.count)
            chunks.append(Array(sortedEntries[start..<end]))
            start = end
        }
        self.init(ordering: ordering, chunks: chunks, chunkIDs: Array(repeating: 0, count: chunks.count))
    }

    /// Rows already cut into chunks (none empty, at most `chunkCapacity` each), as a snapshot is read:
    /// the entries are not copied again.
    init(ordering: RowOrdering, chunks: [[Entry]], chunkIDs: [Int64]) {
        precondition(chunks.count == chunkIDs.count)
        self.ordering = ordering
        self.chunks = chunks
        self.chunkIDs = chunkIDs
        recomputeStarts(from: 0)
        lastKeys = chunks.map { $0[$0.count - 1].key }
        lastIDs = chunks.map { $0[$0.count - 1].id }
    }

    /// Where the entries with the given ids are, by id, found by one pass over all entries: cheaper than
    /// keeping an index by id for a build that restores hundreds of thousands of entries and looks up a few.
    func places(ofIDs ids: Set<Int64>) -> [Int64: (offset: Int, entry: Entry)] {
        var found: [Int64: (offset: Int, entry: Entry)] = [:]
        guard !ids.isEmpty else { return found }
        found.reserveCapacity(ids.count)
        for (number, chunk) in chunks.enumerated() {
            for index in chunk.indices where ids.contains(chunk[index].id) {
                found[chunk[index].id] = (chunkStarts[number] + index, chunk[index])
                if found.count == ids.count { return found }
            }
        }
        return found
    }

    var count: Int { chunks.isEmpty ? 0 : chunkStarts[chunks.count - 1] + chunks[chunks.count - 1].count }

    /// The entry at global `offset`.
    subscript(offset: Int) -> Entry {
        let chunk = chunkIndex(containingOffset: offset)
        return chunks[chunk][offset - chunkStarts[chunk]]
    }

    /// Every id, in order (O(N): for callers that want the whole list).
    var ids: [Int64] {
        var ids: [Int64] = []
        ids.reserveCapacity(count)
        for chunk in chunks { for entry in chunk { ids.append(entry.id) } }
        return ids
    }

    /// The first chunk whose last entry does not precede (`key`, `id`); `chunks.count` when every one does.
    private func firstChunk(notBefore key: SortKey, id: Int64) -> Int {
        var low = 0, high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if ordering.precedes(lastKeys[middle], lastIDs[middle], key, id) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private mutating func refreshLast(_ chunk: Int) {
        lastKeys[chunk] = chunks[chunk][chunks[chunk].count - 1].key
        lastIDs[chunk] = chunks[chunk][chunks[chunk].count - 1].id
    }

    private mutating func splitIfFull(_ chunk: Int) {
        guard chunks[chunk].count > Self.chunkCapacity else { return }
        let upper = Array(chunks[chunk][(Self.chunkCapacity / 2)...])
        chunks[chunk].removeSubrange((Self.chunkCapacity / 2)...)
        chunks.insert(upper, at: chunk + 1)
        chunkIDs.insert(0, at: chunk + 1)
        chunkIDs[chunk] = 0
        chunkStarts.insert(0, at: chunk + 1)
        lastKeys.insert(upper[upper.count - 1].key, at: chunk + 1)
        lastIDs.insert(upper[upper.count - 1].id, at: chunk + 1)
        refreshLast(chunk)
    }

    private mutating func removeEntry(inChunk chunk: Int, at index: Int) {
        chunks[chunk].remove(at: index)
        chunkIDs[chunk] = 0
        if chunks[chunk].isEmpty {
            chunks.remove(at: chunk)
            chunkIDs.remove(at: chunk)
            chunkStarts.remove(at: chunk)
            lastKeys.remove(at: chunk)
            lastIDs.remove(at: chunk)
        } else if index == chunks[chunk].count {
            refreshLast(chunk)
        }
    }

    /// The global offset at which an entry with `key` and `id` is, or would be inserted.
    func insertionOffset(key: SortKey, id: Int64) -> Int {
        guard !chunks.isEmpty else { return 0 }
        let low = firstChunk(notBefore: key, id: id)
        guard low < chunks.count else { return count }
        let chunk = chunks[low]
        var lowEntry = 0, highEntry = chunk.count
        while lowEntry < highEntry {
            let middle = (lowEntry + highEntry) / 2
            if ordering.precedes(chunk[middle].key, chunk[middle].id, key, id) { lowEntry = middle + 1 } else { highEntry = middle }
        }
        return chunkStarts[low] + lowEntry
    }

    /// The offset of the entry with exactly `key` and `id`, or `nil` when there is none.
    func offset(ofKey key: SortKey, id: Int64) -> Int? {
        let offset = insertionOffset(key: key, id: id)
        guard offset < count, self[offset].id == id else { return nil }
        return offset
    }

    /// Inserts `entry` in order; returns its offset.
    @discardableResult
    mutating func insert(_ entry: Entry) -> Int {
        insert(contentsOf: [entry])
        return offset(ofKey: entry.key, id: entry.id)!
    }

    /// Removes the entries at `offsets`, which must be sorted from highest to lowest; offsets are
    /// recomputed once at the end (removing from the back leaves earlier chunks' offsets valid meanwhile).
    mutating func remove(descendingOffsets offsets: [Int]) {
        var lowestTouched = chunks.count
        for offset in offsets {
            let chunk = chunkIndex(containingOffset: offset)
            removeEntry(inChunk: chunk, at: offset - chunkStarts[chunk])
            lowestTouched = min(lowestTouched, chunk)
        }
        recomputeStarts(from: max(0, lowestTouched - 1))
    }

    /// Inserts `entries` in order, each found by its key alone; offsets are recomputed once at the end.
    mutating func insert(contentsOf entries: [Entry]) {
        guard !entries.isEmpty else { return }
        var lowestTouched = chunks.count
        for entry in entries {
            if chunks.isEmpty {
                chunks = [[entry]]
                chunkIDs = [0]
                chunkStarts = [0]
                lastKeys = [entry.key]
                lastIDs = [entry.id]
                lowestTouched = 0
                continue
            }
            let chunk = min(firstChunk(notBefore: entry.key, id: entry.id), chunks.count - 1)
            var lowEntry = 0, highEntry = chunks[chunk].count
            while lowEntry < highEntry {
                let middle = (lowEntry + highEntry) / 2
                let probe = chunks[chunk][middle]
                if ordering.precedes(probe.key, probe.id, entry.key, entry.id) { lowEntry = middle + 1 } else { highEntry = middle }
            }
            chunks[chunk].insert(entry, at: lowEntry)
            chunkIDs[chunk] = 0
            if lowEntry == chunks[chunk].count - 1 { refreshLast(chunk) }
            splitIfFull(chunk)
            lowestTouched = min(lowestTouched, chunk)
        }
        recomputeStarts(from: lowestTouched)
    }

    /// Replaces the entry at `offset` with one of the same id and key (a new version).
    mutating func replace(at offset: Int, with entry: Entry) {
        let chunk = chunkIndex(containingOffset: offset)
        chunks[chunk][offset - chunkStarts[chunk]] = entry
        chunkIDs[chunk] = 0
    }

    /// Gives every chunk changed since its last id a new one; returns the ids given.
    mutating func assignChunkIDs() -> Set<Int64> {
        var given = Set<Int64>()
        var used = Set(chunkIDs)
        var random = SystemRandomNumberGenerator()
        for index in chunkIDs.indices where chunkIDs[index] == 0 {
            var id: Int64
            repeat { id = Int64.random(in: 1...Int64.max, using: &random) } while !used.insert(id).inserted
            chunkIDs[index] = id
            given.insert(id)
        }
        return given
    }

    /// Removes the entry at `offset`.
    mutating func remove(at offset: Int) {
        remove(descendingOffsets: [offset])
    }

    private func chunkIndex(containingOffset offset: Int) -> Int {
        var low = 0, high = chunks.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if chunkStarts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// Checks, in debug builds, that the kept last keys and ids match the chunks.
    func checkInvariants() {
        assert(lastKeys.count == chunks.count && lastIDs.count == chunks.count && chunkIDs.count == chunks.count)
        assert(zip(chunks, lastIDs).allSatisfy { $0.last?.id == $1 })
    }

    private mutating func recomputeStarts(from chunk: Int) {
        if chunkStarts.count != chunks.count { chunkStarts = Array(repeating: 0, count: chunks.count) }
        guard chunk < chunks.count else { return }
        var start = chunk == 0 ? 0 : chunkStarts[chunk - 1] + chunks[chunk - 1].count
        for index in chunk..<chunks.count {
            chunkStarts[index] = start
            start += chunks[index].count
        }
    }
}
