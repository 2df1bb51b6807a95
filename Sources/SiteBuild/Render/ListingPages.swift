import Foundation
import ResultsController
import SiteRender
import SiteSources
import SiteStore

extension PageRenderer {
    /// Writes the pages of `listing` whose inputs changed (page 1 at its path, page N at `path/page/N/`);
    /// returns the delta its controller reported. Sections whose names make one slug are told in `warnings`.
    func renderListing(_ listing: ListingConfig, navigation: [[String: Any]], warnings: inout [SourceError]) throws -> BuildSummary.ListingDelta {
        let navigation = Self.marking(navigation, current: navigationURL(of: listing))
        let collection = config.collection(named: listing.from)!
        let presenter = self.presenter(of: collection, template: listing.template)
        if let warning = linksWithoutPages(listing, collection: collection) { warnings.append(warning) }
        let (fetch, recordRow) = controllers.listingFetch(listing)
        let (controller, delta) = try controllers.controller(for: fetch)
        var dirty = relatedChanges[collection.name] ?? []
        if listing.taxonomy != nil, !dirty.isEmpty { dirty = try itemRows(of: dirty, in: fetch.request.table) }
        var state = ListingState(listing: listing, controller: controller, delta: delta, dirty: dirty, settings: listingSettings(listing))
        state.pieceKey = pieceKey(of: listing, settings: state.settings)
        defer { controllers.finish(with: controller) }
        let visit = try pagesToVisit(of: listing, delta: delta, dirty: dirty, controller: controller)
        let deltaReport = Self.report(listing.name, delta)
        let pageCount = { (rows: Int) in Paginator(rowCount: rows, pageSize: listing.pageSize, basePath: "/").pageCount }
        guard listing.section != nil, let indexPath = listing.indexPath else {
            let all = SectionInfo(name: "", range: 0..<controller.count)
            let throttle = ProgressThrottle(step: "listing \(listing.name)", total: pageCount(all.numberOfObjects), report: progress)
            var done = 0
            try renderPages(of: listing, section: all, number: 0, visit: visit, basePath: listing.path, sectionContext: nil, state: state,
                            recordRow: recordRow, presenter: presenter, navigation: navigation, throttle: throttle, done: &done)
            throttle.finish()
            return deltaReport
        }
        let throttle = ProgressThrottle(step: "listing \(listing.name)",
                                        total: controller.sections.reduce(1) { $0 + pageCount($1.numberOfObjects) }, report: progress)
        var done = 0
        defer { throttle.finish() }
        var sections: [[String: Any]] = []
        var slugs: [String: String] = [:]
        // Split once: Foundation's `replacingOccurrences` per section was a twentieth of a watch's build.
        let pathAround = listing.path.components(separatedBy: "{section}")
        // A bool field is stored as 0 or 1, and printed as false or true: its sections are named so too.
        let sectionIsBool = collection.fields.contains { $0.name == listing.section && $0.type == .bool }
        for (number, var info) in controller.sections.enumerated() {
            if sectionIsBool, let shown = ["0": "false", "1": "true"][info.name] {
                if info.displayTitle == info.name { info.displayTitle = shown }
                info.name = shown
            }
            // A site's index files a section by its letter as a reader looks it up (the controller's own
            // index title is the title's first character, upper-cased, as Core Data's is).
            info.indexTitle = Self.indexLetter(of: info.displayTitle)
            // Two values with the same slug ("CA", "ca") must not share pages: the later one is numbered. Its
            // address then depends on the sections before it, so the build says so.
            let named = PathPattern.shortened(Substring(slugify(info.name)))
            var slug = named, suffix = 2
            let first = slugs[slug]
            while slugs[slug] != nil { slug = named + "-\(suffix)"; suffix += 1 }
            slugs[slug] = info.name
            if let first {
                warnings.append(SourceError(file: "sitegen.yml", line: (listing.marks["section"] ?? listing.marks["taxonomy"] ?? listing.marks[""])?.line, reason:
                    "listing '\(listing.name)': sections '\(first)' and '\(info.name)' make the same slug; '\(info.name)' is at "
                    + "\(listing.path.replacingOccurrences(of: "{section}", with: slug)), an address that changes if a section before it takes that slug, "
                    + "and links made with {{slug(…)}} lead to '\(first)'"))
            }
            let basePath = pathAround.joined(separator: slug)
            let summary: [String: Any] = [
                "name": info.name, "title": info.displayTitle, "indexTitle": info.indexTitle ?? "",
                "count": info.numberOfObjects, "url": presenter.url(basePath),
            ]
            try renderPages(of: listing, section: info, number: number, visit: visit, basePath: basePath, sectionContext: summary, state: state,
                            recordRow: recordRow, presenter: presenter, navigation: navigation, throttle: throttle, done: &done)
            sections.append(summary)
        }
        let indexFiles = [String(indexPath.dropFirst()) + "index.html"] + (listing.writesMarkdown ? [String(indexPath.dropFirst()) + "index.md"] : [])
        // No section's count changed (nor any section came or went): the index, which shows the sections and
        // their counts, is as the last build left it, unless its Markdown report summarises every row.
        if let visit, listing.writesMarkdown ? visit.isEmpty : !visit.changesCounts, plan.keepAsItWas(indexFiles) { return deltaReport }
        // The index shows every section's name, title and count (and, in Markdown, the records per year).
        var data = Fingerprint()
        // A taxonomy's rows are a record's items: the index counts each record once.
        let recordCount = listing.taxonomy == nil ? controller.count : try controller.distinctCount(of: "record_id")
        data.combine(recordCount)
        for section in sections {
            for key in ["name", "title", "indexTitle", "url"] { data.combine(section[key] as! String) }
            data.combine(section["count"] as! Int)
        }
        if listing.writesMarkdown { data.combine(state.wholeListing) }
        guard plan.needsRender(indexFiles, inputs: PageInputs(settings: state.settings, template: templateFingerprint(listing.indexTemplate),
                                                              data: data.signed),
                               about: PageRecord(inputs: nil, hash: 0, owner: listing.name), explain: { "sections changed" })
        else { return deltaReport }
        // The index groups sections under their index titles, A to Z; within a group, in listing order.
        let titles = Set(sections.map { $0["indexTitle"] as! String }).sorted()
        let groups = titles.map { title in ["indexTitle": title, "sections": sections.filter { $0["indexTitle"] as! String == title }] }
        let chart = BarChart(title: "\(listing.title): records per section", bars: sections.map {
            BarChart.Bar(label: $0["title"] as! String, value: $0["count"] as! Int, link: $0["url"] as? String)
        })
        let context: [String: Any] = [
            "site": site, "nav": navigation, "pageTitle": listing.title, "pageURL": presenter.url(indexPath),
            "listing": ["name": listing.name, "title": listing.title],
            "sections": sections, "groups": groups, "sectionCount": sections.count, "rowCount": recordCount,
            "chart": chart.svg(),
        ]
        try write(listing.indexTemplate, .sectionIndex, path: indexPath) { context }
        if listing.writesMarkdown {
            var report = "# \(MarkdownReport.cell(listing.title))\n\n\(recordCount) records in \(sections.count) sections.\n\n"
            report += "## Records per section\n\n" + MarkdownReport.table(
                headers: ["Section", "Records"], rightAligned: [1],
                rows: sections.map { [MarkdownReport.link($0["title"] as! String, reportLink(($0["url"] as! String) + "index.md")), "\($0["count"] as! Int)"] })
            report += try yearSummary(of: listing, controller: controller)
            try writer.write(report, to: String(indexPath.dropFirst()) + "index.md")
        }
        return deltaReport
    }

