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

    private var site: [String: Any] {
        ["title": config.title, "baseURL": config.baseURL, "basePath": config.basePath, "params": config.params.mapValues(\.templateValue)]
    }
    private var body: BodyFormatter { BodyFormatter(markdown: MarkdownRenderer(allowsRawHTML: config.allowsRawHTML, basePath: config.basePath)) }

    /// The menu every page shows: each listing, then the pages of the Markdown collections no listing
    /// lists (an about page belongs in the menu; a hundred thousand listed records do not), by key.
    func navigation() throws -> [[String: Any]] {
        var items: [[String: Any]] = config.listings.map { ["title": $0.title, "url": navigationURL(of: $0), "current": false] }
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
    private func navigationURL(of listing: ListingConfig) -> String {
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

    /// Writes the pages of `listing` whose inputs changed (page 1 at its path, page N at `path/page/N/`);
    /// returns the delta its controller reported. Sections whose names make one slug are told in `warnings`.
    func renderListing(_ listing: ListingConfig, navigation: [[String: Any]], warnings: inout [SourceError]) throws -> BuildSummary.ListingDelta {
        let navigation = Self.marking(navigation, current: navigationURL(of: listing))
        let collection = config.collection(named: listing.from)!
        let presenter = RecordPresenter(collection: collection, config: config)
        let (fetch, recordRow) = controllers.listingFetch(listing)
        let (controller, delta) = try controllers.controller(for: fetch)
        var dirty = relatedChanges[collection.name] ?? []
        if listing.taxonomy != nil, !dirty.isEmpty { dirty = try itemRows(of: dirty, in: fetch.request.table) }
        let state = ListingState(listing: listing, controller: controller, delta: delta, rows: controller.fetchedVersions,
                                 dirty: dirty, settings: listingSettings(listing))
        defer {
            controllers.saveCache(of: controller)
            controller.releaseResults()
        }
        let deltaReport = Self.report(listing.name, delta)
        let pageCount = { (rows: Int) in Paginator(rowCount: rows, pageSize: listing.pageSize, basePath: "/").pageCount }
        guard listing.section != nil, let indexPath = listing.indexPath else {
            let all = SectionInfo(name: "", range: 0..<controller.fetchedIDs.count)
            let throttle = ProgressThrottle(step: "listing \(listing.name)", total: pageCount(all.numberOfObjects), report: progress)
            var done = 0
            try renderPages(of: listing, section: all, basePath: listing.path, sectionContext: nil, state: state,
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
        // A bool field is stored as 0 or 1, and printed as false or true: its sections are named so too.
        let sectionIsBool = collection.fields.contains { $0.name == listing.section && $0.type == .bool }
        for var info in controller.sections {
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
            let basePath = listing.path.replacingOccurrences(of: "{section}", with: slug)
            let summary: [String: Any] = [
                "name": info.name, "title": info.displayTitle, "indexTitle": info.indexTitle ?? "",
                "count": info.numberOfObjects, "url": presenter.url(basePath),
            ]
            try renderPages(of: listing, section: info, basePath: basePath, sectionContext: summary, state: state,
                            recordRow: recordRow, presenter: presenter, navigation: navigation, throttle: throttle, done: &done)
            sections.append(summary)
        }
        // The index shows every section's name, title and count (and, in Markdown, the records per year).
        var data = Fingerprint()
        // A taxonomy's rows are a record's items: the index counts each record once.
        let recordCount = listing.taxonomy == nil ? controller.fetchedIDs.count : try controller.distinctCount(of: "record_id")
        data.combine(recordCount)
        for section in sections {
            for key in ["name", "title", "indexTitle", "url"] { data.combine(section[key] as! String) }
            data.combine(section["count"] as! Int)
        }
        if listing.writesMarkdown { data.combine(state.wholeListing) }
        let indexFiles = [String(indexPath.dropFirst()) + "index.html"] + (listing.writesMarkdown ? [String(indexPath.dropFirst()) + "index.md"] : [])
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

    /// A delta as the build report gives it.
    private static func report(_ name: String, _ delta: Delta?) -> BuildSummary.ListingDelta {
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
    private func renderPages(of listing: ListingConfig, section: SectionInfo, basePath: String, sectionContext: [String: Any]?,
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
        let site = site
        for number in 1...paginator.pageCount {
            let directory = String(paginator.path(ofPage: number).dropFirst())
            var files = [directory + "index.html"]
            if listing.writesMarkdown { files.append(directory + "index.md") }
            if !listing.feeds.isEmpty, listing.numbering == .stableArchive || number == paginator.newestPage {
                files += listing.feeds.map { directory + $0.fileName }
            }
            var data = sectionData
            data.combine(number)
            var dirty = false
            for offset in rows(number) {
                data.combine(state.rows.ids[offset])
                data.combine(state.rows.versions[offset])
                if !state.dirty.isEmpty, state.dirty.contains(state.rows.ids[offset]) { dirty = true }
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
            try write(listing.template, .list, path: paginator.path(ofPage: number)) { worker in
                var (pageRows, related) = (pageRows ?? [], relatedHere ?? [:])
                if let reading {
                    let database = try worker.database()
                    pageRows = try reading.rows(on: database).map(recordRow)
                    related = try RelatedRecords(database: database, collection: collection).fetch(for: pageRows)
                }
                let items = presenter.contexts(pageRows) { related[$0["_id"]?.int64Value ?? 0] ?? [:] }
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
                    "site": site, "nav": navigation, "pageTitle": pageTitle, "pageURL": link(number),
                    "listing": ["name": listing.name, "title": listing.title],
                    "items": items, "empty": items.isEmpty, "pagination": pagination, "feeds": feeds,
                ]
                if var sectionContext {
                    if let indexPath = listing.indexPath { sectionContext["index"] = presenter.url(indexPath) }
                    context["section"] = sectionContext
                }
                return context
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

    /// Writes the detail pages of `collection` whose inputs changed (one per row, with previous/next in its
    /// primary listing's order, the first listing of it); returns the records whose page path collided
    /// with another's, and the delta of its controller.
    func renderDetails(of collection: CollectionConfig, navigation: [[String: Any]]) throws -> ([SourceError], BuildSummary.ListingDelta?) {
        guard let detail = collection.detail else { return ([], nil) }
        // A page the menu lists (a Markdown page no listing lists) is its current entry.
        let navigationOnPage = Dictionary(navigation.compactMap { item in
            (item["url"] as? String).map { ($0, Self.marking(navigation, current: $0)) }
        }) { first, _ in first }
        let presenter = RecordPresenter(collection: collection, config: config)
        let (controller, delta) = try controllers.controller(for: controllers.detailFetch(collection)!)
        defer {
            controllers.saveCache(of: controller)
            controller.releaseResults()
        }
        let rows = controller.fetchedVersions
        let count = rows.ids.count
        // Who has each page: records rendered by path, records kept by their place in the last manifest
        // (a string per kept page cost more than the rest of keeping it).
        var owners: [String: String] = [:]
        var ownedSlots = [Bool](repeating: false, count: plan.slotCount)
        var problems: [SourceError] = []
        let throttle = ProgressThrottle(step: "detail pages of \(collection.name)", total: count, report: progress)
        defer { throttle.finish() }
        let places = delta.map(ListingState.DeltaPlaces.init)
        var settingsFingerprint = Fingerprint()
        settingsFingerprint.combine(siteFingerprint)
        settingsFingerprint.combine(collectionSettings(collection))
        let settings = settingsFingerprint.signed, template = templateFingerprint(detail.template)
        let inputs = { (offset: Int) -> PageInputs in
            // A detail page shows its record and its neighbours' titles and links.
            var data = Fingerprint()
            for neighbour in offset - 1...offset + 1 {
                data.combine(neighbour >= 0 && neighbour < count ? rows.ids[neighbour] : 0)
                data.combine(neighbour >= 0 && neighbour < count ? rows.versions[neighbour] : 0)
            }
            return PageInputs(settings: settings, template: template, data: data.signed)
        }
        let dirty = relatedChanges[collection.name] ?? []
        let site = site, body = body
        // A record's title and page path show on three pages (its own, and its neighbours' as previous and
        // next): each is worked out once, and dropped once the pages showing it are behind.
        var links: [Int: (title: String, path: String?)] = [:]
        func link(_ offset: Int) throws -> (title: String, path: String?) {
            if let known = links[offset] { return known }
            let row = try controller.objects(in: offset..<(offset + 1))[0]
            let found = (presenter.title(row), presenter.detailPath(row))
            links[offset] = found
            return found
        }
        let lastDetail = plan.lastDetails(in: collection.name)
        let lastSlots = plan.lastDetailSlots(in: collection.name)
        let keepsUnchanged = plan.renderAllReason == nil
        for offset in 0..<count {
            throttle.advance(to: offset)
            if !links.isEmpty { links[offset - 2] = nil }
            let id = rows.ids[offset]
            var pageInputs = inputs(offset)
            // Most records of a build are where the last one left them, with the same neighbours: their
            // pages are kept at the cost of a lookup and a comparison.
            if keepsUnchanged, let slot = lastSlots[id], !ownedSlots[slot], plan.recordedInputs(at: slot).map({
                $0.data == pageInputs.data && $0.settings == settings && $0.template == template
            }) == true, !dirty.contains(id), plan.keepIfUnclaimed(slot) {
                ownedSlots[slot] = true
                continue
            }
            let last = lastDetail(id)
            // When a neighbour changed, what counts is whether its title or link did: read, for these pages only.
            if let recorded = last?.entry.inputs, recorded.data == pageInputs.data, plan.renderAllReason == nil {
                pageInputs.content = recorded.content
            } else {
                pageInputs.content = try linksFingerprint(offset: offset, rows: rows, link: link)
            }
            // An unchanged record keeps the page the last build gave it, unless an earlier record now claims it.
            if let last, !ownedSlots[last.slot], plan.claimant(ofSlot: last.slot) == nil,
                plan.reason(for: [last.slot], inputs: pageInputs, dirty: dirty.contains(id),
                            explain: { explainDetail(id: id, places: places, table: collection.name) }) == nil
            {
                plan.keep([last.slot], inputs: pageInputs)
                ownedSlots[last.slot] = true
                continue
            }
            let row = try controller.objects(in: offset..<(offset + 1))[0]
            guard let path = try link(offset).path else { continue }
            let key = row["_key"]?.stringValue ?? "", file = String(path.dropFirst()) + "index.html"
            let slot = plan.slot(of: file)
            if let owner = owners[file] ?? slot.flatMap({ ownedSlots[$0] ? plan.previous(file)?.key : nil }) {
                let source = row["_source"]?.stringValue ?? collection.name
                let line = row["_line"]?.int64Value.map(Int.init)
                problems.append(SourceError(file: source, line: line, reason:
                    "record '\(key)' would be published at \(path), which record '\(owner)' already has; make '\(detail.path)' unique"))
                continue
            }
            if let other = plan.claimant(of: [file]) {
                problems.append(SourceError(file: row["_source"]?.stringValue ?? collection.name, line: row["_line"]?.int64Value.map(Int.init),
                                            reason: "record '\(key)' would be published at \(path), which \(other) already has; "
                                                + "give one of them another path"))
                continue
            }
            owners[file] = key
            if let slot { ownedSlots[slot] = true }
            let record = PageRecord(inputs: nil, hash: 0, owner: collection.name, record: id, key: key)
            guard plan.needsRender([file], inputs: pageInputs, about: record, dirty: dirty.contains(id) || last?.path != file,
                                   explain: { explainDetail(id: id, places: places, table: collection.name) })
            else { continue }
            let related = try RelatedRecords(database: database, collection: collection).fetch(for: [row]).values.first ?? [:]
            let previous = offset > 0 ? try link(offset - 1) : nil
            let next = offset + 1 < count ? try link(offset + 1) : nil
            try write(detail.template, .detail, path: path) {
                var context: [String: Any] = [
                    "site": site, "nav": navigationOnPage[presenter.url(path)] ?? navigation, "pageTitle": presenter.title(row),
                    "pageURL": presenter.url(path),
                    "record": presenter.context(row, related: related), "title": presenter.title(row),
                ]
                if let field = detail.bodyField, let text = row[field]?.stringValue {
                    context["body"] = body.html(text, format: detail.bodyFormat)
                }
                if let previous { context["prev"] = Self.neighbour(previous, presenter) }
                if let next { context["next"] = Self.neighbour(next, presenter) }
                return context
            }
        }
        return (problems, Self.report("detail \(collection.name)", delta))
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
    private func reportLink(_ sitePath: String) -> String {
        config.templateSite.absoluteURL(sitePath)
    }

    /// `## Records per year`, for a listing dated by a field (its feed date, or a date it sorts on first):
    /// the records its pages list (its filter, and a section's or a tag's), each once.
    private func yearSummary(of listing: ListingConfig, controller: ResultsController) throws -> String {
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
    private func writeFeeds(of listing: ListingConfig, title: String, paginator: Paginator, page: Int,
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
        // Slugs need nothing escaped: letters, digits, `-`, `.`, `_`, `/`.
        let plain = path.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "/"): true
            default: false
            }
        }
        return plain ? String(path) : String(path).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? String(path)
    }

    /// Publishes the files of the site's static folders (under `root`) at the same paths in the output
    /// folder, as they are; the first folder `static:` names has a path both have. A file whose size and
    /// change time are the last build's is kept unread. Hidden files and folders (`.DS_Store`,
    /// `.git`) are left out, except `.well-known/` and `.htaccess`, which servers read; links are followed.
    func renderStaticFiles(root: URL) throws -> [SourceError] {
        var warnings: [SourceError] = []
        var published = Set<String>()
        for folder in config.staticFolders {
            let base = root.appendingPathComponent(folder, isDirectory: true).resolvingSymlinksInPath()
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: base.path, isDirectory: &isFolder), isFolder.boolValue else {
                // A folder sitegen.yml names and that is not there is a checkout or a mount missing: the files
                // it published stay, rather than being deleted as if removed.
                if config.staticFoldersNamed {
                    throw BuildError.config(ConfigError(file: config.file, at: config.staticMark,
                                                        reason: "static folder '\(folder)' is not there"))
                }
                continue
            }
            // An output folder in a static folder was refused before the build began (`checkOutputFolder`).
            var found: [(path: String, url: URL)] = []
            try collectFiles(in: base, relative: "", label: folder, into: &found, warnings: &warnings) { name, _, _ in
                // GitHub Pages publishes a branch through Jekyll unless it holds `.nojekyll`.
                !name.hasPrefix(".") || name == ".well-known" || name == ".htaccess" || name == ".nojekyll"
            }
            // In path order, so that which files are planned first does not depend on the file system's order.
            for file in found.sorted(by: { $0.path < $1.path }) where published.insert(file.path).inserted {
                try publishAsItIs(file.url, at: file.path, owner: "static file \(folder)/\(file.path)")
            }
        }
        return warnings
    }

    /// Publishes the file at `url` as it is at `path` of the output folder, planned as a page owned by
    /// `owner`: kept unread while its size and change time are the last build's.
    private func publishAsItIs(_ url: URL, at path: String, owner: String) throws {
        // `stat`, which follows a link: its target's size and time are what change when the file does.
        var status = stat()
        guard stat(url.path, &status) == 0 else { return }
        var data = Fingerprint()
        data.combine(Int64(status.st_size))
        // The change time, which setting the modification time back (`touch -d`) moves forward too.
        data.combine(Int64(status.st_ctim.tv_sec))
        data.combine(Int64(status.st_ctim.tv_nsec))
        let inputs = PageInputs(settings: 0, template: 0, data: data.signed)
        let record = PageRecord(inputs: nil, hash: 0, owner: owner, key: "")
        guard plan.needsRender([path], inputs: inputs, about: record, explain: { "the file changed" }) else { return }
        let bytes: Data
        do {
            bytes = try Data(contentsOf: url)
        } catch {
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: url.path,
                                                          NSLocalizedDescriptionKey: "cannot be read: \(error.localizedDescription)"])
        }
        try writer.write(bytes, to: path)
    }
    /// Writes a redirect page at each of a record's `aliases` (a `list` field of that name, Hugo's front
    /// matter key), pointing at its detail page: a site moved to sitegen keeps its old addresses
    /// (`/2024/01/15/hello.html`, `/blog/hello/`) working. Planned as pages, after the detail pages: an
    /// alias at a page's address is an error naming both, and an alias dropped is deleted.
    func renderAliases() throws -> [SourceError] {
        var problems: [SourceError] = []
        for collection in config.collections where collection.detail != nil
            && collection.fields.contains(where: { $0.name == "aliases" && $0.type == .list }) {
            let presenter = RecordPresenter(collection: collection, config: config)
            let table = collection.name, join = CollectionSchema.listTable(table, "aliases")
            var targets: [Int64: (key: String, source: String, url: String)] = [:]
            for row in try database.fetchAll("SELECT * FROM \(quoteIdentifier(table)) WHERE _id IN (SELECT record_id FROM \(quoteIdentifier(join)))") {
                guard let id = row["_id"]?.int64Value, let path = presenter.detailPath(row) else { continue }
                targets[id] = (row["_key"]?.stringValue ?? "", row["_source"]?.stringValue ?? "", reportLink(presenter.url(path)))
            }
            // By alias, then by key: of two records with one alias the first key keeps it, whatever ids the
            // rows were given, as a clean build decides.
            let items = try database.fetchAll("SELECT record_id, value FROM \(quoteIdentifier(join))").compactMap { item in
                item["record_id"]?.int64Value.flatMap { id in targets[id].map { ($0, item["value"]?.stringValue ?? "") } }
            }.sorted { ($0.1, $0.0.key) < ($1.1, $1.0.key) }
            for (target, alias) in items {
                guard let file = Self.aliasFile(alias) else {
                    let shown = alias.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
                    problems.append(SourceError(file: target.source, reason: "alias '\(shown)' is not a path on the site, such as /2024/01/hello.html or /old/hello/"))
                    continue
                }
                if RenderPlan.isSiteFile(file) {
                    problems.append(SourceError(file: target.source, reason: "alias '\(alias)' would replace the site's own /\(file)"))
                    continue
                }
                if let long = file.split(separator: "/").first(where: { $0.utf8.count > Self.longestName }) {
                    problems.append(SourceError(file: target.source, reason:
                        "alias '\(alias)' has a name of \(long.utf8.count) bytes, longer than the \(Self.longestName) a file system takes"))
                    continue
                }
                let inputs = PageInputs(settings: config.settingsFingerprint, template: 0, data: Fingerprint.of(["alias", target.url]))
                let record = PageRecord(inputs: nil, hash: 0, owner: "alias '\(alias)' of record '\(target.key)'", key: "")
                guard plan.needsRedirect(file, inputs: inputs, about: record, explain: { "its record's page moved" }) else { continue }
                try writer.write(Self.redirectPage(to: target.url), to: file)
            }
        }
        return problems
    }

    /// The file an alias is published as: `old/hello/index.html` for `/old/hello/` (or `/old/hello`), the
    /// file itself for `/2024/01/hello.html`; nil for what is no path on the site (`..`, a query, a web address).
    /// An address copied from a browser or an export is percent-encoded (`/2019/%C3%A9t%C3%A9.html`): servers
    /// decode a request before they look for its file, so the file is named by the decoded path.
    static func aliasFile(_ written: String) -> String? {
        guard let alias = written.contains("%") ? written.removingPercentEncoding : written else { return nil }
        let parts = alias.split(separator: "/")
        // A control character (NUL above all: a C path ends there, so `/index.html\0/` would be the home page).
        guard !parts.isEmpty, !alias.contains("://"), !alias.contains(where: { "?#\\".contains($0) || $0.isNewline }),
              !alias.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
              !parts.contains(where: { $0 == "." || $0 == ".." || $0.hasPrefix(".") }) else { return nil }
        let path = parts.joined(separator: "/")
        let last = parts.last!.lowercased()
        return !alias.hasSuffix("/") && (last.hasSuffix(".html") || last.hasSuffix(".htm")) ? path : path + "/index.html"
    }

    /// The longest file or folder name, in bytes, that Linux's and macOS's file systems take.
    static let longestName = 255

    /// A page that sends browsers and search engines to `url`, as Hugo writes an alias.
    static func redirectPage(to url: String) -> String {
        let escaped = escapeXML(url)
        return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>\(escaped)</title>\n"
            + "<link rel=\"canonical\" href=\"\(escaped)\">\n<meta name=\"robots\" content=\"noindex\">\n"
            + "<meta http-equiv=\"refresh\" content=\"0; url=\(escaped)\">\n</head>\n"
            + "<body><p>This page has moved to <a href=\"\(escaped)\">\(escaped)</a>.</p></body>\n</html>\n"
    }


    /// Publishes the files beside each Markdown page written as a bundle (`posts/hello/index.md` with its
    /// `cat.png`) in the page's folder (`posts/hello/cat.png`), as Hugo publishes a leaf bundle's
    /// resources: `![cat](cat.png)` then shows. Its folder's files at any depth count, but not Markdown
    /// files (pages, drafts), hidden ones, a collection's sources (a CSV beside it) or another bundle's.
    func renderBundleResources(root: URL) throws -> [SourceError] {
        var warnings: [SourceError] = []
        let siteRoot = Self.realPath(root.path) ?? root.standardizedFileURL.path
        for collection in config.collections where collection.kind == .markdown && collection.detail != nil {
            let presenter = RecordPresenter(collection: collection, config: config)
            // The bundles' ids from the index on `_source` alone, then their rows: scanning the table for
            // `_source` would read every body.
            let table = quoteIdentifier(collection.name)
            let bundles = try database.fetchAll("SELECT * FROM \(table) WHERE _id IN (SELECT _id FROM \(table) "
                                                + "WHERE _source LIKE '%/index.md' OR _source LIKE '%/index.markdown')")
            for row in bundles {
                guard let source = row["_source"]?.stringValue, let path = presenter.detailPath(row) else { continue }
                // `root` may have no trailing slash, so a relative source is appended, not resolved against it.
                let folder = (source.hasPrefix("/") ? URL(fileURLWithPath: source) : root.appendingPathComponent(source))
                    .deletingLastPathComponent().standardizedFileURL
                let sourceFolder = (source as NSString).deletingLastPathComponent
                var found: [(path: String, url: URL)] = []
                try collectFiles(in: folder, relative: "", label: sourceFolder, into: &found, warnings: &warnings, within: siteRoot) { name, url, isFolder in
                    guard !name.hasPrefix(".") else { return false }
                    if isFolder {
                        let inner = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
                        return !inner.contains("index.md") && !inner.contains("index.markdown")
                    }
                    return !["md", "markdown"].contains((name as NSString).pathExtension.lowercased())
                }
                let pageFolder = String(path.drop { $0 == "/" })
                for file in found.sorted(by: { $0.path < $1.path }) {
                    // A file some collection reads (a CSV beside the post) is a source, not a resource.
                    let relative = sourceFolder + "/" + file.path
                    guard try database.fetchAll("SELECT 1 FROM sitegen_sources WHERE path = ?", [.text(relative)]).isEmpty else { continue }
                    try publishAsItIs(file.url, at: pageFolder + file.path, owner: "file \(relative)")
                }
            }
        }
        return warnings
    }

    /// The files under `folder` (`relative` to the folder published, which `label` names in warnings) whose
    /// names, and whose folders' names, `keep` accepts, following links; a link that leads to nothing is a warning.
    private func collectFiles(in folder: URL, relative: String, label: String, into found: inout [(path: String, url: URL)],
                              warnings: inout [SourceError], within confinement: String? = nil,
                              keep: (String, URL, Bool) -> Bool) throws {
        let output = Self.realPath(writer.root.path) ?? writer.root.standardizedFileURL.path
        var walk = FolderWalk(confinement: confinement, output: output, ancestors: [])
        if let identity = FolderIdentity(of: folder.path) { walk.ancestors.insert(identity) }
        try collectFiles(in: folder, relative: relative, label: label, into: &found, warnings: &warnings, walk: walk, keep: keep)
    }

    /// What a walk of `collectFiles` carries down: where links may lead, and the folders it is in.
    private struct FolderWalk {
        /// The folder links may not lead out of (a bundle's site), by its real path; nil for none.
        let confinement: String?
        /// The output folder's real path: a folder that holds it, or is in it, would publish the output again.
        let output: String
        /// The folders above, by device and inode: a link to one of them (`a -> .`) would publish the folder
        /// again inside itself, and two such links without end.
        var ancestors: Set<FolderIdentity>
    }

    private func collectFiles(in folder: URL, relative: String, label: String, into found: inout [(path: String, url: URL)],
                              warnings: inout [SourceError], walk: FolderWalk, keep: (String, URL, Bool) -> Bool) throws {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch {
            // Gone since it was found: nothing to publish. Taken for empty, a folder that cannot be listed (its
            // permissions) would have its files deleted from the output: the build stops instead, as it does
            // for a file that cannot be read.
            // Foundation's error keeps no errno on Linux: the folder is opened again for it.
            guard let listing = opendir(folder.path) else {
                if errno == ENOENT || errno == ENOTDIR { return }
                throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: folder.path,
                                                              NSLocalizedDescriptionKey: "cannot be listed: " + String(cString: strerror(errno))])
            }
            closedir(listing)
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: folder.path,
                                                          NSLocalizedDescriptionKey: "cannot be listed: \(error.localizedDescription)"])
        }
        let here = Self.realPath(folder.path) ?? folder.path
        for name in names.sorted() where !EditorScratch.isScratch(name) {
            let url = folder.appendingPathComponent(name)
            let path = relative.isEmpty ? name : relative + "/" + name
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
                // Foundation lists a name that is not UTF-8 with replacement characters, under which it is not found.
                let reason = name.contains("\u{FFFD}") && !Self.isLink(url) ? "has a name that is not UTF-8 text; rename it" : "is a link to nothing"
                if !name.hasPrefix(".") { warnings.append(SourceError(file: label + "/" + path, reason: reason + "; left out")) }
                continue
            }
            guard keep(name, url, isFolder.boolValue) else { continue }
            // A page bundle is someone's content: a link in it may not publish what is outside the site
            // (`notes.txt -> /etc/passwd`, a key file).
            if let confinement = walk.confinement, let target = Self.linkTarget(url), !Self.path(target, isIn: confinement) {
                warnings.append(SourceError(file: label + "/" + path, reason: "is a link to \(target), outside the site; left out"))
                continue
            }
            guard isFolder.boolValue else {
                found.append((path, url))
                continue
            }
            let real = Self.realPath(url.path) ?? url.path
            guard let identity = FolderIdentity(of: url.path), !walk.ancestors.contains(identity), !Self.path(here, isIn: real) else {
                warnings.append(SourceError(file: label + "/" + path, reason: "is a link to a folder it is in; left out"))
                continue
            }
            // `static/up -> ..` reached the output folder, and each build published the last one's output again.
            if Self.path(walk.output, isIn: real) || Self.path(real, isIn: walk.output) {
                warnings.append(SourceError(file: label + "/" + path, reason: "is a link to a folder that holds the output folder, or is in it; left out"))
                continue
            }
            var inner = walk
            inner.ancestors.insert(identity)
            try collectFiles(in: url, relative: path, label: label, into: &found, warnings: &warnings, walk: inner, keep: keep)
        }
    }

    /// Whether `path` is `folder` or inside it (both real paths).
    private static func path(_ path: String, isIn folder: String) -> Bool {
        path == folder || path.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/")
    }

    /// `path` with every link resolved (`realpath`); nil when nothing is there.
    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether there is a symbolic link at `url` (whatever it leads to).
    private static func isLink(_ url: URL) -> Bool {
        var status = stat()
        return lstat(url.path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
    }

    /// Where the link at `url` leads in the end, resolved whole; nil when `url` is no link.
    private static func linkTarget(_ url: URL) -> String? {
        guard isLink(url) else { return nil }
        return realPath(url.path)
    }

    /// Writes the files every site has besides its pages: `404.html` (when the templates have a `404`),
    /// `robots.txt`, and `sitemap.xml` listing every page written so far, which needs an absolute `baseURL`.
    func renderSiteFiles(navigation: [[String: Any]]) throws {
        // A static file of the same name is the site's own choice (a robots.txt that disallows a folder): it wins.
        if templates.names.contains("404"), plan.claimant(of: ["404.html"]) == nil {
            let inputs = PageInputs(settings: siteFingerprint, template: templateFingerprint("404"), data: 0)
            if plan.needsRender(["404.html"], inputs: inputs, about: PageRecord(inputs: nil, hash: 0), explain: { "" }) {
                let context: [String: Any] = ["site": site, "nav": navigation, "pageTitle": "Page not found"]
                try writer.write(templates.render("404", context: context, knownNames: config.templateNames,
                                                    recordNames: config.recordFieldNames, page: .notFound,
                                                    site: config.templateSite), to: "404.html")
            }
        }
        let absolute = URL(string: config.baseURL)?.scheme != nil
        var robots = "User-agent: *\nAllow: /\n"
        if absolute, plan.claimant(of: ["sitemap.xml"]) == nil {
            robots += "\nSitemap: \(config.baseURL)sitemap.xml\n"
            try renderSitemaps()
        }
        let inputs = PageInputs(settings: config.settingsFingerprint, template: 0, data: 0)
        if plan.claimant(of: ["robots.txt"]) == nil,
           plan.needsRender(["robots.txt"], inputs: inputs, about: PageRecord(inputs: nil, hash: 0), explain: { "" }) {
            try writer.write(robots, to: "robots.txt")
        }
    }

    /// Writes the sitemap: `sitemap.xml` lists every page, or, past `pagesPerSitemap` pages (the sitemaps
    /// protocol allows 50,000 a file), is an index of `sitemap-1.xml`, `sitemap-2.xml`…, which list the
    /// pages that many at a time in path order. They change only when pages come or go: listing them all
    /// is not redone for edits.
    private func renderSitemaps() throws {
        // Listed and sorted once: the fingerprints and the files all need them.
        var listed: [String]?
        func pages() -> [String] {
            if let listed { return listed }
            let found = plan.currentPaths().filter { $0.hasSuffix("index.html") }.sorted()
            listed = found
            return found
        }
        let pageCount = plan.currentPageCount()
        let partCount = pageCount > pagesPerSitemap ? (pageCount + pagesPerSitemap - 1) / pagesPerSitemap : 0
        let parts = partCount == 0 ? [] : (1...partCount).map { "sitemap-\($0).xml" }
        // The same pages as the last build, in files of the same form: what was written then stands.
        let unchanged = !plan.pageSetChanged() && plan.previous("sitemap.xml")?.inputs != nil
            && parts.allSatisfy { plan.previous($0)?.inputs != nil } && plan.previous("sitemap-\(partCount + 1).xml") == nil
        func data(of path: String, _ fingerprint: () -> Int64) -> Int64 {
            if unchanged, let last = plan.previous(path)?.inputs { return last.data }
            return fingerprint()
        }
        // The limit splits the pages into files: a different limit, different files from the same pages.
        var settings = Fingerprint()
        settings.combine(config.settingsFingerprint)
        settings.combine(pagesPerSitemap)
        func write(_ path: String, data: Int64, _ text: () -> String) throws {
            let inputs = PageInputs(settings: settings.signed, template: 0, data: data)
            if plan.needsRender([path], inputs: inputs, about: PageRecord(inputs: nil, hash: 0), explain: { "pages added or removed" }) {
                try writer.write(text(), to: path)
            }
        }
        let base = escapeXML(config.baseURL)
        func urlset(_ pages: ArraySlice<String>) -> String {
            var sitemap = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
            // Fifty thousand lines: grown once, and appended piece by piece rather than through a string
            // made per line (together half of the sitemaps' time on the main thread).
            sitemap.reserveCapacity(sitemap.utf8.count + pages.reduce(0) { $0 + $1.utf8.count } + pages.count * (base.utf8.count + 24) + 12)
            for page in pages {
                let path = page.dropLast("index.html".count)
                // Page paths are nearly always slugs with nothing to escape; escaping each cost a tenth of the main thread.
                sitemap += "<url><loc>"
                sitemap += base
                // A sitemap's addresses are URLs: `/tags/東京/` goes as `/tags/%E6%9D%B1%E4%BA%AC/`.
                let url = Self.urlPath(path)
                // Percent-encoding leaves `&` and `'`, which XML escapes.
                sitemap += url.utf8.contains { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "'") } ? escapeXML(url) : url
                sitemap += "</loc></url>\n"
            }
            sitemap += "</urlset>\n"
            return sitemap
        }

        guard partCount > 0 else {
            try write("sitemap.xml", data: data(of: "sitemap.xml") { Fingerprint.of(pages()) }) { urlset(pages()[...]) }
            return
        }
        for (number, part) in parts.enumerated() {
            let slice = { pages()[(number * pagesPerSitemap)..<min((number + 1) * pagesPerSitemap, pages().count)] }
            try write(part, data: data(of: part) { Fingerprint.of(Array(slice())) }) { urlset(slice()) }
        }
        try write("sitemap.xml", data: data(of: "sitemap.xml") { Fingerprint.of(["sitemapindex"] + parts) }) {
            var index = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
            for part in parts { index += "<sitemap><loc>" + base + part + "</loc></sitemap>\n" }
            return index + "</sitemapindex>\n"
        }
    }

    /// What a listing's sort falls back to when rows tie on every field it names: the records' keys, which
    /// are unique and which only the record itself changes. Not the ids: a clean build gives them in file
    /// order and an incremental build gives a new row the next. Not where the rows were read (file, then
    /// line, until decisions.md 25): a row inserted above others moves their lines without changing them,
    /// so their stored lines went stale and a record added at the line of its twin was listed after it
    /// until a clean build listed it before. The key is a sort key of every cached entry (decisions.md 22).
    /// A key that is a number (`key: cert`, an integer field) ties in number order (2 before 10), its text after.
    private static func tieBreakers(_ collection: CollectionConfig) -> [String] {
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

    private static func neighbour(_ link: (title: String, path: String?), _ presenter: RecordPresenter) -> [String: Any] {
        ["title": link.title, "url": link.path.map(presenter.url) ?? ""]
    }

    /// Queues the page at site path `path` (`/banks/1/` is written as `banks/1/index.html`), its context
    /// made by `context` on a render worker.
    private func write(_ template: String, _ page: PageKind, path: String, context: @escaping () throws -> [String: Any]) throws {
        try queue.submit(template: template, page: page, path: String(path.dropFirst()) + "index.html") { _ in try context() }
    }

    /// Queues the page at site path `path`, its context made on a render worker with what it can read there.
    private func write(_ template: String, _ page: PageKind, path: String,
                       context: @escaping (RenderQueue.Worker) throws -> [String: Any]) throws {
        try queue.submit(template: template, page: page, path: String(path.dropFirst()) + "index.html", context: context)
    }
}

