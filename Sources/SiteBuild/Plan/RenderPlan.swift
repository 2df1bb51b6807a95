import Foundation
import SiteStore

/// Decides, page by page, which pages a build renders: a page whose inputs (settings, templates, rows and
/// place among the pages) are what the last complete build recorded is kept as it is; any other page is
/// rendered, with the reason why. It also gathers what the build changes in the manifest it leaves.
///
/// A plan visits either every page (`visitsEverything`: a first or full build, an edited template or
/// setting, a load whose changes an earlier failed build left) or only the pages the controllers' deltas
/// name (`visit(_:)`): then a page of the last build that is not visited is kept as it is, unlooked at,
/// and a visited one that is not planned again is gone. Fingerprints confirm the pages visited.
final class RenderPlan: @unchecked Sendable {
    /// Why every page is rendered, when it is (no manifest, an interrupted build, `--full`).
    let renderAllReason: String?
    /// Whether every page of the last build is visited, so that one not planned is gone; otherwise only
    /// the pages `visit(_:)` names are, and the others are kept unseen.
    private(set) var visitsEverything: Bool
    let manifest: ManifestIndex

    private let lock = NSLock()
    /// The last build's files planned by this build (kept or rendered), by slot.
    private var seen = SlotMarks(count: 0, dense: true)
    /// The slots of the last build visited by a plan that does not visit everything: the files that are
    /// gone unless planned again (besides `manifest.otherSlots`, which every build visits).
    private var visited = Set<Int>()
    private var changed = PageEntries()
    /// The pages rendered, by their entries' numbers in `changed` (or, once handed over, in `handedOver`).
    private var renderedUnits = RenderedPages()
    /// The entries `takeManifestChanges` handed over, which `renderedUnits` names.
    private var handedOver: PageEntries?
    private var keptPages = 0
    private var collisionNotes: [String] = []
    private var collidingPairs = Set<String>()
    private var addedFiles = 0
    /// How many listing and detail pages had their inputs worked out: what a build driven by deltas keeps
    /// to the pages its changes touch (a test counts them).
    private(set) var pagesLookedAt = 0

    /// How many times the store's manifest had been asked for files when this plan began (a watch's index
    /// outlives its builds).
    private let manifestQueriesBefore: Int
    /// How many times this build asked the store's manifest for files: by path, record or owner as it plans,
    /// or all of them when it looks at everything (a test counts them).
    var manifestQueries: Int { manifest.storeQueries - manifestQueriesBefore }

    /// Counts a listing or detail page whose inputs are worked out.
    func lookAtPage() {
        lock.withLock { pagesLookedAt += 1 }
    }
    /// Why a page whose template fingerprint is now the key renders again, naming the files that changed
    /// (`template changed: pager.mustache`); set before any page is planned.
    var templateReasons: [Int64: String] = [:]
    /// Files planned that only send readers elsewhere (aliases): not pages of the sitemap.
    private var redirects = Set<String>()
    private static let siteFiles: Set<String> = ["sitemap.xml", "robots.txt", "404.html"]

    /// Whether `path` is one of the files about the whole site (the sitemap and its parts, robots.txt,
    /// the 404 page), which are planned after the pages.
    static func isSiteFile(_ path: String) -> Bool {
        siteFiles.contains(path) || (path.hasPrefix("sitemap-") && path.hasSuffix(".xml") && !path.contains("/"))
    }

    /// Plans against the last manifest (`paths` and their `entries`); with `renderAllReason`, every page is rendered.
    convenience init(paths: [String], entries: [PageRecord], renderAllReason: String?) {
        self.init(manifest: ManifestIndex(paths: paths, entries: entries), renderAllReason: renderAllReason, visitsEverything: true)
    }

    /// Plans against `manifest`; with `renderAllReason`, every page is rendered, and with `visitsEverything`
    /// every page is looked at.
    init(manifest: ManifestIndex, renderAllReason: String?, visitsEverything: Bool) {
        self.renderAllReason = renderAllReason
        self.visitsEverything = visitsEverything || renderAllReason != nil
        self.manifest = manifest
        manifestQueriesBefore = manifest.storeQueries
        if self.visitsEverything { manifest.readWhole() }
    }

    /// Looks at every page from now on: called before any page is planned, when the settings or templates
    /// changed, or the changes are more than the deltas say.
    func visitEverything() {
        visitsEverything = true
        manifest.readWhole()
    }