    /// The key of the pieces `listing`'s items are kept as (`ListItemPieces`), from its template and the
    /// settings its pages show; nil when its pages are rendered whole: its template's items depend on more
    /// than the item, its pages have Markdown twins (whose rows are read here), or nothing keeps pieces.
    func pieceKey(of listing: ListingConfig, settings: Int64) -> Int64? {
        guard let pieceSink, queue.readsStore, !listing.writesMarkdown,
              templates.rendersItemsAlone(listing.template, section: "items", varying: ListItemPieces.pageValues)
        else { return nil }
        var key = Fingerprint()
        key.combine("list items")
        key.combine(settings)
        key.combine(templateFingerprint(listing.template))
        pieceSink.use(key: key.signed)
        return key.signed
    }

    /// A delta as the build report gives it.
    static func report(_ name: String, _ delta: Delta?) -> BuildSummary.ListingDelta {
        var report = BuildSummary.ListingDelta(name: name, caughtUp: delta != nil)
        guard let delta else { return report }
        report.insertedSections = delta.insertedSections.map(\.name)
        report.deletedSections = delta.deletedSections.map(\.name)
        report.insertedRows = delta.insertedRows.count
        report.deletedRows = delta.deletedRows.count
        report.movedRows = delta.movedRows.count
        report.updatedRows = delta.updatedRows.count
        return report
    }

