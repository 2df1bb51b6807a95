import Dispatch
import Foundation
import SiteStore

/// Lists the rows of a fetch request the way NSFetchedResultsController does: ids and sort keys fetched
/// once in order, sections derived from them, row bodies read on demand `batchSize` rows per query, and
/// after a changeset a `Delta` that turns the old results into the new ones.
///
/// ```swift
/// let controller = try ResultsController(database: db, request: request)
/// try controller.performFetch()
/// let row = try controller.object(at: IndexPath(item: 0, section: 0))
/// let changes = try db.trackingChanges { try db.execute("UPDATE banks SET state = 'TX' WHERE rowid = 7") }.changeset
/// let delta = try controller.apply(changes)   // moves, inserts, deletes, updates, section changes
/// ```
/// Memory after a fetch is O(ids and sort keys); at most a couple of batches of rows are kept.
///
/// A controller is used from one thread (or actor) at a time, with its database connection, as a managed
/// object context is. Its table needs an INTEGER PRIMARY KEY, by which changesets name rows. The cache
/// (`cacheName`) is trusted while the database's `generation` is the one it was saved at: every write to
/// the tables a request reads goes through `trackingChanges` (or `advanceGeneration(for:)`), or the caches
/// are deleted (`deleteAllCaches(in:)`) after it; a write made otherwise (the sqlite3 shell, another
/// program) leaves the generation, and a cache restored after it lists what the table held before.
public final class ResultsController {
    /// The request being served.
    public private(set) var request: FetchRequest
    /// Told of every change.
    public weak var delegate: (any ResultsControllerDelegate)?
    /// The name the snapshot is cached under in the database, `nil` for no cache.
    public let cacheName: String?

    let database: Database
    var compiled: CompiledRequest
    var rows: OrderedRows
    /// Each section's row count, by its order key (the leading values of its rows' keys: the rank when
    /// declared, and the section key's value). Keyed by value, not by name: NULL and '' are two values.
    var sectionCounts: [SortKey: Int] = [:]
    /// `sectionCounts`' keys in section order as `rebuildSections` last sorted them (nil before it has, and
    /// after the request changed): reused while the keys are the same.
    private var orderedSectionKeys: [SortKey]?
    /// The sections, in order.
    public private(set) var sections: [SectionInfo] = []
    private(set) var hasFetched = false
    /// Why changesets cannot name the request's rows (no INTEGER PRIMARY KEY), found when the request is
    /// set and thrown by `apply`.
    var trackingProblem: ResultsControllerError?
    var batchCache: [(index: Int, rows: [Row])] = []
    /// The database generation the results reflect; `nil` when unknown (untracked changes were applied).
    var generation: Int64?
    var cacheIsStale = false
    /// The cached entries are right but their generation is behind (a changeset touched none of the rows).
    var cacheGenerationIsStale = false
    /// Whether a fetch that found no usable cache writes its results to the cache at once. Off, the write
    /// waits for `pendingCacheWrite()`, so that a caller can save it on another connection while this one
    /// only reads.
    public var savesCacheAfterFetch = true
    private var relatedColumns: [String: [String]]? {
        didSet { rowsQueries = [:] }
    }
    /// The row queries made so far, by number of ids (negated with all properties): building one is
    /// string work that every page would otherwise repeat.
    private var rowsQueries: [Int: String] = [:]
    private let deltaListeners = DeltaListeners()
    private static let cachedBatchLimit = 2
    /// The most ids bound to one statement when re-querying changed rows.
    static let idsPerQuery = 500

    /// Makes a controller for `request` over `database`; nothing is read until `performFetch()`.
    public init(database: Database, request: FetchRequest, cacheName: String? = nil) throws {
        try request.validate()
        self.database = database
        self.request = request
        self.cacheName = cacheName
        compiled = CompiledRequest(try request.resolved(in: database))
        trackingProblem = request.trackingProblem(in: database)
        rows = OrderedRows(ordering: compiled.ordering, sortedEntries: [])
    }

    deinit {
        deltaListeners.finish()
    }

    // MARK: Fetching

