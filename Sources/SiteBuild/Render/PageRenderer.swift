import Foundation
import ResultsController
import SiteRender
import SiteSources
import SiteStore

/// Renders the pages of listings and detail pages through the templates, reading rows through results controllers.
struct PageRenderer {
    let config: SiteConfig
    let templates: TemplateSet
    let database: Database
    let writer: OutputWriter
    /// Where pages go to be rendered and written on worker threads.
    let queue: RenderQueue
    /// Told how each listing's and collection's pages are coming along.
    var progress: ((RenderProgress) -> Void)?
    /// Which pages to render and which to keep from the last build.
    let plan: RenderPlan
    /// Makes the listings' and detail pages' controllers (some of them made while the plan was read).
    let controllers: ControllerFetcher
    /// Per table, the rows whose related records changed (which their own versions do not show).
    let relatedChanges: [String: Set<Int64>]
    /// The fingerprint of what every page shows besides its own content: the site's settings and the menu.
    var siteFingerprint: Int64 = 0
    /// Each template's fingerprint, with its partials and layouts.
    let templateFingerprints: [String: Int64]
    /// The most pages a sitemap file lists (`SiteBuilder.Options.pagesPerSitemap`).
    var pagesPerSitemap = 50_000
    /// Where the list items' pieces rendered by this build are kept for the next; nil when none are (a plan).
    var pieceSink: ItemPieceSink?

    var site: [String: Any] {
        ["title": config.title, "baseURL": config.baseURL, "basePath": config.basePath, "params": config.params.mapValues(\.templateValue)]
    }
    var body: BodyFormatter {
        BodyFormatter(markdown: MarkdownRenderer(allowsRawHTML: config.allowsRawHTML, basePath: config.basePath, highlighter: config.codeHighlighter))
    }

    /// The menu every page shows: each listing, then the pages of the Markdown collections no listing
    /// lists (an about page belongs in the menu; a hundred thousand listed records do not), by key.
    func navigation() throws -> [[String: Any]] {
        var items: [[String: Any]] = config.listings.filter(\.inNavigation).map { ["title": $0.title, "url": navigationURL(of: $0), "current": false] }
        let listed = Set(config.listings.map(\.from))
        for collection in config.collections where collection.kind == .markdown && collection.detail != nil && !listed.contains(collection.name) {
            let presenter = RecordPresenter(collection: collection, config: config)
            // Ordered by `weight` where the collection declares one (Hugo's menu weight; pages without one
            // after those with), then by key.
            let weighted = collection.fields.contains { $0.name == "weight" && [FieldType.integer, .real].contains($0.type) }
            let request = FetchRequest(table: collection.name, idColumn: "_id",
                                       sortDescriptors: (weighted ? [SortDescriptor(key: "weight", nulls: .last)] : []) + [SortDescriptor(key: "_key")])
            let controller = try ResultsController(database: database, request: request)
            try controller.performFetch()
            for row in try controller.objects(in: 0..<controller.fetchedIDs.count) {
                if let path = presenter.detailPath(row) { items.append(["title": presenter.title(row), "url": presenter.url(path), "current": false]) }
            }
        }
        return items
    }

    /// Where the menu takes a reader for `listing`: its section index, or its first page.
    func navigationURL(of listing: ListingConfig) -> String {
        config.basePath + (listing.indexPath ?? listing.path).drop { $0 == "/" }
    }

    /// `navigation` with `current` true on the entry at `url` (the listing a page is one of, or the page),
    /// for a theme to mark where the reader is (`aria-current`).
    static func marking(_ navigation: [[String: Any]], current url: String) -> [[String: Any]] {
        navigation.map { item in
            guard item["url"] as? String == url else { return item }
            var marked = item
            marked["current"] = true
            return marked
        }
    }

    /// What a listing's sort falls back to when rows tie on every field it names: the records' keys, which
    /// are unique and which only the record itself changes. Not the ids: a clean build gives them in file
    /// order and an incremental build gives a new row the next. Not where the rows were read (file, then
    /// line, until decisions.md 25): a row inserted above others moves their lines without changing them,
    /// so their stored lines went stale and a record added at the line of its twin was listed after it
    /// until a clean build listed it before. The key is a sort key of every cached entry (decisions.md 22).
    /// A key that is a number (`key: cert`, an integer field) ties in number order (2 before 10), its text after.
    static func tieBreakers(_ collection: CollectionConfig) -> [String] {
        let numeric = collection.key.flatMap { key in collection.fields.first { $0.name == key } }.map { [.integer, .real].contains($0.type) } ?? false
        return (numeric ? [collection.key!] : []) + ["_key"]
    }

