import Foundation
import ResultsController
import SiteRender
import SiteSources
import SiteStore

extension PageRenderer {

    /// Writes the detail pages of `collection` whose inputs changed (one per row, with previous/next in its
    /// primary listing's order, the first listing of it); returns the records whose page path collided
    /// with another's, and the delta of its controller.
    func renderDetails(of collection: CollectionConfig, navigation: [[String: Any]]) throws -> ([SourceError], BuildSummary.ListingDelta?) {
        guard let detail = collection.detail else { return ([], nil) }
        // A page the menu lists (a Markdown page no listing lists) is its current entry.
        let navigationOnPage = Dictionary(navigation.compactMap { item in
            (item["url"] as? String).map { ($0, Self.marking(navigation, current: $0)) }
        }) { first, _ in first }
        let presenter = self.presenter(of: collection, template: detail.template)
        let (controller, delta) = try controllers.controller(for: controllers.detailFetch(collection)!)
        defer { controllers.finish(with: controller) }
        let dirty = relatedChanges[collection.name] ?? []
        let offsets = detailOffsetsToVisit(of: collection, delta: delta, dirty: dirty, controller: controller)
        let rows = RowVersions(controller, whole: offsets == nil)
        let count = rows.count
        // Who has each page: records planned by this build are in the plan, records kept by their place in
        // the last manifest (a string per page, held to the end, was 150 MB at 1,000,000 records).
        var ownedSlots = SlotMarks(count: plan.slotCount, dense: offsets == nil)
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
                data.combine(neighbour >= 0 && neighbour < count ? rows.id(at: neighbour) : 0)
                data.combine(neighbour >= 0 && neighbour < count ? rows.version(at: neighbour) : 0)
            }
            return PageInputs(settings: settings, template: template, data: data.signed)
        }
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
        let keepsUnchanged = plan.renderAllReason == nil
        for offset in offsets ?? Array(0..<count) {
            throttle.advance(to: offset)
            plan.lookAtPage()
            if !links.isEmpty { links[offset - 2] = nil }
            let id = rows.id(at: offset)
            var pageInputs = inputs(offset)
            // Most records of a build are where the last one left them, with the same neighbours: their
            // pages are kept at the cost of a lookup and a comparison.
            if keepsUnchanged, let slot = plan.lastDetailSlot(in: collection.name, record: id), !ownedSlots[slot], plan.recordedInputs(at: slot).map({
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
            if let owner = plan.plannedRecordKey(of: file, owner: collection.name) ?? slot.flatMap({ ownedSlots[$0] ? plan.previous(file)?.key : nil }) {
                let source = row["_source"]?.stringValue ?? collection.name
                let line = row["_line"]?.int64Value.map(Int.init)
                plan.noteCollision()
                problems.append(SourceError(file: source, line: line, reason:
                    "record '\(key)' would be published at \(path), which record '\(owner)' already has; make '\(detail.path)' unique"))
                continue
            }
            if let other = plan.claimant(of: [file]) {
                plan.noteCollision()
                problems.append(SourceError(file: row["_source"]?.stringValue ?? collection.name, line: row["_line"]?.int64Value.map(Int.init),
                                            reason: "record '\(key)' would be published at \(path), which \(other) already has; "
                                                + "give one of them another path"))
                continue
            }
            if let slot { ownedSlots[slot] = true }
            let record = PageRecord(inputs: nil, hash: 0, owner: collection.name, record: id, key: key)
            guard plan.needsRender([file], inputs: pageInputs, about: record, dirty: dirty.contains(id) || last?.path != file,
                                   explain: { explainDetail(id: id, places: places, table: collection.name) })
            else { continue }
            let related = try RelatedRecords(database: database, collection: collection).fetch(for: [row]).values.first ?? [:]
            let previous = offset > 0 ? try link(offset - 1) : nil
            let next = offset + 1 < count ? try link(offset + 1) : nil
            // Queued under `file`, the string the plan keeps too: one path per page in memory, not two.
            try queue.submit(template: detail.template, page: .detail, path: file) { _ in
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

    /// The positions of `collection`'s records whose pages a build looks at, or nil for all of them: the
    /// plan visits everything, or the controller has no delta (its results were fetched afresh), and then
    /// the last build's pages of the collection are visited whole. Otherwise the pages the delta touches,
    /// and the last build's pages of their records and of the records gone, which go unless planned again.
    func detailOffsetsToVisit(of collection: CollectionConfig, delta: Delta?, dirty: Set<Int64>, controller: ResultsController) -> [Int]? {
        guard !plan.visitsEverything else { return nil }
        guard let delta else {
            plan.visit(plan.manifest.slots(ownedBy: collection.name))
            return nil
        }
        let offsets = DeltaPages.detailOffsets(delta, dirty: dirty.compactMap { controller.offset(of: $0) }, count: controller.count)
        let ids = delta.deletedRows.map(\.id) + offsets.map { controller.ids(in: $0..<($0 + 1))[0] }
        plan.visit(ids.compactMap { plan.lastDetailSlot(in: collection.name, record: $0) })
        return offsets
    }
}
