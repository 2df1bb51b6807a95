import Foundation
import SiteStore

/// The last complete build's page manifest, indexed by path, by record and by owner: what the planner
/// looks pages up in.
///
/// Read whole, it is every file of the last build (a full build, a first one, one that looks at every
/// page). Read in part (`partial`), it starts with the files every build visits (site files, static files,
/// aliases, section indexes) and looks the rest up in the store by path or by record as the plan asks,
/// so that a build after a one-record change reads a handful of the manifest's rows, not all of them.
/// A `watch` keeps it between builds and brings it up to date with each build's changes (`apply`).
///
/// Every file looked up has a slot, its place in the index's arrays. A file removed by a build leaves its
/// slot dead until the dead outnumber a quarter of the live, when the slots are laid out afresh. Safe from
/// any thread (render workers ask whether the last build made a file).
final class ManifestIndex: @unchecked Sendable {
    private let lock = NSLock()
    private var paths: [String] = []
    private var entries: [PageRecord] = []
    private var live: [Bool] = []
    private var index: [String: Int] = [:]
    /// Per detail collection, record id to the slot of its page.
    private var details: [String: [Int64: Int]] = [:]
    private var otherSlotSet = Set<Int>()
    private var redirectSet = Set<String>()
    private var counts = SiteStore.ManifestCounts()
    private var deadCount = 0
    /// Where the rows not read yet are looked up; nil once the manifest is read whole.
    private var reader: SiteStore.ManifestReader?
    /// Paths, and records by collection, that the store was asked for and does not have.
    private var missingPaths = Set<String>()
    private var missingRecords = Set<String>()
    /// The owners whose every file is read.
    private var ownersRead = Set<String>()
    /// The folders whose every file is read (`readFolder`), each with its trailing "/": compared as bytes,
    /// as the store's range of them is.
    private var foldersRead: [String] = []
    /// How many times the store was asked for files (by path, by record, by owner, or all of them): a build's
    /// cost in the manifest, which follows what it plans.
    private var queries = 0

    /// Indexes the manifest `paths` with their `entries`, in the same order: the manifest read whole.
    init(paths: [String], entries: [PageRecord]) {
        index.reserveCapacity(paths.count)
        for (path, entry) in zip(paths, entries) { append(path, entry, counted: true) }
    }

    /// The manifest of the store `reader` reads, in part: the files every build visits now, the others when
    /// asked for. nil when the store keeps no counts of its manifest (written before them): then it is read whole.
    init?(reading reader: SiteStore.ManifestReader) throws {
        guard let counts = try reader.counts() else { return nil }
        self.reader = reader
        self.counts = counts
        // Counted already: the counts are the whole manifest's.
        try reader.visitedEveryBuild { append($0, $1, counted: false) }
    }

    /// How many times the store was asked for files since the index was made.
    var storeQueries: Int { lock.withLock { queries } }

    /// How many slots there are, dead ones included: slots are `0..<slotCount`.
    var slotCount: Int { lock.withLock { paths.count } }

    /// How many files the manifest lists.
    var fileCount: Int { lock.withLock { counts.files } }
    /// How many of its files are pages (`…/index.html`), the sitemap's entries.
    var pageFileCount: Int { lock.withLock { counts.pageFiles } }
    /// How many pages its files make, as a build counts what it renders and keeps: a listing page's
    /// Markdown twin and feeds are of its page.
    var pageCount: Int { lock.withLock { counts.pages } }
    /// What the store's manifest holds now, for the next build to trust without reading it.
    var currentCounts: SiteStore.ManifestCounts { lock.withLock { counts } }

    /// The slots of files that are neither listing pages nor detail pages (site files, static files, bundle
    /// files, aliases, section indexes): every build visits them all, so those it does not plan are gone.
    var otherSlots: Set<Int> { lock.withLock { otherSlotSet } }
    /// Redirects (aliases) among the files.
    var redirects: Set<String> { lock.withLock { redirectSet } }

    /// The path of the file at `slot`.
    func path(at slot: Int) -> String { lock.withLock { paths[slot] } }
    /// The entry of the file at `slot`.
    func entry(at slot: Int) -> PageRecord { lock.withLock { entries[slot] } }
    /// Whether `slot` still holds a file.
    func isLive(_ slot: Int) -> Bool { lock.withLock { live[slot] } }
    /// The hash of the bytes the last build wrote at `path`, when the index has read its row (the store is not asked).
    func knownHash(of path: String) -> Int64? {
        lock.withLock { index[path].flatMap { live[$0] ? entries[$0].hash : nil } }
    }

