import Foundation
import ResultsController
import SiteSources
import SiteRender
import Yams

/// A site as `sitegen.yml` declares it: settings, collections and listings.
public struct SiteConfig: Sendable {
    /// The site's name, shown in every page's title.
    public var title: String
    /// The absolute URL the site is published at, ending with `/`.
    public var baseURL: String
    /// Whether raw HTML in Markdown (and HTML bodies from feeds) is published as is.
    public var allowsRawHTML: Bool
    /// Whether fenced code is highlighted on the server (`highlight:`, on unless `false`).
    public var highlightsCode = true
    /// What highlights fenced code: nil when `highlight: false`, or when the library's language definitions
    /// cannot be read (then the build warns once, and pages are as with `highlight: false`).
    public var codeHighlighter: CodeHighlighter? {
        highlightsCode && CodeHighlighter.shared.problem == nil ? CodeHighlighter.shared : nil
    }
    /// Collections in declaration order.
    public var collections: [CollectionConfig]
    /// Listings in declaration order.
    public var listings: [ListingConfig]
    /// Folders (relative to the site) whose files are published as they are, at the same paths under the
    /// output folder: images, style sheets, `CNAME`; `static` unless `sitegen.yml` names others.
    public var staticFolders = ["static"]
    /// Whether `sitegen.yml` named the static folders: then each must be there (the default `static/` may not).
    public var staticFoldersNamed = false
    /// Where `static:` is written, for errors about the folders it names.
    public var staticMark: ConfigMark?
    /// The zone the date helpers show a `datetime` in (`timeZone:`, an IANA name such as `Europe/Paris`);
    /// UTC when nil. Datetimes are stored and sorted in UTC whatever it is.
    public var timeZone: TimeZone?
    /// The site as templates' helpers see it.
    public var templateSite: TemplateText.Site {
        TemplateText.Site(baseURL: baseURL, allowsRawHTML: allowsRawHTML, timeZone: timeZone, basePath: basePath, highlighter: codeHighlighter)
    }
    /// The site's own values for templates (`params:` in `sitegen.yml`, as Hugo's), read as `{{site.params.author}}`.
    public var params: [String: ParamValue] = [:]
    /// The fingerprint of `params` as written: a change renders every page again, as a title's does.
    var paramsFingerprint: Int64 = 0
    /// How errors name the configuration file.
    public var file: String

    /// Why `baseURL` (ending with `/`) is neither a full URL (`https://host/…`) nor a path from the host's
    /// root (`/project/`), with what to write instead; nil when it is one of them.
    static func relativeBaseURLProblem(_ baseURL: String) -> String? {
        if baseURL.hasPrefix("//") { return "baseURL '\(baseURL)' has no scheme: write https:\(baseURL)" }
        if baseURL.hasPrefix("/") { return nil }
        if let url = URL(string: baseURL), let scheme = url.scheme, !(url.host ?? "").isEmpty || scheme == "file", baseURL.contains("://") {
            return nil
        }
        let first = baseURL.prefix { $0 != "/" }
        // A host (`user.github.io`, `localhost:4000`) wants a scheme; a scheme with its slashes wrong, a full URL.
        let hostAndPort = baseURL.range(of: "^[^:/]+:[0-9]+(/|$)", options: .regularExpression) != nil
        let written = !hostAndPort && baseURL.range(of: "^[A-Za-z][A-Za-z0-9+.-]*:", options: .regularExpression) != nil
            ? "a full URL such as https://example.org/"
            : first.contains(".") && !first.hasPrefix(".") || first.hasPrefix("localhost") ? "https://" + baseURL
            : "/" + baseURL.drop { $0 == "." || $0 == "/" }
        return "baseURL '\(baseURL)' is neither a full URL (https://example.org/) nor a path from the host's root (/project/), "
            + "so every link would be relative to its page: write \(written)"
    }

    /// The path part of `baseURL`, ending with `/`: what site-relative links start with.
    public var basePath: String {
        // Escapes kept: `/a%20b/` decoded would put a space in every link.
        let path = Self.plainPath(of: baseURL) ?? URL(string: baseURL)?.path(percentEncoded: true) ?? "/"
        return path.hasSuffix("/") ? path : path + "/"
    }

