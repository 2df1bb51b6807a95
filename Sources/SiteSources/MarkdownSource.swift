import Foundation

/// A Markdown file with YAML front matter: one record keyed by its file name, its body kept as Markdown.
public struct MarkdownSource: Source {
    /// Where the file is.
    public let url: URL
    /// The file as messages name it.
    public let displayName: String
    /// Declared fields (from front matter) and their types; `body`, `slug` and `title` are filled by sitegen.
    public let fields: [(name: String, type: FieldType)]

    /// Reads the Markdown file at `url`, typing the declared front matter `fields`.
    public init(url: URL, displayName: String, fields: [(name: String, type: FieldType)]) {
        self.url = url
        self.displayName = displayName
        self.fields = fields
    }

    /// Reads the file as one record keyed by its name; undeclared front matter keys are warned about.
    public func read(_ input: inout SourceInput, emit: (Record) throws(SourceError) -> Void) throws(SourceError) -> [SourceError] {
        let text = try decodeText(input.readAll(), displayName: displayName)
        let document = try FrontMatterDocument(parsing: text, file: displayName)
        let slug = url.deletingPathExtension().lastPathComponent
        var values: [String: FieldValue] = [:]
        var warnings: [SourceError] = []
        for (name, type) in fields {
            switch (name, document.fields[name]) {
            case ("body", _): values[name] = .text(document.body)
            case ("slug", nil): values[name] = .text(slug)
            case ("title", nil): values[name] = .text(slug)
            case (_, .text(let raw)?):
                do {
                    values[name] = try type.value(from: raw)
                } catch {
                    throw SourceError(file: displayName, line: 2,
                                      reason: "front matter '\(name)': expected \(error.expected), found '\(error.found)'")
                }
            case (_, .list(let items)?): values[name] = type == .list ? .list(items) : .text(items.joined(separator: ", "))
            case (_, .null?), (_, nil): values[name] = .null
            }
        }
        let undeclared = document.fields.keys.filter { key in !fields.contains { $0.name == key } }.sorted()
        if !undeclared.isEmpty {
            warnings.append(SourceError(file: displayName, line: 2,
                                        reason: "front matter keys not declared as fields are ignored: \(undeclared.joined(separator: ", "))"))
        }
        try emit(Record(key: slug, line: 1, fields: values))
        return warnings
    }
}
