import Foundation
import Mustache

/// The Mustache templates of a site, by name (file name without `.mustache`), with partials and layouts.
///
/// Layouts use Mustache inheritance: a page template starts with `{{<base}}` and fills the `{{$blocks}}` the
/// base template declares.
public struct TemplateSet: Sendable {
    private let library: MustacheLibrary
    /// The names of every template loaded, sorted.
    public let names: [String]
    /// Each template's file and text, to say where a name is used.
    private let sources: [String: (file: String, text: String)]

    /// A tag that includes a partial (`{{> name}}`) or extends a layout (`{{< name}}`).
    private static let reference = try! NSRegularExpression(pattern: #"\{\{[><]\s*([^\s}]+)\s*\}\}"#)

    /// Loads every `*.mustache` file directly in `directory`; a template that does not parse is an error naming its file and line.
    public init(directory: URL) throws(TemplateError) {
        let files: [URL]
        do {
            files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "mustache" }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
        } catch {
            throw .missingDirectory(directory.path)
        }
        var library = MustacheLibrary()
        var sources: [String: (file: String, text: String)] = [:]
        for file in files {
            let name = file.deletingPathExtension().lastPathComponent
            let text: String
            do {
                text = try String(contentsOf: file, encoding: .utf8)
            } catch {
                throw .unreadable(file: file.path, reason: "\(error)")
            }
            sources[name] = (file.path, text)
            do {
                library.register(try MustacheTemplate(string: text), named: name)
            } catch let error as MustacheTemplate.ParserError {
                throw .syntax(file: file.path, line: error.context.lineNumber, column: error.context.columnNumber,
                              reason: "\(error.error)")
            } catch {
                throw .syntax(file: file.path, line: 1, column: 1, reason: "\(error)")
            }
        }
        self.library = library
        self.names = files.map { $0.deletingPathExtension().lastPathComponent }
        self.sources = sources
        // A partial or layout that is not there would render as nothing; it is an error where it is named.
        let reference = Self.reference
        for name in names {
            let (file, text) = sources[name]!
            for match in reference.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(match.range(at: 1), in: text)!])
                guard sources[target] == nil else { continue }
                let before = text[..<Range(match.range, in: text)!.lowerBound]
                let line = before.filter { $0 == "\n" }.count + 1
                let column = before.distance(from: before.lastIndex(of: "\n").map { before.index(after: $0) } ?? before.startIndex, to: before.endIndex) + 1
                throw .missingPartial(name: target, file: file, line: line, column: column, available: names)
            }
        }
    }

    /// The template `name` and every partial and layout it uses, directly or through others, as
    /// `(name, text)` sorted by name: what a page rendered with it depends on.
    public func sources(usedBy name: String) -> [(name: String, text: String)] {
        let reference = Self.reference
        var seen: Set<String> = [], pending = [name]
        while let next = pending.popLast() {
            guard seen.insert(next).inserted, let text = sources[next]?.text else { continue }
            for match in reference.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                pending.append(String(text[Range(match.range(at: 1), in: text)!]))
            }
        }
        return seen.sorted().compactMap { name in sources[name].map { (name, $0.text) } }
    }

    /// Renders the template `name` with `context`, where only `knownNames` may be looked up without a
    /// value: a name that is neither in the context nor known (a misspelt field) is an error naming the
    /// template file and line where it is used, not an empty string on a published page.
    public func render(_ name: String, context: [String: Any], knownNames: Set<String>) throws(TemplateError) -> String {
        let root = StrictRoot(values: context, knownNames: knownNames)
        guard let output = library.render(root, withTemplate: name) else {
            throw .missingTemplate(name: name, available: names)
        }
        if let unknown = root.unknownNames.sorted().first {
            let (file, line, column) = location(of: unknown, preferring: name)
            throw .unknownVariable(name: unknown, file: file, line: line, column: column)
        }
        return output
    }

    /// Where a tag first names `variable`: in the template `preferred`, else in any other, by name.
    private func location(of variable: String, preferring preferred: String) -> (String, Int, Int) {
        let escaped = NSRegularExpression.escapedPattern(for: variable)
        let pattern = try! NSRegularExpression(pattern: #"\{\{[#^&{/]?\s*(?:[A-Za-z_]+\()?"# + escaped + #"(?=[\s.}|)])"#)
        for name in [preferred] + names where sources[name] != nil {
            let (file, text) = sources[name]!
            guard let match = pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
                let range = Range(match.range, in: text) else { continue }
            let before = text[..<range.lowerBound]
            let line = before.filter { $0 == "\n" }.count + 1
            let column = before.distance(from: before.lastIndex(of: "\n").map { before.index(after: $0) } ?? before.startIndex, to: before.endIndex) + 1
            return (file, line, column)
        }
        return (sources[preferred]?.file ?? preferred, 1, 1)
    }

    /// Renders the template `name` with `context` (dictionaries, arrays, strings, numbers, booleans).
    public func render(_ name: String, context: [String: Any]) throws(TemplateError) -> String {
        guard let output = library.render(context, withTemplate: name) else {
            throw .missingTemplate(name: name, available: names)
        }
        return output
    }
}

/// Why templates could not be loaded or used.
public enum TemplateError: Error, CustomStringConvertible, Equatable {
    case missingDirectory(String)
    case unreadable(file: String, reason: String)
    case syntax(file: String, line: Int, column: Int, reason: String)
    case missingTemplate(name: String, available: [String])
    case unknownVariable(name: String, file: String, line: Int, column: Int)
    case missingPartial(name: String, file: String, line: Int, column: Int, available: [String])

    public var description: String {
        switch self {
        case .missingDirectory(let path):
            return "\(path): no templates folder; expected a folder of .mustache files"
        case .unreadable(let file, let reason):
            return "\(file): cannot read the template: \(reason)"
        case .syntax(let file, let line, let column, let reason):
            return "\(file):\(line):\(column): template syntax error: \(reason)"
        case .missingTemplate(let name, let available):
            return "no template '\(name).mustache'; the templates folder has: \(available.joined(separator: ", "))"
        case .missingPartial(let name, let file, let line, let column, let available):
            return "\(file):\(line):\(column): no template '\(name).mustache' to include; the templates folder has: \(available.joined(separator: ", "))"
        case .unknownVariable(let name, let file, let line, let column):
            return "\(file):\(line):\(column): '\(name)' is not a field or a value this page has; check its spelling"
        }
    }
}

/// A page's context as the bottom of Mustache's lookup stack: a name that reaches it unfound is not in
/// any scope of the page, and is recorded unless it is one that a page may lack (an optional field).
private final class StrictRoot: MustacheParent {
    let values: [String: Any]
    let knownNames: Set<String>
    private(set) var unknownNames = Set<String>()

    init(values: [String: Any], knownNames: Set<String>) {
        self.values = values
        self.knownNames = knownNames
    }

    func child(named name: String) -> Any? {
        if let value = values[name] { return value }
        if !knownNames.contains(name) { unknownNames.insert(name) }
        return nil
    }
}