    /// The path of a plain `scheme://host/path` URL without parsing it as a URL (every link on every page
    /// asks for the base path); nil when escapes, a query or a fragment need the URL parser.
    private static func plainPath(of url: String) -> String? {
        guard !url.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
                  || $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: "\\") || $0 <= 0x20 || $0 >= 0x7F }),
              let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://"),
              url[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }), colon != url.startIndex
        else { return nil }
        let schemeEnd = url.index(colon, offsetBy: 3)
        let afterHost = url[schemeEnd...].firstIndex(of: "/") ?? url.endIndex
        return afterHost == url.endIndex ? "" : String(url[afterHost...])
    }

    /// The fingerprint of the settings every page shows (title, baseURL, unsafe, highlight): when it changes,
    /// every page is rendered again.
    public var settingsFingerprint: Int64 {
        // Every page may link a record's list items to their taxonomy pages (`fields`): a taxonomy's path is a setting.
        // Whether code is highlighted, not whether it is asked for: pages built where the library's definitions
        // are missing are built again once they are there.
        Fingerprint.of([title, baseURL, "\(allowsRawHTML)", "highlight \(codeHighlighter != nil)", "output \(Self.outputVersion)", "\(paramsFingerprint)", timeZone?.identifier ?? ""]
            + listings.compactMap { listing in listing.taxonomy.map { "taxonomy \(listing.from).\($0) \(listing.path)" } })
    }

    /// Raised whenever sitegen writes other bytes for the same inputs (a helper, Markdown or a feed format
    /// changed): the first build of a new version renders every page again, as a clean build would write it.
    static let outputVersion = 12

    /// The collection named `name`.
    public func collection(named name: String) -> CollectionConfig? {
        collections.first { $0.name == name }
    }

    /// Reads and checks the configuration file at `url`; `displayName` is how errors name it.
    public init(contentsOf url: URL, displayName: String) throws(ConfigError) {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            let missing = !FileManager.default.fileExists(atPath: url.path)
            let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
            let openError = descriptor < 0 ? String(cString: strerror(errno)) : nil
            if descriptor >= 0 { close(descriptor) }
            throw ConfigError(file: displayName, reason: missing
                ? "not found; a site needs a sitegen.yml at its root (`sitegen new <folder>` makes a new site; docs/reference/configuration.md describes the file)"
                : openError.map { "cannot be read: \($0)" } ?? "cannot be read as UTF-8 text")
        }
        try self.init(yaml: text, file: displayName)
    }

    /// Parses configuration text; `file` is how errors name it.
    public init(yaml text: String, file: String) throws(ConfigError) {
        self.file = file
        let reader = YAMLConfigReader(file: file)
        let root: Node
        // Before Yams, which expands aliases as it checks a mapping's keys.
        try AliasExpansionLimit.check(text, file: file)
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw ConfigError(file: file, line: 1, reason: "the file is empty; expected at least 'title' and 'collections'")
            }
            root = node
        } catch let error as ConfigError {
            throw error
        } catch YamlError.duplicatedKeysInMapping(let duplicates, let context) {
            let key = duplicates.first ?? ""
            throw ConfigError(file: file, line: Self.secondDefinition(of: key, in: text, from: context.mark.line),
                              reason: "'\(key)' appears twice in the same mapping; each key may appear once")
        } catch let error as YamlError {
            throw Self.configError(error, file: file)
        } catch {
            throw ConfigError(file: file, reason: "\(error)")
        }
        let entries = try reader.mapping(root, "sitegen.yml", allowed: ["title", "baseURL", "timeZone", "unsafe", "highlight", "static", "params", "collections", "listings"])
        var title: String?, baseURL = "/", allowsRawHTML = false, highlightsCode = true, staticFolders = ["static"], staticFoldersNamed = false
        var staticMark: ConfigMark?
        var params: [String: ParamValue] = [:], paramsFingerprint: Int64 = 0, timeZone: TimeZone?
        var collections: [CollectionConfig] = [], listingNodes: Node?
        for (key, _, value) in entries {
            switch key {
            case "title": title = try reader.string(value, "title")
            case "baseURL":
                baseURL = try reader.string(value, "baseURL")
                if let mark = baseURL.firstIndex(where: { $0 == "?" || $0 == "#" }) {
                    throw reader.error(value, "baseURL cannot have a \(baseURL[mark] == "?" ? "query" : "fragment") ('\(baseURL[mark...])'): "
                        + "every address on the site is written after it")
                }
                if !baseURL.hasSuffix("/") { baseURL += "/" }
                // A full URL, or a path from the host's root; anything else would be read relative to each
                // page, and every link below the home page would lead nowhere.
                if let problem = Self.relativeBaseURLProblem(baseURL) { throw reader.error(value, problem) }
                guard URL(string: baseURL) != nil else { throw reader.error(value, "baseURL must be a URL, such as https://example.org/") }
                // Foundation takes `a b` and `Ärchiv` as URLs (encoding them), but pages, feeds and the
                // sitemap print baseURL as written: a space or a letter outside ASCII there is no URL.
                if let bad = baseURL.unicodeScalars.first(where: { !$0.isASCII || $0.value <= 0x20 || $0.value == 0x7F || "\"<>\\^`{|}".unicodeScalars.contains($0) }) {
                    let shown = bad.value == 0x20 ? "a space" : bad.properties.generalCategory == .control ? "a control character" : "'\(bad)'"
                    let encoded = String(bad).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                    // The host is the part between `//` and the next `/`: a name there is written in punycode.
                    let hostEnd = baseURL.range(of: "//").flatMap { baseURL[$0.upperBound...].firstIndex(of: "/") } ?? baseURL.endIndex
                    let inHost = baseURL.range(of: "//").map { baseURL[$0.upperBound..<hostEnd].unicodeScalars.contains(bad) } ?? false
                    throw reader.error(value, "baseURL must be a URL, and it has \(shown)" + (inHost
                        ? " in its host name: write the name in its ASCII form (punycode, xn--…)"
                        : ": write it percent-encoded (\(encoded))"))
                }
            case "unsafe": allowsRawHTML = try reader.bool(value, "unsafe")
            case "highlight": highlightsCode = try reader.bool(value, "highlight")
            case "timeZone":
                let name = try reader.string(value, "timeZone")
                guard let zone = TimeZone(identifier: name) else {
                    throw reader.error(value, "timeZone: '\(name)' is not a time zone; write an IANA name such as Europe/Paris or America/New_York")
                }
                timeZone = zone
            case "params":
                guard case .mapping = value else { throw reader.error(value, "params must be a mapping of names to values, such as params: {author: Ann}") }
                if case .mapping(let values) = ParamValue(value) { params = values }
                paramsFingerprint = YAMLConfigReader.fingerprint(of: value)
            case "static":
                staticFolders = try reader.strings(value, "static")
                staticFoldersNamed = true
                staticMark = reader.mark(value)
                // Inside the site, and not what a build writes or keeps: copied, those would copy themselves.
                for folder in staticFolders {
                    let parts = folder.split(separator: "/")
                    if folder.hasPrefix("/") || parts.contains("..") || parts.isEmpty || parts.first == "." && parts.count == 1 {
                        throw reader.error(value, "static: '\(folder)' must be a folder inside the site, such as static")
                    }
                    if ["output", ".sitegen"].contains(String(parts.first!)) {
                        throw reader.error(value, "static: '\(folder)' is where sitegen writes; name the folder of files to publish, such as static")
                    }
                }
            case "collections":
                for (name, nameNode, body) in try reader.mapping(value, "collections") {
                    collections.append(try CollectionConfig(name: name, nameNode: nameNode, node: body, reader: reader))
                }
            default: listingNodes = value
            }
        }
        guard let title else { throw reader.error(root, "missing 'title'; expected the site's name, e.g. title: Failed Bank Watch") }
        guard !collections.isEmpty else { throw reader.error(root, "missing 'collections'; expected at least one collection") }
        for collection in collections {
            for relationship in collection.relationships where !collections.contains(where: { $0.name == relationship.target }) {
                throw ConfigError(file: file, line: relationship.line, column: relationship.column,
                                  reason: "no collection named '\(relationship.target)'; collections: " + collections.map(\.name).joined(separator: ", "))
            }
        }
        self.title = title
        self.baseURL = baseURL
        self.allowsRawHTML = allowsRawHTML
        self.highlightsCode = highlightsCode
        self.staticFolders = staticFolders
        self.staticFoldersNamed = staticFoldersNamed
        self.staticMark = staticMark
        self.params = params
        self.timeZone = timeZone
        self.paramsFingerprint = paramsFingerprint
        self.collections = collections
        var listings: [ListingConfig] = []
        if let listingNodes {
            for (name, nameNode, body) in try reader.mapping(listingNodes, "listings") {
                listings.append(try ListingConfig(name: name, nameNode: nameNode, node: body, reader: reader, collections: collections, baseURL: baseURL))
            }
        }
        self.listings = listings
        for collection in collections where collection.detail?.bodyFormat == .html && !allowsRawHTML {
            throw ConfigError(file: file, at: collection.detail?.marks["format"],
                              reason: "collection '\(collection.name)' publishes HTML bodies, which needs 'unsafe: true'")
        }
    }

    /// Checks that the templates folder has every template the configuration names (or uses by default);
    /// the error points at the name, or at the declaration that relies on the default.
    public func checkTemplates(in templates: TemplateSet) throws(ConfigError) {
        func check(_ name: String, _ mark: ConfigMark?, _ whose: String, _ key: String) throws(ConfigError) {
            guard !templates.names.contains(name) else { return }
            throw ConfigError(file: file, at: mark, reason: "\(whose) renders through '\(name).mustache', which is not in the templates "
                + "folder (it has: \(templates.names.joined(separator: ", "))); add it, or name another with '\(key)'")
        }
        for collection in collections {
            guard let detail = collection.detail else { continue }
            try check(detail.template, detail.marks["template"] ?? detail.marks[""], "the detail of '\(collection.name)'", "template")
        }
        for listing in listings {
            try check(listing.template, listing.marks["template"] ?? listing.marks[""], "listing '\(listing.name)'", "template")
            if listing.section != nil {
                try check(listing.indexTemplate, listing.marks["indexTemplate"] ?? listing.marks[""],
                          "the section index of listing '\(listing.name)'", "indexTemplate")
            }
        }
    }

    /// The line where `key` is defined again at the indentation of its first definition after `line`
    /// (Yams names only the line where the mapping starts).
    private static func secondDefinition(of key: String, in text: String, from line: Int) -> Int? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var firstIndent: Int?
        for index in max(0, line - 1)..<lines.count {
            let content = lines[index].drop { $0 == " " }
            guard content.hasPrefix(key + ":") else { continue }
            let indent = lines[index].count - content.count
            if firstIndent == nil { firstIndent = indent } else if indent == firstIndent { return index + 1 }
        }
        return nil
    }

    private static func configError(_ error: YamlError, file: String) -> ConfigError {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            return ConfigError(file: file, line: mark.line, column: mark.column, reason: "invalid YAML: \(problem)")
        default:
            return ConfigError(file: file, reason: "invalid YAML: \(error)")
        }
    }
}