    /// The slot of the file at `path`.
    func slot(of path: String) -> Int? {
        lock.withLock {
            if let slot = index[path] { return slot }
            guard let reader, !missingPaths.contains(path), !foldersRead.contains(where: { path.utf8.starts(with: $0.utf8) }) else { return nil }
            queries += 1
            guard let (found, entry) = try? reader.file(at: path) else {
                missingPaths.insert(path)
                return nil
            }
            return append(found, entry, counted: false)
        }
    }

    /// The slot of the page of record `id` of `collection`.
    func detailSlot(in collection: String, record id: Int64) -> Int? {
        lock.withLock {
            if let slot = details[collection]?[id] { return slot }
            let key = collection + "\u{0}" + String(id)
            guard let reader, !ownersRead.contains(collection), !missingRecords.contains(key) else { return nil }
            queries += 1
            guard let (path, entry) = try? reader.page(of: collection, record: id) else {
                missingRecords.insert(key)
                return nil
            }
            return index[path] ?? append(path, entry, counted: false)
        }
    }

    /// Reads every file under `folder` (a listing section's older pages) in one query: for a plan about to
    /// look up most of them, which took a query each (a tenth of a 100,000-record round's planning).
    func readFolder(_ folder: String) {
        lock.withLock {
            let prefix = folder + "/"
            guard let reader, !foldersRead.contains(where: { prefix.utf8.starts(with: $0.utf8) }) else { return }
            queries += 1
            // Only a folder read through is known whole: a path not found in it is then not asked for.
            guard (try? reader.files(under: folder) { path, entry in if index[path] == nil { append(path, entry, counted: false) } }) != nil
            else { return }
            foldersRead.append(prefix)
        }
    }

    /// The live slots whose files belong to `owner` (a listing, or a collection's detail pages): read
    /// from the store for an owner looked at whole.
    func slots(ownedBy owner: String) -> [Int] {
        lock.withLock {
            if let reader, !ownersRead.contains(owner) {
                queries += 1
                try? reader.files(ownedBy: owner) { path, entry in if index[path] == nil { append(path, entry, counted: false) } }
                ownersRead.insert(owner)
            }
            return paths.indices.filter { live[$0] && entries[$0].owner == owner }
        }
    }

    /// Reads every file of the manifest not read yet: for a build that looks at every page, or that lists
    /// them all (a sitemap after pages came or went).
    func readWhole() {
        lock.withLock {
            guard let reader else { return }
            queries += 1
            try? reader.allFiles { path, entry in if index[path] == nil { append(path, entry, counted: false) } }
            self.reader = nil
            // Counted afresh from the files themselves, whatever the store kept.
            counts = SiteStore.ManifestCounts()
            for slot in paths.indices where live[slot] {
                counts.files += 1
                if paths[slot].hasSuffix("index.html") { counts.pageFiles += 1 }
                if Self.isPage(paths[slot], entries[slot]) { counts.pages += 1 }
            }
        }
    }

    /// Lets go of the store connection the rows not read yet would come from: a build whose index no session
    /// keeps closes it before it returns (the last connection to close removes the store's -wal file).
    func closeReader() {
        lock.withLock {
            reader?.endRead()
            reader = nil
        }
    }

    /// Ends the store read the lookups of one build shared: a watch's next build sees the store as it is then.
    func endRead() {
        lock.withLock { reader?.endRead() }
    }

    /// Every live slot (the manifest read whole first).
    func allLiveSlots() -> [Int] {
        readWhole()
        return lock.withLock { paths.indices.filter { live[$0] } }
    }

