import Foundation
import SiteSources
import SiteStore

/// What `sitegen parse` and `sitegen sources` show: one source file as sitegen reads it, and the
/// store's record of every source — without changing the store.
public struct SourceInspector {
    /// The site folder (`sitegen.yml` there, when present, gives a file's declared types).
    public let root: URL

    /// Inspects sources of the site at `root`.
    public init(root: URL) {
        self.root = root.standardizedFileURL
    }

    /// The file at `path` as JSON, and whether it was usable (a feed or record file that could be read).
    public func parse(_ path: String) -> (report: JSONValue, usable: Bool) {
        parse(path, keepingRows: true)
    }

    /// `parse(_:)`, or, without `keepingRows`, a report of how many rows a record file declared by a
    /// collection has (`rowCount`) instead of the rows: read as a build reads it, a row at a time, so a
    /// million-row file is counted in the memory of a few.
    public func parse(_ path: String, keepingRows: Bool) -> (report: JSONValue, usable: Bool) {
        let (report, usable) = parse(path, rows: keepingRows ? .kept : .counted)
        return (report ?? .null, usable)
    }

    /// `parse(_:).report` as pretty JSON handed to `write` piece by piece, and whether the file was usable.
    /// A record file a collection declares is written a row at a time as it is read, so a million rows
    /// take the memory of a few; the bytes are those of `parse(_:).report.serialized()`. A file that fails
    /// after rows were written ends with the rows read so far and its errors.
    public func writeJSON(of path: String, to write: (String) -> Void) -> Bool {
        let (report, usable) = withoutActuallyEscaping(write) { parse(path, rows: .streamed($0)) }
        if let report { write(report.serialized()) }
        return usable
    }

    /// What `parse` does with a declared record file's rows.
    private enum RowHandling {
        case kept, counted
        /// Written as JSON by the function as they are read; the report returned is nil once any output is.
        case streamed((String) -> Void)
    }

