import ArgumentParser
import Foundation
import SiteBuild
import SiteSources

/// `sitegen parse FILE`: what sitegen reads from one source file, without touching the store.
struct ParseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "Show what sitegen reads from one source file, without touching the store.",
        discussion: """
            Feeds (RSS, Atom, JSON Feed) are shown item by item; record files (CSV, JSON, NDJSON, Markdown) row by \
            row, typed as sitegen.yml declares them when a collection's sources include the file. Exit status 0 when \
            the file was read (even with warnings), 1 when it is unusable.
            """
    )

    @Argument(help: ArgumentHelp("The source file.", valueName: "file"))
    var file: String

    @Flag(help: "Print the result as JSON.")
    var json = false

    @Option(name: .customLong("site"), help: ArgumentHelp("The site folder whose sitegen.yml declares the file's types.", valueName: "folder"))
    var site: String = "."

    func run() throws {
        // A file a collection declares is read a row at a time either way: counted for the summary, and
        // printed as it is read for --json.
        let inspector = SourceInspector(root: URL(fileURLWithPath: site, isDirectory: true))
        let usable: Bool
        if json {
            usable = inspector.writeJSON(of: file) { print($0, terminator: "") }
            print()
        } else {
            let report: JSONValue
            (report, usable) = inspector.parse(file, keepingRows: false)
            printSummary(report)
        }
        if !usable { throw ExitCode.failure }
    }

    private func printSummary(_ report: JSONValue) {
        for error in report["errors"]?.array ?? [] { printError("error: \(file)\(location(error)): \(error["message"]?.string ?? "")") }
        if let kind = report["kind"]?.string {
            if let items = report["items"]?.array {
                print("\(file): \(kind) feed \"\(report["title"]?.string ?? "")\", \(items.count) items")
                for item in items {
                    print("  \(item["published"]?.string ?? "(no date)")  \(item["title"]?.string ?? item["id"]?.string ?? "")")
                }
            } else {
                let rows = report["rowCount"]?.scalarText.flatMap { Int($0) } ?? report["rows"]?.array?.count ?? 0
                print("\(file): \(kind), \(rows) rows\(report["collection"]?.string.map { " (collection \($0))" } ?? "")")
            }
        }
        for warning in report["warnings"]?.array ?? [] { printError("warning: \(file)\(location(warning)): \(warning["message"]?.string ?? "")") }
    }

    private func location(_ problem: JSONValue) -> String {
        var text = ""
        if let line = problem["line"]?.scalarText { text += ":\(line)" }
        if let column = problem["column"]?.scalarText { text += ":\(column)" }
        return text
    }
}

/// `sitegen sources`: every collection's sources, row counts and last load status, or one collection's rows.
struct SourcesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sources",
        abstract: "List every collection's source files with row counts and last load status.",
        discussion: "Reads the store written by `sitegen build`; `--dump COLLECTION` prints the rows it holds."
    )

    @Flag(help: "Print the result as JSON.")
    var json = false

    @Option(help: ArgumentHelp("Print the rows the store holds for this collection (as JSON).", valueName: "collection"))
    var dump: String?

    @Option(name: .customLong("site"), help: ArgumentHelp("The site folder, holding sitegen.yml.", valueName: "folder"))
    var site: String = "."

    func validate() throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: site, isDirectory: &isFolder), isFolder.boolValue else {
            throw ValidationError("no site folder at '\(site)'; pass the folder that holds sitegen.yml with --site")
        }
    }

    func run() throws {
        let inspector = SourceInspector(root: URL(fileURLWithPath: site, isDirectory: true))
        do {
            if let dump {
                // As `dump(_:).serialized()` prints the array, a row at a time.
                var count = 0
                try inspector.dump(dump) { row in
                    print((count == 0 ? "[\n  " : ",\n  ") + row.serialized(indent: 1), terminator: "")
                    count += 1
                }
                print(count == 0 ? "[]" : "\n]")
                return
            }
            let collections = try inspector.sources()
            if json {
                print(collections.serialized())
                return
            }
            for collection in collections.array ?? [] {
                print("\(collection["collection"]?.string ?? "") (\(collection["kind"]?.string ?? "")): \(collection["rows"]?.scalarText ?? "0") rows")
                for source in collection["sources"]?.array ?? [] {
                    let message = source["message"]?.string.map { " — \($0)" } ?? ""
                    print("  \(source["path"]?.string ?? "")  \(source["status"]?.string ?? "")  \(source["rows"]?.scalarText ?? "0") rows\(message)")
                }
            }
        } catch let error as ConfigError {
            printError("error: \(error)")
            throw ExitCode.failure
        }
    }
}