    /// The last build's entry for `path`.
    func previous(_ path: String) -> PageRecord? {
        manifest.slot(of: path).map { manifest.entry(at: $0) }
    }

    /// The hash of the bytes the last build wrote at `path`, if the plan has looked the file up.
    func lastHash(of path: String) -> Int64? { manifest.knownHash(of: path) }

    /// Reads the last build's files under `folder` at once, for a plan about to look most of them up.
    func readAhead(folder: String) { manifest.readFolder(folder) }

    /// The key of the record of `owner` this build planned at `path`, if one is (a detail page of its own).
    func plannedRecordKey(of path: String, owner: String) -> String? {
        lock.withLock { changed[path].flatMap { $0.owner == owner && $0.record != 0 ? $0.key : nil } }
    }

    /// Marks the last build's files at `slots` as visited by this build: unless planned again, they are gone.
    /// (Nothing to do when the plan visits everything.)
    func visit(_ slots: some Sequence<Int>) {
        guard !visitsEverything else { return }
        lock.withLock { visited.formUnion(slots) }
    }

    /// Marks the last build's files at `paths` (those it had) as visited by this build.
    func visit(paths: some Sequence<String>) {
        visit(paths.compactMap { manifest.slot(of: $0) })
    }

    /// Marks the last build's file at `slot` as planned by this build (called with the lock held).
    private func markSeen(_ slot: Int) {
        seen[slot] = true
        if !visitsEverything { visited.insert(slot) }
    }

    /// Whether the last build's file at `slot` is looked at by this build (and so gone unless planned).
    private func isVisited(_ slot: Int) -> Bool {
        visitsEverything || visited.contains(slot) || manifest.otherSlots.contains(slot)
    }

    /// Looks up the last build's page of a record of `collection` by the record's id: its place in the
    /// manifest, path and entry. The collection's pages are found once, for a loop over all its records.
    func lastDetails(in collection: String) -> (Int64) -> (slot: Int, path: String, entry: PageRecord)? {
        let manifest = manifest
        return { id in manifest.detailSlot(in: collection, record: id).map { ($0, manifest.path(at: $0), manifest.entry(at: $0)) } }
    }

    /// The place of the last build's page of record `id` of `collection`.
    func lastDetailSlot(in collection: String, record id: Int64) -> Int? { manifest.detailSlot(in: collection, record: id) }

    /// How many files the last manifest has: its places are `0..<slotCount`.
    var slotCount: Int { manifest.slotCount }

    /// What the file at `slot` of the last manifest was made from, as recorded.
    func recordedInputs(at slot: Int) -> PageInputs? { manifest.entry(at: slot).inputs }

    /// Keeps the last build's file at `slot`, whose recorded inputs are this build's, unless a page of
    /// this build already has it; says whether it did.
    func keepIfUnclaimed(_ slot: Int) -> Bool {
        lock.withLock {
            guard !seen[slot] else { return false }
            markSeen(slot)
            keptPages += 1
            return true
        }
    }

    /// The place of `path` in the last manifest.
    func slot(of path: String) -> Int? { manifest.slot(of: path) }

    /// Whether the page made of `paths` (a page and the files written with it: its feeds, its Markdown
    /// twin) must be rendered, and then it is planned so; when not, their manifest entries carry over.
    /// `dirty` says that something the inputs do not cover changed (a related record); `explain` says
    /// what changed in its data.
    func needsRender(_ paths: [String], inputs: PageInputs, about record: PageRecord, dirty: Bool = false,
                     explain: () -> String) -> Bool
    {
        let slots = paths.map { manifest.slot(of: $0) }
        lock.withLock {
            // The last build's files of this very page are visited now: they are not another page's.
            if !visitsEverything {
                for slot in slots.compactMap({ $0 }) where Self.samePage(manifest.entry(at: slot), record) { visited.insert(slot) }
            }
        }
        // Two pages at one address would overwrite each other: the first planned keeps it.
        if let first = claimant(of: paths, at: slots) {
            let path = "/" + (paths[0].hasSuffix("index.html") ? String(paths[0].dropLast("index.html".count)) : paths[0])
            lock.withLock {
                // Once per pair: a listing over another collides on every page they share.
                collisionCount += 1
                if collidingPairs.insert(Self.describe(record) + "\n" + first).inserted {
                    collisionNotes.append("\(Self.describe(record)) would be published at \(path), which \(first) already has; "
                                          + "give one of them another path")
                }
            }
            return false
        }
        guard let reason = reason(for: slots, inputs: inputs, dirty: dirty, explain: explain) else {
            keep(slots.map { $0! }, inputs: inputs)
            return false
        }
        render(paths, inputs: inputs, record: record, reason: reason)
        return true
    }

