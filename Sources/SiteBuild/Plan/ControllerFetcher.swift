import Foundation
import ResultsController
import SiteRender
import SiteStore

/// Makes the results controllers a build renders from (each listing's, and each collection's detail
/// pages'), restored from their named caches and caught up with the load's changes; it needs nothing of
/// the render plan, so a build can fetch them while the plan is still being read (`fetchAhead`).
struct ControllerFetcher {
    let config: SiteConfig
    let templates: TemplateSet
    let database: Database
    /// What the load changed, for the controllers to catch up with from their cached results.
    let changes: Changeset
    /// Saves the controllers' cached results on a thread of its own; without one, each controller saves its
    /// own after a fresh fetch, and `saveCache(of:)` after its pages are rendered.
    let cacheWriter: CacheWriter?
    /// Told how a fetch without a cache to restore is coming along.
    var progress: ((RenderProgress) -> Void)?
    /// Where a `watch` keeps its controllers between builds: one kept there is caught up with the load's
    /// changes, not restored from its cache.
    var session: BuildSession?
    /// The controllers `fetchAhead` made, by cache name, until their listing or collection takes them.
    private let ahead = Ahead()

    /// One controller of a build: what it lists, and where its errors are reported.
    struct Fetch {
        /// The listing's name (or the collection's, for detail pages without a listing), for errors.
        let name: String
        let request: FetchRequest
        let cacheName: String
        /// Where in `sitegen.yml` a query SQLite rejects is reported.
        let mark: ConfigMark?
        /// The progress step a fetch without a cache reports under; `listing <name>` when nil.
        var step: String?
    }

    /// The controller of `fetch`: the one `fetchAhead` made for it, else restored from its cache and
    /// brought up to date with the load's changes (with the delta that did it), or fetched afresh when the
    /// cache does not match. A query SQLite rejects is an error of `sitegen.yml` at the fetch's mark.
    func controller(for fetch: Fetch) throws -> (ResultsController, Delta?) {
        if let made = ahead.take(fetch.cacheName) { return made }
        do {
            if let kept = session?.takeController(named: fetch.cacheName, serving: fetch.request, at: changes.baseGeneration) {
                return (kept, try kept.apply(changes))
            }
            let controller = try ResultsController(database: database, request: fetch.request, cacheName: fetch.cacheName)
            // With a cache writer, this connection writes nothing while pages render, so the workers'
            // connections, which read list pages' rows, see the store as it does.
            controller.savesCacheAfterFetch = cacheWriter == nil
            let throttle = ProgressThrottle(step: fetch.step ?? "listing \(fetch.name)", total: 0, report: progress)
            controller.fetchProgress = { throttle.readRows($0) }
            // A fetch from nothing holds every row's sort key: the caches queued before it (a taxonomy's
            // whole snapshot, held until written) are written first, not kept beside it (decisions.md 39g).
            if let cacheWriter { controller.willFetchAfresh = { cacheWriter.waitUntilIdle() } }
            return (controller, try controller.performFetch(catchingUpWith: changes))
        } catch let error as SQLiteError {
            throw BuildError.config(ConfigError(file: config.file, at: fetch.mark, reason: "listing '\(fetch.name)': \(error.message)"))
        } catch let error as ResultsControllerError {
            throw BuildError.config(ConfigError(file: config.file, at: fetch.mark, reason: "listing '\(fetch.name)': \(error.description)"))
        }
    }

    /// Makes the build's controllers in the order it renders them, while `goOn()` says so (the render plan,
    /// read on another thread, is not ready yet). A build whose load was quick (a watch's, which knows the
    /// files that changed) otherwise waits for the plan with a core idle, then restores them: at 100,000
    /// records a fifth of a watch's build. Only with a cache writer, so that fetching writes nothing here.
    /// A fetch that fails is left for its listing to make again, and report in its place. Each controller
    /// made holds its results until its listing takes it, where one listing's were alive at a time: the
    /// benchmark site's round (four controllers) peaked within the noise of before (decisions.md, 38).
    func fetchAhead(while goOn: () -> Bool) {
        guard cacheWriter != nil else { return }
        for fetch in config.listings.map({ listingFetch($0).fetch }) + config.collections.compactMap(detailFetch) {
            guard goOn(), let made = try? controller(for: fetch) else { return }
            ahead.keep(made, as: fetch.cacheName)
        }
    }

