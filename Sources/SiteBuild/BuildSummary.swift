import SiteSources

/// What a build did: pages written, unchanged and deleted, time per stage, and every problem found.
public struct BuildSummary: Sendable {
    /// Pages whose bytes changed (or are new).
    public var pagesWritten = 0
    /// Pages rendered to exactly the bytes already on disk.
    public var pagesUnchanged = 0
    /// Stale pages of removed records or pages, deleted.
    public var pagesDeleted = 0
    /// Source files read.
    public var sourcesRead = 0
    /// Source files skipped as unchanged since the last build.
    public var sourcesUnchanged = 0
    /// Rows inserted, updated and deleted in the store by this build's load.
    public var rowsInserted = 0, rowsUpdated = 0, rowsDeleted = 0
    /// Seconds spent in each stage, in order.
    public var stageSeconds: [(stage: String, seconds: Double)] = []
    /// Problems that failed a source or a page: the build's exit status is non-zero when there is any.
    public var problems: [SourceError] = []
    /// Problems that did not stop anything.
    public var warnings: [SourceError] = []

    /// Whether everything built.
    public var succeeded: Bool { problems.isEmpty }

    /// The one-paragraph report printed at the end of `sitegen build`.
    public var report: String {
        let stages = stageSeconds.map { "\($0.stage) \(String(format: "%.3f", $0.seconds))s" }.joined(separator: ", ")
        var lines = [
            "pages: \(pagesWritten) written, \(pagesUnchanged) unchanged, \(pagesDeleted) deleted",
            "rows: \(rowsInserted) inserted, \(rowsUpdated) updated, \(rowsDeleted) deleted; source files: \(sourcesRead) read, \(sourcesUnchanged) unchanged",
            "time: \(stages)",
        ]
        if !problems.isEmpty { lines.append("FAILED: \(problems.count) problem(s); see the messages above") }
        return lines.joined(separator: "\n")
    }
}