    /// Prepares the fetch's query without running it: a filter SQLite rejects fails here, before any work.
    public func checkQuery() throws {
        _ = try database.makeStatement(compiled.keysQuery)
    }

    /// How many distinct values of `column` the fetched rows have: the records a taxonomy's rows (one per
    /// record and item) list.
    public func distinctCount(of column: String) throws -> Int {
        Int(try database.fetchValue(compiled.distinctCountQuery(of: column), request.arguments)?.int64Value ?? 0)
    }

    /// How many distinct `column` values the fetched rows have for each value of the SQL `expression`
    /// (newest first): the records per year of a listing, with the request's filter and joins.
    public func groupedCounts(ofDistinct column: String, by expression: String) throws -> [(group: DatabaseValue, count: Int)] {
        try database.fetchAll(compiled.groupedCountQuery(ofDistinct: column, by: expression), request.arguments).map {
            ($0["grouped"] ?? .null, Int($0["count"]?.int64Value ?? 0))
        }
    }

    /// Runs the one query for the ordered ids and sort keys (no row bodies) and builds the sections.
    /// With a `cacheName`, a snapshot cached for the same request, schema and data generation is restored instead.
    public func performFetch() throws {
        if let cacheName,
            let header = try SnapshotCache(database: database).restore(name: cacheName, compiled: compiled, generation: database.generation)
        {
            try install(restoring: header, name: cacheName)
            generation = database.generation
            return
        }
        try fetchAndCache()
    }

    /// Installs a restored header's rows and sections; chunks are decoded when first used.
    private func install(restoring header: SnapshotHeader, name: String) throws {
        let source = ChunkSource(database: database, name: name, keyCount: compiled.ordering.descriptors.count, ordering: compiled.ordering)
        let rows = OrderedRows(ordering: compiled.ordering, header: header, source: source)
        try install(rows, sections: request.sectionKey == nil ? nil : header.sections)
    }

    /// Restores the cached snapshot as it was before `changeset` and applies it, which costs O(k log n)
    /// instead of a fetch; when the cache does not match, fetches afresh. Returns the delta, `nil` after a fetch.
    @discardableResult
    public func performFetch(catchingUpWith changeset: Changeset) throws -> Delta? {
        if let cacheName, let base = changeset.baseGeneration,
            let header = try SnapshotCache(database: database).restore(name: cacheName, compiled: compiled, generation: base)
        {
            try install(restoring: header, name: cacheName)
            generation = base
            do {
                return try applyRows(changeset)
            } catch is SnapshotDamage {
                // A chunk it needed was damaged: what the cache held is unknown, so there is no delta from it.
            }
        }
        try fetchAndCache()
        return nil
    }

    /// Told how many rows a fetch without a cache to restore has read, every 10,000 (for a progress display).
    public var fetchProgress: ((Int) -> Void)?

    /// Called before a fetch runs the query because no cache could be restored: a caller may let go of
    /// other large results first, as that fetch holds every row's sort key.
    public var willFetchAfresh: (() -> Void)?

    private func fetchAndCache() throws {
        willFetchAfresh?()
        let generation = database.generation
        try install(try fetchRows(progress: fetchProgress))
        self.generation = generation
        cacheIsStale = true
        if savesCacheAfterFetch { try persistCache() }
    }

    /// Fetches like `performFetch()`, reporting how many rows it has read, and stops when the task is
    /// cancelled: the running query is interrupted and the controller keeps its previous results.
    public func performFetch(progress: @escaping @Sendable (Int) -> Void) async throws {
        let interrupter = database.interrupter
        let generation = database.generation
        let rows = try await withTaskCancellationHandler {
            try Task.checkCancellation()
            do {
                return try fetchRows(progress: progress, checksCancellation: true)
            } catch let error as SQLiteError where error.isInterrupt {
                throw CancellationError()
            }
        } onCancel: {
            interrupter.interrupt()
        }
        let count = rows.count
        try install(rows)
        self.generation = generation
        cacheIsStale = true
        try persistCache()
        progress(count)
    }

