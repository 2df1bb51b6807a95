import Foundation
import SiteSources

/// What a build did: pages rendered, kept, written, unchanged and deleted, time per stage, and every problem found.
public struct BuildSummary: Sendable {
    /// A page rendered (in a dry run, that would be), and why.
    public struct RenderedPage: Sendable, Equatable, Codable {
        /// Its file, relative to the output folder (the page's HTML; its feeds and Markdown go with it).
        public var path: String
        /// What changed: "row rec-0042 moved in from page 2", "template changed", "new page"…
        public var reason: String
    }

    /// One listing's changes, as its results controller reported them after the load.
    public struct ListingDelta: Sendable, Equatable, Codable {
        /// The listing, or `detail <collection>` for a collection's detail pages.
        public var name: String
        /// Whether its cached results caught up with the load (`false`: fetched afresh, no delta).
        public var caughtUp: Bool
        /// The sections that appeared and went away, by name.
        public var insertedSections: [String] = [], deletedSections: [String] = []
        /// How many rows were inserted, deleted, moved and updated in place.
        public var insertedRows = 0, deletedRows = 0, movedRows = 0, updatedRows = 0
    }

    /// Pages rendered, with the reason for each (made from `renderedPages` when asked: O(pages)).
    public var rendered: [RenderedPage] { renderedPages.pages }
    /// Pages rendered, with the reason for each, held compactly (a build of every page has one per record).
    public internal(set) var renderedPages = RenderedPages()
    /// How many listing and detail pages the plan worked out the inputs of: every page when it looks at
    /// everything, the pages the changes touch when the controllers' deltas drive it.
    public var pagesLookedAt = 0
    /// How many times the build asked the store's page manifest for files (by path, record or owner, or all of
    /// them): what the plan looked up, not the whole manifest, when the deltas drive it.
    public var manifestQueries = 0
    /// How many old files the writer read to compare with a page's new bytes: those of the same size whose
    /// bytes the last build did not record as other than the new ones.
    public var oldFilesRead = 0
    /// Pages kept from the last build without rendering (with their feeds and Markdown twins): their inputs had not changed.
    public var pagesKept = 0
    /// Files written (or, in a dry run, that would be) because their bytes changed, in no particular order
    /// (the plan and the report sort them: a first build's 120,000 were sorted for no reader). Made from the
    /// writer's compact list when asked: a build of every page writes a million (decisions.md 39g).
    public var writtenPaths: [String] { writtenFiles.writtenPaths }
    /// Every file the build rendered, with whether it was written.
    var writtenFiles = WrittenFiles()
    /// Files deleted (or that would be), sorted.
    public var deletedPaths: [String] = []
    /// Each listing's delta.
    public var deltas: [ListingDelta] = []
    /// The results controllers this build fetched while its render plan was still being read.
    var controllersFetchedAhead = 0
    /// List items put in from the pieces earlier builds rendered, and list items rendered into pieces.
    public var listItemsReused = 0, listItemsRendered = 0
    /// Whether this was a dry run (`--plan`): nothing written, the store left as it was.
    public var dryRun = false
    /// Pages whose bytes changed (or are new).
    public var pagesWritten = 0
    /// Pages rendered to exactly the bytes already on disk.
    public var pagesUnchanged = 0
    /// Stale pages of removed records or pages, deleted.
    public var pagesDeleted = 0
    /// Source files read.
    public var sourcesRead = 0
    /// Source files skipped as unchanged since the last build (their size and time), not read.
    public var sourcesUnchanged = 0
    /// Source files read that had the bytes of their last load (touched, or saved again as they were).
    public var sourcesSameBytes = 0
    /// URL sources fetched with a new body, answered 304 (unchanged, not parsed), and failed (their last
    /// good copies were loaded), by this build's fetch stage.
    public var urlsFetched = 0, urlsNotModified = 0, urlsFailed = 0
    /// When the next URL source is due for a fetch (seconds since 1970), for a watch's timer; nil without URL sources.
    public var nextURLRefresh: Double?
    /// Rows inserted, updated and deleted in the store by this build's load.
    public var rowsInserted = 0, rowsUpdated = 0, rowsDeleted = 0
    /// How many Markdown drafts the build published (`--drafts`); nil when drafts are left out.
    public var drafts: Int?
    /// Seconds spent in each stage, in order.
    public var stageSeconds: [(stage: String, seconds: Double)] = []
    /// What marks the last change any build made to the output (a new value each time one writes or deletes
    /// files); nil before the first.
    public var publication: String?
    /// Problems that failed a source or a page: the build's exit status is non-zero when there is any.
    public var problems: [SourceError] = []
    /// Problems that did not stop anything.
    public var warnings: [SourceError] = []

    /// A summary of a build that has done nothing yet.
    public init() {}

    /// The error that stopped the build before its pages were done (a template's, the configuration's).
    public var stoppedBy: String?

    /// Whether everything built.
    public var succeeded: Bool { problems.isEmpty && stoppedBy == nil }

