import ArgumentParser
import Foundation
import SiteServe

/// The `sitegen` command: a static site and report generator over SQLite and results controllers.
@main
struct Sitegen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sitegen",
        abstract: "Build static sites and reports from feeds and records.",
        discussion: """
            A site is a folder with a sitegen.yml, its sources under content/ and its Mustache templates under \
            Templates/. `sitegen build` loads the sources into .sitegen/store.sqlite and writes the pages to output/; \
            `sitegen watch` rebuilds on every change, and `sitegen serve` also serves output/ with live reload. \
            `sitegen new <folder>` makes a new site to start from.
            """,
        version: "0.1.0",
        subcommands: [NewCommand.self, BuildCommand.self, WatchCommand.self, ServeCommand.self, ParseCommand.self, SourcesCommand.self]
    )

    /// The fewest open files a build needs: its store connections (three files each), the lock, the files
    /// being written, and the runtime's own (libdispatch crashed, SIGILL, when it could not get one).
    static let fewestOpenFiles: rlim_t = 64

    /// Sets up the process's limits, then runs the command the arguments name.
    static func main() {
        // A file grown past `ulimit -f` fails its write (EFBIG), reported with its name, rather than the
        // signal killing the process without a word.
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit()
        if getrlimit(openFilesResource, &limit) == 0, limit.rlim_cur < 1_024 {
            var raised = limit
            raised.rlim_cur = min(limit.rlim_max, 1_024)
            if setrlimit(openFilesResource, &raised) == 0 { limit = raised }
            if limit.rlim_cur < fewestOpenFiles {
                FileHandle.standardError.write(Data(("error: sitegen needs at least \(fewestOpenFiles) open files, and this process may have "
                    + "\(limit.rlim_cur) (ulimit -n); raise the limit\n").utf8))
                Foundation.exit(2)
            }
        }
        main(nil)
    }
}