    private func parse(_ path: String, rows handling: RowHandling) -> (report: JSONValue?, usable: Bool) {
        let url = URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL
        let display = path
        let (collection, timeZone, configProblem) = declaringCollection(of: url)
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), isFolder.boolValue {
            return (.object([("file", .string(display)), ("warnings", .array([])),
                             ("errors", .array([problem(SourceError(file: display, reason: "is a folder; pass one source file"))]))]), false)
        }
        do {
            switch collection?.kind ?? Self.kind(of: url) {
            case .feed:
                let document = FeedSource.asLoaded(try FeedParser(file: display).parse(Data(contentsOf: url)), file: display)
                return (feedReport(document), true)
            case let kind:
                guard let collection else { return try untypedReport(url, kind: kind, display: display, configProblem: configProblem) }
                let source = CollectionLoader.source(for: collection, at: .url(url), displayName: display, timeZone: timeZone)
                switch handling {
                case .kept:
                    let result = try source.read()
                    return (recordsReport(kind: kind.rawValue, collection: collection.name, result: result), true)
                case .counted:
                    var input = try SourceInput(contentsOf: url, displayName: display)
                    var count = 0
                    let warnings = try source.read(&input) { _ in count += 1 }
                    return (.object([("kind", .string(kind.rawValue)), ("collection", .text(collection.name)), ("rowCount", .integer(count)),
                                     ("warnings", .array(warnings.map(problem))), ("errors", .array([]))]), true)
                case .streamed(let write):
                    return (nil, try streamRecords(source, from: url, kind: kind.rawValue, collection: collection.name, display: display, to: write))
                }
            }
        } catch let error as SourceError {
            return (.object([("file", .string(display)), ("warnings", .array([])), ("errors", .array(error.all.map(problem)))]), false)
        } catch {
            return (.object([("file", .string(display)), ("warnings", .array([])),
                             ("errors", .array([problem(SourceError(file: display, reason: "cannot be read: \(error.localizedDescription)"))]))]), false)
        }
    }

    /// The walk of `pattern`, which never enters the default output folder, as a build's never enters its own.
    private func glob(_ pattern: String) -> SourceGlob {
        var glob = SourceGlob(pattern: pattern)
        glob.skipping = root.appendingPathComponent("output").standardizedFileURL.path
        return glob
    }

    /// Every collection with its source files, row counts and last load status.
    public func sources() throws -> JSONValue {
        let config = try SiteConfig(contentsOf: root.appendingPathComponent("sitegen.yml"), displayName: "sitegen.yml")
        let storePath = root.appendingPathComponent(".sitegen/store.sqlite")
        let statuses = FileManager.default.fileExists(atPath: storePath.path) ? try SiteStore(path: storePath.path).sourceStatuses() : []
        return .array(config.collections.map { collection in
            // URL sources (named, or by an OPML list) are listed as the store knows them.
            let urls = statuses.filter { $0.collection == collection.name && RemoteSource.isURL($0.path) }.map(\.path)
            let patterns = collection.sources.filter { !RemoteSource.isURL($0) && !(collection.kind == .feed && RemoteSource.isSubscriptionList($0)) }
            let files = patterns.flatMap { glob($0).files(under: root) } + urls
            let entries: [JSONValue] = files.map { file in
                let status = statuses.first { $0.path == file && $0.collection == collection.name }
                return .object([("path", .string(file)), ("status", .string(status?.status ?? "not loaded")),
                                ("rows", .integer(status?.rows ?? 0)), ("message", .text(status?.message))])
            }
            let rows = statuses.filter { $0.collection == collection.name }.map(\.rows).reduce(0, +)
            return .object([("collection", .string(collection.name)), ("kind", .string(collection.kind.rawValue)),
                            ("rows", .integer(rows)), ("sources", .array(entries))])
        })
    }

    /// The rows the store holds for `collection`, in load order, each with its key and fields.
    public func dump(_ collection: String) throws -> JSONValue {
        var rows: [JSONValue] = []
        try dump(collection) { rows.append($0) }
        return .array(rows)
    }

    /// Hands `body` each row the store holds for `collection`, in load order, as `dump(_:)` lists them: a
    /// million rows are printed one at a time, not gathered first (1.3 GB for a 61 MB CSV's).
    public func dump(_ collection: String, each body: (JSONValue) throws -> Void) throws {
        let config = try SiteConfig(contentsOf: root.appendingPathComponent("sitegen.yml"), displayName: "sitegen.yml")
        guard let declared = config.collection(named: collection) else {
            throw ConfigError(file: "sitegen.yml", reason: "no collection named '\(collection)'; collections: "
                + config.collections.map(\.name).joined(separator: ", "))
        }
        let store = try SiteStore(path: root.appendingPathComponent(".sitegen/store.sqlite").path)
        guard try store.database.tableExists(collection) else { return }
        // A field declared since the last build has no column yet: it shows as null.
        let stored = Set(try store.database.fetchAll("SELECT name FROM pragma_table_info(?)", [.text(collection)]).compactMap { $0["name"]?.stringValue })
        let fields = declared.fields.filter { stored.contains($0.name) }
        let columns = ["_key", "_source", "_line"] + fields.map(\.name)
        let statement = try store.database.makeStatement(
            "SELECT " + columns.map(quoteIdentifier).joined(separator: ", ") + " FROM \(quoteIdentifier(collection)) ORDER BY _id")
        try statement.forEachRow { row in
            var members: [(key: String, value: JSONValue)] = [("key", .text(row.string(at: 0))), ("source", .text(row.string(at: 1))),
                                                             ("line", json(row.value(at: 2)))]
            for field in declared.fields {
                let value = fields.firstIndex { $0.name == field.name }.map { json(row.value(at: $0 + 3)) } ?? .null
                let items = value.string.map(StoredList.decode) ?? []
                members.append((field.name, field.type == .list ? .array(items.map(JSONValue.string)) : value))
            }
            try body(.object(members))
        }
    }

    // MARK: Reports

    private func feedReport(_ document: FeedDocument) -> JSONValue {
        .object([
            ("kind", .string(document.kind.rawValue)), ("title", .text(document.title)), ("link", .text(document.link)),
            ("items", .array(document.items.map { item in
                .object([
                    ("id", .string(item.id)), ("title", .text(item.title)), ("link", .text(item.link)),
                    ("published", .text(item.published.map(FeedDate.rfc3339))), ("updated", .text(item.updated.map(FeedDate.rfc3339))),
                    ("author", .text(item.author)), ("summary", .text(item.summary)), ("content", .text(item.content)),
                    ("categories", .array(item.categories.map(JSONValue.string))),
                    ("enclosures", .array(item.enclosures.map { enclosure in
                        .object([("url", .string(enclosure.url)), ("type", .text(enclosure.type)),
                                 ("length", enclosure.length.map { .number(Double($0), integer: $0) } ?? .null)])
                    })),
                ])
            })),
            ("warnings", .array(document.warnings.map(problem))), ("errors", .array([])),
        ])
    }

    private func recordsReport(kind: String, collection: String?, result: SourceResult) -> JSONValue {
        .object([
            ("kind", .string(kind)), ("collection", .text(collection)), ("rows", .array(result.records.map(rowJSON))),
            ("warnings", .array(result.warnings.map(problem))), ("errors", .array([])),
        ])
    }

    private func rowJSON(_ record: Record) -> JSONValue {
        .object([("key", .string(record.key)), ("line", .integer(record.line))] + record.fields.keys.sorted().map { ($0, fieldJSON(record.fields[$0]!)) })
    }

    /// `recordsReport` written as the rows are read. Before the first row nothing is written, so a file
    /// that cannot be opened or fails at once throws for the usual error report; after it, an error
    /// closes the rows and is written as the report's errors (false: the file is unusable).
    private func streamRecords(_ source: any Source, from url: URL, kind: String, collection: String, display: String,
                               to write: (String) -> Void) throws -> Bool
    {
        var input = try SourceInput(contentsOf: url, displayName: display)
        let head = "{\n  \"kind\": \(JSONValue.string(kind).serialized(indent: 1)),\n  \"collection\": \(JSONValue.string(collection).serialized(indent: 1)),\n  \"rows\": "
        var written = 0
        var warnings: [SourceError] = []
        var errors: [SourceError] = []
        do {
            warnings = try source.read(&input) { record in
                write((written == 0 ? head + "[\n    " : ",\n    ") + rowJSON(record).serialized(indent: 2))
                written += 1
            }
        } catch {
            guard written > 0 else { throw error }
            errors = error.all
        }
        write((written == 0 ? head + "[]" : "\n  ]") + ",\n  \"warnings\": " + JSONValue.array(warnings.map(problem)).serialized(indent: 1)
            + ",\n  \"errors\": " + JSONValue.array(errors.map(problem)).serialized(indent: 1) + "\n}")
        return errors.isEmpty
    }

    /// A record file no collection declares (or whose `sitegen.yml` could not be read, which `configProblem`
    /// says): its rows as they are, every value as text.
    private func untypedReport(_ url: URL, kind: CollectionConfig.Kind, display: String, configProblem: SourceError?) throws
        -> (report: JSONValue, usable: Bool)
    {
        var rows: [JSONValue] = []
        if let head = FileHandle(forReadingAtPath: url.path).flatMap({ try? $0.read(upToCount: 64) }), isUTF16(Array(head)) {
            throw SourceError(file: display, line: 1, reason: "is UTF-16 text, not UTF-8; save the file as UTF-8")
        }
        switch kind {
        case .csv:
            let (header, data) = try CSVReader(file: display).read(String(decoding: Data(contentsOf: url), as: UTF8.self))
            rows = data.map { row in .object([("line", .integer(row.line))] + zip(header, row.fields).map { ($0, .string($1)) }) }
        case .json, .ndjson:
            let bytes = Array(try Data(contentsOf: url))
            if kind == .ndjson {
                for (index, line) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated()
                where line.contains(where: { $0 > 0x20 }) {
                    var parser = JSONParser(bytes: Array(line), line: index + 1)
                    do { rows.append(try parser.parseDocument()) } catch {
                        throw SourceError(file: display, line: error.line, column: error.column, reason: "not valid JSON: \(error.reason)")
                    }
                }
            } else {
                var parser = JSONParser(bytes: bytes)
                do { rows = try parser.parseDocument().array ?? [] } catch {
                    throw SourceError(file: display, line: error.line, column: error.column, reason: "not valid JSON: \(error.reason)")
                }
            }
        case .markdown:
            let document = try FrontMatterDocument(parsing: String(decoding: Data(contentsOf: url), as: UTF8.self), file: display)
            var members: [(key: String, value: JSONValue)] = [("slug", .string(url.deletingPathExtension().lastPathComponent))]
            for key in document.fields.keys.sorted() {
                switch document.fields[key]! {
                case .text(let text): members.append((key, .string(text)))
                case .list(let items): members.append((key, .array(items.map(JSONValue.string))))
                case .null: members.append((key, .null))
                }
            }
            members.append(("body", .string(document.body)))
            rows = [.object(members)]
        case .opml:
            let list = try SubscriptionList(data: Data(contentsOf: url), file: display)
            rows = list.feeds.map { feed in
                .object([("title", feed.title.map(JSONValue.string) ?? .null), ("feedURL", .string(feed.url)),
                         ("siteURL", feed.siteURL.map(JSONValue.string) ?? .null)])
            }
        case .feed:
            break
        }
        return (.object([("kind", .string(kind.rawValue)), ("collection", .null), ("rows", .array(rows)),
                         ("warnings", .array(configProblem.map { [problem($0)] } ?? [])), ("errors", .array([]))]), true)
    }

    private func problem(_ error: SourceError) -> JSONValue {
        .object([("line", error.line.map { .integer($0) } ?? .null), ("column", error.column.map { .integer($0) } ?? .null),
                 ("message", .string(error.reason))])
    }

    private func fieldJSON(_ value: FieldValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .text(let text): return .string(text)
        case .integer(let number): return .number(Double(number), integer: number)
        case .real(let number): return .number(number, integer: nil)
        case .bool(let flag): return .bool(flag)
        case .list(let items): return .array(items.map(JSONValue.string))
        }
    }

    private func json(_ value: DatabaseValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .integer(let number): return .number(Double(number), integer: number)
        case .real(let number): return .number(number, integer: nil)
        case .text(let text): return .string(text)
        case .blob(let bytes): return .string(Data(bytes).base64EncodedString())
        }
    }

    // MARK: Finding the file's collection

    /// The collection whose sources include `url`, or why none could be known: a `sitegen.yml` that is
    /// there but cannot be read types no file, and the file's rows are shown as text with that said.
    private func declaringCollection(of url: URL) -> (collection: CollectionConfig?, timeZone: TimeZone?, configProblem: SourceError?) {
        let configURL = root.appendingPathComponent("sitegen.yml")
        let config: SiteConfig
        do {
            config = try SiteConfig(contentsOf: configURL, displayName: "sitegen.yml")
        } catch {
            guard FileManager.default.fileExists(atPath: configURL.path) else { return (nil, nil, nil) }
            return (nil, nil, SourceError(file: url.lastPathComponent, reason: "shown untyped (every value as text): sitegen.yml has an error: \(error)"))
        }
        let rootPath = root.path.hasSuffix("/") ? root.path : root.path + "/"
        guard url.path.hasPrefix(rootPath) else { return (nil, nil, nil) }
        let relative = String(url.path.dropFirst(rootPath.count))
        return (config.collections.first { collection in
            collection.sources.contains { glob($0).files(under: root).contains(relative) }
        }, config.timeZone, nil)
    }

    /// The kind a file's name (and, for `.json`, its first character) suggests.
    static func kind(of url: URL) -> CollectionConfig.Kind {
        switch url.pathExtension.lowercased() {
        case "csv": return .csv
        case "ndjson", "jsonl": return .ndjson
        case "md", "markdown": return .markdown
        case "opml": return .opml
        case "json":
            let first = (try? Data(contentsOf: url))?.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
            return first == UInt8(ascii: "{") ? .feed : .json
        default: return .feed
        }
    }
}
