import ArgumentParser
import Foundation
import SiteBuild
import SiteFetch
import SiteStore

/// `sitegen build`: loads the site's sources and writes its pages.
struct BuildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Load the site's sources and write its pages.",
        discussion: """
            Reads sitegen.yml in the site folder, loads every collection's sources into the store \
            (.sitegen/store.sqlite), renders listings and detail pages through the templates, and writes them \
            to the output folder. A bad source is reported with its file and line; the rest still builds, and \
            the exit status is 1.

            Exit status: 0, built; 1, built and published, but bad sources were left out (the store keeps their \
            last good rows); 2, stopped at an error (a template, sitegen.yml, the store, the output folder) with \
            nothing published; 64, a usage error.

            A build renders only the pages whose inputs (rows, templates, settings) changed since the last \
            one, and writes only the files whose bytes changed; the result is the same as a build from nothing.
            """
    )

    @Option(name: .customLong("site"), help: ArgumentHelp("The site folder, holding sitegen.yml.", valueName: "folder"))
    var site: String = "."

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the pages (default: output/ in the site folder).", valueName: "folder"))
    var output: String?

    @Flag(help: "Dry run: print which pages would be rendered, written and deleted, and why; change nothing.")
    var plan = false

    @Option(help: ArgumentHelp("Also write what was rendered (and why), written and deleted, and each listing's delta, as JSON "
                               + "('-': to standard output, and the summary to standard error).", valueName: "file.json"))
    var report: String?

    @Flag(help: "Render every page, whatever the last build left (after editing output/ by hand), from listings read afresh.")
    var full = false

    @Flag(help: "Never touch the network: URL sources load the copies the store kept from their last fetch.")
    var offline = false

    @Flag(help: SiteOptions.draftsHelp)
    var drafts = false

    func validate() throws {
        try SiteOptions.validate(site: site, output: output)
        // Found before the build rather than after it has published.
        if let report, !ReportFile.isStandardOutput(report), let problem = ReportFile.problem(writing: report) {
            throw ValidationError("--report \(report): \(problem)")
        }
    }

    /// Where the summary goes: standard output, unless the report does.
    private func printSummary(_ text: String) {
        if report.map(ReportFile.isStandardOutput) == true { printError(text) } else { print(text) }
    }

    func run() throws {
        let root = URL(fileURLWithPath: site, isDirectory: true)
        var builder = SiteBuilder(root: root, outputDirectory: output.map { URL(fileURLWithPath: $0, isDirectory: true) })
        let progress = ProgressLine()
        builder.onLoadProgress = { progress.show($0.line, elapsed: $0.elapsed, finished: $0.finished, verb: "loading") }
        builder.onRenderProgress = { progress.show($0.line, elapsed: $0.elapsed, finished: $0.finished, verb: "rendering") }
        builder.onPublishProgress = { progress.show($0.line, elapsed: $0.elapsed, finished: $0.finished, verb: "publishing") }
        builder.onWaitingForAnotherBuild = { printError("waiting for another sitegen building this site to finish") }
        builder.onFetchProgress = FetchProgressLine().show
        builder.includesDrafts = drafts
        let summary: BuildSummary
        do {
            var options = SiteBuilder.Options(dryRun: plan, full: full)
            options.network = offline ? .offline : .fetch
            summary = try builder.build(options: options)
        } catch let error as BuildError {
            // What the load reported before the build stopped is said first; a report says it stopped.
            var stopped = error.summary ?? BuildSummary()
            stopped.dryRun = plan
            stopped.stoppedBy = error.description
            for warning in stopped.warnings { printError("warning: \(warning)") }
            for problem in stopped.problems { printError("error: \(problem)") }
            printError("error: \(error)")
            // A template's mistake is no sign of a damaged store, and the check reads the whole file.
            if case .templates = error {} else if case .stopped(.templates, _) = error {} else { sayIfTheStoreIsDamaged(builder.storePath) }
            try writeReport(of: stopped)
            printError(Self.stoppedLine)
            throw Self.stoppedStatus
        } catch let error as ExitCode {
            throw error
        } catch {
            // Anything else (the store's disk full, a damaged store) is said as errors are, not by the
            // argument parser's `Error:`.
            printError("error: \(error)")
            sayIfTheStoreIsDamaged(builder.storePath)
            var stopped = BuildSummary()
            stopped.dryRun = plan
            stopped.stoppedBy = "\(error)"
            try writeReport(of: stopped)
            printError(Self.stoppedLine)
            throw Self.stoppedStatus
        }
        for warning in summary.warnings { printError("warning: \(warning)") }
        for problem in summary.problems { printError("error: \(problem)") }
        if let line = summary.draftsLine { printError(line) }
        if plan, !summary.plan.isEmpty { printSummary(summary.plan) }
        try writeReport(of: summary)
        printSummary(summary.report)
        if let failure = summary.failureLine { printError(failure) }
        if !summary.succeeded { throw ExitCode.failure }
    }

    /// The exit status of a build that stopped and published nothing (a template or configuration error),
    /// told apart from 1, a build that published what it could and left out bad sources.
    static let stoppedStatus = ExitCode(2)

    /// The last line of a build that stopped, as a build with bad sources ends with `FAILED: …`.
    static let stoppedLine = "FAILED: the build stopped at the error above"

    /// After a failed build, says so when the store is damaged (a disk fault, a copy cut short): every build
    /// fails on it, with SQLite's words for whatever it read first, and what to do is not in them.
    private func sayIfTheStoreIsDamaged(_ storePath: URL) {
        guard let damage = SiteStore.damage(at: storePath.path) else { return }
        let folder = storePath.deletingLastPathComponent().path
        printError("error: the store \(storePath.path) is damaged (\(damage)); move \(folder) away and build again: sitegen "
                   + "makes it again from the sources (files it made before that no page claims then stay in the output folder, and are listed)")
    }

    /// Writes `summary` as JSON to the `--report` file, if one was asked for.
    private func writeReport(of summary: BuildSummary) throws {
        guard let report else { return }
        do {
            try ReportFile.write(try summary.reportJSON(), to: report)
        } catch {
            printError("error: \(report): cannot write the report: \(error.localizedDescription)")
            throw ExitCode.failure
        }
    }
}

