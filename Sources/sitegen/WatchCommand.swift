import ArgumentParser
import Foundation
import SiteBuild
import SiteWatch

/// `sitegen watch`: builds the site, then builds it again each time its sources, templates or configuration change.
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Build the site, then rebuild it whenever its sources (content/ and the folders sitegen.yml names), Templates/ or sitegen.yml change.",
        discussion: """
            Changes are collected until 100 ms pass without one (at most a second), then built in one go; each \
            build prints one line: what changed, the time and the pages written. Only changed pages are rendered \
            again. A failing build prints its errors and the watch goes on until the next save. The output folder, \
            .sitegen/ and editors' swap and backup files are ignored. Ctrl-C stops it (status 0).
            """
    )

    @OptionGroup var site: SiteOptions

    @Flag(help: "Render every page in the first build, whatever the last build left (after editing or deleting files in the output folder by hand).")
    var full = false

    func validate() throws {
        try site.validate()
    }

    func run() throws {
        try site.checkOutputFolder()
        let session = try WatchSession(builder: site.builder(), offline: site.offline)
        _ = try TerminationSignals { _ in stopWatching(session) }
        if session.anotherWatchesTheSite {
            printError("warning: another sitegen watch or serve is already watching this site: each change will be built by both")
        }
        var draftsSaid: Int?
        try session.run(fullFirstBuild: full) { report in
            printReport(report)
            sayDrafts(of: report, said: &draftsSaid)
            // Ctrl-C during the first build: it was the last, and nothing is watched.
            if report.isFirst && !session.isStopping {
                printLine("watching \(session.watchedNames) for changes (Ctrl-C to stop)")
            }
        }
    }
}

/// The site folder and output folder options that `build`, `watch` and `serve` share.
struct SiteOptions: ParsableArguments {
    @Option(name: .customLong("site"), help: ArgumentHelp("The site folder, holding sitegen.yml.", valueName: "folder"))
    var site: String = "."

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the pages (default: output/ in the site folder).", valueName: "folder"))
    var output: String?

    @Flag(help: "Never touch the network: URL sources load the copies the store kept, and are not fetched every refresh: interval.")
    var offline = false

    @Flag(help: SiteOptions.draftsHelp)
    var drafts = false

    /// What `--drafts` does, as `build`, `watch` and `serve` say it.
    static let draftsHelp = ArgumentHelp("Publish drafts too (front matter draft: true or published: false), each marked as a draft: "
                                         + "to preview them, not to deploy.")

    func validate() throws {
        try Self.validate(site: site, output: output)
    }

    /// Checks a site folder and output folder given on the command line (`build` has options of its own).
    static func validate(site: String, output: String?) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: site, isDirectory: &isFolder), isFolder.boolValue else {
            throw ValidationError("no site folder at '\(site)'; pass the folder that holds sitegen.yml with --site")
        }
        // An unset variable (`-o "$DEPLOY_DIR"`) would write the pages into the folder the command runs in.
        if output?.isEmpty == true { throw ValidationError("--output needs a folder, and it was given an empty one (an unset variable?)") }
    }

    /// Stops the command (exit status 2) when the output folder cannot hold the site's pages: a watch would
    /// otherwise try again every few seconds what no save can fix.
    func checkOutputFolder() throws {
        do {
            try builder().checkOutputFolder()
        } catch {
            printError("error: \(error)")
            throw BuildCommand.stoppedStatus
        }
    }

    /// A builder for the site, showing load and render progress of long builds on standard error.
    func builder() -> SiteBuilder {
        var builder = SiteBuilder(root: URL(fileURLWithPath: site, isDirectory: true),
                                  outputDirectory: output.map { URL(fileURLWithPath: $0, isDirectory: true) })
        let progress = ProgressLine()
        builder.onLoadProgress = { progress.show($0.line, elapsed: $0.elapsed, finished: $0.finished, verb: "loading") }
        builder.onRenderProgress = { progress.show($0.line, elapsed: $0.elapsed, finished: $0.finished, verb: "rendering") }
        builder.onPublishProgress = { progress.show($0.line, elapsed: $0.elapsed, finished: $0.finished, verb: "publishing") }
        builder.onWaitingForAnotherBuild = { printError("waiting for another sitegen building this site to finish") }
        builder.includesDrafts = drafts
        return builder
    }
}

/// Ends a watch: the first signal lets the build under way finish; a second one, during a long build, exits at once
/// (a build cut short is finished by the next one, so nothing is lost).
func stopWatching(_ session: WatchSession) {
    if stopRequests.increment() > 1 {
        // The build's pages are in temporary files beside their places and the store's change is not committed:
        // the next build finishes the job, as after a build that was killed.
        printError("\nstopped during a build: the next build finishes what it left")
        _exit(130)
    }
    // A build still waiting for another process's build has done nothing to finish.
    if SiteBuilder.isWaitingForAnotherBuild {
        printError("\nstopped while waiting for another sitegen's build; nothing of this one had begun")
        exit(0)
    }
    if session.isBuilding {
        printError("\nstopping once the build under way is done (Ctrl-C again to stop now)")
    }
    session.stop()
}

private let stopRequests = SignalCounter()

/// Counts termination signals; they arrive on a dispatch queue, so the count is behind a lock.
final class SignalCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func increment() -> Int {
        lock.withLock {
            count += 1
            return count
        }
    }
}

/// Prints a build's warnings and errors on standard error and its one-line summary on standard output.
func printReport(_ report: RebuildReport) {
    for warning in report.warnings { printError("warning: \(warning)") }
    for error in report.errors { printError("error: \(error)") }
    printLine(timestamp() + " " + report.line)
    // For measuring a watch (scripts/bench-ab): each stage's time.
    if showsStageTimes, let stages = report.summary?.stageSeconds {
        printLine("  stages: " + stages.map { "\($0.stage) \(String(format: "%.1f", $0.seconds * 1000)) ms" }.joined(separator: ", "))
    }
}

/// Says on standard error how many drafts a `--drafts` build published, unless that is the number `said` last:
/// at a watch's first build, and whenever a save changes it.
func sayDrafts(of report: RebuildReport, said: inout Int?) {
    guard let summary = report.summary, let drafts = summary.drafts, drafts != said, let line = summary.draftsLine else { return }
    said = drafts
    printError(line)
}

/// Whether a watch prints each build's stage times (`SITEGEN_STAGE_TIMES=1`).
private let showsStageTimes = ProcessInfo.processInfo.environment["SITEGEN_STAGE_TIMES"] == "1"

/// Prints a line on standard output at once, so a log or a pipe sees each build when it happens.
func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

private func timestamp() -> String {
    var now = time(nil)
    var parts = tm()
    localtime_r(&now, &parts)
    return String(format: "[%02d:%02d:%02d]", parts.tm_hour, parts.tm_min, parts.tm_sec)
}