    /// Reads every matching row's id, version and keys, in order.
    func fetchRows(progress: ((Int) -> Void)?, checksCancellation: Bool = false) throws -> OrderedRows {
        var filling = OrderedRows.Filling(ordering: compiled.ordering)
        let statement = try database.makeStatement(compiled.keysQuery)
        try statement.forEachRow(request.arguments) { row in
            filling.append(compiled.entry(from: row))
            if filling.count % 10_000 == 0 {
                progress?(filling.count)
                if checksCancellation, Task.isCancelled { throw CancellationError() }
            }
        }
        return filling.finish()
    }

    /// Installs `rows` with their sections: given (from a snapshot's header), or counted a run at a
    /// time (the rows were fetched, and are all decoded). Throws when two section values share a name.
    func install(_ rows: OrderedRows, sections restoredSections: [SnapshotHeader.Section]? = nil) throws {
        self.rows = rows
        sectionCounts = [:]
        batchCache.removeAll()
        hasFetched = false
        if let restoredSections {
            for section in restoredSections { sectionCounts[section.orderKey] = section.count }
        } else if request.sectionKey != nil {
            // Sections are contiguous runs in the sorted entries: count a run at a time, not a row at a time.
            var runKey: SortKey?, runLength = 0
            for chunk in rows.chunks {
                for entry in chunk {
                    if let key = runKey, compiled.sameSection(entry.key, key) {
                        runLength += 1
                        continue
                    }
                    if let key = runKey { sectionCounts[compiled.sectionOrderKey(of: key), default: 0] += runLength }
                    runKey = entry.key
                    runLength = 1
                }
            }
            if let key = runKey { sectionCounts[compiled.sectionOrderKey(of: key), default: 0] += runLength }
        }
        try rebuildSections()
        hasFetched = true
        checkInvariants()
    }

    /// Every fetched id, in order (O(n), for a full build: a page's rows are `ids(in:)`).
    public var fetchedIDs: [Int64] {
        readingAfterDamage(orElse: []) { ids(in: 0..<rows.count) }
    }

    /// Every fetched id with its version, in order (O(n), for a full build: a page's rows are
    /// `ids(in:)` and `versions(in:)`; without the sort keys `snapshot` copies too).
    public var fetchedVersions: (ids: [Int64], versions: [Int64]) {
        readingAfterDamage(orElse: ([], [])) { (ids(in: 0..<rows.count), versions(in: 0..<rows.count)) }
    }

    /// The ids of the rows at `offsets` among all fetched rows, in order: O(offsets), decoding only the
    /// cached chunks that hold them. Offsets past the results are left out.
    public func ids(in offsets: Range<Int>) -> [Int64] {
        entries(in: offsets) { $0.id }
    }

    /// The versions of the rows at `offsets` among all fetched rows, in order (0 without a version
    /// column): O(offsets), as `ids(in:)`.
    public func versions(in offsets: Range<Int>) -> [Int64] {
        entries(in: offsets) { $0.version }
    }

    /// The rows at `offsets` as bytes whose `memcmp` order never contradicts the rows' order
    /// (`RowOrdering.orderBytes`): for keeping something per row clustered in this order elsewhere.
    public func orderBytes(in offsets: Range<Int>) -> [[UInt8]] {
        entries(in: offsets) { compiled.ordering.orderBytes(of: $0.key) }
    }

    private func entries<T>(in offsets: Range<Int>, _ value: (OrderedRows.Entry) -> T) -> [T] {
        let offsets = offsets.clamped(to: 0..<rows.count)
        return readingAfterDamage(orElse: []) {
            var values: [T] = []
            values.reserveCapacity(offsets.count)
            try rows.forEachSlice(in: offsets) { slice in for entry in slice { values.append(value(entry)) } }
            return values
        }
    }

    /// Runs `body`, which reads entries; when a cached chunk turns out damaged, fetches the results again
    /// (the same rows, at the generation the cache was trusted for) and runs it once more. A read has no
    /// delta to report: the rows it could not read were never shown. Failing that, `orElse`.
    func readingAfterDamage<T>(orElse fallback: T, _ body: () throws -> T) -> T {
        do {
            return try body()
        } catch {
            do {
                try refetchAfterDamage()
                return try body()
            } catch {
                return fallback
            }
        }
    }