/// One collection: where its records come from, how they are typed, and where its detail pages go.
public struct CollectionConfig: Sendable {
    /// The source formats sitegen reads.
    public enum Kind: String, Sendable, CaseIterable {
        case csv, json, ndjson, feed, markdown
        /// An OPML subscription list: a record per feed it names (`title`, `feedURL`, `siteURL`).
        case opml
    }

    /// The collection's name, which is also its table's.
    public var name: String
    /// The format of its sources.
    public var kind: Kind
    /// Glob patterns relative to the site root.
    public var sources: [String]
    /// The column whose value identifies a record (CSV); feeds use the item id, Markdown the file name.
    public var key: String?
    /// Declared fields and their types, in order, including the ones a kind always has.
    public var fields: [(name: String, type: FieldType)]
    /// The detail pages, if the collection has them.
    public var detail: DetailConfig?
    /// What a feed source keeps of items that left it; nil: each source's default (`RetentionPolicy`).
    public var keep: RetentionPolicy?
    /// How often a `watch` or `serve` fetches its URL sources again, in seconds (`refresh:`; 30 minutes).
    public var refresh: Double = 30 * 60

    /// What a feed keeps of its items once they leave it.
    public enum RetentionPolicy: String, Sendable {
        /// Every item ever seen stays, flagged `leftFeed` once the feed no longer has it: an archive. The
        /// default for URL sources, whose feeds show only their latest items.
        case all
        /// Only the items the feed has now: the default for local files, which are the whole record.
        case current
    }

