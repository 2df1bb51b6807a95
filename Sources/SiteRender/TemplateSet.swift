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
        for file in files {
            let name = file.deletingPathExtension().lastPathComponent
            let text: String
            do {
                text = try String(contentsOf: file, encoding: .utf8)
            } catch {
                throw .unreadable(file: file.path, reason: "\(error)")
            }
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
        }
    }
}