/// Where `--report` writes: a file replaced whole (through a temporary file and a rename, so a reader
/// never sees half of it), or, for what is not a regular file (`/dev/stdout`, a pipe, `>(jq …)`), the
/// bytes written into it; a link is followed, and what it leads to is replaced, not the link.
enum ReportFile {
    /// Why `path` cannot take a report, or nil: a folder that is not there or cannot be written in.
    static func problem(writing path: String) -> String? {
        let target = resolved(path)
        var status = stat()
        if stat(target, &status) == 0 {
            if (status.st_mode & S_IFMT) == S_IFDIR { return "is a folder" }
            if (status.st_mode & S_IFMT) != S_IFREG { return access(target, W_OK) == 0 ? nil : "cannot be written: \(String(cString: strerror(errno)))" }
        }
        let folder = (target as NSString).deletingLastPathComponent
        let shown = folder.isEmpty ? "." : folder
        var folderStatus = stat()
        guard stat(shown, &folderStatus) == 0, (folderStatus.st_mode & S_IFMT) == S_IFDIR else { return "there is no folder \(shown)" }
        return access(shown, W_OK) == 0 ? nil : "cannot write in \(shown): \(String(cString: strerror(errno)))"
    }

    /// Whether `path` names the process's own standard output, which the report then has to itself.
    static func isStandardOutput(_ path: String) -> Bool {
        ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"].contains(path)
    }

    /// Writes `data` to `path` (`-`: standard output).
    static func write(_ data: Data, to path: String) throws {
        if isStandardOutput(path) {
            FileHandle.standardOutput.write(data + Data("\n".utf8))
            return
        }
        // A descriptor's name (`/dev/fd/63` of `>(jq …)`, `/dev/stderr`) is written into, never replaced.
        let isDescriptorName = path.hasPrefix("/dev/") || path.hasPrefix("/proc/")
        let target = isDescriptorName ? path : resolved(path)
        var status = stat()
        if !isDescriptorName && (stat(target, &status) != 0 || (status.st_mode & S_IFMT) == S_IFREG) {
            try replaceFile(at: URL(fileURLWithPath: target), with: data)
            return
        }
        let descriptor = open(target, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: String(cString: strerror(errno))]) }
        defer { close(descriptor) }
        try FileHandle(fileDescriptor: descriptor).write(contentsOf: data)
    }

    /// `path` with its links followed (as far as they lead to something), relative to the working folder.
    private static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else {
            // A link to a file not there yet: the file is made where it leads, and the link stays.
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) else { return path }
            return target.hasPrefix("/") ? target : ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(target)
        }
        defer { free(real) }
        return String(cString: real)
    }
}

/// Writes a line to standard error, where messages go so that standard output stays the summary. On a
/// terminal the line starts by clearing the one the cursor is on: a progress line left without its end by
/// work that stopped would otherwise run into the message (`… 1 s lefterror: …`).
func printError(_ line: String, terminator: String = "\n") {
    FileHandle.standardError.write(Data(((standardErrorIsTerminal ? "\r\u{1B}[K" : "") + line + terminator).utf8))
}

/// Whether standard error is a terminal, looked at once.
let standardErrorIsTerminal = isatty(STDERR_FILENO) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb"

/// Shows load and render progress on standard error: one line rewritten in place on a terminal, a plain line every
/// five seconds otherwise (a log file should not fill with carriage returns).
final class ProgressLine {
    private let isTerminal = standardErrorIsTerminal
    private var lastPlainLine = 0.0

    func show(_ line: String, elapsed: Double, finished: Bool, verb: String) {
        if isTerminal {
            printError(verb + " " + line, terminator: finished ? "\n" : "")
        } else if finished || elapsed - lastPlainLine >= 5 || elapsed < lastPlainLine {
            lastPlainLine = finished ? 0 : elapsed
            printError(verb + " " + line)
        }
    }
}

/// Shows how the fetches of URL sources are going on standard error: rewritten in place on a terminal,
/// else a line every ten fetches and at the last. Told from the fetching threads.
final class FetchProgressLine: @unchecked Sendable {
    private let isTerminal = standardErrorIsTerminal
    private let lock = NSLock()

    @Sendable func show(_ progress: FetchProgress) {
        lock.withLock {
            let line = "fetching \(progress.finished)/\(progress.total) \(progress.url)"
            let last = progress.finished == progress.total
            if isTerminal {
                printError(line, terminator: last ? "\n" : "")
            } else if last || progress.finished % 10 == 0 {
                printError(line)
            }
        }
    }
}