    /// Calls `body` with the last build's live page paths (`…/index.html`) in byte order, each as its UTF-8
    /// bytes: read from the store, without indexing them, when the index holds only part of the manifest;
    /// from the index when it holds all. No lock is held while `body` runs, so that it may ask the index.
    func forEachPagePath(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let (storeReader, slots) = lock.withLock { () -> (SiteStore.ManifestReader?, [Int]) in
            if let reader {
                queries += 1
                return (reader, [])
            }
            var slots = paths.indices.filter { live[$0] && paths[$0].hasSuffix("index.html") }
            // The store's order, unless slots were laid out afresh or added since.
            if !zip(slots, slots.dropFirst()).allSatisfy({ !paths[$1].utf8.lexicographicallyPrecedes(paths[$0].utf8) }) {
                slots.sort { paths[$0].utf8.lexicographicallyPrecedes(paths[$1].utf8) }
            }
            return (nil, slots)
        }
        // On a connection of its own: the lookups `body` makes use the reader's.
        if let storeReader { return try storeReader.pagePaths(body) }
        // A slot's path stays while the build runs: slots are laid out afresh only between builds.
        for slot in slots {
            var path = self.path(at: slot)
            try path.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Brings the index up to date with what a build wrote to the store's manifest: `changed` entries by
    /// path, and the paths `removed`. Every one of them was looked up during the build.
    func apply(changed: PageEntries, removed: [String]) {
        lock.withLock {
            ownersRead = []
            foldersRead = []
            missingPaths = []
            missingRecords = []
            for path in removed {
                guard let slot = index[path] else { continue }
                drop(slot)
            }
            changed.forEach { path, entry in
                if let slot = index[path] {
                    // The same file, made again or kept with new inputs: its slot is reused.
                    drop(slot)
                    entries[slot] = entry
                    live[slot] = true
                    deadCount -= 1
                    add(slot, counted: true)
                    return
                }
                append(path, entry, counted: true)
            }
            if deadCount > 1_024 && deadCount * 4 > counts.files { compact() }
        }
    }

    /// The counts `apply(changed:removed:)` would leave, without indexing the changes: for a build whose index
    /// no session keeps, which would index a first build's every page only to count them (decisions.md 39c).
    func counts(afterApplying changed: PageEntries, removed: [String]) -> SiteStore.ManifestCounts {
        lock.withLock {
            var counts = counts, dropped = Set<Int>()
            func count(_ path: String, _ entry: PageRecord, _ sign: Int) {
                counts.files += sign
                if path.hasSuffix("index.html") { counts.pageFiles += sign }
                if Self.isPage(path, entry) { counts.pages += sign }
            }
            func drop(_ path: String) {
                guard let slot = index[path], live[slot], dropped.insert(slot).inserted else { return }
                count(path, entries[slot], -1)
            }
            for path in removed { drop(path) }
            changed.forEach { path, entry in
                drop(path)
                count(path, entry, 1)
            }
            return counts
        }
    }

    /// Whether the file at `slot` stands for its page in counts of pages: any file but a listing's Markdown
    /// twin or feed, which go with the listing's `index.html` beside them.
    func isPage(_ slot: Int) -> Bool {
        lock.withLock { Self.isPage(paths[slot], entries[slot]) }
    }

    private static func isPage(_ path: String, _ entry: PageRecord) -> Bool {
        guard entry.record == 0, !path.hasSuffix("index.html") else { return true }
        let listing = entry.page > 0 || !(entry.owner.isEmpty || entry.owner.hasPrefix("static file ")
                                          || entry.owner.hasPrefix("file ") || entry.owner.hasPrefix("alias "))
        return !listing
    }

    /// Whether every build visits a file of this entry: neither a listing page nor a detail page.
    static func isVisitedEveryBuild(_ entry: PageRecord) -> Bool { entry.record == 0 && entry.page == 0 }

    /// Gives the file at `path` a slot; `counted`: a file the counts do not include yet.
    @discardableResult
    private func append(_ path: String, _ entry: PageRecord, counted: Bool) -> Int {
        paths.append(path)
        entries.append(entry)
        live.append(true)
        add(paths.count - 1, counted: counted)
        return paths.count - 1
    }

    private func add(_ slot: Int, counted: Bool) {
        let path = paths[slot], entry = entries[slot]
        index[path] = slot
        if counted {
            counts.files += 1
            if path.hasSuffix("index.html") { counts.pageFiles += 1 }
            if Self.isPage(path, entry) { counts.pages += 1 }
        }
        if entry.record != 0 {
            details[entry.owner, default: [:]][entry.record] = slot
        } else if Self.isVisitedEveryBuild(entry) {
            otherSlotSet.insert(slot)
            if entry.owner.hasPrefix("alias ") { redirectSet.insert(path) }
        }
    }

    private func drop(_ slot: Int) {
        let path = paths[slot], entry = entries[slot]
        guard live[slot] else { return }
        live[slot] = false
        deadCount += 1
        index[path] = nil
        counts.files -= 1
        if path.hasSuffix("index.html") { counts.pageFiles -= 1 }
        if Self.isPage(path, entry) { counts.pages -= 1 }
        if entry.record != 0 {
            if details[entry.owner]?[entry.record] == slot { details[entry.owner]?[entry.record] = nil }
        } else if Self.isVisitedEveryBuild(entry) {
            otherSlotSet.remove(slot)
            redirectSet.remove(path)
        }
    }

    /// Lays the live slots out afresh, without the dead ones.
    private func compact() {
        let kept = paths.indices.filter { live[$0] }
        let (keptPaths, keptEntries, keptCounts) = (kept.map { paths[$0] }, kept.map { entries[$0] }, counts)
        paths = []
        entries = []
        live = []
        index = [:]
        details = [:]
        otherSlotSet = []
        redirectSet = []
        deadCount = 0
        // A manifest read in part counts files it has not read: the counts stay.
        for (path, entry) in zip(keptPaths, keptEntries) { append(path, entry, counted: false) }
        counts = keptCounts
    }
}
