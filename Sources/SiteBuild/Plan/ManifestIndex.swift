import SiteStore

/// The last complete build's page manifest, indexed by path and by record: what the planner looks pages up
/// in. A process reads it from the store once per build; a `watch` keeps it between builds and brings it up
/// to date with each build's changes (`apply`), so that a save never reads the manifest again.
///
/// Every file has a slot, its place in `paths` and `entries`. A file removed by a build leaves its slot dead
/// (a tombstone) until the dead outnumber a quarter of the live, when the slots are laid out afresh.
final class ManifestIndex: @unchecked Sendable {
    private(set) var paths: [String]
    private(set) var entries: [PageRecord]
    /// Whether each slot still holds a file.
    private(set) var live: [Bool]
    private var index: [String: Int]
    /// Per detail collection, record id to the slot of its page.
    private var details: [String: [Int64: Int]]
    /// The slots of files that are neither listing pages nor detail pages (site files, static files, bundle
    /// files, aliases, section indexes): every build visits them all, so those it does not plan are gone.
    private(set) var otherSlots: Set<Int>
    /// Redirects (aliases) among the files.
    private(set) var redirects: Set<String>
    /// How many live files are pages (`…/index.html`), the sitemap's entries.
    private(set) var pageFileCount: Int
    /// How many pages the live files make, as a build counts what it renders and keeps: a listing page's
    /// Markdown twin and feeds are of its page.
    private(set) var pageCount = 0
    private var deadCount = 0
    /// Slots by owner, made on the first question about an owner (a listing whose results were fetched
    /// afresh is visited whole), and dropped when the slots change.
    private var slotsByOwner: [String: [Int]]?

    /// Indexes the manifest `paths` with their `entries`, in the same order.
    init(paths: [String], entries: [PageRecord]) {
        self.paths = paths
        self.entries = entries
        live = Array(repeating: true, count: paths.count)
        index = [:]
        details = [:]
        otherSlots = []
        redirects = []
        pageFileCount = 0
        index.reserveCapacity(paths.count)
        for slot in paths.indices { add(slot) }
    }

    /// How many slots there are, dead ones included: slots are `0..<slotCount`.
    var slotCount: Int { paths.count }

    /// How many files the manifest lists.
    var fileCount: Int { paths.count - deadCount }

    /// The slot of the file at `path`.
    func slot(of path: String) -> Int? { index[path] }

    /// The slot of the page of record `id` of `collection`.
    func detailSlot(in collection: String, record id: Int64) -> Int? { details[collection]?[id] }

    /// The slots of the pages of `collection`'s records, by record id.
    func detailSlots(in collection: String) -> [Int64: Int] { details[collection] ?? [:] }

    /// The live slots whose files belong to `owner` (a listing, or a collection's detail pages).
    func slots(ownedBy owner: String) -> [Int] {
        if slotsByOwner == nil {
            var owners: [String: [Int]] = [:]
            for slot in paths.indices where live[slot] { owners[entries[slot].owner, default: []].append(slot) }
            slotsByOwner = owners
        }
        return slotsByOwner?[owner] ?? []
    }

    /// Brings the index up to date with what a build wrote to the store's manifest: `changed` entries by
    /// path, and the paths `removed`.
    func apply(changed: [String: PageRecord], removed: [String]) {
        slotsByOwner = nil
        for path in removed {
            guard let slot = index[path] else { continue }
            drop(slot)
        }
        for (path, entry) in changed {
            if let slot = index[path] {
                // The same file, made again or kept with new inputs: its slot is reused.
                drop(slot)
                entries[slot] = entry
                live[slot] = true
                deadCount -= 1
                add(slot)
                continue
            }
            paths.append(path)
            entries.append(entry)
            live.append(true)
            add(paths.count - 1)
        }
        if deadCount > 1_024 && deadCount * 4 > fileCount { compact() }
    }

    private func add(_ slot: Int) {
        let path = paths[slot], entry = entries[slot]
        index[path] = slot
        if path.hasSuffix("index.html") { pageFileCount += 1 }
        if isPage(slot) { pageCount += 1 }
        if entry.record != 0 {
            details[entry.owner, default: [:]][entry.record] = slot
        } else if entry.page == 0 {
            otherSlots.insert(slot)
            if entry.owner.hasPrefix("alias ") { redirects.insert(path) }
        }
    }

    private func drop(_ slot: Int) {
        let path = paths[slot], entry = entries[slot]
        guard live[slot] else { return }
        live[slot] = false
        deadCount += 1
        index[path] = nil
        if path.hasSuffix("index.html") { pageFileCount -= 1 }
        if isPage(slot) { pageCount -= 1 }
        if entry.record != 0 {
            if details[entry.owner]?[entry.record] == slot { details[entry.owner]?[entry.record] = nil }
        } else if entry.page == 0 {
            otherSlots.remove(slot)
            redirects.remove(path)
        }
    }

    /// Whether the file at `slot` stands for its page in counts of pages: any file but a listing's Markdown
    /// twin or feed, which go with the listing's `index.html` beside them.
    func isPage(_ slot: Int) -> Bool {
        let entry = entries[slot]
        guard entry.record == 0, !paths[slot].hasSuffix("index.html") else { return true }
        let listing = entry.page > 0 || !(entry.owner.isEmpty || entry.owner.hasPrefix("static file ")
                                          || entry.owner.hasPrefix("file ") || entry.owner.hasPrefix("alias "))
        return !listing
    }

    /// Lays the live slots out afresh, without the dead ones.
    private func compact() {
        let kept = paths.indices.filter { live[$0] }
        let (keptPaths, keptEntries) = (kept.map { paths[$0] }, kept.map { entries[$0] })
        paths = []
        entries = []
        live = []
        index = [:]
        details = [:]
        otherSlots = []
        redirects = []
        pageFileCount = 0
        pageCount = 0
        deadCount = 0
        paths = keptPaths
        entries = keptEntries
        live = Array(repeating: true, count: paths.count)
        index.reserveCapacity(paths.count)
        for slot in paths.indices { add(slot) }
    }
}
