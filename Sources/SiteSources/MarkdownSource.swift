import Foundation

/// A Markdown file with YAML front matter: one record keyed by its file name, its body kept as Markdown.
public struct MarkdownSource: Source {
    /// Where the file is, as a path: a record per file makes a `URL` per file too dear to build when
    /// nothing but a message may ever ask for it (a tenth of the read-ahead thread's time at 100,000 files).
    public let path: String
    /// The file as messages name it.
    public let displayName: String
    /// Declared fields (from front matter) and their types; `body`, `slug`, `title` and `draft` are filled by sitegen.
    public let fields: [(name: String, type: FieldType)]
    /// The zone of a datetime written without an offset (the site's `timeZone`); UTC when nil.
    public var timeZone: TimeZone?
    /// Whether a draft is read as a record, its `draft` field true (`--drafts`); else a draft is no record.
    public var includesDrafts = false

    /// Reads the Markdown file at `url`, typing the declared front matter `fields`.
    public init(url: URL, displayName: String, fields: [(name: String, type: FieldType)]) {
        self.init(path: url.path, displayName: displayName, fields: fields)
    }

    /// Reads the Markdown file at `path`, typing the declared front matter `fields`.
    public init(path: String, displayName: String, fields: [(name: String, type: FieldType)]) {
        self.path = path
        self.displayName = displayName
        self.fields = fields
    }

    /// Where the file is.
    public var url: URL { URL(fileURLWithPath: path, isDirectory: false) }

    /// The record's key: the file's name without its extension, as `URL.deletingPathExtension` has it (an
    /// extension is what follows the last dot, if anything does and something other than dots precedes it);
    /// for an `index.md`, its folder's name, as Hugo names a page bundle (`hello/index.md` is `hello`).
    static func slug(ofPath path: String) -> String {
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let name = slash.map { path[path.utf8.index(after: $0)...] } ?? path[...]
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), name.utf8.index(after: dot) != name.endIndex else {
            return String(name)
        }
        let stem = name[..<dot]
        if stem == "index", let slash {
            let folder = path[..<slash]
            let folderName = folder.utf8.lastIndex(of: UInt8(ascii: "/")).map { folder[folder.utf8.index(after: $0)...] } ?? folder
            if !folderName.isEmpty { return String(folderName) }
        }
        return stem.utf8.contains(where: { $0 != UInt8(ascii: ".") }) ? String(stem) : String(name)
    }

    /// Whether front matter marks its file as not to be published: Hugo's `draft: true`, Jekyll's `published: false`.
    static func isUnpublished(_ fields: [String: FrontMatterValue]) -> Bool {
        if case .text(let draft)? = fields["draft"], ["true", "yes"].contains(draft.lowercased()) { return true }
        if case .text(let published)? = fields["published"], ["false", "no"].contains(published.lowercased()) { return true }
        return false
    }

    /// The largest Markdown file read as a page (README.md, `maxPageBytes`). A page is held whole several times
    /// over as it is read, stored and rendered (its text, its HTML, the page around it): a 50 MB page took
    /// 0.9 to 3 GB. A larger file is an error naming it, found before it is read (docs/decisions.md, 42).
    public static let maxPageBytes = 8 << 20

    /// Reads the file as one record keyed by its name; undeclared front matter keys are warned about.
    public func read(_ input: inout SourceInput, emit: (Record) throws(SourceError) -> Void) throws(SourceError) -> [SourceError] {
        if let size = input.size, size > Self.maxPageBytes {
            let digits = String(size), grouped = digits.enumerated().map { ($0.offset > 0 && (digits.count - $0.offset) % 3 == 0 ? "," : "") + String($0.element) }.joined()
            throw SourceError(file: displayName, reason: "is \(grouped) bytes, more than the \(Self.maxPageBytes >> 20) MiB a Markdown "
                              + "page may have (maxPageBytes); split it into several pages")
        }
        try rejectUTF16(input)
        let text = try decodeText(input.readAll(), displayName: displayName)
        let document = try FrontMatterDocument(parsing: text, file: displayName)
        // A draft is not published: no record, so no page, no place in a listing, no neighbour (and a draft
        // still being written is not held to its fields' types). Under `--drafts` it is a record like any other.
        let isDraft = Self.isUnpublished(document.fields)
        if isDraft && !includesDrafts { return [] }
        let slug = Self.slug(ofPath: path)
        var values: [String: FieldValue] = [:]
        var warnings: [SourceError] = []
        for (name, type) in fields {
            switch (name, document.fields[name]) {
            case ("body", _): values[name] = .text(document.body)
            case ("draft", _): values[name] = .bool(isDraft)
            case ("slug", nil): values[name] = .text(slug)
            case ("title", nil): values[name] = .text(slug)
            case (_, .text(let raw)?):
                do {
                    values[name] = try type.value(from: raw, zone: timeZone)
                } catch {
                    throw SourceError(file: displayName, line: document.line(of: name),
                                      reason: "front matter '\(name)': expected \(error.expected), found '\(error.found)'")
                }
            case (_, .list(let items)?): values[name] = type == .list ? .list(items) : .text(items.joined(separator: ", "))
            case (_, .null?), (_, nil): values[name] = .null
            }
        }
        // The conventions of Hugo (`draft: true`) and Jekyll (`published: false`) need no declaring.
        let conventions: Set<String> = ["draft", "published"]
        let undeclared = document.fields.keys.filter { key in !conventions.contains(key) && !fields.contains { $0.name == key } }.sorted()
        if !undeclared.isEmpty {
            warnings.append(SourceError(file: displayName, line: undeclared.map(document.line(of:)).min(),
                                        reason: "front matter keys not declared as fields are ignored: \(undeclared.joined(separator: ", "))"))
        }
        try emit(Record(key: slug, line: 1, fields: values))
        return warnings
    }
}
