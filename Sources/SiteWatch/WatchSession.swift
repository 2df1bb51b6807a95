import Foundation
import SiteBuild

/// The loop of `sitegen watch` and `sitegen serve`: a first build, then one build per batch of changes to the
/// site's `content/`, `Templates/` and `sitegen.yml`, and to the folders its collections' sources are in, until
/// `stop()`.
///
/// ```swift
/// let session = try WatchSession(builder: SiteBuilder(root: site))
/// session.run { report in print(report.line) }   // returns after session.stop()
/// ```
public final class WatchSession: @unchecked Sendable {
    /// The folders (recursively) and files of every site whose changes rebuild it, relative to the site.
    public static let watchedFolders = ["content", "Templates"]
    /// The files at the top of every site whose changes rebuild it.
    public static let watchedFiles = ["sitegen.yml"]

    /// The watcher, started when the session is made so that no change during the first build is missed.
    public let watcher: FileWatcher
    private let rebuilder: Rebuilder

    /// Starts watching the site of `builder`; its output folder and store folder are never watched.
    public init(builder: SiteBuilder, quietPeriod: Double = 0.1, maximumDelay: Double = 1.0) throws {
        rebuilder = Rebuilder(builder: builder)
        let sources = Self.sourceFolders(of: builder.root)
        watcher = try FileWatcher(FileWatcher.Configuration(
            root: builder.root, folders: Self.watchedFolders + sources.folders, files: Self.watchedFiles + sources.files,
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
            // sitegen.yml may now read sources from somewhere new: watched before the build reads it, so that
            // files written there during the build are seen.
            let sources = Self.sourceFolders(of: rebuilder.builder.root)
            var unwatched: [String] = []
            do {
                try watcher.watch(folders: sources.folders, files: sources.files)
            } catch {
                unwatched.append("sitegen.yml: sources are read from \(sources.folders.joined(separator: ", ")), "
                                 + "but not all of them can be watched: \(error)")
            }
            var rebuilt = rebuilder.rebuild(changedPaths: changed)
            rebuilt.warnings += unwatched
            report(rebuilt)
        }
    }

    /// The first build, then `watch(report:)`.
    public func run(report: (RebuildReport) -> Void) throws {
        report(buildOnce())
        try watch(report: report)
    }

    /// Where the collections of the site at `root` read their files, as names (or patterns) of the folders and
    /// files directly in the site: a source pattern's first part. Sources outside the site are not watched;
    /// none are named while `sitegen.yml` does not load (the build says why).
    public static func sourceFolders(of root: URL) -> (folders: [String], files: [String]) {
        guard let config = try? SiteConfig(contentsOf: root.appendingPathComponent("sitegen.yml"), displayName: "sitegen.yml")
        else { return ([], []) }
        var folders: [String] = [], files: [String] = []
        for pattern in config.collections.flatMap(\.sources) {
            let parts = pattern.split(separator: "/").filter { $0 != "." }
            guard !pattern.hasPrefix("/"), let first = parts.first, first != ".." else { continue }
            if first.contains("**") {
                // Any depth from the top: every folder of the site, which the ignored ones (output, store) leave
                // out, and the files at the top that the last part names.
                folders.append("*")
                files.append(parts.last!.replacingOccurrences(of: "**", with: "*"))
            } else if parts.count == 1 {
                files.append(String(first))
            } else {
                folders.append(String(first))
            }
        }
        return (folders.filter { !watchedFolders.contains($0) }, files.filter { !watchedFiles.contains($0) })
    }

    /// What is watched, for a line such as `watching content/, Templates/, data/ and sitegen.yml for changes`.
    public var watchedNames: String {
        let names = watcher.configuration.folders.map { $0 + "/" } + watcher.configuration.files
        return names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " and " + names.last!
    }

    /// Ends the watch after the build under way, if any; safe from any thread.
    public func stop() {
        watcher.stop()
    }
}
