import Foundation
import ResultsController
import SiteRender
import SiteSources
import SiteStore

/// A listing's results as one build sees them: the controller, the delta that brought its cached results
/// up to date (`nil` when they were fetched afresh), and what its pages' inputs are made of.
struct ListingState {
    let listing: ListingConfig
    let controller: ResultsController
    let delta: Delta?
    /// Rows whose related records changed.
    let dirty: Set<Int64>
    /// The fingerprint of the settings its pages show.
    let settings: Int64
    /// The key its items' pieces are kept under; nil when its pages are rendered whole.
    var pieceKey: Int64?
    /// Each row of the delta by id, with its place in the delta's list: a page's reasons look up its own
    /// rows. Going through the delta's lists for every page took 13 s of a build that changed 50,000 rows.
    let deltaPlaces: DeltaPlaces?

    init(listing: ListingConfig, controller: ResultsController, delta: Delta?, dirty: Set<Int64>, settings: Int64) {
        self.listing = listing
        self.controller = controller
        self.delta = delta
        self.dirty = dirty
        self.settings = settings
        deltaPlaces = delta.map(DeltaPlaces.init)
    }

    /// Where each inserted, moved and updated row is in the delta's lists.
    struct DeltaPlaces {
        let inserted: [Int64: Int], moved: [Int64: Int], updated: [Int64: Int]

        init(_ delta: Delta) {
            func places(_ ids: [Int64]) -> [Int64: Int] {
                Dictionary(ids.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            }
            inserted = places(delta.insertedRows.map(\.id))
            moved = places(delta.movedRows.map(\.id))
            updated = places(delta.updatedRows.map(\.id))
        }

        /// The places in `list` of the rows `ids`, in the delta's order.
        static func ordered(_ ids: some Sequence<Int64>, in list: [Int64: Int]) -> [Int] {
            ids.compactMap { list[$0] }.sorted()
        }
    }

    /// Every row's id and version: what a page summarising the whole listing (records per year) depends on
    /// (O(n): asked only of a Markdown listing's summary pages, when a row changed).
    var wholeListing: Int64 {
        var fingerprint = Fingerprint()
        let rows = controller.fetchedVersions
        for (id, version) in zip(rows.ids, rows.versions) {
            fingerprint.combine(id)
            fingerprint.combine(version)
        }
        return fingerprint.signed
    }
}

extension PageRenderer {
    /// The rows of a taxonomy's join table `table` that belong to `records`.
    func itemRows(of records: Set<Int64>, in table: String) throws -> Set<Int64> {
        var rows = Set<Int64>()
        let ids = records.sorted()
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = ids[start..<min(start + 500, ids.count)]
            let sql = "SELECT _id FROM \(quoteIdentifier(table)) WHERE record_id IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ", ")))"
            try database.makeStatement(sql).forEachRow(chunk.map { .integer($0) }) { rows.insert($0.int64(at: 0)) }
        }
        return rows
    }

    /// Why page `number` of a listing (rows `rows` of its results) changed, from the controller's delta:
    /// rows added, moved in, changed or gone, or, failing those, rows shifting past it.
    func explain(page number: Int, rows: Range<Int>, paginator: Paginator, section: SectionInfo, state: ListingState) -> String {
        guard let delta = state.delta, let places = state.deltaPlaces else { return "rows changed (results fetched afresh)" }
        let onPage = state.controller.ids(in: rows)
        let table = state.controller.request.table, records = state.listing.taxonomy == nil ? nil : state.listing.from
        let rowNames = { (ids: [Int64]) in self.rowNames(ids, table: table, records: records) }
        var reasons: [String] = []
        let inserted = ListingState.DeltaPlaces.ordered(onPage, in: places.inserted).map { delta.insertedRows[$0].id }
        if !inserted.isEmpty { reasons.append("\(rowNames(inserted)) added") }
        for move in ListingState.DeltaPlaces.ordered(onPage, in: places.moved).map({ delta.movedRows[$0] }) {
            var text = "\(rowNames([move.id])) moved in"
            if state.listing.numbering == .newestFirst, move.from.section == move.to.section || state.listing.section == nil {
                let oldPage = move.from.item / state.listing.pageSize + 1
                if oldPage != number { text += " from page \(oldPage)" }
            }
            reasons.append(text)
        }
        let updated = ListingState.DeltaPlaces.ordered(onPage, in: places.updated).map { delta.updatedRows[$0].id }
        if !updated.isEmpty { reasons.append("\(rowNames(updated)) changed") }
        if !reasons.isEmpty { return reasons.joined(separator: "; ") }
        if onPage.contains(where: state.dirty.contains) { return "a related record changed" }
        if !delta.deletedRows.isEmpty || !delta.movedRows.isEmpty { return "rows deleted or moved out; the rest shifted" }
        return "rows shifted or the page count changed (\(paginator.pageCount) pages)"
    }

    /// Why a detail page changed: its record, or a neighbour it links to.
    func explainDetail(id: Int64, places: ListingState.DeltaPlaces?, table: String) -> String {
        guard let places else { return "\(rowNames([id], table: table)) (results fetched afresh)" }
        if places.inserted[id] != nil { return "\(rowNames([id], table: table)) added" }
        if places.updated[id] != nil || places.moved[id] != nil { return "\(rowNames([id], table: table)) changed" }
        if (relatedChanges[table] ?? []).contains(id) { return "a record related to \(rowNames([id], table: table)) changed" }
        return "a neighbour of \(rowNames([id], table: table)) changed"
    }

    /// What a detail page shows of its results: its own record (id and version) and its neighbours' titles and links.
    func linksFingerprint(offset: Int, rows: RowVersions,
                          link: (Int) throws -> (title: String, path: String?)) throws -> Int64 {
        var fingerprint = Fingerprint()
        fingerprint.combine(rows.id(at: offset))
        fingerprint.combine(rows.version(at: offset))
        for neighbour in [offset - 1, offset + 1] {
            guard neighbour >= 0, neighbour < rows.count else {
                fingerprint.combine(false)
                continue
            }
            let (title, path) = try link(neighbour)
            fingerprint.combine(true)
            fingerprint.combine(title)
            fingerprint.combine(path ?? "")
        }
        return fingerprint.signed
    }

    /// The keys of rows `ids` of `table` (of their records, for a taxonomy's join table, whose records are
    /// in `records`), for messages.
    func rowNames(_ ids: [Int64], table: String, records: String? = nil) -> String {
        let sql = records.map { "SELECT r._key FROM \(quoteIdentifier(table)) i JOIN \(quoteIdentifier($0)) r ON r._id = i.record_id WHERE i._id = ?" }
            ?? "SELECT _key FROM \(quoteIdentifier(table)) WHERE _id = ?"
        let names = ids.prefix(3).map { id in (try? database.fetchValue(sql, [.integer(id)]))?.stringValue ?? "#\(id)" }
        let more = ids.count > 3 ? " and \(ids.count - 3) more" : ""
        return (ids.count == 1 ? "row " : "rows ") + names.joined(separator: ", ") + more
    }
}