    /// What `source` (one of `sources`, or a feed an OPML list names) keeps of items that left it.
    public func retention(ofSource source: String) -> RetentionPolicy {
        guard kind == .feed else { return .current }
        return keep ?? (RemoteSource.isURL(source) ? .all : .current)
    }

    /// Whether any of its sources keeps items that left it, so that its table has the `leftFeed` column.
    var mayKeepItems: Bool { Self.mayKeepItems(kind: kind, keep: keep, sources: sources) }

    static func mayKeepItems(kind: Kind, keep: RetentionPolicy?, sources: [String]) -> Bool {
        kind == .feed && (keep == .all || keep == nil && sources.contains { RemoteSource.isURL($0) || RemoteSource.isSubscriptionList($0) })
    }

    /// The fields every feed item has.
    static let feedFields: [(String, FieldType)] = [
        ("title", .text), ("link", .text), ("published", .datetime), ("updated", .datetime), ("author", .text),
        ("summary", .text), ("content", .text), ("categories", .list), ("slug", .text),
        // The feed an entry came from (a planet's), which templates read as `source.title` and `source.link`.
        ("source_title", .text), ("source_link", .text),
    ]

    /// The fields every feed of a subscription list has (its key is `feedURL`).
    static let subscriptionFields: [(String, FieldType)] = [("title", .text), ("feedURL", .text), ("siteURL", .text)]

    /// Its declaration's fingerprint: when it changes, its detail pages are rendered again.
    public var fingerprint: Int64 = 0
    /// Where its `sources` were written, for errors about the files they name.
    public var sourcesMark: ConfigMark?
    /// Where each declared field was written.
    public var fieldMarks: [String: ConfigMark] = [:]

    /// Whether its records have a title to give feed entries: a `title` field, or the field its detail
    /// page names (`detail: {title: name}`). Feeds and front matter always have one.
    var hasTitles: Bool {
        kind == .feed || kind == .markdown || kind == .opml || detail?.titleField != nil || fields.contains { $0.name == "title" }
    }

    /// Declared fields that templates cannot read because a record's own `key`, `title` or `url` takes
    /// the name: each a warning at the field's line.
    func hiddenFields(file: String) -> [SourceError] {
        var hidden: [(String, String)] = []
        if key != "key", fieldMarks["key"] != nil { hidden.append(("key", "the record's key (" + (key.map { "'\($0)'" } ?? "its file name or id") + ")")) }
        if let titleField = detail?.titleField, titleField != "title", fieldMarks["title"] != nil {
            hidden.append(("title", "the record's title ('\(titleField)')"))
        }
        if detail != nil, fieldMarks["url"] != nil { hidden.append(("url", "the address of the record's page")) }
        return hidden.map { field, what in
            SourceError(file: file, line: fieldMarks[field]?.line, column: fieldMarks[field]?.column,
                        reason: "collection '\(name)': templates read '\(field)' as \(what), not as this field; "
                            + "its values are stored but no page shows them (rename the field in the data to show it)")
        }
    }