    /// What `sitegen build --plan` prints: each page rendered and why, then the files written and deleted.
    public var plan: String {
        // A page by its address on the site (`/`, `/banks/ca/page/3/`), which is what a reader would open.
        var lines = rendered.map { "render /\($0.path.hasSuffix("index.html") ? String($0.path.dropLast("index.html".count)) : $0.path) — \($0.reason)" }
        lines += writtenPaths.sorted().map { "write  \($0)" }
        lines += deletedPaths.map { "delete \($0)" }
        return lines.joined(separator: "\n")
    }

    /// The plan and the deltas as JSON, for tools (`sitegen build --report FILE.json`).
    public func reportJSON() throws -> Data {
        struct Diagnostic: Encodable {
            var severity: String
            var file: String
            var line: Int?
            var column: Int?
            var message: String
        }
        struct Report: Encodable {
            var dryRun: Bool
            var succeeded: Bool
            var stopped: Bool
            var warnings: [String]
            var diagnostics: [Diagnostic]
            var sources: [String: Int]
            var rendered: [RenderedPage]
            var kept: Int
            var written: [String]
            var unchanged: Int
            var deleted: [String]
            var deltas: [ListingDelta]
            var rows: [String: Int]
            var listItems: [String: Int]
            var problems: [String]
            var stages: [String: Double]
        }
        func diagnostic(of message: String) -> Diagnostic {
            let (file, line, column, text) = Self.located(message)
            return Diagnostic(severity: "error", file: file, line: line, column: column, message: text)
        }
        func diagnostics(_ errors: [SourceError], _ severity: String) -> [Diagnostic] {
            errors.flatMap(\.all).map { Diagnostic(severity: severity, file: $0.file, line: $0.line, column: $0.column, message: $0.reason) }
        }
        let report = Report(
            dryRun: dryRun, succeeded: succeeded, stopped: stoppedBy != nil, warnings: warnings.map(\.description),
            diagnostics: diagnostics(problems, "error") + (stoppedBy.map { [diagnostic(of: $0)] } ?? []) + diagnostics(warnings, "warning"),
            sources: ["read": sourcesRead, "sameBytes": sourcesSameBytes, "unchanged": sourcesUnchanged], rendered: rendered, kept: pagesKept, written: writtenPaths.sorted(), unchanged: pagesUnchanged,
            deleted: deletedPaths, deltas: deltas, rows: ["inserted": rowsInserted, "updated": rowsUpdated, "deleted": rowsDeleted],
            listItems: ["reused": listItemsReused, "rendered": listItemsRendered],
            problems: problems.map(\.description) + (stoppedBy.map { [$0] } ?? []), stages: Dictionary(stageSeconds.map { ($0.stage, $0.seconds) }) { $1 })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(report)
    }

    /// The file, line, column and message of an error printed as `file:line:column: message` (the file
    /// alone, or none, when it says less).
    static func located(_ message: String) -> (file: String, line: Int?, column: Int?, message: String) {
        let parts = message.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 2, !parts[0].isEmpty, !parts[0].contains(" ") || parts[0].contains("/") else { return ("", nil, nil, message) }
        let file = String(parts[0])
        guard let line = Int(parts[1]) else {
            return (file, nil, nil, String(message.dropFirst(file.count + 1)).trimmingCharacters(in: .whitespaces))
        }
        if parts.count >= 3, let column = Int(parts[2]) {
            return (file, line, column, parts.count == 4 ? String(parts[3]).trimmingCharacters(in: .whitespaces) : "")
        }
        let rest = parts.dropFirst(2).joined(separator: ":")
        return (file, line, nil, rest.trimmingCharacters(in: .whitespaces))
    }

    /// The one-paragraph report printed at the end of `sitegen build`.
    public var report: String {
        let stages = stageSeconds.map { "\($0.stage) \(String(format: "%.3f", $0.seconds))s" }.joined(separator: ", ")
        let verb = dryRun ? "would be " : ""
        let lines = [
            "pages: \(rendered.count) \(verb)rendered, \(pagesKept) kept; files: \(pagesWritten) \(verb)written, "
                + "\(pagesUnchanged) unchanged, \(pagesDeleted) \(verb)deleted",
            "rows: \(rowsInserted) inserted, \(rowsUpdated) updated, \(rowsDeleted) deleted; source files: \(sourcesRead) read\(sourcesSameBytes > 0 ? " (\(sourcesSameBytes) with the same bytes)" : ""), \(sourcesUnchanged) unchanged",
            "time: \(stages)",
        ]
        let fetches = urlsFetched + urlsNotModified + urlsFailed == 0 ? []
            : ["URLs: \(urlsFetched) fetched, \(urlsNotModified) unchanged (304), \(urlsFailed) failed"]
        return (lines.prefix(2) + fetches + lines.suffix(1)).joined(separator: "\n")
    }

    /// The line a `--drafts` build prints on standard error, so that its output is not deployed by mistake.
    public var draftsLine: String? {
        drafts.map { "including \($0) draft\($0 == 1 ? "" : "s") (--drafts): build without --drafts for the site you publish" }
    }

    /// The last line of a build with problems, printed with its messages (on standard error).
    public var failureLine: String? {
        problems.isEmpty ? nil : "FAILED: \(problems.count) problem(s); see the messages above"
    }
}
