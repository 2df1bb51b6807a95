import Foundation
import SiteStore

/// Decides, page by page, which pages a build renders: a page whose inputs (settings, templates, rows and
/// place among the pages) are what the last complete build recorded is kept as it is; any other page is
/// rendered, with the reason why. It also gathers what the build changes in the manifest it leaves.
///
/// Every page's inputs are computed from the controllers' ids and versions (no rows read), and only the
/// pages whose inputs changed are read and rendered. A kept page costs a mark in a bit array: the manifest
/// is not rebuilt, only its changed and removed entries are written.
final class RenderPlan: @unchecked Sendable {
    /// Why every page is rendered, when it is (no manifest, an interrupted build, `--full`).
    let renderAllReason: String?
    private let paths: [String]
    private let entries: [PageRecord]
    private let index: [String: Int]
    /// Per detail collection, record id to the index of its last page.
    private let details: [String: [Int64: Int]]

    private let lock = NSLock()
    private var seen: [Bool]
    private var changed: [String: PageRecord] = [:]
    private var renderedUnits: [BuildSummary.RenderedPage] = []
    private var keptPages = 0
    private var collisionNotes: [String] = []
    private var collidingPairs = Set<String>()
    private var addedFiles = 0
    /// Why a page whose template fingerprint is now the key renders again, naming the files that changed
    /// (`template changed: pager.mustache`); set before any page is planned.
    var templateReasons: [Int64: String] = [:]
    /// Files planned that only send readers elsewhere (aliases): not pages of the sitemap.
    private var redirects = Set<String>()
    /// The last build's redirects: an address that turned from a page into one, or back, changes the sitemap
    /// though the files are the same.
    private let previousRedirects: Set<String>
    private static let siteFiles: Set<String> = ["sitemap.xml", "robots.txt", "404.html"]

    /// Whether `path` is one of the files about the whole site (the sitemap and its parts, robots.txt,
    /// the 404 page), which are planned after the pages.
    static func isSiteFile(_ path: String) -> Bool {
        siteFiles.contains(path) || (path.hasPrefix("sitemap-") && path.hasSuffix(".xml") && !path.contains("/"))
    }

    /// Plans against the last manifest (`paths` and their `entries`); with `renderAllReason`, every page is rendered.
    init(paths: [String], entries: [PageRecord], renderAllReason: String?) {
        self.renderAllReason = renderAllReason
        self.paths = paths
        self.entries = entries
        var index: [String: Int] = [:], details: [String: [Int64: Int]] = [:], redirects = Set<String>()
        index.reserveCapacity(paths.count)
        for (offset, path) in paths.enumerated() {
            index[path] = offset
            if entries[offset].record != 0 {
                details[entries[offset].owner, default: [:]][entries[offset].record] = offset
            } else if entries[offset].owner.hasPrefix("alias ") {
                redirects.insert(path)
            }
        }
        previousRedirects = redirects
        self.index = index
        self.details = details
        seen = Array(repeating: false, count: paths.count)
    }

    /// The last build's entry for `path`.
    func previous(_ path: String) -> PageRecord? {
        index[path].map { entries[$0] }
    }

    /// Looks up the last build's page of a record of `collection` by the record's id: its place in the
    /// manifest, path and entry. The collection's pages are found once, for a loop over all its records.
    func lastDetails(in collection: String) -> (Int64) -> (slot: Int, path: String, entry: PageRecord)? {
        let slots = details[collection] ?? [:]
        return { [paths, entries] id in slots[id].map { ($0, paths[$0], entries[$0]) } }
    }

    /// The places of the last build's pages of `collection`'s records, by record id.
    func lastDetailSlots(in collection: String) -> [Int64: Int] { details[collection] ?? [:] }

    /// How many files the last manifest has: its places are `0..<slotCount`.
    var slotCount: Int { paths.count }

    /// What the file at `slot` of the last manifest was made from, as recorded.
    func recordedInputs(at slot: Int) -> PageInputs? { entries[slot].inputs }

    /// Keeps the last build's file at `slot`, whose recorded inputs are this build's, unless a page of
    /// this build already has it; says whether it did.
    func keepIfUnclaimed(_ slot: Int) -> Bool {
        lock.withLock {
            guard !seen[slot] else { return false }
            seen[slot] = true
            keptPages += 1
            return true
        }
    }

    /// The place of `path` in the last manifest.
    func slot(of path: String) -> Int? { index[path] }