/// A listing's results as one build sees them: the controller, the delta that brought its cached results
/// up to date (`nil` when they were fetched afresh), and what its pages' inputs are made of.
struct ListingState {
    let listing: ListingConfig
    let controller: ResultsController
    let delta: Delta?
    /// Every row's id and version, in order.
    let rows: (ids: [Int64], versions: [Int64])
    /// Rows whose related records changed.
    let dirty: Set<Int64>
    /// The fingerprint of the settings its pages show.
    let settings: Int64
    /// Each row of the delta by id, with its place in the delta's list: a page's reasons look up its own
    /// rows. Going through the delta's lists for every page took 13 s of a build that changed 50,000 rows.
    let deltaPlaces: DeltaPlaces?

    init(listing: ListingConfig, controller: ResultsController, delta: Delta?, rows: (ids: [Int64], versions: [Int64]),
         dirty: Set<Int64>, settings: Int64) {
        self.listing = listing
        self.controller = controller
        self.delta = delta
        self.rows = rows
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

    /// Every row's id and version: what a page summarising the whole listing (records per year) depends on.
    var wholeListing: Int64 {
        var fingerprint = Fingerprint()
        for (id, version) in zip(rows.ids, rows.versions) {
            fingerprint.combine(id)
            fingerprint.combine(version)
        }
        return fingerprint.signed
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
        let onPage = state.rows.ids[rows]
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
    func linksFingerprint(offset: Int, rows: (ids: [Int64], versions: [Int64]),
                          link: (Int) throws -> (title: String, path: String?)) throws -> Int64 {
        var fingerprint = Fingerprint()
        fingerprint.combine(rows.ids[offset])
        fingerprint.combine(rows.versions[offset])
        for neighbour in [offset - 1, offset + 1] {
            guard neighbour >= 0, neighbour < rows.ids.count else {
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
    private func rowNames(_ ids: [Int64], table: String, records: String? = nil) -> String {
        let sql = records.map { "SELECT r._key FROM \(quoteIdentifier(table)) i JOIN \(quoteIdentifier($0)) r ON r._id = i.record_id WHERE i._id = ?" }
            ?? "SELECT _key FROM \(quoteIdentifier(table)) WHERE _id = ?"
        let names = ids.prefix(3).map { id in (try? database.fetchValue(sql, [.integer(id)]))?.stringValue ?? "#\(id)" }
        let more = ids.count > 3 ? " and \(ids.count - 3) more" : ""
        return (ids.count == 1 ? "row " : "rows ") + names.joined(separator: ", ") + more
    }
}

extension PageRenderer {
    /// The letter a section index files a section titled `title` under, as a printed index does: its first
    /// letter without accents, upper-cased (`Évian` under E, `ß` under S), and `#` for a digit or a sign.
    static func indexLetter(of title: String) -> String {
        guard let first = title.first else { return "" }
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

/// A folder as the file system knows it (device and inode), whatever path or link led to it.
struct FolderIdentity: Hashable {
    let device: UInt64
    let inode: UInt64

    /// The folder at `path` (links followed); nil when nothing is there.
    init?(of path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}