    /// Keeps the last build's files at `paths` as they are, inputs and all, when it had them all: a page
    /// whose data the changes did not touch. Says whether it did.
    func keepAsItWas(_ paths: [String]) -> Bool {
        let slots = paths.compactMap { manifest.slot(of: $0) }
        guard slots.count == paths.count else { return false }
        return lock.withLock {
            guard slots.allSatisfy({ !seen[$0] && manifest.entry(at: $0).inputs != nil }) else { return false }
            for slot in slots { markSeen(slot) }
            keptPages += 1
            return true
        }
    }

    /// Takes back the file at `path`, planned (rendered or kept) but where this build has a folder holding
    /// `child`: a file and a folder cannot share an address, and the file, planned after the pages (a static
    /// file, a bundle's file, an alias), is the one left out, with an error naming both.
    func withdraw(_ path: String, folderOf child: String) {
        lock.withLock {
            let slot = manifest.slot(of: path)
            let record = changed.removeValue(forKey: path) ?? slot.map { manifest.entry(at: $0) }
            if let slot {
                seen[slot] = false
                if !visitsEverything { visited.insert(slot) }
            } else {
                addedFiles -= 1
            }
            let rendered = renderedUnits.count
            if let number = changed.number(of: path) { renderedUnits.removeAll(entry: number) }
            // A file left out is one of a static file's, a bundle's or an alias's, each a page of one file.
            if renderedUnits.count == rendered, slot != nil { keptPages = max(0, keptPages - 1) }
            collisionCount += 1
            collisionNotes.append("\(record.map(Self.describe) ?? path) would be published at /\(path), where this build has the folder "
                                  + "of /\(child); give one of them another path")
        }
    }

    /// What page of this build already has one of `paths`, e.g. `listing 'news'`; nil when none has.
    func claimant(of paths: [String]) -> String? {
        claimant(of: paths, at: paths.map { manifest.slot(of: $0) })
    }

    /// What page of this build already has the last manifest's file at `slot`; nil when none has.
    func claimant(ofSlot slot: Int) -> String? {
        claimant(of: [manifest.path(at: slot)], at: [slot])
    }

    /// `claimant(of:)` for `paths` whose places in the last manifest are `slots`.
    private func claimant(of paths: [String], at slots: [Int?]) -> String? {
        lock.withLock {
            for (path, slot) in zip(paths, slots) {
                // A file of the last build is planned when seen, or kept unseen when not visited; a new one
                // when it has a manifest entry.
                let record: PageRecord?
                if let slot { record = seen[slot] || !isVisited(slot) ? changed[path] ?? manifest.entry(at: slot) : nil } else { record = changed[path] }
                if let record { return Self.describe(record) }
            }
            return nil
        }
    }

    /// Pages that were not published because another page of the build has their address, one message each.
    var collisions: [String] { lock.withLock { collisionNotes } }

    /// How many pages were left out for an address another page has (detail pages report their own).
    private(set) var collisionCount = 0

    /// Counts a detail page left out for an address another page has: the next build looks at every page,
    /// so that the clash is found and reported again until it is fixed.
    func noteCollision() {
        lock.withLock { collisionCount += 1 }
    }

    /// Whether two manifest entries are of one page (the same listing page, record or file).
    private static func samePage(_ a: PageRecord, _ b: PageRecord) -> Bool {
        a.owner == b.owner && a.section == b.section && a.page == b.page && a.record == b.record
    }

    private static func describe(_ record: PageRecord) -> String {
        record.owner.isEmpty ? "a file of the site's own"
            : record.owner.hasPrefix("static file ") || record.owner.hasPrefix("file ") || record.owner.hasPrefix("alias ") ? record.owner
            : record.key.isEmpty ? "listing '\(record.owner)'"
            : "record '\(record.key)' of '\(record.owner)'"
    }

