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
    /// The front matter's bytes (from the file's second line), to find the line a key is on.
    private var frontMatter: ArraySlice<UInt8> = []

    /// Splits and parses `text`; errors name `file` and the line of the front matter at fault.
    public init(parsing text: String, file: String) throws(SourceError) {
        // The split works on UTF-8 offsets: splitting the whole file into Character lines and joining the body
        // again cost more than the YAML itself on a load of Markdown records.
        let bytes = Array(text.utf8)
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        let firstEnd = Self.lineEnd(in: bytes, from: start)
        guard Self.isFence(bytes[start..<firstEnd], closing: false) else {
            // Hugo's other front matter formats: published as text, a page would show its settings.
            if let format = Self.otherFrontMatterFormat(bytes[start..<firstEnd]) {
                throw SourceError(file: file, line: 1, reason: "front matter in \(format) is not read; write it as YAML between '---' lines "
                                  + "(`hugo convert toYAML` converts a Hugo site's)")
            }
            fields = [:]
            body = text
            bodyLine = 1
            return
        }
        var line = 2
        var lineStart = firstEnd + 1
        var closing: (start: Int, end: Int)?
        while lineStart <= bytes.count {
            let end = Self.lineEnd(in: bytes, from: lineStart)
            if Self.isFence(bytes[lineStart..<end], closing: true) {
                closing = (lineStart, end)
                break
            }
            line += 1
            lineStart = end + 1
        }
        guard let closing else {
            throw SourceError(file: file, line: 1, reason: "front matter opened with '---' is never closed; expected a line '---' after it")
        }
        let yaml = bytes[min(firstEnd + 1, closing.start)..<max(firstEnd + 1, closing.start - 1)]
        if let simple = Self.simpleFields(yaml) {
            self.fields = simple
        } else {
            // With the line break before the closing `---`: a block scalar (`|`, `>`) that ends the front
            // matter keeps its last newline, as it does anywhere else.
            self.fields = try Self.yamlFields(String(decoding: yaml, as: UTF8.self) + "\n", file: file)
        }
        self.body = closing.end < bytes.count ? String(decoding: bytes[(closing.end + 1)...], as: UTF8.self) : ""
        self.bodyLine = line + 1
        self.frontMatter = yaml
    }

    /// The 1-based line of the file on which `key` is set at the front matter's top level (its first line,
    /// the file's second, when no line sets it): where a message about the key's value should point.
    public func line(of key: String) -> Int {
        Self.definitionLines(of: key, in: frontMatter, topLevelOnly: true).first ?? 2
    }

    /// The file lines (the front matter starts on the second) where a line of `yaml` sets `key` (plain or
    /// quoted); at the left margin only, or at any indentation.
    private static func definitionLines(of key: String, in yaml: ArraySlice<UInt8>, topLevelOnly: Bool) -> [Int] {
        var lines: [Int] = []
        var number = 2
        var lineStart = yaml.startIndex
        while lineStart < yaml.endIndex {
            let end = yaml[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? yaml.endIndex
            let line = yaml[lineStart..<end]
            let indented = line.first == UInt8(ascii: " ") || line.first == UInt8(ascii: "\t")
            if !(topLevelOnly && indented), let colon = line.firstIndex(of: UInt8(ascii: ":")) {
                var name = String(String(decoding: line[..<colon], as: UTF8.self).trimmingBlanks())
                if name.count >= 2, let quote = name.first, quote == "\"" || quote == "'", name.last == quote {
                    name = String(name.dropFirst().dropLast())
                }
                if name == key { lines.append(number) }
            }
            number += 1
            lineStart = end + 1
        }
        return lines
    }

    /// The offset of the line feed ending the line that starts at `start`, or the end of the text.
    private static func lineEnd(in bytes: [UInt8], from start: Int) -> Int {
        bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
    }

    /// The format of front matter that a file's first line opens and sitegen does not read: TOML (`+++`) or
    /// JSON (`{` alone, or `{"`), as Hugo writes them.
    private static func otherFrontMatterFormat(_ line: ArraySlice<UInt8>) -> String? {
        // With a Windows line end's `\r`, as the `---` fence is read.
        let trimmed = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed == "+++" { return "TOML ('+++')" }
        if trimmed == "{" || trimmed.hasPrefix("{\"") || trimmed.hasPrefix("{ \"") { return "JSON" }
        return nil
    }

    /// Whether a line is `---` (or, closing, `...`), blanks around it allowed.
    private static func isFence(_ line: ArraySlice<UInt8>, closing: Bool) -> Bool {
        guard line.count < 64 else { return false }
        // Line ends may be CRLF.
        let trimmed = String(decoding: line, as: UTF8.self).trimmingBlanks(newlines: true)
        return trimmed == "---" || (closing && trimmed == "...")
    }

    /// Parses front matter with Yams, mapping its errors to lines of the file.
    static func yamlFields(_ yaml: String, file: String) throws(SourceError) -> [String: FrontMatterValue] {
        let node: Node?
        do {
            node = try Yams.compose(yaml: yaml)
        } catch YamlError.duplicatedKeysInMapping(let duplicates, _) {
            let key = duplicates.first ?? ""
            throw SourceError(file: file, line: Self.secondLine(definingKey: key, in: yaml),
                              reason: "duplicate front matter key '\(key)'")
        } catch let error as YamlError {
            throw Self.sourceError(error, file: file)
        } catch {
            throw SourceError(file: file, line: 2, reason: "invalid YAML front matter: \(error)")
        }
        var fields: [String: FrontMatterValue] = [:]
        guard let node else { return fields }
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
        return fields
    }

    /// The file line where `key` is defined a second time (Yams names only the mapping's line).
    private static func secondLine(definingKey key: String, in yaml: String) -> Int? {
        definitionLines(of: key, in: Array(yaml.utf8)[...], topLevelOnly: false).dropFirst().first
    }

    /// Front matter in the shape nearly every file has (`name: value` lines at the left margin, values plain,
    /// quoted without escapes, or a one-line `[a, b]` list), parsed without Yams, which cost two thirds of a
    /// Markdown load; nil for anything else, which Yams then parses and reports on.
    static func simpleFields(_ yaml: ArraySlice<UInt8>) -> [String: FrontMatterValue]? {
        var fields: [String: FrontMatterValue] = [:]
        var lineStart = yaml.startIndex
        while lineStart < yaml.endIndex {
            var end = yaml[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? yaml.endIndex
            let next = end + 1
            if end > lineStart, yaml[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            let line = yaml[lineStart..<end]
            lineStart = next
            if line.allSatisfy({ $0 == UInt8(ascii: " ") }) || line.first == UInt8(ascii: "#") { continue }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
                  let first = line.first, isKeyStart(first),
                  line[..<colon].allSatisfy(isKeyByte) else { return nil }
            var valueStart = colon + 1
            if valueStart < end, line[valueStart] != UInt8(ascii: " ") { return nil }
            while valueStart < end, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
            var valueEnd = end
            while valueEnd > valueStart, line[valueEnd - 1] == UInt8(ascii: " ") { valueEnd -= 1 }
            let key = String(decoding: line[..<colon], as: UTF8.self)
            guard fields[key] == nil, let value = simpleValue(line[valueStart..<valueEnd]) else { return nil }
            fields[key] = value
        }
        return fields
    }

    private static func isKeyStart(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || byte == UInt8(ascii: "_")
    }

    private static func isKeyByte(_ byte: UInt8) -> Bool {
        isKeyStart(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
    }

    /// One value of the simple shape, or nil when YAML could read it otherwise than its text says.
    private static func simpleValue(_ value: ArraySlice<UInt8>) -> FrontMatterValue? {
        guard let first = value.first else { return .null }
        switch first {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            // Quoted without escapes: the text between the quotes, exactly.
            guard value.count >= 2, value.last == first else { return nil }
            let inner = value.dropFirst().dropLast()
            guard !inner.contains(first), !inner.contains(UInt8(ascii: "\\")), let text = printable(inner) else { return nil }
            return .text(text)
        case UInt8(ascii: "["):
            guard value.last == UInt8(ascii: "]") else { return nil }
            let inner = value.dropFirst().dropLast()
            if inner.allSatisfy({ $0 == UInt8(ascii: " ") }) { return .list([]) }
            var items: [String] = []
            for item in inner.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
                var item = item
                while item.first == UInt8(ascii: " ") { item = item.dropFirst() }
                while item.last == UInt8(ascii: " ") { item = item.dropLast() }
                guard isPlain(item, inFlow: true), let text = printable(item) else { return nil }
                // A null item is no item (`[a, ~]` is one tag), as YAML reads it.
                if !FrontMatterValue.nullWords.contains(text) { items.append(text) }
            }
            return .list(items)
        default:
            guard isPlain(value, inFlow: false), let text = printable(value) else { return nil }
            return FrontMatterValue.nullWords.contains(text) ? .null : .text(text)
        }
    }

    /// Whether `text` is a plain YAML scalar that means just its characters: no indicator first, no
    /// `: ` or ` #` inside, no trailing `:`, and in a flow list none of `,[]{}:` or quotes.
    private static func isPlain(_ text: ArraySlice<UInt8>, inFlow: Bool) -> Bool {
        guard let first = text.first, !"-?:,[]{}#&*!|>'\"%@`".utf8.contains(first) else { return false }
        var previous: UInt8 = 0
        for byte in text {
            if byte == UInt8(ascii: "\t") || (byte == UInt8(ascii: " ") && previous == UInt8(ascii: ":")) { return false }
            if byte == UInt8(ascii: "#") && previous == UInt8(ascii: " ") { return false }
            // libyaml's older scanners reject ':' anywhere in a flow-context plain scalar.
            if inFlow, "[]{},\"':".utf8.contains(byte) { return false }
            previous = byte
        }
        return previous != UInt8(ascii: ":")
    }

    /// The bytes as text when every character is one YAML allows unescaped (no controls, no BOM, no
    /// non-characters, none of the line breaks YAML 1.1 adds: U+0085, U+2028, U+2029); nil otherwise.
    private static func printable(_ bytes: ArraySlice<UInt8>) -> String? {
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return String(decoding: bytes, as: UTF8.self) }
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x20...0x7E, 0xA0...0x2027, 0x202A...0xD7FF, 0xE000...0xFEFE, 0xFF00...0xFFFD, 0x10000...0x10FFFF: continue
            default: return nil
            }
        }
        return text
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

    /// The plain words YAML reads as null (an empty plain value is null too).
    static let nullWords: Set<String> = ["~", "null", "Null", "NULL"]

    /// Whether `scalar` is YAML's null: a plain null word, or nothing at all.
    private static func isNull(_ scalar: Node.Scalar) -> Bool {
        scalar.style == .plain && (scalar.string.isEmpty || nullWords.contains(scalar.string))
    }

    init(_ node: Node, file: String) throws(SourceError) {
        switch node {
        case .scalar(let scalar):
            self = Self.isNull(scalar) ? .null : .text(scalar.string)
        case .sequence(let sequence):
            var items: [String] = []
            for item in sequence {
                guard let scalar = item.scalar else {
                    throw SourceError(file: file, line: (item.mark?.line ?? 1) + 1, reason: "a list in front matter may hold only plain values")
                }
                // A null item (`- ~`, `- null`, a bare `-`) is no item: a tag named `~` or nothing is not one.
                if Self.isNull(scalar) { continue }
                items.append(scalar.string)
            }
            self = .list(items)
        default:
            throw SourceError(file: file, line: (node.mark?.line ?? 1) + 1,
                              reason: "nested mappings are not supported in front matter; expected text or a list")
        }
    }
}