    /// The controller's order for a listing's `sort`, then the tie-breakers. `prefix` names the records'
    /// table where the listing reads another (a taxonomy's `value` is its own column).
    static func sortDescriptors(_ sort: [(field: String, ascending: Bool)], of collection: CollectionConfig,
                                ofRecordsAs prefix: String = "") -> [FetchRequest.SortDescriptor] {
        sort.map { SortDescriptor(key: $0.field == "value" ? "value" : prefix + $0.field, ascending: $0.ascending) }
            + tieBreakers(collection).map { SortDescriptor(key: prefix + $0) }
    }

    static func neighbour(_ link: (title: String, path: String?), _ presenter: RecordPresenter) -> [String: Any] {
        ["title": link.title, "url": link.path.map(presenter.url) ?? ""]
    }

    /// Queues the page at site path `path` (`/banks/1/` is written as `banks/1/index.html`), its context
    /// made by `context` on a render worker.
    func write(_ template: String, _ page: PageKind, path: String, context: @escaping () throws -> [String: Any]) throws {
        try queue.submit(template: template, page: page, path: String(path.dropFirst()) + "index.html") { _ in try context() }
    }

    /// Queues the page at site path `path`, its context made on a render worker with what it can read there.
    func write(_ template: String, _ page: PageKind, path: String,
                       context: @escaping (RenderQueue.Worker) throws -> [String: Any]) throws {
        try queue.submit(template: template, page: page, path: String(path.dropFirst()) + "index.html", context: context)
    }
}

extension PageRenderer {
    /// The fingerprint of the settings a listing's pages show: the site's, the menu, the listing's own
    /// declaration and its collection's (which gives its records' links and fields).
    func listingSettings(_ listing: ListingConfig) -> Int64 {
        var fingerprint = Fingerprint()
        fingerprint.combine(siteFingerprint)
        fingerprint.combine(listing.fingerprint)
        fingerprint.combine(config.collection(named: listing.from).map(collectionSettings) ?? 0)
        return fingerprint.signed
    }

    /// The fingerprint of a collection's declaration and of the collections it relates to, whose records'
    /// titles and links (their detail pages' `title` and `path`) its records' pages show.
    func collectionSettings(_ collection: CollectionConfig) -> Int64 {
        // Without relationships, the declaration's own fingerprint, as before there were any: a store of an
        // earlier build still finds its pages unchanged.
        guard !collection.relationships.isEmpty else { return collection.fingerprint }
        var fingerprint = Fingerprint()
        fingerprint.combine(collection.fingerprint)
        for target in Set(collection.relationships.map(\.target)).sorted() {
            fingerprint.combine(target)
            fingerprint.combine(config.collection(named: target)?.fingerprint ?? 0)
        }
        return fingerprint.signed
    }

    /// The fingerprint of template `name` with its partials and layouts; 0 for a template that is not there
    /// (rendering it fails the build anyway).
    func templateFingerprint(_ name: String) -> Int64 {
        templateFingerprints[name] ?? 0
    }

}

extension PageRenderer {
    /// The letter a section index files a section titled `title` under, as a printed index does: its first
    /// letter without accents, upper-cased (`Évian` under E, `ß` under S), and `#` for a digit or a sign.
    static func indexLetter(of title: String) -> String {
        guard let first = title.first else { return "" }
        // ASCII needs no folding (Foundation's, per section and build, was a fiftieth of a watch's build).
        if let byte = first.asciiValue {
            return first.isLetter ? String(UnicodeScalar(byte & ~0x20)) : "#"
        }
        let folded = String(first).folding(options: .diacriticInsensitive, locale: nil).uppercased()
        guard let letter = folded.first, letter.isLetter else { return "#" }
        return String(letter)
    }
}

extension PageKind {
    /// Listing pages (`section` on a section's pages only).
    static let list = PageKind(name: "list pages", values: ["site", "nav", "pageTitle", "pageURL", "listing", "items", "empty",
                                                            "pagination", "feeds", "section"])
    /// A sectioned listing's index of its sections.
    static let sectionIndex = PageKind(name: "section index pages", values: ["site", "nav", "pageTitle", "pageURL", "listing", "sections", "groups",
                                                                           "sectionCount", "rowCount", "chart"])
    /// A record's own page (`body`, `prev` and `next` on some only).
    static let detail = PageKind(name: "detail pages", values: ["site", "nav", "pageTitle", "pageURL", "record", "title", "body",
                                                                "prev", "next"])
    /// `404.html`.
    static let notFound = PageKind(name: "the 404 page", values: ["site", "nav", "pageTitle"])
}