    /// Whether the page made of `paths` (a page and the files written with it: its feeds, its Markdown
    /// twin) must be rendered, and then it is planned so; when not, their manifest entries carry over.
    /// `dirty` says that something the inputs do not cover changed (a related record); `explain` says
    /// what changed in its data.
    func needsRender(_ paths: [String], inputs: PageInputs, about record: PageRecord, dirty: Bool = false,
                     explain: () -> String) -> Bool
    {
        let slots = paths.map { index[$0] }
        // Two pages at one address would overwrite each other: the first planned keeps it.
        if let first = claimant(of: paths, at: slots) {
            let path = "/" + (paths[0].hasSuffix("index.html") ? String(paths[0].dropLast("index.html".count)) : paths[0])
            lock.withLock {
                // Once per pair: a listing over another collides on every page they share.
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

    /// Takes back the file at `path`, planned (rendered or kept) but where this build has a folder holding
    /// `child`: a file and a folder cannot share an address, and the file, planned after the pages (a static
    /// file, a bundle's file, an alias), is the one left out, with an error naming both.
    func withdraw(_ path: String, folderOf child: String) {
        lock.withLock {
            let record = changed.removeValue(forKey: path) ?? index[path].map { entries[$0] }
            if let slot = index[path] { seen[slot] = false } else { addedFiles -= 1 }
            let rendered = renderedUnits.count
            renderedUnits.removeAll { $0.path == path }
            // A file left out is one of a static file's, a bundle's or an alias's, each a page of one file.
            if renderedUnits.count == rendered, index[path] != nil { keptPages = max(0, keptPages - 1) }
            collisionNotes.append("\(record.map(Self.describe) ?? path) would be published at /\(path), where this build has the folder "
                                  + "of /\(child); give one of them another path")
        }
    }

    /// What page of this build already has one of `paths`, e.g. `listing 'news'`; nil when none has.
    func claimant(of paths: [String]) -> String? {
        claimant(of: paths, at: paths.map { index[$0] })
    }

    /// What page of this build already has the last manifest's file at `slot`; nil when none has.
    func claimant(ofSlot slot: Int) -> String? {
        claimant(of: [paths[slot]], at: [slot])
    }

    /// `claimant(of:)` for `paths` whose places in the last manifest are `slots`.
    private func claimant(of paths: [String], at slots: [Int?]) -> String? {
        lock.withLock {
            for (path, slot) in zip(paths, slots) {
                // A file of the last build is planned when seen; a new one when it has a manifest entry.
                let record: PageRecord?
                if let slot { record = seen[slot] ? changed[path] ?? entries[slot] : nil } else { record = changed[path] }
                if let record { return Self.describe(record) }
            }
            return nil
        }
    }

    /// Pages that were not published because another page of the build has their address, one message each.
    var collisions: [String] { lock.withLock { collisionNotes } }

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
            guard let recorded = entries[slot].inputs else { return "no record of what it was made from" }
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
            seen[slot] = true
            if entries[slot].inputs != inputs {
                var entry = entries[slot]
                entry.inputs = inputs
                changed[paths[slot]] = entry
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
        renderedUnits.append(BuildSummary.RenderedPage(path: paths[0], reason: reason))
        for path in paths {
            changed[path] = entry
            if let slot = index[path] { seen[slot] = true } else { addedFiles += 1 }
        }
    }

    /// Whether the pages planned so far are not the files the last build left: some are new, or some of
    /// those (other than the site files, planned after the pages) are gone.
    func pageSetChanged() -> Bool {
        lock.withLock {
            addedFiles > 0 || redirects != previousRedirects || seen.indices.contains { !seen[$0] && !Self.isSiteFile(paths[$0]) }
        }
    }

    /// How many of the files planned so far are pages (`…/index.html`), the sitemap's entries, counted
    /// without listing them.
    func currentPageCount() -> Int {
        lock.withLock {
            seen.indices.reduce(0) { $0 + (seen[$1] && paths[$1].hasSuffix("index.html") ? 1 : 0) }
                + changed.keys.reduce(0) { $0 + (index[$1] == nil && $1.hasSuffix("index.html") ? 1 : 0) }
                - redirects.reduce(0) { $0 + ($1.hasSuffix("index.html") ? 1 : 0) }
        }
    }

    /// Every file planned so far, kept or rendered, but for redirects.
    func currentPaths() -> [String] {
        lock.withLock {
            let all = seen.indices.filter { seen[$0] }.map { paths[$0] } + changed.keys.filter { index[$0] == nil }
            return redirects.isEmpty ? all : all.filter { !redirects.contains($0) }
        }
    }

    /// Plans the file at `path` as a redirect (an alias) unless a page of this build has its address;
    /// says whether it must be rendered, as `needsRender` does.
    func needsRedirect(_ path: String, inputs: PageInputs, about record: PageRecord, explain: () -> String) -> Bool {
        if claimant(of: [path]) == nil { _ = lock.withLock { redirects.insert(path) } }
        return needsRender([path], inputs: inputs, about: record, explain: explain)
    }

    /// The pages rendered, with their reasons, in the order they were planned.
    var rendered: [BuildSummary.RenderedPage] { lock.withLock { renderedUnits } }
    /// How many pages were kept without rendering.
    var kept: Int { lock.withLock { keptPages } }

    /// What the build changes in the manifest: the entries rendered (with the hashes of the files written,
    /// or that would be, from `hashes`) or kept with new inputs, and the paths no page claims any more.
    /// Asked once, when every page is planned and written: the plan hands its entries over.
    func takeManifestChanges(hashes: [String: Int64]) -> (changed: [String: PageRecord], removed: [String]) {
        lock.withLock {
            // Taken, not copied: a first build's 120,000 entries were copied whole at the first hash set.
            var result = changed
            changed = [:]
            for (path, hash) in hashes {
                if let entry = result.index(forKey: path) { result.values[entry].hash = hash } else { result[path] = PageRecord(inputs: nil, hash: hash) }
            }
            let removed = seen.indices.filter { !seen[$0] && result[paths[$0]] == nil }.map { paths[$0] }.sorted()
            return (result, removed)
        }
    }
}