    init(name: String, nameNode: Node, node: Node, reader: YAMLConfigReader) throws(ConfigError) {
        self.name = try reader.identifier(name, nameNode, "a collection name")
        fingerprint = YAMLConfigReader.fingerprint(of: node)
        var kind: Kind?, sources: [String] = [], key: String?, fields: [(String, FieldType)] = [], detailNode: Node?
        var relationshipsNode: Node?, keepNode: Node?
        for (entry, _, value) in try reader.mapping(node, "collection '\(name)'", allowed: ["kind", "sources", "key", "fields", "detail", "relationships", "keep", "refresh"]) {
            switch entry {
            case "kind":
                let text = try reader.string(value, "kind")
                guard let parsed = Kind(rawValue: text) else {
                    throw reader.error(value, "unknown kind '\(text)'; expected one of: csv, json, ndjson, feed, markdown, opml")
                }
                kind = parsed
            case "sources":
                sources = try reader.strings(value, "sources")
                sourcesMark = reader.mark(value)
            case "key": key = try reader.string(value, "key")
            case "fields":
                for (field, fieldNode, typeNode) in try reader.mapping(value, "fields of '\(name)'") {
                    let typeName = try reader.string(typeNode, "the type of '\(field)'")
                    guard let type = FieldType(rawValue: typeName) else {
                        throw reader.error(typeNode, "unknown type '\(typeName)' for '\(field)'; expected one of: "
                            + FieldType.allCases.map(\.rawValue).joined(separator: ", "))
                    }
                    fields.append((try reader.identifier(field, fieldNode, "a field name"), type))
                    fieldMarks[field] = reader.mark(fieldNode)
                }
            case "relationships": relationshipsNode = value
            case "keep":
                let text = try reader.string(value, "keep")
                guard let policy = RetentionPolicy(rawValue: text) else {
                    throw reader.error(value, "unknown keep '\(text)'; expected all (items stay after they leave the feed) or current")
                }
                keep = policy
                keepNode = value
            case "refresh": refresh = try Self.interval(value, reader: reader)
            default: detailNode = value
            }
        }
        guard let kind else { throw reader.error(node, "collection '\(name)' needs a 'kind': csv, json, ndjson, feed, markdown or opml") }
        if let keepNode, kind != .feed {
            throw reader.error(keepNode, "'keep' is for feed collections, whose items come and go; a \(kind.rawValue) source's records are always its current ones")
        }
        guard !sources.isEmpty else { throw reader.error(node, "collection '\(name)' needs 'sources': one or more file patterns, URLs or OPML subscription lists") }
        switch kind {
        case .csv, .json, .ndjson:
            let format = kind.rawValue.uppercased()
            guard !fields.isEmpty else { throw reader.error(node, "\(format) collection '\(name)' needs 'fields': each field and its type") }
            guard let key else { throw reader.error(node, "\(format) collection '\(name)' needs a 'key': the field that identifies a record") }
            guard fields.contains(where: { $0.0 == key }) else {
                throw reader.error(node, "the key '\(key)' of '\(name)' is not one of its fields")
            }
        case .feed:
            guard fields.isEmpty, key == nil else {
                throw reader.error(node, "feed collection '\(name)' has fixed fields and keys; remove 'fields' and 'key'")
            }
            fields = Self.feedFields
            // Present only where an item can be kept after it left its feed, so that other feeds' tables stay as they were.
            if Self.mayKeepItems(kind: kind, keep: keep, sources: sources) { fields.append(("leftFeed", .bool)) }
        case .opml:
            guard fields.isEmpty, key == nil else {
                throw reader.error(node, "OPML collection '\(name)' has fixed fields (title, feedURL, siteURL) keyed by feedURL; remove 'fields' and 'key'")
            }
            fields = Self.subscriptionFields
        case .markdown:
            guard key == nil else { throw reader.error(node, "Markdown collection '\(name)' is keyed by file name; remove 'key'") }
            for implicit in ["title", "body", "slug"] where !fields.contains(where: { $0.0 == implicit }) {
                fields.append((implicit, .text))
            }
            // Whether the file is a draft, which only a `--drafts` build publishes: the mark templates show.
            if let declared = fields.first(where: { $0.0 == "draft" }) {
                guard declared.1 == .bool else {
                    throw ConfigError(file: reader.file, at: fieldMarks["draft"], reason: "'draft' of Markdown collection '\(name)' is "
                        + "sitegen's: true for a draft that a --drafts build publishes; declare it bool, or remove it")
                }
            } else {
                fields.append(("draft", .bool))
            }
        }
        self.kind = kind
        self.sources = sources
        self.key = key
        self.fields = fields
        if let detailNode {
            // A feed's HTML is untrusted: published sanitized unless the site says otherwise.
            detail = try DetailConfig(node: detailNode, reader: reader, collection: name, fields: fields.map(\.0),
                                      defaultFormat: kind == .feed ? .sanitized : .markdown,
                                      dateFields: Set(fields.filter { [.date, .datetime].contains($0.1) }.map(\.0)))
            // A Markdown file's page shows the file's text unless told otherwise, as Hugo's and Jekyll's do.
            if kind == .markdown, detail?.bodyField == nil { detail?.bodyField = "body" }
        }
        if let relationshipsNode {
            for (field, fieldNode, targetNode) in try reader.mapping(relationshipsNode, "relationships of '\(name)'") {
                guard let type = fields.first(where: { $0.0 == field })?.1 else {
                    throw reader.error(fieldNode, "'\(field)' is not a field of '\(name)'; a relationship names the field holding another collection's key")
                }
                // A list of keys is a to-many relationship: its join table pairs each record with each key.
                relationships.append((field, try reader.string(targetNode, "the collection '\(field)' refers to"),
                                      type == .list, targetNode.mark?.line, targetNode.mark?.column))
            }
        }
    }

    /// A `refresh:` interval: a number of minutes, or a number with `s`, `m`, `h` or `d` (`90s`, `30m`, `2h`).
    static func interval(_ node: Node, reader: YAMLConfigReader) throws(ConfigError) -> Double {
        let text = try reader.string(node, "refresh").trimmingCharacters(in: .whitespaces)
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        let unit = text.last.flatMap { units[$0] }
        let number = Double(unit == nil ? text : String(text.dropLast()))
        guard let number, number > 0, number.isFinite else {
            throw reader.error(node, "refresh '\(text)' is not an interval; write minutes (30) or a number with s, m, h or d (90s, 30m, 2h)")
        }
        return number * (unit ?? 60)
    }

    /// Relationships: the field holding the key (to-one) or keys (a list field: to-many), the collection
    /// it refers to, and where it was declared.
    var relationships: [(field: String, target: String, toMany: Bool, line: Int?, column: Int?)] = []

    /// The to-one relationships, which results controllers join: `field.column` reaches the related record's column.
    var toOneRelationships: [(field: String, target: String, toMany: Bool, line: Int?, column: Int?)] {
        relationships.filter { !$0.toMany }
    }

    /// The to-one relationships as results-controller joins.
    var joins: [Relationship] {
        toOneRelationships.map { Relationship(name: $0.field, table: $0.target, foreignKey: $0.field, targetKey: "_key") }
    }

    /// Whether `name` is a field (or the key pseudo-field) of this collection.
    func hasField(_ name: String) -> Bool { name == "key" || fields.contains { $0.name == name } }
}

/// How a collection's detail pages are made: one page per record.
public struct DetailConfig: Sendable {
    /// How the body field is published.
    public enum BodyFormat: String, Sendable {
        /// `sanitized` is HTML that `HTMLSanitizer` cleans first: a feed's, which is untrusted (the default for feeds).
        case markdown, html, text, sanitized
    }

    /// The page path, with `{field}` placeholders (and `{key}`), e.g. `/banks/{key}/`.
    public var path: String
    /// The template (without `.mustache`) detail pages render through.
    public var template: String
    /// The field shown as the page title.
    public var titleField: String?
    /// The field rendered as the page body.
    public var bodyField: String?
    /// How the body field is turned into HTML.
    public var bodyFormat: BodyFormat
    /// Where each key's value was written, and (under "") the `detail` key itself.
    public var marks: [String: ConfigMark] = [:]

