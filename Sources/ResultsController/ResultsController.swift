import SiteStore

/// Lists the rows of a fetch request the way NSFetchedResultsController does: ids fetched once in
/// order, sections derived from them, and row bodies read on demand, `batchSize` rows per query.
///
/// ```swift
/// let controller = try ResultsController(database: db, request: request)
/// try controller.performFetch()
/// for section in controller.sections {
///     let firstRow = try controller.object(at: IndexPath(item: 0, section: 0))
/// }
/// ```
/// Memory after a fetch is O(ids); at most a couple of batches of rows are kept.
public final class ResultsController {
    /// The request being served.
    public private(set) var request: FetchRequest
    /// The result of the last fetch.
    public private(set) var snapshot: Snapshot = .empty
    private let database: Database
    private var hasFetched = false
    private var positions: [Int64: Int] = [:]
    private var batchCache: [(index: Int, rows: [Row])] = []
    private static let cachedBatchLimit = 2

    /// Makes a controller for `request` over `database`; nothing is read until `performFetch()`.
    public init(database: Database, request: FetchRequest) throws {
        try request.validate()
        self.database = database
        self.request = request
    }

    /// Runs the id query (one statement, no row bodies) and builds the sections.
    public func performFetch() throws {
        var ids: [Int64] = []
        var sections: [SectionInfo] = []
        let statement = try database.cachedStatement(request.idQuery)
        let hasSections = request.sectionKey != nil
        var currentName: String?
        var currentStart = 0
        try statement.forEachRow(request.arguments) { row in
            ids.append(row.int64(at: 0))
            guard hasSections else { return }
            let name = row.string(at: 1) ?? ""
            if name != currentName {
                if let currentName {
                    sections.append(SectionInfo(name: currentName, range: currentStart..<(ids.count - 1)))
                }
                currentName = name
                currentStart = ids.count - 1
            }
        }
        if hasSections, let currentName {
            sections.append(SectionInfo(name: currentName, range: currentStart..<ids.count))
        } else if !hasSections, !ids.isEmpty {
            sections = [SectionInfo(name: "", range: 0..<ids.count)]
        }
        snapshot = Snapshot(ids: ids, sections: sections)
        positions = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
        batchCache.removeAll()
        hasFetched = true
    }

    /// The sections, in order.
    public var sections: [SectionInfo] { snapshot.sections }

    /// Every fetched id, in order.
    public var fetchedIDs: [Int64] { snapshot.ids }

    /// The distinct index titles of the sections, in section order (a table view's index).
    public var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return sections.compactMap(\.indexTitle).filter { seen.insert($0).inserted }
    }

    /// The row at `indexPath`, read with the rest of its batch if not already loaded.
    public func object(at indexPath: IndexPath) throws -> Row {
        guard hasFetched else { throw ResultsControllerError.notFetched }
        guard sections.indices.contains(indexPath.section),
            indexPath.item >= 0, indexPath.item < sections[indexPath.section].numberOfObjects
        else { throw ResultsControllerError.indexPathOutOfRange(indexPath) }
        return try object(atOffset: sections[indexPath.section].range.lowerBound + indexPath.item)
    }

    /// The rows at `offsets` among all fetched ids, in order, read a batch at a time.
    public func objects(in offsets: Range<Int>) throws -> [Row] {
        guard hasFetched else { throw ResultsControllerError.notFetched }
        return try offsets.map { try object(atOffset: $0) }
    }

    /// Where the row with `id` is, or `nil` when it is not among the results.
    public func indexPath(for id: Int64) -> IndexPath? {
        guard let offset = positions[id] else { return nil }
        let section = sectionIndex(containing: offset)
        return IndexPath(item: offset - sections[section].range.lowerBound, section: section)
    }

    /// The position of the row with `id` among all fetched ids.
    public func offset(of id: Int64) -> Int? { positions[id] }

    private func sectionIndex(containing offset: Int) -> Int {
        var low = 0
        var high = sections.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if sections[middle].range.lowerBound <= offset { low = middle } else { high = middle - 1 }
        }
        return low
    }

    private func object(atOffset offset: Int) throws -> Row {
        guard snapshot.ids.indices.contains(offset) else {
            throw ResultsControllerError.indexPathOutOfRange(IndexPath(item: offset, section: 0))
        }
        let batchIndex = offset / request.batchSize
        let rows = try batch(batchIndex)
        return rows[offset - batchIndex * request.batchSize]
    }

    private func batch(_ index: Int) throws -> [Row] {
        if let cached = batchCache.first(where: { $0.index == index }) { return cached.rows }
        let start = index * request.batchSize
        let ids = Array(snapshot.ids[start..<min(start + request.batchSize, snapshot.ids.count)])
        let statement = try database.cachedStatement(request.batchQuery(count: ids.count))
        var byID: [Int64: Row] = [:]
        for row in try statement.fetchAll(ids.map { .integer($0) }) {
            let id = row.values[0].int64Value ?? 0
            byID[id] = Row(columns: Array(row.columns.dropFirst()), values: Array(row.values.dropFirst()))
        }
        let rows = try ids.map { id in
            guard let row = byID[id] else { throw ResultsControllerError.rowVanished(id: id) }
            return row
        }
        batchCache.append((index, rows))
        if batchCache.count > Self.cachedBatchLimit { batchCache.removeFirst() }
        return rows
    }
}
