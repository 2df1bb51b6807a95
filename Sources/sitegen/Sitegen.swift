import ArgumentParser

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
}