    init(node: Node, reader: YAMLConfigReader, collection: String, fields: [String], defaultFormat: BodyFormat = .markdown,
         dateFields: Set<String> = []) throws(ConfigError) {
        var path: String?, template = "detail", titleField: String?, bodyField: String?, bodyFormat = defaultFormat
        marks[""] = reader.mark(node)
        for (key, _, value) in try reader.mapping(node, "detail of '\(collection)'", allowed: ["path", "template", "title", "body", "format"]) {
            marks[key] = reader.mark(value)
            switch key {
            case "path": path = try reader.string(value, "path")
            case "template": template = try reader.string(value, "template")
            case "title", "body":
                let field = try reader.string(value, key)
                guard fields.contains(field) else {
                    throw reader.error(value, "'\(field)' is not a field of '\(collection)'; fields: \(fields.joined(separator: ", "))")
                }
                if key == "title" { titleField = field } else { bodyField = field }
            default:
                let text = try reader.string(value, "format")
                guard let format = BodyFormat(rawValue: text) else {
                    throw reader.error(value, "unknown body format '\(text)'; expected markdown, html, sanitized or text")
                }
                bodyFormat = format
            }
        }
        guard let path, path.hasPrefix("/"), path.hasSuffix("/") else {
            throw reader.error(node, "detail of '\(collection)' needs a 'path' that starts and ends with '/', e.g. /\(collection)/{key}/")
        }
        for placeholder in PathPattern(path).placeholders where placeholder != "key" && !fields.contains(placeholder) {
            let part = placeholder.split(separator: ":").count == 2 ? "; a date part is yyyy, MM or dd, as in {date:yyyy}" : ""
            throw reader.error(node, "the path '\(path)' uses {\(placeholder)}, which is not a field of '\(collection)'" + part)
        }
        for placeholder in PathPattern(path).datePlaceholders where !dateFields.contains(placeholder) {
            throw reader.error(node, "the path '\(path)' takes a date part of '\(placeholder)', which is not a date or datetime field of '\(collection)'")
        }
        guard PathPattern(path).placeholders.count > 0 else {
            throw reader.error(node, "the path '\(path)' must name the record, e.g. with {key}, or every record would share one page")
        }
        self.path = path
        self.template = template
        self.titleField = titleField
        self.bodyField = bodyField
        self.bodyFormat = bodyFormat
    }
}

/// One listing: a collection's rows, filtered and sorted, paginated through a template.
public struct ListingConfig: Sendable {
    /// The listing's name in `sitegen.yml`.
    public var name: String
    /// The collection listed.
    public var from: String
    /// An SQL predicate on the collection's fields.
    public var filter: String?
    /// Sort keys, each a field name, `-` first for descending.
    public var sort: [(field: String, ascending: Bool)]
    /// Rows per page.
    public var pageSize: Int
    /// The path of page 1, starting and ending with `/`.
    public var path: String
    /// The template (without `.mustache`) its pages render through.
    public var template: String
    /// The heading the listing's pages show.
    public var title: String
    /// The subscription feeds written beside the first page (its rows, newest first as the listing sorts).
    public var feeds: [FeedWriter.Format] = []
    /// The date or datetime field the feeds date their entries by.
    public var feedDate: String?
    /// The field whose values split the listing into sections, each paginated on its own at the path
    /// with `{section}` filled in; it is the first sort key.
    public var section: String?
    /// Sections in a declared order, with display titles; others follow in sort order.
    public var sectionDeclarations: [SectionDeclaration] = []
    /// Whether declared sections get their (empty) pages even when no row falls in them.
    public var showsEmptySections = false
    /// The template of the section index page.
    public var indexTemplate = "sections"
    /// Whether the menu (`nav`) links the listing; `nav: false` leaves it out.
    public var inNavigation = true
    /// Whether each listing page is also written as GitHub-flavoured Markdown (`index.md` beside `index.html`).
    public var writesMarkdown = false
    /// How pages are numbered: newest first (page 1 the newest), or as a stable archive (RFC 5005).
    public var numbering = Paginator.Numbering.newestFirst
    /// For a taxonomy listing, the list field (tags) whose every item is a section: a record appears in the
    /// section of each of its items, read through the field's join table.
    public var taxonomy: String?

    /// Where the section index page goes: the path up to `{section}`.
    public var indexPath: String? {
        guard section != nil, let range = path.range(of: "{section}") else { return nil }
        return String(path[..<range.lowerBound])
    }

    /// Its declaration's fingerprint: when it changes, its pages are rendered again.
    public var fingerprint: Int64 = 0
    /// Where each key's value was written, and (under "") the listing's name.
    public var marks: [String: ConfigMark] = [:]