    /// Replaces rows whose cached chunk was damaged by a fresh fetch, current at the database's generation
    /// (a changeset from the results' own generation then catches up). When the fetch fails, the
    /// controller is left unfetched.
    func refetchAfterDamage() throws {
        let generation = database.generation
        do {
            try install(try fetchRows(progress: nil))
        } catch {
            releaseResults()
            throw error
        }
        if self.generation != generation { self.generation = generation }
        cacheIsStale = true
    }

    /// How many rows the results hold.
    public var count: Int { rows.count }

    /// The current results, with every row's sort key and version (O(n), for tests and full builds).
    public var snapshot: Snapshot {
        var keys: [SortKey] = [], versions: [Int64] = [], ids: [Int64] = []
        readingAfterDamage(orElse: ()) { try rows.loadAll() }
        for chunk in rows.chunks {
            for entry in chunk {
                ids.append(entry.id)
                keys.append(entry.key)
                versions.append(entry.version)
            }
        }
        return Snapshot(ids: ids, sections: sections, keys: keys, versions: versions)
    }

    /// The distinct index titles of the sections, in section order (a table view's index).
    public var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return sections.compactMap(\.indexTitle).filter { seen.insert($0).inserted }
    }

    /// The first section whose index title is `title` (a tap on a table view's index); `index` is the
    /// title's place in `sectionIndexTitles`, which NSFetchedResultsController's method of this name
    /// takes too and does not need here. Nil when no section has that title.
    public func section(forSectionIndexTitle title: String, at index: Int) -> Int? {
        sections.firstIndex { $0.indexTitle == title }
    }

    // MARK: Reading rows

    /// The row at `indexPath`, read with the rest of its batch if not already loaded.
    public func object(at indexPath: IndexPath) throws -> Row {
        guard hasFetched else { throw ResultsControllerError.notFetched }
        guard sections.indices.contains(indexPath.section),
            indexPath.item >= 0, indexPath.item < sections[indexPath.section].numberOfObjects
        else { throw ResultsControllerError.indexPathOutOfRange(indexPath) }
        return try object(atOffset: sections[indexPath.section].range.lowerBound + indexPath.item)
    }

    /// The rows at `offsets` among all fetched rows, in order, read a batch at a time.
    public func objects(in offsets: Range<Int>) throws -> [Row] {
        guard hasFetched else { throw ResultsControllerError.notFetched }
        return try offsets.map { try object(atOffset: $0) }
    }

    /// The rows at `offsets` among all fetched rows, in order, with every property, `unfetchedProperties`
    /// too: for the few pages that need whole records (a feed's entries) in a listing that otherwise
    /// shows a few fields. Read at once, beside the batches.
    public func objectsWithAllProperties(in offsets: Range<Int>) throws -> [Row] {
        try rows(offsets, allProperties: true)
    }

    /// Where the row with `id` is, or `nil` when it is not among the results.
    public func indexPath(for id: Int64) -> IndexPath? {
        guard let offset = offset(of: id) else { return nil }
        let section = sectionIndex(containing: offset, in: sections)
        return IndexPath(item: offset - sections[section].range.lowerBound, section: section)
    }

    /// The position of the row with `id` among all fetched rows: O(log n) through the cache's index by
    /// id after a restore (decoding one chunk), and through an index made at the first lookup after a fetch.
    public func offset(of id: Int64) -> Int? {
        readingAfterDamage(orElse: nil) { try rows.places(ofIDs: [id])[id]?.offset }
    }

    /// The section holding `offset`: the last one starting at or before it (empty declared sections
    /// share their start with the next section, which is the one holding the row).
    func sectionIndex(containing offset: Int, in sections: [SectionInfo]) -> Int {
        var low = 0
        var high = sections.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if sections[middle].range.lowerBound <= offset { low = middle } else { high = middle - 1 }
        }
        return low
    }

    private func object(atOffset offset: Int) throws -> Row {
        guard offset >= 0, offset < rows.count else {
            throw ResultsControllerError.indexPathOutOfRange(IndexPath(item: offset, section: 0))
        }
        let batchIndex = offset / request.batchSize
        let batch = try self.batch(batchIndex)
        return batch[offset - batchIndex * request.batchSize]
    }

    private func batch(_ index: Int) throws -> [Row] {
        if let cached = batchCache.first(where: { $0.index == index }) { return cached.rows }
        let start = index * request.batchSize
        let batch = try rows(start..<min(start + request.batchSize, rows.count), allProperties: false)
        batchCache.append((index, batch))
        if batchCache.count > Self.cachedBatchLimit { batchCache.removeFirst() }
        return batch
    }

    /// Reads the rows at `offsets`, in order: the fetched properties, or with `allProperties` the
    /// request's `unfetchedProperties` too.
    private func rows(_ offsets: Range<Int>, allProperties: Bool) throws -> [Row] {
        try rowReading(in: offsets, allProperties: allProperties).rows(on: database)
    }

    /// The read of the rows at `offsets` (the fetched properties, or with `allProperties` every one),
    /// to run later on any connection to the same store: a render worker reads a page's rows on its own
    /// connection, off the thread that holds this controller.
    public func rowReading(in offsets: Range<Int>, allProperties: Bool = false) throws -> RowReading {
        guard hasFetched else { throw ResultsControllerError.notFetched }
        guard offsets.lowerBound >= 0, offsets.upperBound <= rows.count else {
            throw ResultsControllerError.indexPathOutOfRange(IndexPath(item: max(offsets.lowerBound, offsets.upperBound - 1), section: 0))
        }
        let ids = self.ids(in: offsets)
        guard !ids.isEmpty else { return RowReading(sql: "", ids: []) }
        if relatedColumns == nil { relatedColumns = try loadRelatedColumns() }
        let queryKey = allProperties ? -ids.count : ids.count
        let sql = rowsQueries[queryKey] ?? compiled.rowsQuery(forIDs: ids.count, relatedColumns: relatedColumns ?? [:], allProperties: allProperties)
        rowsQueries[queryKey] = sql
        // A reader that finds it needs some of the rows only (the others' pages are rendered) reads those.
        let (compiled, relatedColumns) = (compiled, relatedColumns ?? [:])
        return RowReading(sql: sql, ids: ids) { count in
            compiled.rowsQuery(forIDs: count, relatedColumns: relatedColumns, allProperties: allProperties)
        }
    }

    private func loadRelatedColumns() throws -> [String: [String]] {
        var columns: [String: [String]] = [:]
        if request.unfetchedProperties.contains(where: { !$0.contains(".") }) {
            columns[""] = try database.fetchAll("SELECT name FROM pragma_table_info(?)", [.text(request.table)])
                .compactMap { $0["name"]?.stringValue }
        }
        for name in request.prefetchedRelationships {
            guard let relationship = request.relationships.first(where: { $0.name == name }) else { continue }
            columns[name] = try database.fetchAll("SELECT name FROM pragma_table_info(?)", [.text(relationship.table)])
                .compactMap { $0["name"]?.stringValue }
        }
        return columns
    }

    // MARK: Sections

    func count(_ entry: OrderedRows.Entry, by amount: Int) {
        guard request.sectionKey != nil else { return }
        let key = compiled.sectionOrderKey(of: entry.key)
        let newCount = (sectionCounts[key] ?? 0) + amount
        sectionCounts[key] = newCount == 0 ? nil : newCount
    }

    /// Orders the counted sections and names them. Two values with the same text are refused rather
    /// than listed as two sections of one name: a site names a section's pages by it, so the second
    /// would overwrite the first's, and nothing a table view keys by tells them apart (decisions.md §39a).
    func rebuildSections() throws {
        guard let sectionKey = request.sectionKey else {
            sections = rows.count > 0 ? [SectionInfo(name: "", range: 0..<rows.count)] : []
            return
        }
        // The same sections as last time, whose counts alone changed (most changesets): their order stands.
        // Sorting them again was a twentieth of a watch's one-record build at 100,000 records (a tag each).
        let keys: [SortKey]
        if let ordered = orderedSectionKeys, ordered.count == sectionCounts.count, ordered.allSatisfy({ sectionCounts[$0] != nil }) {
            keys = ordered
        } else {
            keys = sectionCounts.keys.sorted { lhs, rhs in
                if compiled.sectionPrecedes(lhs, rhs) { return true }
                if compiled.sectionPrecedes(rhs, lhs) { return false }
                return compiled.sectionName(of: lhs) < compiled.sectionName(of: rhs)
            }
        }
        orderedSectionKeys = keys
        var named: [String: SortKey] = [:]
        var entries: [(name: String, key: SortKey?, count: Int)] = []
        for key in keys {
            let name = compiled.sectionName(of: key)
            if let other = named[name] {
                let values = [other, key].map { $0.value(at: compiled.sectionOrderKeyCount - 1) }
                throw ResultsControllerError.ambiguousSectionName(column: sectionKey, name: name, values: values)
            }
            named[name] = key
            entries.append((name, key, sectionCounts[key] ?? 0))
        }
        let declarations = request.sectionOrder ?? []
        if request.showsEmptySections {
            for (rank, declaration) in declarations.enumerated() where named[declaration.name] == nil {
                let key = SortKey([.integer(Int64(rank)), .text(declaration.name)])
                let place = entries.firstIndex { $0.key.map { compiled.sectionPrecedes(key, $0) } ?? false } ?? entries.count
                entries.insert((declaration.name, key, 0), at: place)
            }
        }
        var start = 0
        sections = entries.map { entry in
            let declaration = declarations.first { $0.name == entry.name }
            defer { start += entry.count }
            return SectionInfo(name: entry.name, displayTitle: declaration?.displayTitle, indexTitle: declaration?.indexTitle,
                               range: start..<(start + entry.count))
        }
    }

    func indexPath(ofOffset offset: Int, in sections: [SectionInfo], sectionName: String) -> IndexPath {
        let section = sections.firstIndex { $0.name == sectionName } ?? sectionIndex(containing: offset, in: sections)
        return IndexPath(item: offset - sections[section].range.lowerBound, section: section)
    }

    // MARK: Deltas

    /// A stream of the deltas from now on, for consumers that prefer `for await` to a delegate. Each call
    /// makes a new stream; it stops receiving (and holding) deltas once its loop ends or its task is cancelled.
    public func deltaStream() -> AsyncStream<Delta> {
        let (stream, continuation) = AsyncStream.makeStream(of: Delta.self, bufferingPolicy: .unbounded)
        let listeners = deltaListeners
        let id = listeners.add(continuation)
        continuation.onTermination = { _ in listeners.remove(id) }
        return stream
    }

    /// A stream of the deltas from now on (a new one at each read).
    @available(*, deprecated, renamed: "deltaStream()")
    public var deltas: AsyncStream<Delta> { deltaStream() }

    /// How many delta streams are open.
    var deltaListenerCount: Int { deltaListeners.count }

    func report(_ delta: Delta) {
        guard !delta.isEmpty else { return }
        delegate?.controllerWillChangeContent(self)
        delegate?.controller(self, didChange: delta)
        delegate?.controllerDidChangeContent(self)
        deltaListeners.yield(delta)
    }

    /// Writes the snapshot to the cache when it changed since it was last written (O(n): call it once,
    /// after a batch of changes, not after each).
    public func persistCache() throws {
        let (stale, generationStale) = (cacheIsStale, cacheGenerationIsStale)
        guard let write = pendingCacheWrite() else { return }
        do {
            // One commit for the header and its chunks, not one per statement.
            try database.transaction { try write(database) }
        } catch {
            // Not written: the next call tries again.
            (cacheIsStale, cacheGenerationIsStale) = (stale, generationStale)
            throw error
        }
    }

    /// What `persistCache()` would write, as work to run on another connection to the store (a writer
    /// on a thread of its own, while this one goes on); `nil` when the cache is current. The controller
    /// counts its cache as written.
    public func pendingCacheWrite() -> (@Sendable (Database) throws -> Void)? {
        guard let cacheName, cacheIsStale || cacheGenerationIsStale else { return nil }
        let stale = cacheIsStale
        cacheIsStale = false
        cacheGenerationIsStale = false
        switch (stale, generation) {
        case (false, let generation?):
            return { try SnapshotCache(database: $0).advance(name: cacheName, to: generation) }
        case (_, let generation?):
            let newBlobs = rows.assignBlobIDs()
            let contents = SnapshotCache.Contents(
                epoch: rows.epoch, chunks: rows.summaries, newBlobs: newBlobs, movedIDs: rows.movedIDs,
                sections: sectionCounts.map { SnapshotHeader.Section(orderKey: $0.key, count: $0.value) })
            let compiled = compiled
            return { try SnapshotCache(database: $0).save(name: cacheName, compiled: compiled, contents: contents, generation: generation) }
        case (_, nil):
            return { try SnapshotCache(database: $0).delete(name: cacheName) }
        }
    }

    /// Removes a named snapshot from the cache, so the next `performFetch` with that name runs the query.
    public static func deleteCache(named name: String, in database: Database) throws {
        try SnapshotCache(database: database).delete(name: name)
    }

    /// Lets go of the fetched results, which are freed on another thread; the controller must fetch again
    /// before it is used. A hundred thousand entries (each with its sort key) took a seventh of a build
    /// with nothing to render to free on the thread that renders.
    public func releaseResults() {
        let results = (rows, sectionCounts)
        rows = OrderedRows(ordering: compiled.ordering, sortedEntries: [])
        sectionCounts = [:]
        sections = []
        batchCache.removeAll()
        hasFetched = false
        DispatchQueue.global(qos: .utility).async { withExtendedLifetime(results) {} }
    }

    /// Removes every named snapshot from the cache: for when a table was made again, whose rows all
    /// have new ids that no changeset relates to the old ones.
    public static func deleteAllCaches(in database: Database) throws {
        try SnapshotCache(database: database).deleteAll()
    }

    /// Replaces the request (a new filter, order or section key) and reports the change as a delta.
    @discardableResult
    public func setRequest(_ newRequest: FetchRequest) throws -> Delta {
        try newRequest.validate()
        let resolved = try newRequest.resolved(in: database)
        // Under a new order, sort keys of two requests say nothing about each other: every row may move.
        let delta = try refetchAndDiff(updatedIDs: [], keysComparable: false) {
            request = newRequest
            compiled = CompiledRequest(resolved)
            orderedSectionKeys = nil
            relatedColumns = nil
            trackingProblem = newRequest.trackingProblem(in: database)
        }
        generation = database.generation
        cacheIsStale = true
        report(delta)
        return delta
    }

    /// Every listed row's place (offset, section, version), by id (O(n)).
    private func currentPlaces() throws -> [Int64: RowChangeRecord.Place] {
        try rows.loadAll()
        var places: [Int64: RowChangeRecord.Place] = [:]
        places.reserveCapacity(rows.count)
        var offset = 0
        for chunk in rows.chunks {
            for entry in chunk {
                places[entry.id] = .init(offset: offset, section: compiled.sectionName(of: entry.key), version: entry.version)
                offset += 1
            }
        }
        return places
    }

    /// Fetches again (after `prepare` changes the request, if it does) and diffs the new results against
    /// the old: O(n), for request switches and windowed requests. With `keysComparable`, rows listed
    /// before and after under the same sort key are anchors, updated in place when their content changed.
    func refetchAndDiff(updatedIDs: Set<Int64>, keysComparable: Bool, everyRowMayHaveChanged: Bool = false,
                        alsoUpdated: Set<Int64> = [], prepare: () -> Void = {}) throws -> Delta {
        let oldSections = sections
        let oldPlaces = try currentPlaces()
        let oldKeys = keysByID()
        prepare()
        batchCache.removeAll()
        try install(try fetchRows(progress: fetchProgress))
        let newKeys = keysByID()
        let newPlaces = try currentPlaces()
        let comparesVersions = request.versionColumn != nil
        var candidates: [RowChangeRecord] = []
        var inPlace: [Delta.RowUpdate] = []
        for id in Set(oldPlaces.keys).union(newPlaces.keys) {
            let old = oldPlaces[id], new = newPlaces[id]
            if keysComparable, let old, let new, oldKeys[id] == newKeys[id] {
                let changed = comparesVersions ? old.version != new.version : updatedIDs.contains(id)
                if changed || everyRowMayHaveChanged || alsoUpdated.contains(id) {
                    inPlace.append(.init(id: id, oldIndexPath: indexPath(ofOffset: old.offset, in: oldSections, sectionName: old.section),
                                         newIndexPath: indexPath(ofOffset: new.offset, in: sections, sectionName: new.section)))
                }
            } else {
                candidates.append(RowChangeRecord(id: id, old: old, new: new))
            }
        }
        var delta = DeltaBuilder(oldSections: oldSections, newSections: sections,
                                 comparesVersions: keysComparable ? comparesVersions : true, updatedIDs: updatedIDs)
            .delta(for: candidates)
        delta.updatedRows += inPlace
        delta.sortForApplication()
        return delta
    }

    /// Every row's sort key by id, from decoded rows (O(n)).
    private func keysByID() -> [Int64: SortKey] {
        var keys: [Int64: SortKey] = [:]
        keys.reserveCapacity(rows.count)
        for chunk in rows.chunks { for entry in chunk { keys[entry.id] = entry.key } }
        return keys
    }

    /// Checks, in debug builds, that the ordered rows agree with the comparison and the sections with the counts.
    func checkInvariants() {
        #if DEBUG
        rows.checkInvariants()
        var previous: OrderedRows.Entry?
        for chunk in rows.chunks {
            for entry in chunk {
                if let previous {
                    assert(compiled.ordering.precedes(previous.key, previous.id, entry.key, entry.id),
                           "SQLite's order and the controller's comparison disagree at id \(entry.id)")
                }
                previous = entry
            }
        }
        assert(sections.map(\.numberOfObjects).reduce(0, +) == rows.count)
        #endif
    }
}