    /// How many of the controllers `fetchAhead` made their listings have taken.
    var takenAhead: Int { ahead.taken }

    /// Before any page is rendered, prepares each listing's query: a `where` SQLite rejects is an error at
    /// its line of `sitegen.yml`, rather than after the listings before it were written.
    func checkListingQueries() throws {
        for listing in config.listings where listing.filter != nil {
            do {
                try ResultsController(database: database, request: listingFetch(listing).fetch.request).checkQuery()
            } catch let error as SQLiteError {
                throw BuildError.config(ConfigError(file: config.file, at: listing.marks["where"], reason: "listing '\(listing.name)': \(error.message)"))
            }
        }
    }

    /// The fetch of `listing`'s rows, and how a fetched row becomes the record it lists (a taxonomy's rows
    /// are its join table's, reaching the record's fields as `record.*`).
    func listingFetch(_ listing: ListingConfig) -> (fetch: Fetch, recordRow: (Row) -> Row) {
        let collection = config.collection(named: listing.from)!
        var request = FetchRequest(
            table: listing.from, idColumn: "_id", filter: listing.filter,
            sortDescriptors: PageRenderer.sortDescriptors(listing.sort, of: collection),
            relationships: collection.joins, sectionKey: listing.section,
            sectionOrder: listing.section != nil && !listing.sectionDeclarations.isEmpty ? listing.sectionDeclarations : nil,
            showsEmptySections: listing.showsEmptySections,
            prefetchedRelationships: collection.toOneRelationships.map(\.field), batchSize: listing.pageSize)
        // A record with no value for the section field is in no section, as a record with no tags is on no
        // tag's page (a section without a name was a page titled with nothing, at /…/untitled/).
        if let section = listing.section, listing.taxonomy == nil {
            let parts = section.split(separator: ".", maxSplits: 1).map(String.init)
            let column = parts.count == 2 ? quoteIdentifier(parts[0]) + "." + quoteIdentifier(parts[1])
                : quoteIdentifier(listing.from) + "." + quoteIdentifier(section)
            request.filter = (listing.filter.map { "(\($0)) AND " } ?? "") + column + " IS NOT NULL"
        }
        // A taxonomy lists the list field's join table (a row per record and item), each row reaching its
        // record as `record.*`: a record is in the section of each of its items.
        var recordRow: (Row) -> Row = { $0 }
        if let taxonomy = listing.taxonomy {
            request.table = CollectionSchema.listTable(collection.name, taxonomy)
            // By rowid (which `_id` is): a changed record's list items are then found by its id, deleted or not.
            request.relationships = [Relationship(name: "record", table: collection.name, foreignKey: "record_id", targetKey: "rowid")]
            request.prefetchedRelationships = ["record"]
            request.sortDescriptors = PageRenderer.sortDescriptors(listing.sort, of: collection, ofRecordsAs: "record.")
            request.filter = listing.filter.map { "record_id IN (SELECT _id FROM \(quoteIdentifier(collection.name)) WHERE \($0))" }
            recordRow = { row in
                let indices = row.columns.indices.filter { row.columns[$0].hasPrefix("record.") }
                return Row(columns: indices.map { String(row.columns[$0].dropFirst("record.".count)) }, values: indices.map { row.values[$0] })
            }
        }
        // Each row's content hash is its version: a page's inputs name the versions of its rows.
        request.versionColumn = listing.taxonomy == nil ? "_hash" : "record._hash"
        // Where a row came from is for detail pages and the inspector, not for a list's rows.
        let bookkeeping = listing.writesMarkdown ? [] : ["_source", "_line", "_hash"]
        request.unfetchedProperties = Set((unshownFields(of: listing, collection: collection) + bookkeeping).map {
            listing.taxonomy == nil ? $0 : "record." + $0
        })
        let fetch = Fetch(name: listing.name, request: request, cacheName: "listing \(listing.name)",
                          mark: listing.marks["where"] ?? listing.marks[""])
        return (fetch, recordRow)
    }