    /// Why the page whose files are at `slots` of the last manifest must be rendered, `nil` when the last
    /// build's files are still right.
    func reason(for slots: [Int?], inputs: PageInputs, dirty: Bool, explain: () -> String) -> String? {
        if let renderAllReason { return renderAllReason }
        var old: PageInputs?
        for slot in slots {
            guard let slot else { return "new page" }
            guard let recorded = manifest.entry(at: slot).inputs else { return "no record of what it was made from" }
            old = recorded
        }
        guard let old else { return "new page" }
        if old.settings != inputs.settings { return "settings changed (sitegen.yml or the menu)" }
        if old.template != inputs.template { return templateReasons[inputs.template] ?? "template changed" }
        if (old.data != inputs.data && old.content != inputs.content) || dirty { return explain() }
        return nil
    }

    /// Carries the last build's files at `slots` over, unrendered (their entries are rewritten only when
    /// their recorded inputs differ in what does not show, e.g. a neighbour's version).
    func keep(_ slots: [Int], inputs: PageInputs) {
        lock.lock()
        defer { lock.unlock() }
        for slot in slots {
            markSeen(slot)
            if manifest.entry(at: slot).inputs != inputs {
                var entry = manifest.entry(at: slot)
                entry.inputs = inputs
                changed[manifest.path(at: slot)] = entry
            }
        }
        // A page, however many files it has (its feeds, its Markdown twin), as `rendered` counts it.
        keptPages += 1
    }

    /// Plans a page to be rendered, for `reason`; its files' hashes come from the writer at the end.
    func render(_ paths: [String], inputs: PageInputs, record: PageRecord, reason: String) {
        var entry = record
        entry.inputs = inputs
        lock.lock()
        defer { lock.unlock() }
        for path in paths {
            changed[path] = entry
            if let slot = manifest.slot(of: path) { markSeen(slot) } else { addedFiles += 1 }
        }
        // Named by its entry's number: the plan's entries hold the path already (decisions.md 39g).
        renderedUnits.append(entry: changed.number(of: paths[0])!, reason: reason)
    }

    /// The last build's files this build visited and did not plan: gone (O(visited), or O(site) when it
    /// visits everything).
    private func unplannedSlots() -> [Int] {
        let candidates: [Int] = visitsEverything ? manifest.allLiveSlots() : Array(visited.union(manifest.otherSlots))
        return candidates.filter { manifest.isLive($0) && !seen[$0] }
    }

    /// Whether the pages planned so far are not the files the last build left: some are new, or some of
    /// those (other than the site files, planned after the pages) are gone.
    func pageSetChanged() -> Bool {
        lock.withLock {
            addedFiles > 0 || redirects != manifest.redirects || unplannedSlots().contains { !Self.isSiteFile(manifest.path(at: $0)) }
        }
    }

    /// How many of the files planned so far are pages (`…/index.html`), the sitemap's entries, counted
    /// without listing them.
    func currentPageCount() -> Int {
        lock.withLock {
            manifest.pageFileCount - unplannedSlots().reduce(0) { $0 + (manifest.path(at: $1).hasSuffix("index.html") ? 1 : 0) }
                + addedPages(excluding: []).count
                - redirects.reduce(0) { $0 + ($1.hasSuffix("index.html") ? 1 : 0) }
        }
    }

    /// Every file planned so far, kept or rendered, but for redirects (O(site): for the sitemap, when pages
    /// came or went).
    func currentPaths() -> [String] {
        lock.withLock {
            let gone = Set(unplannedSlots())
            let all = manifest.allLiveSlots().filter { !gone.contains($0) }.map { manifest.path(at: $0) }
                + addedPaths()
            return redirects.isEmpty ? all : all.filter { !redirects.contains($0) }
        }
    }