    /// Writes the pages of one section of `listing` (the whole listing when it has no sections), page 1
    /// at `basePath` and page N at `basePath/page/N/`, with its feeds (one per page in a stable archive).
    func renderPages(of listing: ListingConfig, section: SectionInfo, number sectionNumber: Int, visit: DeltaPages?,
                             basePath: String, sectionContext: [String: Any]?,
                             state: ListingState, recordRow: @escaping (Row) -> Row, presenter: RecordPresenter,
                             navigation: [[String: Any]], throttle: ProgressThrottle, done: inout Int) throws
    {
        let controller = state.controller
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
        var sectionData = Fingerprint()
        sectionData.combine(paginator.pageCount)
        sectionData.combine(paginator.rowCount)
        for key in ["name", "title", "indexTitle", "url"] { sectionData.combine(sectionContext?[key] as? String ?? "") }
        let template = templateFingerprint(listing.template)
        // Made for the pages rendered only: every section of a listing comes here on every build.
        var siteValues: [String: Any]?
        for number in try pageNumbers(of: listing, section: sectionNumber, paginator: paginator, visit: visit, markdownSummary: sectionContext == nil) {
            plan.lookAtPage()
            let directory = String(paginator.path(ofPage: number).dropFirst())
            var files = [directory + "index.html"]
            if listing.writesMarkdown { files.append(directory + "index.md") }
            if !listing.feeds.isEmpty, listing.numbering == .stableArchive || number == paginator.newestPage {
                files += listing.feeds.map { directory + $0.fileName }
            }
            var data = sectionData
            data.combine(number)
            var dirty = false
            for (id, version) in zip(controller.ids(in: rows(number)), controller.versions(in: rows(number))) {
                data.combine(id)
                data.combine(version)
                if !state.dirty.isEmpty, state.dirty.contains(id) { dirty = true }
            }
            if listing.writesMarkdown && sectionContext == nil && number == paginator.newestPage { data.combine(state.wholeListing) }
            let record = PageRecord(inputs: nil, hash: 0, owner: listing.name, section: section.name, page: number)
            guard plan.needsRender(files, inputs: PageInputs(settings: state.settings, template: template, data: data.signed),
                                   about: record, dirty: dirty,
                                   explain: { explain(page: number, rows: rows(number), paginator: paginator, section: section, state: state) })
            else {
                done += 1
                throttle.advance(to: done)
                continue
            }
            // Newest first: the subscription document has the newest page. A stable archive also has a feed per
            // older page, linked both ways (RFC 5005), which never changes once its page is full.
            let writesFeeds = !listing.feeds.isEmpty && (listing.numbering == .stableArchive || number == paginator.newestPage)
            let pageTitle = number == paginator.newestPage ? heading : "\(heading) — page \(number)"
            // Rows this thread does not need are read by the worker that renders the page, on its own
            // connection: reading them here was a third of this thread's work in the 100,000-record
            // mutation round, which waited for this thread while the workers idled (decisions.md 20).
            let readsHere = listing.writesMarkdown || !queue.readsStore
            // A feed's entries carry whole records (the body as content), which the other pages never read.
            let pageRows = !readsHere ? nil : try (writesFeeds ? controller.objectsWithAllProperties(in: rows(number))
                                                               : controller.objects(in: rows(number))).map(recordRow)
            if writesFeeds {
                // Read by the worker that makes the feeds, as the page's rows are: a stable archive has a feed
                // per page, and the queue would otherwise hold thousands of pages of bodies.
                let feedRows: (RenderQueue.Worker) throws -> [Row]
                if let pageRows {
                    feedRows = { _ in pageRows }
                } else {
                    let reading = try controller.rowReading(in: rows(number), allProperties: true)
                    feedRows = { worker in try reading.rows(on: worker.database()).map(recordRow) }
                }
                try writeFeeds(of: listing, title: heading, paginator: paginator, page: number, rows: feedRows, presenter: presenter)
            }
            let relatedHere = try pageRows.map { try RelatedRecords(database: database, collection: collection).fetch(for: $0) }
            let reading = readsHere ? nil : try controller.rowReading(in: rows(number))
            // The rows a worker reads, presented as the template's items.
            let present = { (reading: RowReading, database: Database) throws -> [TemplateRecord] in
                let pageRows = try reading.rows(on: database).map(recordRow)
                let related = try RelatedRecords(database: database, collection: collection).fetch(for: pageRows)
                return presenter.contexts(pageRows) { related[$0["_id"]?.int64Value ?? 0] ?? [:] }
            }
            if siteValues == nil { siteValues = site }
            let site = siteValues!
            let context = { (items: [TemplateRecord]) -> [String: Any] in
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
                var values: [String: Any] = [
                    "site": site, "nav": navigation, "pageTitle": pageTitle, "pageURL": link(number),
                    "listing": ["name": listing.name, "title": listing.title],
                    "items": items, "empty": items.isEmpty, "pagination": pagination, "feeds": feeds,
                ]
                if var sectionContext {
                    if let indexPath = listing.indexPath { sectionContext["index"] = presenter.url(indexPath) }
                    values["section"] = sectionContext
                }
                return values
            }
            let path = paginator.path(ofPage: number)
            if let reading, let key = state.pieceKey, let pieceSink {
                let pieces = ListItemPieces(key: key, section: section.name, versions: controller.versions(in: rows(number)),
                                            places: controller.orderBytes(in: rows(number)), stale: state.dirty,
                                            reading: reading, sink: pieceSink, reuses: plan.renderAllReason == nil)
                try queue.submit(template: listing.template, page: .list, path: String(path.dropFirst()) + "index.html", pieces: pieces) { worker, usesPieces in
                    let database = try worker.database()
                    guard usesPieces else { return (context(try present(reading, database)), nil) }
                    let (items, fragments) = try pieces.items(on: database) { try present($0, database) }
                    return (context(items), fragments)
                }
            } else {
                try write(listing.template, .list, path: path) { worker in
                    guard let reading else {
                        let related = relatedHere ?? [:]
                        return context(presenter.contexts(pageRows ?? []) { related[$0["_id"]?.int64Value ?? 0] ?? [:] })
                    }
                    return context(try present(reading, try worker.database()))
                }
            }
            if listing.writesMarkdown, let pageRows {
                let summary = sectionContext == nil && number == paginator.newestPage ? try yearSummary(of: listing, controller: state.controller) : ""
                try writer.write(markdownPage(title: pageTitle, rows: pageRows, presenter: presenter,
                                              paginator: paginator, number: number, summary: summary),
                                 to: String(paginator.path(ofPage: number).dropFirst()) + "index.md")
            }
            done += 1
            throttle.advance(to: done)
        }
    }

