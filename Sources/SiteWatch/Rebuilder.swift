import Foundation
import SiteBuild

/// Runs one build of a site per batch of changes and describes how it went, never throwing: a watch outlives a
/// broken build and waits for the fix.
public struct Rebuilder {
    /// The build to run again each time.
    public var builder: SiteBuilder

    /// Prepares rebuilds with `builder` (its progress callbacks are kept).
    public init(builder: SiteBuilder) {
        self.builder = builder
    }

    /// Builds the site once; `changedPaths` (relative to the site) are what caused it, empty for a first build.
    /// `changedSources`, when given, are every file and folder changed since the last build that loaded
    /// (`RebuildReport.loaded`): only sources there are looked at (`SiteBuilder.Options.changedSources`).
    /// `full` renders every page, as `sitegen build --full` does.
    /// `network` says which URL sources are fetched first: those due, by default (a save fetches only a
    /// source new to `sitegen.yml` or past its `refresh:` interval).
    public func rebuild(changedPaths: [String] = [], changedSources: Set<String>? = nil, full: Bool = false,
                        verifiesOutput: Bool = false, network: SiteBuilder.NetworkUse = .whenDue) -> RebuildReport {
        let start = DispatchTime.now().uptimeNanoseconds
        var report = RebuildReport(changedPaths: changedPaths)
        do {
            var options = SiteBuilder.Options(full: full, changedSources: changedSources, verifiesOutput: verifiesOutput)
            options.network = network
            let summary = try builder.build(options: options)
            report.loaded = true
            report.summary = summary
            report.errors = summary.problems.map(\.description)
            report.warnings = summary.warnings.map(\.description)
        } catch {
            // BuildError names the file and reason; anything else (the store, the disk) is reported the same way.
            // A build that stopped after its load says what the load found too: the next one will not.
            let loaded = (error as? BuildError)?.summary
            report.loaded = loaded != nil
            report.failedOutsideTheSite = !Self.isTheSites(error)
            report.errors = (loaded?.problems.map(\.description) ?? []) + ["\(error)"]
            report.warnings = loaded?.warnings.map(\.description) ?? []
        }
        report.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return report
    }

    /// Whether `error` is in the site's own files (sitegen.yml, a template, a source), which a save fixes,
    /// rather than in the machine (the disk, the store, the output folder's permissions).
    static func isTheSites(_ error: any Error) -> Bool {
        switch error as? BuildError {
        case .config?, .templates?, .newFieldsFailed?: return true
        case .stopped(let inner, _)?: return isTheSites(inner)
        case .output?, .input?, nil: return false
        }
    }
}

/// What one build of a watch did: what triggered it, how long it took, what it wrote and what went wrong.
public struct RebuildReport: Sendable {
    /// The changed paths (relative to the site) that caused the build; empty for the first build.
    public var changedPaths: [String]
    /// The build's summary; nil when the build could not run at all (configuration, templates).
    public var summary: BuildSummary?
    /// Why the build failed, one message per problem, each naming its file.
    public var errors: [String] = []
    /// Problems that did not fail the build.
    public var warnings: [String] = []
    /// Wall-clock seconds the build took.
    public var seconds = 0.0
    /// Whether the build's load was committed: the store then holds the sources as the build found them.
    public var loaded = false
    /// Whether the build failed for the machine rather than a file of the site (a full disk, a store it
    /// may not write): no save fixes that, and a watch tries again.
    public var failedOutsideTheSite = false
    /// Whether it is the watch's first build (a retry or a check has no changed paths either).
    public var isFirst = false
    /// What made a build without changed paths, when it is neither the first nor a retry.
    public var cause: String?

    /// Describes a build caused by `changedPaths` that has not run yet.
    public init(changedPaths: [String]) {
        self.changedPaths = changedPaths
    }

    /// Whether the build ran and every source and page built.
    public var succeeded: Bool { summary != nil && errors.isEmpty }

    /// Whether the output folder changed, so open pages should reload.
    public var wroteFiles: Bool { (summary?.pagesWritten ?? 0) + (summary?.pagesDeleted ?? 0) > 0 }

    /// The one line a watch prints for this build, e.g.
    /// `content/a.csv changed: built in 0.012 s: 6 pages rendered, 386 kept; 4 files written, 3 unchanged, 0 deleted`.
    public var line: String {
        var cause = self.cause.map { $0 + ": " } ?? ""
        if !changedPaths.isEmpty {
            let shown = changedPaths.prefix(3).joined(separator: ", ")
            let more = changedPaths.count > 3 ? " and \(changedPaths.count - 3) more" : ""
            cause = shown + more + " changed: "
        } else if !isFirst && self.cause == nil {
            cause = "tried again: "
        }
        // A save's build takes milliseconds: under a second, to the millisecond.
        let time = String(format: seconds < 1 ? "%.3f s" : "%.2f s", seconds)
        guard let summary else {
            if failedOutsideTheSite {
                return cause + "build failed in \(time), not for a file of the site; trying again every \(Int(WatchSession.retryInterval)) s"
            }
            return cause + "build failed in \(time); fix it and save again"
        }
        let pages = "\(summary.renderedPages.count) pages rendered, \(summary.pagesKept) kept; "
            + "\(summary.pagesWritten) files written, \(summary.pagesUnchanged) unchanged, \(summary.pagesDeleted) deleted"
        if !errors.isEmpty { return cause + "built with \(errors.count) problem(s) in \(time): \(pages)" }
        return cause + "built in \(time): \(pages)"
    }
}