    /// Calls `body` with the UTF-8 bytes of every page path (`…/index.html`) planned so far, kept or rendered,
    /// but for redirects, in byte order: the sitemap's entries, one at a time. The last build's are read from
    /// the store as paths alone when the index holds only part of the manifest, and merged with the new.
    /// O(site), for the sitemap when pages came or went; at 1,000,000 records, a list of them as strings was
    /// a full build's peak of memory (decisions.md 39j). `body` may plan files that are not pages (the
    /// sitemap's own): no lock is held while it runs.
    func forEachCurrentPagePath(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let (left, added) = lock.withLock {
            (Set(unplannedSlots().map { manifest.path(at: $0) }).union(redirects), addedPages(excluding: redirects))
        }
        var next = 0
        var page: [UInt8] = []
        // The new pages that sort before `bytes` (all that are left, for nil), each given to `body`: copied
        // out, since `body` may plan files, and the plan's entries are not to be copied whole meanwhile.
        func giveNewPages(before bytes: UnsafeRawBufferPointer?) throws {
            while next < added.count {
                let due = lock.withLock {
                    changed.withPathBytes(at: added[next]) { path in
                        if let bytes, !PathTable.precedes(path, bytes) { return false }
                        page.removeAll(keepingCapacity: true)
                        page.append(contentsOf: path)
                        return true
                    }
                }
                guard due else { return }
                next += 1
                try page.withUnsafeBytes { try body($0) }
            }
        }
        // Most paths are not left out: a path is made a string only when its fingerprint is one of theirs.
        let leftFingerprints = Set(left.map { path in
            var fingerprint = Fingerprint()
            fingerprint.combine(path)
            return fingerprint.value
        })
        try manifest.forEachPagePath { bytes in
            if !left.isEmpty {
                var fingerprint = Fingerprint()
                fingerprint.combine(bytes: bytes)
                if leftFingerprints.contains(fingerprint.value), left.contains(String(decoding: bytes, as: UTF8.self)) { return }
            }
            try giveNewPages(before: bytes)
            try body(bytes)
        }
        try giveNewPages(before: nil)
    }

    /// The numbers in `changed` of the pages (`…/index.html`) planned that the last build did not have, but
    /// for those at the `excluded` paths, in byte order (called with the lock held).
    private func addedPages(excluding excluded: Set<String>) -> [Int] {
        // A first build has no manifest to look pages up in: every page it plans is new.
        let manifest = manifest.fileCount == 0 ? nil : manifest
        return changed.numbersInPathOrder { bytes in
            guard SiteStore.ManifestReader.isPagePath(bytes) else { return false }
            guard manifest != nil || !excluded.isEmpty else { return true }
            let path = String(decoding: bytes, as: UTF8.self)
            return !excluded.contains(path) && manifest?.slot(of: path) == nil
        }
    }

    /// The files planned that the last build did not have (called with the lock held).
    private func addedPaths() -> [String] {
        var added: [String] = []
        changed.forEachPath { if manifest.slot(of: $0) == nil { added.append($0) } }
        return added
    }

    /// Plans the file at `path` as a redirect (an alias) unless a page of this build has its address;
    /// says whether it must be rendered, as `needsRender` does.
    func needsRedirect(_ path: String, inputs: PageInputs, about record: PageRecord, explain: () -> String) -> Bool {
        if claimant(of: [path]) == nil { _ = lock.withLock { redirects.insert(path) } }
        return needsRender([path], inputs: inputs, about: record, explain: explain)
    }

    /// The pages rendered, with their reasons, in the order they were planned.
    var rendered: RenderedPages { lock.withLock { renderedUnits.named(by: handedOver ?? changed) } }
    /// How many pages were kept without rendering: those looked at and found unchanged, and, when the plan
    /// does not visit everything, the last build's pages it did not look at.
    var kept: Int {
        lock.withLock {
            guard !visitsEverything else { return keptPages }
            let looked = visited.union(manifest.otherSlots).reduce(0) { $0 + (manifest.isLive($1) && manifest.isPage($1) ? 1 : 0) }
            return keptPages + manifest.pageCount - looked
        }
    }

    /// What the build changes in the manifest: the entries rendered (with the hashes of the files written,
    /// or that would be, from `hashes`) or kept with new inputs, and the paths no page claims any more.
    /// Asked once, when every page is planned and written: the plan hands its entries over.
    func takeManifestChanges(hashes: WrittenFiles) -> (changed: PageEntries, removed: [String]) {
        lock.withLock {
            // Taken, not copied: a first build's 120,000 entries were copied whole at the first hash set.
            var result = changed
            changed = PageEntries()
            hashes.forEach { path, hash in
                if !result.setHash(hash, of: path) { result[path] = PageRecord(inputs: nil, hash: hash) }
            }
            // Shared, not copied: neither changes after this.
            handedOver = result
            let removed = unplannedSlots().filter { result[manifest.path(at: $0)] == nil }.map { manifest.path(at: $0) }.sorted()
            return (result, removed)
        }
    }
}
