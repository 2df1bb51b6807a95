import Foundation
import Yams

/// A Markdown file with YAML front matter between `---` lines: the fields, and the body as Markdown.
public struct FrontMatterDocument: Sendable {
    /// Front matter key to value (scalars as text; sequences joined by the caller's rules are kept as lists).
    public var fields: [String: FrontMatterValue]
    /// The Markdown after the closing `---`.
    public var body: String
    /// The 1-based line on which the body starts.
    public var bodyLine: Int

    /// Splits and parses `text`; errors name `file` and the line of the front matter at fault.
    public init(parsing text: String, file: String) throws(SourceError) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if let first = lines.first, first.hasPrefix("\u{FEFF}") { lines[0] = first.dropFirst() }
        guard let first = lines.first, first.trimmingCharacters(in: .whitespaces) == "---" else {
            fields = [:]
            body = text
            bodyLine = 1
            return
        }
        guard let closing = lines.indices.dropFirst().first(where: {
            let line = lines[$0].trimmingCharacters(in: .whitespaces)
            return line == "---" || line == "..."
        }) else {
            throw SourceError(file: file, line: 1, reason: "front matter opened with '---' is never closed; expected a line '---' after it")
        }
        let yaml = lines[1..<closing].joined(separator: "\n")
        let node: Node?
        do {
            node = try Yams.compose(yaml: yaml)
        } catch YamlError.duplicatedKeysInMapping(let duplicates, _) {
            let key = duplicates.first ?? ""
            throw SourceError(file: file, line: Self.secondLine(definingKey: key, in: lines[1..<closing]),
                              reason: "duplicate front matter key '\(key)'")
        } catch let error as YamlError {
            throw Self.sourceError(error, file: file)
        } catch {
            throw SourceError(file: file, line: 2, reason: "invalid YAML front matter: \(error)")
        }
        var fields: [String: FrontMatterValue] = [:]
        if let node {
            guard let mapping = node.mapping else {
                throw SourceError(file: file, line: (node.mark?.line ?? 1) + 1,
                                  reason: "front matter must be a mapping of names to values (name: value)")
            }
            for (keyNode, valueNode) in mapping {
                guard let key = keyNode.scalar?.string else {
                    throw SourceError(file: file, line: (keyNode.mark?.line ?? 1) + 1, reason: "a front matter key must be plain text")
                }
                if fields[key] != nil {
                    throw SourceError(file: file, line: (keyNode.mark?.line ?? 1) + 1, column: keyNode.mark?.column,
                                      reason: "duplicate front matter key '\(key)'")
                }
                fields[key] = try FrontMatterValue(valueNode, file: file)
            }
        }
        self.fields = fields
        self.body = lines[(closing + 1)...].joined(separator: "\n")
        self.bodyLine = closing + 2
    }

    /// The file line where `key` is defined a second time (Yams names only the mapping's line).
    private static func secondLine(definingKey key: String, in lines: ArraySlice<Substring>) -> Int? {
        let definitions = lines.indices.filter { lines[$0].drop { $0 == " " }.hasPrefix(key + ":") }
        return definitions.dropFirst().first.map { $0 + 1 }
    }

    private static func sourceError(_ error: YamlError, file: String) -> SourceError {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            // +1: the YAML starts on the line after the opening '---'.
            return SourceError(file: file, line: mark.line + 1, column: mark.column, reason: "invalid YAML front matter: \(problem)")
        default:
            return SourceError(file: file, line: 2, reason: "invalid YAML front matter: \(error)")
        }
    }
}

/// A front matter value: text, or a list of texts (tags).
public enum FrontMatterValue: Sendable, Hashable {
    case text(String)
    case list([String])
    case null

    init(_ node: Node, file: String) throws(SourceError) {
        switch node {
        case .scalar(let scalar):
            self = scalar.style == .plain && ["", "~", "null", "Null", "NULL"].contains(scalar.string) ? .null : .text(scalar.string)
        case .sequence(let sequence):
            var items: [String] = []
            for item in sequence {
                guard let text = item.scalar?.string else {
                    throw SourceError(file: file, line: (item.mark?.line ?? 1) + 1, reason: "a list in front matter may hold only plain values")
                }
                items.append(text)
            }
            self = .list(items)
        default:
            throw SourceError(file: file, line: (node.mark?.line ?? 1) + 1,
                              reason: "nested mappings are not supported in front matter; expected text or a list")
        }
    }
}