    init(name: String, nameNode: Node, node: Node, reader: YAMLConfigReader, collections: [CollectionConfig],
         baseURL: String) throws(ConfigError)
    {
        self.name = try reader.identifier(name, nameNode, "a listing name")
        fingerprint = YAMLConfigReader.fingerprint(of: node)
        var from: String?, filter: String?, sort: [(String, Bool)] = [], pageSize = 20, path: String?
        var template = "list", title: String?
        var feedsNode: Node?, feedDateNode: Node?, sectionNode: Node?, sectionsNode: Node?
        let allowed: Set<String> = ["from", "where", "sort", "pageSize", "path", "template", "title", "feeds", "feedDate",
                                    "section", "sections", "showEmpty", "indexTemplate", "taxonomy", "numbering", "formats", "nav"]
        marks[""] = reader.mark(nameNode)
        for (key, _, value) in try reader.mapping(node, "listing '\(name)'", allowed: allowed) {
            marks[key] = reader.mark(value)
            switch key {
            case "from":
                let collection = try reader.string(value, "from")
                guard collections.contains(where: { $0.name == collection }) else {
                    throw reader.error(value, "no collection named '\(collection)'; collections: "
                        + collections.map(\.name).joined(separator: ", "))
                }
                from = collection
            case "where": filter = try reader.string(value, "where")
            case "sort":
                guard let collection = from.flatMap({ name in collections.first { $0.name == name } }) else {
                    throw reader.error(value, "'sort' must come after 'from' in listing '\(name)'")
                }
                for term in try reader.strings(value, "sort") {
                    let field = term.hasPrefix("-") ? String(term.dropFirst()) : term
                    if let dot = field.firstIndex(of: ".") {
                        // Through a relationship: `bank.closing_date` sorts on the related record's field.
                        let name = String(field[..<dot]), column = String(field[field.index(after: dot)...])
                        guard let relationship = collection.relationships.first(where: { $0.field == name }) else {
                            throw reader.error(value, "cannot sort on '\(field)': '\(name)' is not a relationship of '\(collection.name)'")
                        }
                        guard !relationship.toMany else {
                            throw reader.error(value, "cannot sort on '\(field)': '\(name)' relates each record to several; sort through a to-one relationship")
                        }
                        guard let target = collections.first(where: { $0.name == relationship.target }), target.hasField(column) else {
                            throw reader.error(value, "cannot sort on '\(field)': '\(column)' is not a field of '\(relationship.target)'")
                        }
                        sort.append((name + "." + (column == "key" ? "_key" : column), !term.hasPrefix("-")))
                        continue
                    }
                    guard collection.hasField(field) else {
                        throw reader.error(value, "cannot sort on '\(field)': it is not a field of '\(collection.name)'")
                    }
                    sort.append((field == "key" ? "_key" : field, !term.hasPrefix("-")))
                }
            case "pageSize": pageSize = try reader.integer(value, "pageSize", minimum: 1)
            case "path":
                let text = try reader.string(value, "path")
                guard text.hasPrefix("/"), text.hasSuffix("/") else {
                    throw reader.error(value, "path must start and end with '/', e.g. /banks/")
                }
                path = text
            case "template": template = try reader.string(value, "template")
            case "feeds": feedsNode = value
            case "feedDate": feedDateNode = value
            case "section": sectionNode = value
            case "formats":
                let formats = try reader.strings(value, "formats")
                for format in formats where !["html", "md"].contains(format) {
                    throw reader.error(value, "unknown format '\(format)'; expected html or md")
                }
                guard formats.contains("html") else {
                    throw reader.error(value, "formats must include html (the site itself); [html, md] adds Markdown pages")
                }
                writesMarkdown = formats.contains("md")
            case "numbering":
                let text = try reader.string(value, "numbering")
                guard let known = Paginator.Numbering(rawValue: text) else {
                    throw reader.error(value, "unknown numbering '\(text)'; expected newest-first or stable-archive")
                }
                numbering = known
            case "taxonomy":
                guard let collection = from.flatMap({ name in collections.first { $0.name == name } }) else {
                    throw reader.error(value, "'taxonomy' must come after 'from' in listing '\(name)'")
                }
                let field = try reader.string(value, "taxonomy")
                guard collection.fields.contains(where: { $0.name == field && $0.type == .list }) else {
                    throw reader.error(value, "taxonomy '\(field)' is not a list field of '\(collection.name)'; a taxonomy lists records by each item of a list")
                }
                taxonomy = field
            case "sections": sectionsNode = value
            case "showEmpty": showsEmptySections = try reader.bool(value, "showEmpty")
            case "indexTemplate": indexTemplate = try reader.string(value, "indexTemplate")
            case "nav": inNavigation = try reader.bool(value, "nav")
            default: title = try reader.string(value, "title")
            }
        }
        guard let from else { throw reader.error(node, "listing '\(name)' needs 'from': the collection it lists") }
        guard let path else { throw reader.error(node, "listing '\(name)' needs 'path': where its first page goes, e.g. /") }
        self.from = from
        self.filter = filter
        self.sort = sort
        self.pageSize = pageSize
        self.path = path
        self.template = template
        self.title = title ?? name
        let listed = collections.first { $0.name == from }!
        if taxonomy != nil {
            if let sectionNode { throw reader.error(sectionNode, "a taxonomy listing's sections are its items; drop 'section'") }
            // The join table's `value` is the section; the listing's own sort keys reach the records.
            section = "value"
            self.sort.insert(("value", true), at: 0)
            guard path.components(separatedBy: "/").contains("{section}") else {
                throw reader.error(node, "listing '\(name)' is a taxonomy, so its path needs a {section} segment, e.g. /tags/{section}/")
            }
            if path.hasSuffix("/page/{page}/") { self.path = String(path.dropLast("page/{page}/".count)) }
        } else if let sectionNode {
            let field = try reader.string(sectionNode, "section")
            guard listed.hasField(field) else {
                throw reader.error(sectionNode, "cannot make sections of '\(field)': it is not a field of '\(from)'")
            }
            let column = field == "key" ? "_key" : field
            section = column
            // Sections come in the order of their key: it leads the sort.
            if self.sort.first?.field != column { self.sort.insert((column, true), at: 0) }
            guard path.components(separatedBy: "/").contains("{section}") else {
                throw reader.error(node, "listing '\(name)' has sections, so its path needs a {section} segment, e.g. /banks/{section}/")
            }
            if path.hasSuffix("/page/{page}/") { self.path = String(path.dropLast("page/{page}/".count)) }
        } else if path.contains("{section}") {
            throw reader.error(node, "listing '\(name)' has {section} in its path but no 'section' field to fill it")
        }
        if let sectionsNode {
            guard section != nil else { throw reader.error(sectionsNode, "'sections' declares the sections of a listing with 'section'") }
            guard case .sequence(let items) = sectionsNode else {
                throw reader.error(sectionsNode, "sections must be a list of section names, or of {name, title}")
            }
            for item in items {
                if case .mapping = item {
                    var sectionName: String?, sectionTitle: String?
                    for (key, _, value) in try reader.mapping(item, "a section", allowed: ["name", "title"]) {
                        if key == "name" { sectionName = try reader.string(value, "name") } else { sectionTitle = try reader.string(value, "title") }
                    }
                    guard let sectionName else { throw reader.error(item, "a section needs a 'name': the field's value") }
                    sectionDeclarations.append(SectionDeclaration(name: sectionName, displayTitle: sectionTitle))
                } else {
                    sectionDeclarations.append(SectionDeclaration(name: try reader.string(item, "a section")))
                }
            }
        }
        if let feedsNode {
            for format in try reader.strings(feedsNode, "feeds") {
                guard let known = FeedWriter.Format(rawValue: format) else {
                    throw reader.error(feedsNode, "unknown feed format '\(format)'; expected atom, rss or json")
                }
                if !feeds.contains(known) { feeds.append(known) }
            }
            guard URL(string: baseURL)?.scheme != nil else {
                throw reader.error(feedsNode, "feeds need an absolute baseURL (such as https://example.org/): feed readers need full links")
            }
            func isDate(_ field: String) -> Bool {
                listed.fields.contains { $0.name == field && ($0.type == .date || $0.type == .datetime) }
            }
            if let feedDateNode {
                let field = try reader.string(feedDateNode, "feedDate")
                guard isDate(field) else {
                    throw reader.error(feedDateNode, "feedDate '\(field)' is not a date or datetime field of '\(from)'")
                }
                feedDate = field
            } else if let first = sort.first?.0, isDate(first) {
                feedDate = first
            } else {
                throw reader.error(feedsNode, "a feed dates its entries: sort listing '\(name)' by a date field first, or name one with feedDate")
            }
        }
    }
}