/// A read of some rows of a controller's results by id, made by `ResultsController.rowReading(in:allProperties:)`.
public struct RowReading: Sendable {
    let sql: String
    /// The rows' ids, in the order they are returned.
    public let ids: [Int64]
    /// The query for as many ids as it is given.
    var query: (@Sendable (Int) -> String)?

    init(sql: String, ids: [Int64], query: (@Sendable (Int) -> String)? = nil) {
        self.sql = sql
        self.ids = ids
        self.query = query
    }

    /// The reading of the rows `ids` alone (some of this reading's), in that order.
    public func only(_ ids: [Int64]) -> RowReading {
        if ids.count == self.ids.count || ids.isEmpty { return RowReading(sql: ids.isEmpty ? "" : sql, ids: ids, query: query) }
        guard let query else { preconditionFailure("a reading made without its query is narrowed only to as many rows") }
        return RowReading(sql: query(ids.count), ids: ids, query: query)
    }

    /// Reads the rows, in order, on `database` (which must see the store as the controller does); throws
    /// `rowVanished` for a row that is gone.
    public func rows(on database: Database) throws -> [Row] {
        guard !ids.isEmpty else { return [] }
        let statement = try database.cachedStatement(sql)
        // Every row has the same columns: one array for all of them, without the id.
        let columns = Array(statement.columnNames.dropFirst())
        // A batch's ids are few: found by a scan, not a hash, unless there are many.
        let places = ids.count > 32 ? Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) }) : nil
        var found = [Row?](repeating: nil, count: ids.count)
        try statement.forEachRow(ids.map { DatabaseValue.integer($0) }) { row in
            let id = row.int64(at: 0)
            guard let place = places.map({ $0[id] }) ?? ids.firstIndex(of: id) else { return }
            var values: [DatabaseValue] = []
            values.reserveCapacity(columns.count)
            for column in 0..<columns.count { values.append(row.value(at: column + 1)) }
            found[place] = Row(columns: columns, values: values)
        }
        return try found.enumerated().map { place, row in
            guard let row else { throw ResultsControllerError.rowVanished(id: ids[place]) }
            return row
        }
    }
}