    /// A listing page as GitHub-flavoured Markdown: a table of its rows (the title linking to the record's
    /// page, then its short fields), the way to the newer and older pages, and `summary` below.
    func markdownPage(title: String, rows: [Row], presenter: RecordPresenter, paginator: Paginator, number: Int,
                              summary: String) -> String
    {
        let collection = presenter.collection
        let titleField = collection.detail?.titleField ?? "title"
        let columns = collection.fields.filter { field in
            field.name != titleField && field.name != collection.detail?.bodyField && field.type != .list
                && !["title", "body", "content", "summary", "slug"].contains(field.name)
                && !(collection.kind == .markdown && field.name == "draft")
        }
        let numeric = Set(columns.indices.filter { [.integer, .real].contains(columns[$0].type) }.map { $0 + 1 })
        let table = MarkdownReport.table(
            headers: ["Title"] + columns.map(\.name), rightAligned: numeric,
            rows: rows.map { row in
                // A draft (`--drafts`) is marked by its title, as the HTML pages mark it.
                let name = presenter.title(row) + (collection.kind == .markdown && row["draft"]?.int64Value == 1 ? " (draft)" : "")
                let first = presenter.detailPath(row).map { MarkdownReport.link(name, reportLink(presenter.url($0))) } ?? MarkdownReport.cell(name)
                return [first] + columns.map { column in
                    let value = row[column.name]
                    // A bool is stored as 0 or 1 and reads as true or false, as on the HTML pages.
                    if column.type == .bool, let flag = value?.int64Value { return flag != 0 ? "true" : "false" }
                    return MarkdownReport.cell(value?.stringValue ?? "")
                }
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
    func reportLink(_ sitePath: String) -> String {
        config.templateSite.absoluteURL(sitePath)
    }

    /// `## Records per year`, for a listing dated by a field (its feed date, or a date it sorts on first):
    /// the records its pages list (its filter, and a section's or a tag's), each once.
    func yearSummary(of listing: ListingConfig, controller: ResultsController) throws -> String {
        guard let collection = config.collection(named: listing.from) else { return "" }
        let dateField = listing.feedDate ?? listing.sort.map(\.field).first { name in
            collection.fields.contains { $0.name == name && ($0.type == .date || $0.type == .datetime) }
        }
        guard let dateField else { return "" }
        // A taxonomy lists its join table's rows: a record of several tags is counted once, by `record_id`.
        let (owner, record) = listing.taxonomy == nil ? (quoteIdentifier(collection.name), "_id") : (quoteIdentifier("record"), "record_id")
        var column = "\(owner).\(quoteIdentifier(dateField))"
        // A datetime's year in the site's zone, as `{{year(…)}}` shows it: what matters is the turn of the
        // year, so the zone's offset then (on 1 January 2024, a fixed day: a build never depends on the day it runs).
        if let zone = config.timeZone, collection.fields.contains(where: { $0.name == dateField && $0.type == .datetime }) {
            let offset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: 1_704_067_200))
            if offset != 0 { column = "strftime('%Y', \(column), '\(offset) seconds')" }
        }
        let years = try controller.groupedCounts(ofDistinct: record, by: "substr(\(column), 1, 4)").map {
            [$0.group.stringValue ?? "no date", String($0.count)]
        }
        guard !years.isEmpty else { return "" }
        return "\n## Records per year\n\n" + MarkdownReport.table(headers: ["Year", "Records"], rightAligned: [1], rows: years)
    }

    /// Queues the feeds of page `page` (the subscription document on the newest, an archive document on each
    /// other of a stable archive), whose entries are the `rows` a render worker reads.
    func writeFeeds(of listing: ListingConfig, title: String, paginator: Paginator, page: Int,
                            rows: @escaping (RenderQueue.Worker) throws -> [Row], presenter: RecordPresenter) throws
    {
        let collection = presenter.collection
        // The worker's closure takes these, not the renderer, whose plan and controllers are this thread's.
        let (baseURL, siteTitle, body) = (config.baseURL, config.title, body)
        let absolute = { (path: String) in baseURL + Self.urlPath(path.drop { $0 == "/" }) }
        let listingURL = absolute(paginator.path(ofPage: page))
        let hasField = { (name: String) in collection.fields.contains { $0.name == name } }
        let updatedField = collection.fields.contains { $0.name == "updated" && ($0.type == .date || $0.type == .datetime) } ? "updated" : nil
        let entries = { (rows: [Row]) -> [FeedContent.Entry] in rows.map { row in
            let key = row["_key"]?.stringValue ?? ""
            let detailPath = presenter.detailPath(row)
            let link = detailPath.map(absolute)
            // An entry's id stays as it was before links were encoded: a changed id is a new entry to a reader.
            let id = detailPath.map { baseURL + $0.drop { $0 == "/" } }
            let date = listing.feedDate.flatMap { row[$0]?.stringValue }.map { $0.count == 10 ? $0 + "T00:00:00Z" : $0 }
            // A record's update date, by the name feeds give it (a feed collection's own `updated`).
            let updated = updatedField.flatMap { row[$0]?.stringValue }.map { $0.count == 10 ? $0 + "T00:00:00Z" : $0 }
            var html: String?
            if let detail = collection.detail, let field = detail.bodyField, let text = row[field]?.stringValue {
                html = body.html(text, format: detail.bodyFormat)
                // A reader resolves a relative link against the feed, not the page it was written for, and a
                // fragment (a footnote's `#fn-1`) against its own page.
                if let page = link.flatMap(URL.init(string:)), let relative = html {
                    html = HTMLLinks.resolving(relative, against: page, fragments: true)
                }
            }
            // A feed's summaries are HTML; the feeds written carry a summary as text (Atom's and JSON Feed's
            // `summary` are plain text), so readers do not show its tags.
            let summary = hasField("summary") ? row["summary"]?.stringValue.map { collection.kind == .feed ? FeedParser.plainText(ofHTML: $0) : $0 } : nil
            return FeedContent.Entry(
                id: id ?? baseURL + paginator.path(ofPage: page).drop { $0 == "/" } + "#"
                    + (key.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed) ?? key),
                title: presenter.title(row), link: link ?? listingURL, date: date, updated: updated,
                author: hasField("author") ? row["author"]?.stringValue : nil,
                summary: summary, contentHTML: html)
        } }
        let feeds = listing.feeds.map { format in
            let feedURL = { (number: Int) in absolute(paginator.path(ofPage: number)) + format.fileName }
            let archive = listing.numbering != .stableArchive ? nil : FeedContent.Archive(
                current: feedURL(paginator.newestPage), isArchive: page != paginator.newestPage,
                previous: paginator.olderPage(than: page).map(feedURL),
                next: paginator.newerPage(than: page).flatMap { $0 == paginator.newestPage ? nil : feedURL($0) })
            return (format: format, archive: archive, path: String(paginator.path(ofPage: page).dropFirst()) + format.fileName)
        }
        // Made on a worker, as pages are: a stable archive has a feed per page, each with its rows' bodies,
        // and making them on this thread was most of a 100,000-record round (decisions.md, 38).
        try queue.submit(paths: feeds.map(\.path)) { worker in
            var content = FeedContent(title: title, siteTitle: siteTitle, link: listingURL, entries: entries(try rows(worker)))
            return feeds.map { feed in
                content.archive = feed.archive
                return FeedWriter.document(content, format: feed.format, selfURL: absolute(feed.path))
            }
        }
    }

    /// A site path as a URL's path: a feed's links are URLs (RSS and JSON Feed allow nothing else), so
    /// `tags/東京/` goes as `tags/%E6%9D%B1%E4%BA%AC/`, as in the sitemap.
    static func urlPath(_ path: Substring) -> String {
        path.utf8.allSatisfy(isPlainURLByte) ? String(path) : String(path).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? String(path)
    }

    /// Whether `byte` stands for itself in a URL's path: slugs need nothing escaped (letters, digits, `-`,
    /// `.`, `_`, `/`).
    static func isPlainURLByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "/"): true
        default: false
        }
    }

    /// Publishes the files of the site's static folders (under `root`) at the same paths in the output
    /// folder, as they are; the first folder `static:` names has a path both have. A file whose size and
}