/// A value of `params:` in `sitegen.yml`, for templates: text as written, but for YAML 1.2's booleans and
/// nulls and plain whole numbers.
public indirect enum ParamValue: Sendable, Equatable {
    case text(String)
    case bool(Bool)
    case integer(Int)
    case null
    case list([ParamValue])
    case mapping([String: ParamValue])

    /// The value of a YAML node. Only `true` and `false` are booleans (so `{{#site.params.comments}}` can be
    /// off), and `~`, `null` or nothing is null; any other scalar is its text, as printed: YAML 1.1 would
    /// make `02134` the octal 1116, `1.10` the number 1.1, `NO` false and `12:30` 750.
    init(_ node: Node) {
        switch node {
        case .scalar(let scalar):
            guard scalar.style == .plain || scalar.style == .any else {
                self = .text(scalar.string)
                return
            }
            switch scalar.string {
            case "true", "True", "TRUE": self = .bool(true)
            case "false", "False", "FALSE": self = .bool(false)
            case "", "~", "null", "Null", "NULL": self = .null
            default:
                // A whole number written plainly (no leading zero, no sign but `-`) prints the same as a
                // number, and sorts as one.
                let digits = scalar.string.hasPrefix("-") ? scalar.string.dropFirst() : Substring(scalar.string)
                if let number = Int(scalar.string), !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
                   digits == "0" || !digits.hasPrefix("0") {
                    self = .integer(number)
                } else {
                    self = .text(scalar.string)
                }
            }
        case .sequence(let sequence): self = .list(sequence.map(ParamValue.init))
        case .mapping(let mapping):
            var values: [String: ParamValue] = [:]
            for (key, value) in mapping { values[key.string ?? "\(key)"] = ParamValue(value) }
            self = .mapping(values)
        case .alias: self = .null
        }
    }

    /// What a template's context holds for it.
    var templateValue: Any {
        switch self {
        case .text(let text): text
        case .bool(let flag): flag
        case .integer(let number): number
        case .null: NSNull()
        // A list of texts typed so, as a page's own lists are, so that `sorted` sorts it.
        case .list(let values):
            if values.allSatisfy({ if case .text = $0 { true } else { false } }) {
                values.map { if case .text(let text) = $0 { text } else { "" } } as [String]
            } else if values.allSatisfy({ if case .integer = $0 { true } else { false } }) {
                values.map { if case .integer(let number) = $0 { number } else { 0 } } as [Int]
            } else {
                values.map(\.templateValue)
            }
        case .mapping(let values): values.mapValues(\.templateValue) as [String: Any]
        }
    }
}

extension SiteConfig {
    /// The values pages have (some only on some pages, or in some of their lists' entries).
    static let pageValueNames: Set<String> = [
        "site", "title", "baseURL", "basePath", "nav", "url", "pageTitle", "pageURL", "listing", "name", "items", "empty",
        "pagination", "number", "pageCount", "rowCount", "first", "last", "prev", "next", "multiple", "pages",
        "current", "gap", "feeds", "format", "type", "section", "count", "index", "indexTitle", "sections",
        "groups", "sectionCount", "chart", "record", "body", "key",
        "fields", "label", "value", "linked", "isDate", "isNumber", "isText", "isLink", "isList", "isBool",
    ]

    /// Every name a template may use that a page can lack: the values pages have, and every field and
    /// relationship of every collection (a null field is left out of its record). Any other name a
    /// template uses is an error (`TemplateError.unknownVariable`).
    var templateNames: Set<String> {
        Self.pageValueNames.union(recordFieldNames)
    }

    /// The fields and relationships of every collection that no page has as a value of its own: used
    /// where no record is open, they print nothing, which is an error (`TemplateError.fieldOutsideRecord`).
    var recordFieldNames: Set<String> {
        var names: Set<String> = []
        for collection in collections {
            names.formUnion(collection.fields.map(\.name))
            names.formUnion(collection.relationships.map(\.field))
        }
        return names.subtracting(Self.pageValueNames)
    }
}
