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

    private var site: [String: Any] { ["title": config.title, "baseURL": config.baseURL, "basePath": config.basePath] }
    private var body: BodyFormatter { BodyFormatter(markdown: MarkdownRenderer(allowsRawHTML: config.allowsRawHTML)) }

    /// The menu every page shows: each listing, then the pages of Markdown collections, by title.
    func navigation() throws -> [[String: Any]] {
        var items: [[String: Any]] = config.listings.map {
            ["title": $0.title, "url": config.basePath + ($0.indexPath ?? $0.path).drop { $0 == "/" }]
        }
        for collection in config.collections where collection.kind == .markdown && collection.detail != nil {
            let presenter = RecordPresenter(collection: collection, config: config)
            let request = FetchRequest(table: collection.name, idColumn: "_id", sortDescriptors: [SortDescriptor(key: "_key")])
            let controller = try ResultsController(database: database, request: request)
            try controller.performFetch()
            for row in try controller.objects(in: 0..<controller.fetchedIDs.count) {
                if let path = presenter.detailPath(row) { items.append(["title": presenter.title(row), "url": presenter.url(path)]) }
            }
        }
        return items
    }

    /// Writes every page of `listing`: page 1 at its path, page N at `path/page/N/`.
    func renderListing(_ listing: ListingConfig, navigation: [[String: Any]]) throws {
        let collection = config.collection(named: listing.from)!
        let presenter = RecordPresenter(collection: collection, config: config)
        var request = FetchRequest(
            table: listing.from, idColumn: "_id", filter: listing.filter,
            sortDescriptors: listing.sort.map { SortDescriptor(key: $0.field, ascending: $0.ascending) },
            relationships: collection.joins, sectionKey: listing.section,
            sectionOrder: listing.section != nil && !listing.sectionDeclarations.isEmpty ? listing.sectionDeclarations : nil,
            showsEmptySections: listing.showsEmptySections,
            prefetchedRelationships: collection.toOneRelationships.map(\.field), batchSize: listing.pageSize)
        // A taxonomy lists the list field's join table (a row per record and item), each row reaching its
        // record as `record.*`: a record is in the section of each of its items.
        var recordRow: (Row) -> Row = { $0 }
        if let taxonomy = listing.taxonomy {
            request.table = CollectionSchema.listTable(collection.name, taxonomy)
            request.relationships = [Relationship(name: "record", table: collection.name, foreignKey: "record_id", targetKey: "_id")]
            request.prefetchedRelationships = ["record"]
            request.sortDescriptors = listing.sort.map { SortDescriptor(key: $0.field == "value" ? "value" : "record." + $0.field, ascending: $0.ascending) }
            request.filter = listing.filter.map { "record_id IN (SELECT _id FROM \(quoteIdentifier(collection.name)) WHERE \($0))" }
            recordRow = { row in
                let indices = row.columns.indices.filter { row.columns[$0].hasPrefix("record.") }
                return Row(columns: indices.map { String(row.columns[$0].dropFirst("record.".count)) }, values: indices.map { row.values[$0] })
            }
        }
        let controller = try fetch(listing.name, request)
        let pageCount = { (rows: Int) in Paginator(rowCount: rows, pageSize: listing.pageSize, basePath: "/").pageCount }
        guard listing.section != nil, let indexPath = listing.indexPath else {
            let all = SectionInfo(name: "", range: 0..<controller.fetchedIDs.count)
            let throttle = ProgressThrottle(step: "listing \(listing.name)", total: pageCount(all.numberOfObjects), report: progress)
            var done = 0
            try renderPages(of: listing, section: all, basePath: listing.path, sectionContext: nil, controller: controller,
                            recordRow: recordRow, presenter: presenter, navigation: navigation, throttle: throttle, done: &done)
            throttle.finish()
            return
        }
        let throttle = ProgressThrottle(step: "listing \(listing.name)",
                                        total: controller.sections.reduce(1) { $0 + pageCount($1.numberOfObjects) }, report: progress)
        var done = 0
        defer { throttle.finish() }
        var sections: [[String: Any]] = []
        var slugs = Set<String>()
        for info in controller.sections {
            // Two values with the same slug ("CA", "ca") must not share pages: the later one is numbered.
            var slug = slugify(info.name), suffix = 2
            while !slugs.insert(slug).inserted { slug = slugify(info.name) + "-\(suffix)"; suffix += 1 }
            let basePath = listing.path.replacingOccurrences(of: "{section}", with: slug)
            let summary: [String: Any] = [
                "name": info.name, "title": info.displayTitle, "indexTitle": info.indexTitle ?? "",
                "count": info.numberOfObjects, "url": presenter.url(basePath),
            ]
            try renderPages(of: listing, section: info, basePath: basePath, sectionContext: summary, controller: controller,
                            recordRow: recordRow, presenter: presenter, navigation: navigation, throttle: throttle, done: &done)
            sections.append(summary)
        }
        // The index groups sections under their index titles, A to Z; within a group, in listing order.
        let titles = Set(sections.map { $0["indexTitle"] as! String }).sorted()
        let groups = titles.map { title in ["indexTitle": title, "sections": sections.filter { $0["indexTitle"] as! String == title }] }
        let chart = BarChart(title: "\(listing.title): records per section", bars: sections.map {
            BarChart.Bar(label: $0["title"] as! String, value: $0["count"] as! Int, link: $0["url"] as? String)
        })
        let context: [String: Any] = [
            "site": site, "nav": navigation, "pageTitle": listing.title,
            "listing": ["name": listing.name, "title": listing.title],
            "sections": sections, "groups": groups, "sectionCount": sections.count, "rowCount": controller.fetchedIDs.count,
            "chart": chart.svg(),
        ]
        try write(listing.indexTemplate, context, path: indexPath)
        if listing.writesMarkdown {
            var report = "# \(MarkdownReport.cell(listing.title))\n\n\(controller.fetchedIDs.count) records in \(sections.count) sections.\n\n"
            report += "## Records per section\n\n" + MarkdownReport.table(
                headers: ["Section", "Records"], rightAligned: [1],
                rows: sections.map { [MarkdownReport.link($0["title"] as! String, reportLink(($0["url"] as! String) + "index.md")), "\($0["count"] as! Int)"] })
            report += try yearSummary(of: listing)
            try writer.write(report, to: String(indexPath.dropFirst()) + "index.md")
        }
    }

    /// Writes the pages of one section of `listing` (the whole listing when it has no sections), page 1
    /// at `basePath` and page N at `basePath/page/N/`, with its feeds (one per page in a stable archive).
    private func renderPages(of listing: ListingConfig, section: SectionInfo, basePath: String, sectionContext: [String: Any]?,
                             controller: ResultsController, recordRow: (Row) -> Row, presenter: RecordPresenter,
                             navigation: [[String: Any]], throttle: ProgressThrottle, done: inout Int) throws
    {
        let collection = presenter.collection
        let paginator = Paginator(rowCount: section.numberOfObjects, pageSize: listing.pageSize, basePath: basePath,
                                  numbering: listing.numbering)
        let link = { (page: Int) in presenter.url(paginator.path(ofPage: page)) }
        let rows = { (page: Int) -> Range<Int> in
            let offsets = paginator.rows(onPage: page)
            return (section.range.lowerBound + offsets.lowerBound)..<(section.range.lowerBound + offsets.upperBound)
        }
        let heading = sectionContext.map { listing.title + " — " + ($0["title"] as! String) } ?? listing.title
        let feeds = listing.feeds.map { format -> [String: Any] in
            ["format": format.rawValue, "type": format.mediaType, "url": presenter.url(basePath + format.fileName)]
        }
        for number in 1...paginator.pageCount {
            let pageRows = try controller.objects(in: rows(number)).map(recordRow)
            // Newest first: the subscription document has the newest page. A stable archive also has a feed per
            // older page, linked both ways (RFC 5005), which never changes once its page is full.
            if !listing.feeds.isEmpty, listing.numbering == .stableArchive || number == paginator.newestPage {
                try writeFeeds(of: listing, title: heading, paginator: paginator, page: number, rows: pageRows, presenter: presenter)
            }
            let related = try RelatedRecords(database: database, collection: collection).fetch(for: pageRows)
            let items = pageRows.map { presenter.context($0, related: related[$0["_id"]?.int64Value ?? 0] ?? [:]) }
            var pagination: [String: Any] = [
                "number": number, "pageCount": paginator.pageCount, "rowCount": paginator.rowCount,
                "first": link(paginator.newestPage), "last": link(paginator.oldestPage),
                "pages": paginator.window(around: number).map { page -> [String: Any] in
                    page.map { ["number": $0, "url": link($0), "current": $0 == number] } ?? ["gap": true]
                },
                "multiple": paginator.pageCount > 1,
            ]
            // prev is the newer page, next the older, whichever way the pages are numbered.
            if let newer = paginator.newerPage(than: number) { pagination["prev"] = link(newer) }
            if let older = paginator.olderPage(than: number) { pagination["next"] = link(older) }
            var context: [String: Any] = [
                "site": site, "nav": navigation,
                "pageTitle": number == paginator.newestPage ? heading : "\(heading) — page \(number)",
                "listing": ["name": listing.name, "title": listing.title],
                "items": items, "empty": items.isEmpty, "pagination": pagination, "feeds": feeds,
            ]
            if var sectionContext {
                if let indexPath = listing.indexPath { sectionContext["index"] = presenter.url(indexPath) }
                context["section"] = sectionContext
            }
            try write(listing.template, context, path: paginator.path(ofPage: number))
            if listing.writesMarkdown {
                let summary = sectionContext == nil && number == paginator.newestPage ? try yearSummary(of: listing) : ""
                try writer.write(markdownPage(title: context["pageTitle"] as! String, rows: pageRows, presenter: presenter,
                                              paginator: paginator, number: number, summary: summary),
                                 to: String(paginator.path(ofPage: number).dropFirst()) + "index.md")
            }
            done += 1
            throttle.advance(to: done)
        }
    }

    /// Writes one page per row of `collection`, with previous/next in its primary listing's order
    /// (the first listing of it); returns the records whose page path collided with another's.
    func renderDetails(of collection: CollectionConfig, navigation: [[String: Any]]) throws -> [SourceError] {
        guard let detail = collection.detail else { return [] }
        let presenter = RecordPresenter(collection: collection, config: config)
        let primary = config.listings.first { $0.from == collection.name && $0.taxonomy == nil }
        let sort = primary?.sort.map { SortDescriptor(key: $0.field, ascending: $0.ascending) } ?? [SortDescriptor(key: "_key")]
        let controller = try fetch(primary?.name ?? collection.name, FetchRequest(
            table: collection.name, idColumn: "_id", sortDescriptors: sort, relationships: collection.joins,
            prefetchedRelationships: collection.toOneRelationships.map(\.field), batchSize: 100))
        let count = controller.fetchedIDs.count
        var owners: [String: String] = [:]
        var problems: [SourceError] = []
        let throttle = ProgressThrottle(step: "detail pages of \(collection.name)", total: count, report: progress)
        defer { throttle.finish() }
        for offset in 0..<count {
            throttle.advance(to: offset)
            let row = try controller.objects(in: offset..<(offset + 1))[0]
            guard let path = presenter.detailPath(row) else { continue }
            let key = row["_key"]?.stringValue ?? ""
            if let owner = owners[path] {
                let source = row["_source"]?.stringValue ?? collection.name
                let line = row["_line"]?.int64Value.map(Int.init)
                problems.append(SourceError(file: source, line: line, reason:
                    "record '\(key)' would be published at \(path), which record '\(owner)' already has; make '\(detail.path)' unique"))
                continue
            }
            owners[path] = key
            var context: [String: Any] = [
                "site": site, "nav": navigation, "pageTitle": presenter.title(row),
                "record": presenter.context(row, related: try RelatedRecords(database: database, collection: collection)
                    .fetch(for: [row]).values.first ?? [:]),
                "title": presenter.title(row),
            ]
            if let field = detail.bodyField, let text = row[field]?.stringValue {
                context["body"] = body.html(text, format: detail.bodyFormat)
            }
            if offset > 0, let previous = try controller.objects(in: (offset - 1)..<offset).first {
                context["prev"] = neighbour(previous, presenter)
            }
            if offset + 1 < count, let next = try controller.objects(in: (offset + 1)..<(offset + 2)).first {
                context["next"] = neighbour(next, presenter)
            }
            try write(detail.template, context, path: path)
        }
        return problems
    }

    /// A listing page as GitHub-flavoured Markdown: a table of its rows (the title linking to the record's
    /// page, then its short fields), the way to the newer and older pages, and `summary` below.
    private func markdownPage(title: String, rows: [Row], presenter: RecordPresenter, paginator: Paginator, number: Int,
                              summary: String) -> String
    {
        let collection = presenter.collection
        let titleField = collection.detail?.titleField ?? "title"
        let columns = collection.fields.filter { field in
            field.name != titleField && field.name != collection.detail?.bodyField && field.type != .list
                && !["title", "body", "content", "summary", "slug"].contains(field.name)
        }
        let numeric = Set(columns.indices.filter { [.integer, .real].contains(columns[$0].type) }.map { $0 + 1 })
        let table = MarkdownReport.table(
            headers: ["Title"] + columns.map(\.name), rightAligned: numeric,
            rows: rows.map { row in
                let name = presenter.title(row)
                let first = presenter.detailPath(row).map { MarkdownReport.link(name, reportLink(presenter.url($0))) } ?? MarkdownReport.cell(name)
                return [first] + columns.map { MarkdownReport.cell(row[$0.name]?.stringValue ?? "") }
            })
        var page = "# \(MarkdownReport.cell(title))\n\n\(paginator.rowCount) records · page \(number) of \(paginator.pageCount)\n\n"
        page += rows.isEmpty ? "Nothing to list yet.\n" : table
        var links: [String] = []
        let mdPath = { (page: Int) in reportLink(presenter.url(paginator.path(ofPage: page)) + "index.md") }
        if let newer = paginator.newerPage(than: number) { links.append("[← Newer](\(mdPath(newer)))") }
        if let older = paginator.olderPage(than: number) { links.append("[Older →](\(mdPath(older)))") }
        if !links.isEmpty { page += "\n" + links.joined(separator: " · ") + "\n" }
        return page + summary
    }

    /// A link target in a Markdown report: absolute on the site when `baseURL` is, so the report reads
    /// the same on a forge as on the site.
    private func reportLink(_ sitePath: String) -> String {
        TemplateText.Site(baseURL: config.baseURL, allowsRawHTML: config.allowsRawHTML).absoluteURL(sitePath)
    }

    /// `## Records per year`, for a listing dated by a field (its feed date, or a date it sorts on first).
    private func yearSummary(of listing: ListingConfig) throws -> String {
        guard listing.taxonomy == nil, let collection = config.collection(named: listing.from) else { return "" }
        let dateField = listing.feedDate ?? listing.sort.map(\.field).first { name in
            collection.fields.contains { $0.name == name && ($0.type == .date || $0.type == .datetime) }
        }
        guard let dateField else { return "" }
        let column = quoteIdentifier(dateField)
        let sql = "SELECT substr(\(column), 1, 4) AS year, count(*) AS records FROM \(quoteIdentifier(collection.name)) "
            + (listing.filter.map { "WHERE (\($0)) " } ?? "") + "GROUP BY year ORDER BY year DESC"
        let years = try database.makeStatement(sql).fetchAll().map {
            [$0["year"]?.stringValue ?? "no date", String($0["records"]?.int64Value ?? 0)]
        }
        guard !years.isEmpty else { return "" }
        return "\n## Records per year\n\n" + MarkdownReport.table(headers: ["Year", "Records"], rightAligned: [1], rows: years)
    }

    /// Writes the listing's subscription feeds beside its first page, from that page's `rows`.
    private func writeFeeds(of listing: ListingConfig, title: String, paginator: Paginator, page: Int, rows: [Row],
                            presenter: RecordPresenter) throws
    {
        let collection = presenter.collection
        let absolute = { (path: String) in self.config.baseURL + path.drop { $0 == "/" } }
        let listingURL = absolute(paginator.path(ofPage: page))
        let hasField = { (name: String) in collection.fields.contains { $0.name == name } }
        let entries = rows.map { row -> FeedContent.Entry in
            let key = row["_key"]?.stringValue ?? ""
            let link = presenter.detailPath(row).map { config.baseURL + $0.drop { $0 == "/" } }
            let date = listing.feedDate.flatMap { row[$0]?.stringValue }.map { $0.count == 10 ? $0 + "T00:00:00Z" : $0 }
            var html: String?
            if let detail = collection.detail, let field = detail.bodyField, let text = row[field]?.stringValue {
                html = body.html(text, format: detail.bodyFormat)
            }
            return FeedContent.Entry(
                id: link ?? listingURL + "#" + (key.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed) ?? key),
                title: presenter.title(row), link: link ?? listingURL, date: date,
                author: hasField("author") ? row["author"]?.stringValue : nil,
                summary: hasField("summary") ? row["summary"]?.stringValue : nil, contentHTML: html)
        }
        var content = FeedContent(title: title, siteTitle: config.title, link: listingURL, entries: entries)
        for format in listing.feeds {
            let feedURL = { (number: Int) in absolute(paginator.path(ofPage: number)) + format.fileName }
            if listing.numbering == .stableArchive {
                content.archive = FeedContent.Archive(
                    current: feedURL(paginator.newestPage), isArchive: page != paginator.newestPage,
                    previous: paginator.olderPage(than: page).map(feedURL),
                    next: paginator.newerPage(than: page).flatMap { $0 == paginator.newestPage ? nil : feedURL($0) })
            }
            let path = String(paginator.path(ofPage: page).dropFirst()) + format.fileName
            try writer.write(FeedWriter.document(content, format: format, selfURL: config.baseURL + path), to: path)
        }
    }

    /// Writes the files every site has besides its pages: `404.html` (when the templates have a `404`),
    /// `robots.txt`, and `sitemap.xml` listing every page written so far, which needs an absolute `baseURL`.
    func renderSiteFiles(navigation: [[String: Any]]) throws {
        if templates.names.contains("404") {
            let context: [String: Any] = ["site": site, "nav": navigation, "pageTitle": "Page not found"]
            try writer.write(templates.render("404", context: context, knownNames: config.templateNames), to: "404.html")
        }
        let absolute = URL(string: config.baseURL)?.scheme != nil
        var robots = "User-agent: *\nAllow: /\n"
        if absolute {
            robots += "\nSitemap: \(config.baseURL)sitemap.xml\n"
            let pages = writer.manifest.keys.filter { $0.hasSuffix("index.html") }.sorted()
            var sitemap = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
            for page in pages {
                sitemap += "<url><loc>" + escapeXML(config.baseURL + page.dropLast("index.html".count)) + "</loc></url>\n"
            }
            sitemap += "</urlset>\n"
            try writer.write(sitemap, to: "sitemap.xml")
        }
        try writer.write(robots, to: "robots.txt")
    }

    private func neighbour(_ row: Row, _ presenter: RecordPresenter) -> [String: Any] {
        ["title": presenter.title(row), "url": presenter.detailPath(row).map(presenter.url) ?? ""]
    }

    private func fetch(_ name: String, _ request: FetchRequest) throws -> ResultsController {
        do {
            let controller = try ResultsController(database: database, request: request)
            try controller.performFetch()
            return controller
        } catch let error as SQLiteError {
            throw BuildError.listing(name: name, reason: error.message)
        } catch let error as ResultsControllerError {
            throw BuildError.listing(name: name, reason: error.description)
        }
    }

    /// Queues the page at site path `path` (`/banks/1/` is written as `banks/1/index.html`).
    private func write(_ template: String, _ context: [String: Any], path: String) throws {
        try queue.submit(template: template, context: context, path: String(path.dropFirst()) + "index.html")
    }
}
