import Foundation
import SiteStore

/// Decides, page by page, which pages a build renders: a page whose inputs (settings, templates, rows and
/// place among the pages) are what the last complete build recorded is kept as it is; any other page is
/// rendered, with the reason why. It also gathers the manifest the build leaves for the next one.
///
/// Every page's inputs are computed, which costs a hash of its row ids and versions (milliseconds for a
/// hundred thousand rows), and only the pages whose inputs changed are read and rendered: O(changes).
final class RenderPlan: @unchecked Sendable {
    /// A page rendered (or, in a dry run, that would be) and why.
    struct Rendered: Sendable {
        var path: String
        var reason: String
    }

    /// The last complete build's files, by path.
    let previous: [String: PageRecord]
    /// Why every page is rendered, when it is (no manifest, an interrupted build, `--full`).
    let renderAllReason: String?
    /// Each detail collection's pages from the last build: record id to path.
    let detailPaths: [String: [Int64: String]]

    private let writer: OutputWriter
    private let lock = NSLock()
    private var entries: [String: PageRecord] = [:]
    private var renderedUnits: [Rendered] = []
    private var keptFiles = 0

    /// Plans against the `previous` manifest; with `renderAllReason`, every page is rendered. Kept files
    /// are reported to `writer`, so that it deletes only what no page claims.
    init(previous: [String: PageRecord], renderAllReason: String?, writer: OutputWriter) {
        self.previous = previous
        self.writer = writer
        self.renderAllReason = renderAllReason
        var details: [String: [Int64: String]] = [:]
        for (path, entry) in previous where entry.record != 0 { details[entry.owner, default: [:]][entry.record] = path }
        detailPaths = details
    }

    /// Whether the page made of `paths` (a page and the files written with it: its feeds, its Markdown
    /// twin) must be rendered, and then it is planned so; when not, their manifest entries carry over.
    /// `dirty` says that something the inputs do not cover changed (a related record); `explain` says
    /// what changed in its data.
    func needsRender(_ paths: [String], inputs: PageInputs, about record: PageRecord, dirty: Bool = false,
                     explain: () -> String) -> Bool
    {
        guard let reason = reason(for: paths, inputs: inputs, dirty: dirty, explain: explain) else {
            keep(paths, inputs: inputs, record: record)
            return false
        }
        render(paths, inputs: inputs, record: record, reason: reason)
        return true
    }

    /// Why the page made of `paths` must be rendered, `nil` when the last build's files are still right.
    func reason(for paths: [String], inputs: PageInputs, dirty: Bool, explain: () -> String) -> String? {
        if let renderAllReason { return renderAllReason }
        var old: PageInputs?
        for path in paths {
            guard let entry = previous[path] else { return "new page" }
            guard let recorded = entry.inputs else { return "no record of what it was made from" }
            old = recorded
        }
        guard let old else { return "new page" }
        if old.settings != inputs.settings { return "settings changed (sitegen.yml or the menu)" }
        if old.template != inputs.template { return "template changed" }
        if (old.data != inputs.data && old.content != inputs.content) || dirty { return explain() }
        return nil
    }

    /// Carries the last build's files of a page over, unrendered.
    func keep(_ paths: [String], inputs: PageInputs, record: PageRecord) {
        var entry = record
        entry.inputs = inputs
        lock.lock()
        defer { lock.unlock() }
        for path in paths {
            entry.hash = previous[path]!.hash
            entries[path] = entry
            writer.keep(path, hash: entry.hash)
        }
        keptFiles += paths.count
    }

    /// Plans a page to be rendered, for `reason`; its files' hashes come from the writer at the end.
    func render(_ paths: [String], inputs: PageInputs, record: PageRecord, reason: String) {
        var entry = record
        entry.inputs = inputs
        lock.lock()
        defer { lock.unlock() }
        renderedUnits.append(Rendered(path: paths[0], reason: reason))
        for path in paths { entries[path] = entry }
    }

    /// Adds a file rendered every build (the sitemap, robots.txt, the 404 page): no inputs to compare.
    func alwaysRendered(_ path: String) {
        lock.withLock { entries[path] = PageRecord(inputs: nil, hash: 0) }
    }

    /// The pages rendered, with their reasons, in the order they were planned.
    var rendered: [Rendered] { lock.withLock { renderedUnits } }
    /// How many files were kept without rendering.
    var kept: Int { lock.withLock { keptFiles } }

    /// The new manifest, given the hashes of the files this build wrote (or would write).
    func manifest(hashes: [String: Int64]) -> [String: PageRecord] {
        lock.withLock {
            var result = entries
            for (path, hash) in hashes {
                if result[path] != nil { result[path]!.hash = hash } else { result[path] = PageRecord(inputs: nil, hash: hash) }
            }
            return result
        }
    }

    /// The paths the last build left that this one does not produce.
    func removedPaths(from manifest: [String: PageRecord]) -> [String] {
        previous.keys.filter { manifest[$0] == nil }.sorted()
    }
}