    /// The fetch of `collection`'s records for its detail pages, in its primary listing's order (the first
    /// listing of it), for each page's previous and next; nil when it has no detail pages.
    func detailFetch(_ collection: CollectionConfig) -> Fetch? {
        guard collection.detail != nil else { return nil }
        let primary = config.listings.first { $0.from == collection.name && $0.taxonomy == nil }
        let request = FetchRequest(
            table: collection.name, idColumn: "_id", sortDescriptors: PageRenderer.sortDescriptors(primary?.sort ?? [], of: collection),
            relationships: collection.joins, versionColumn: "_hash", prefetchedRelationships: collection.toOneRelationships.map(\.field),
            batchSize: 100)
        return Fetch(name: primary?.name ?? collection.name, request: request, cacheName: "detail \(collection.name)",
                     mark: primary?.marks["sort"] ?? collection.detail?.marks[""], step: "detail pages of \(collection.name)")
    }

    /// The fields a listing's pages never show, which its rows are read without (a Markdown body is most
    /// of a record, and a list page seldom shows it): named nowhere in its template, partials and layouts,
    /// and not needed for a record's link or title. Listings with Markdown pages read every field; a page's
    /// feeds read every field again (`rowReading(in:allProperties:)`).
    func unshownFields(of listing: ListingConfig, collection: CollectionConfig) -> [String] {
        guard !listing.writesMarkdown else { return [] }
        // A tag can only reach a field by naming it.
        var needed = templates.tagNames(usedBy: listing.template)
        // `fields` shows every declared field.
        if needed.contains("fields") { return [] }
        needed.insert(collection.detail?.titleField ?? "title")
        if let path = collection.detail?.path { needed.formUnion(PathPattern(path).placeholders) }
        needed.formUnion(collection.relationships.map(\.field))
        // A feed item's `source` (`source.title`, `source.link`) is made of two columns.
        if collection.kind == .feed, needed.contains("source") { needed.formUnion(["source_title", "source_link"]) }
        return collection.fields.map(\.name).filter { !needed.contains($0) }
    }

    /// Done with `controller` for this build: it is kept for the session's next build (which saves its
    /// cache later, `BuildSession.saveCaches`), or its cached results are saved if they changed and it lets
    /// go of its results.
    func finish(with controller: ResultsController) {
        if let session {
            session.keep(controller)
        } else {
            saveCache(of: controller)
            controller.releaseResults()
        }
    }

    /// Saves `controller`'s cached results if they changed: through the cache writer when there is one.
    /// A cache that fails to save costs the next build a fresh fetch, nothing else.
    func saveCache(of controller: ResultsController) {
        guard let cacheWriter else {
            try? controller.persistCache()
            return
        }
        if let write = controller.pendingCacheWrite() { cacheWriter.submit(write) }
    }

    /// The controllers made ahead, shared by the copies of the fetcher (a renderer's and its builder's).
    private final class Ahead {
        // Used from the build's thread only.
        private var made: [String: (ResultsController, Delta?)] = [:]
        private(set) var taken = 0

        func keep(_ controller: (ResultsController, Delta?), as name: String) { made[name] = controller }

        func take(_ name: String) -> (ResultsController, Delta?)? {
            guard let controller = made.removeValue(forKey: name) else { return nil }
            taken += 1
            return controller
        }
    }
}
