import Foundation
import SiteBuild

/// The loop of `sitegen watch` and `sitegen serve`: a first build, then one build per batch of changes to the
/// site's `content/`, `Templates/` and `sitegen.yml`, until `stop()`.
///
/// ```swift
/// let session = try WatchSession(builder: SiteBuilder(root: site))
/// session.run { report in print(report.line) }   // returns after session.stop()
/// ```
public final class WatchSession: @unchecked Sendable {
    /// The folders (recursively) and files of a site whose changes rebuild it, relative to the site.
    public static let watchedFolders = ["content", "Templates"]
    /// The files at the top of a site whose changes rebuild it.
    public static let watchedFiles = ["sitegen.yml"]

    /// The watcher, started when the session is made so that no change during the first build is missed.
    public let watcher: FileWatcher
    private let rebuilder: Rebuilder

    /// Starts watching the site of `builder`; its output folder and store folder are never watched.
    public init(builder: SiteBuilder, quietPeriod: Double = 0.1, maximumDelay: Double = 1.0) throws {
        rebuilder = Rebuilder(builder: builder)
        watcher = try FileWatcher(FileWatcher.Configuration(
            root: builder.root, folders: Self.watchedFolders, files: Self.watchedFiles,
            ignoredFolders: [builder.outputDirectory, builder.storePath.deletingLastPathComponent()],
            quietPeriod: quietPeriod, maximumDelay: maximumDelay))
    }

    /// Builds the site once, as the first build of a watch does.
    public func buildOnce(changedPaths: [String] = []) -> RebuildReport {
        rebuilder.rebuild(changedPaths: changedPaths)
    }

    /// Builds once per batch of changes, telling `report` about each, until `stop()`; throws only when the watch
    /// itself breaks (inotify), never for a failed build.
    public func watch(report: (RebuildReport) -> Void) throws {
        while let changed = try watcher.nextBatch() {
            report(rebuilder.rebuild(changedPaths: changed))
        }
    }

    /// The first build, then `watch(report:)`.
    public func run(report: (RebuildReport) -> Void) throws {
        report(buildOnce())
        try watch(report: report)
    }

    /// Ends the watch after the build under way, if any; safe from any thread.
    public func stop() {
        watcher.stop()
    }
}
