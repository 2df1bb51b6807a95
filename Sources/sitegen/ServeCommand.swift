import ArgumentParser
import Dispatch
import Foundation
import SiteBuild
import SiteServe
import SiteWatch

/// `sitegen serve`: `sitegen watch` plus a development web server of the output folder that reloads open pages
/// after each build that wrote files.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Build, watch and serve the site on 127.0.0.1:8000, reloading open pages after each build.",
        discussion: """
            Builds the site, serves the output folder over HTTP and rebuilds on every change as `sitegen watch` \
            does; a build that wrote files tells every open page (through a script injected into HTML responses \
            and an event stream at /_sitegen/live) to reload. / and /dir/ serve index.html, /dir redirects to \
            /dir/; a site whose baseURL has a path (https://example.org/blog/) is served under it, as published. Anything else gets the site's 404.html (status 404). Nothing outside the output folder is ever \
            served: paths with .. or hidden segments, encoded slashes or NULs, and symbolic links leading out are \
            404. Listens on this machine only unless --host says otherwise. Ctrl-C stops it (status 0).
            """
    )

    @OptionGroup var site: SiteOptions

    @Flag(help: "Render every page in the first build, whatever the last build left (after editing or deleting files in the output folder by hand).")
    var full = false

    @Option(help: ArgumentHelp("The address to listen on; 0.0.0.0 makes the site reachable from other machines.", valueName: "address"))
    var host: String = SiteServer.defaultHost

    @Option(help: ArgumentHelp("The port to listen on; 0 picks a free one.", valueName: "port"))
    var port: UInt16 = SiteServer.defaultPort

    func validate() throws {
        try site.validate()
        guard SiteServer.isAddress(host) else { throw ValidationError(ServeError.invalidHost(host).description) }
    }

    func run() throws {
        try site.checkOutputFolder()
        let builder = site.builder()
        let session = try WatchSession(builder: builder, offline: site.offline)
        _ = try TerminationSignals { _ in stopWatching(session) }
        if session.anotherWatchesTheSite {
            printError("warning: another sitegen watch or serve is already watching this site: each change will be built by both")
        }
        // The port is taken first, so that one in use is said at once rather than after a long first build;
        // the address is printed once that build is done, so the first page opened finds the site there.
        let server: SiteServer
        let address: SiteServer.ListeningAddress
        SiteServer.raiseOpenFileLimit()
        do {
            server = try SiteServer(SiteServer.Configuration(outputDirectory: builder.outputDirectory, host: host, port: port,
                                                             basePath: basePath(of: builder) ?? "/"))
            server.onTrouble = { message in printError("error: \(message)") }
            address = try waitFor { try await server.start() }
        } catch let error as ServeError {
            printError("error: \(error)")
            throw ExitCode.failure
        }
        let first = session.firstBuild(full: full)
        printReport(first)
        var draftsSaid: Int?
        sayDrafts(of: first, said: &draftsSaid)
        showFailure(of: first, on: server)
        // Ctrl-C during the first build: it was the last, and nothing is served or watched.
        if session.isStopping {
            try waitFor { await server.stop() }
            return
        }
        var publication = first.summary?.publication
        printLine("serving \(address.url)\(server.basePath.dropFirst()) from \(builder.outputDirectory.path) with live reload (Ctrl-C to stop)")
        printLine("watching \(session.watchedNames) for changes")
        try session.watch { report in
            printReport(report)
            sayDrafts(of: report, said: &draftsSaid)
            // Before the reload: a page that reloads asks for the failure again as it reconnects.
            showFailure(of: report, on: server)
            // Pages link under baseURL's path: the site is served where its links lead.
            if let path = basePath(of: builder), path != server.basePath {
                server.basePath = path
                printLine("serving \(address.url)\(server.basePath.dropFirst()) (baseURL changed)")
            }
            // Every build that writes or deletes files moves the store's mark, whichever process made it (a
            // `build` in another terminal may have written the change this build then found done).
            if let summary = report.summary, summary.publication != publication {
                publication = summary.publication
                server.liveReload.reload()
            }
        }
        try waitFor { await server.stop() }
    }
}

/// Shows a failed build's errors over the open pages, or takes them away once a build succeeds.
private func showFailure(of report: RebuildReport, on server: SiteServer) {
    if report.errors.isEmpty { server.liveReload.clearFailure() } else { server.liveReload.showFailure(report.errors) }
}

/// The path of the site's `baseURL` (`/blog/`), when its `sitegen.yml` reads.
private func basePath(of builder: SiteBuilder) -> String? {
    (try? SiteConfig(contentsOf: builder.root.appendingPathComponent("sitegen.yml"), displayName: "sitegen.yml"))?.basePath
}

/// Runs `operation` on the concurrency pool and blocks this (non-async) thread until it returns.
private func waitFor<Value: Sendable>(_ operation: @escaping @Sendable () async throws -> Value) throws -> Value {
    let outcome = Outcome<Value>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { outcome.result = .success(try await operation()) } catch { outcome.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}

/// Carries a result from the task of `waitFor` to the waiting thread; the semaphore orders the two accesses.
private final class Outcome<Value>: @unchecked Sendable {
    var result: Result<Value, any Error>?
}
