/// A position in a template's `Character`s and the reads `TemplateParser` makes there: text up to a tag,
/// and the insides of tags (names, partial names, comments, delimiters, pragmas), each read as
/// swift-mustache 2.1.1 reads it, to the same errors.
struct TemplateReader {
    typealias SyntaxError = TemplateParser.SyntaxError

    let characters: [Character]
    var position = 0
    /// The offset where each line starts, to turn offsets into lines and columns.
    private let lineStarts: [Int]

    /// The whitespace a standalone tag may have around it.
    static let blanks: Set<Character> = [" ", "\t"]
    private static let nameCharacters = Set<Character>("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-_?()*")
    private static let plainNameCharacters = Set<Character>("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-_?*")
    private static let partialNameCharacters = Set<Character>("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-_?()*/")

    /// Starts at the beginning of `text`.
    init(_ text: String) {
        characters = Array(text)
        var lineStarts = [0]
        for (offset, character) in characters.enumerated() where character == "\n" || character == "\r\n" {
            lineStarts.append(offset + 1)
        }
        self.lineStarts = lineStarts
    }

    var isAtEnd: Bool { position == characters.count }

    /// The character at the position; `nil` at the end.
    var current: Character? { position < characters.count ? characters[position] : nil }

    /// The line and column (from 1) of a `Character` offset.
    func lineAndColumn(of offset: Int) -> (line: Int, column: Int) {
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        return (low + 1, offset - lineStarts[low] + 1)
    }

    // MARK: Characters

    mutating func read(while allowed: Set<Character>) -> Substring {
        let start = position
        while position < characters.count, allowed.contains(characters[position]) { position += 1 }
        return Substring(String(characters[start..<position]))
    }

    mutating func skipWhitespace() {
        while position < characters.count, characters[position].isWhitespace { position += 1 }
    }

    /// Reads `expected` if the text continues with it; an error when fewer characters are left, as
    /// swift-mustache has it (a template may not end with a lone `{`).
    mutating func read(_ expected: [Character]) throws(SyntaxError) -> Bool {
        guard characters.count - position >= expected.count else {
            throw SyntaxError(offset: position, reason: "the template ends inside a tag")
        }
        for (offset, character) in expected.enumerated() where characters[position + offset] != character {
            return false
        }
        position += expected.count
        return true
    }

    /// Reads text up to a line break (left unread) or the start delimiter (read).
    mutating func readText(upTo startDelimiter: [Character]) throws(SyntaxError) -> String {
        var text = ""
        while position < characters.count {
            let character = characters[position]
            if character == "\n" || character == "\r\n" { break }
            if character == startDelimiter[0], try read(startDelimiter) { break }
            text.append(character)
            position += 1
        }
        return text
    }

    /// Whether the tag just read ends its line, blanks aside (the end of the text counts); if so the
    /// line break is read too. Any line-breaking character counts here, where text lines end only at
    /// LF and CR LF.
    mutating func readLineEnd() -> Bool {
        guard position < characters.count else { return true }
        var end = position
        while end < characters.count, Self.blanks.contains(characters[end]) { end += 1 }
        guard end < characters.count, characters[end].isNewline else { return false }
        position = end + 1
        return true
    }

    // MARK: Insides of tags

    /// A variable or section name up to the end delimiter, with its transforms (`a(b(name))`).
    mutating func readName(endDelimiter: [Character]) throws(SyntaxError) -> (name: String, transforms: [String]) {
        let start = position
        skipWhitespace()
        let written = String(read(while: Self.nameCharacters))
        skipWhitespace()
        guard try read(endDelimiter) else {
            throw SyntaxError(offset: start, reason: "expected \(String(endDelimiter)) to close the tag")
        }
        guard let split = Self.splitTransforms(written) else {
            throw SyntaxError(offset: start, reason: "'\(written)' is not a name or a transform of one, as in {{uppercased(name)}}")
        }
        return split
    }

    /// `a(b(name))` as `("name", ["a", "b"])`; `nil` when the brackets do not pair up.
    static func splitTransforms(_ written: String) -> (name: String, transforms: [String])? {
        let characters = Array(written)
        var index = 0
        func readPlain() -> String {
            let start = index
            while index < characters.count, plainNameCharacters.contains(characters[index]) { index += 1 }
            return String(characters[start..<index])
        }
        let first = readPlain()
        guard index < characters.count else { return (written, []) }
        guard characters[index] == "(" else { return nil }
        index += 1
        var transforms = [first]
        while true {
            let name = readPlain()
            guard index < characters.count else { return nil }
            if characters[index] == "(" {
                index += 1
                transforms.append(name)
                continue
            }
            guard characters[index] == ")" else { return nil }
            var closing = 0
            while index < characters.count, characters[index] == ")" {
                closing += 1
                index += 1
            }
            return closing == transforms.count && index == characters.count ? (name, transforms) : nil
        }
    }

    /// A partial's or parent's name up to the end delimiter.
    mutating func readPartialName(endDelimiter: [Character]) throws(SyntaxError) -> String {
        let start = position
        skipWhitespace()
        let name = String(read(while: Self.partialNameCharacters))
        skipWhitespace()
        guard try read(endDelimiter) else {
            throw SyntaxError(offset: start, reason: "expected \(String(endDelimiter)) after the partial's name")
        }
        return name
    }

    /// Skips a comment's text and its end delimiter, matched as swift-mustache matches it: a partial
    /// match that fails starts again after the character that broke it.
    mutating func skipComment(endDelimiter delimiter: [Character]) throws(SyntaxError) {
        let start = position
        var matched = 0
        while position < characters.count {
            if characters[position] == delimiter[matched] {
                matched += 1
                if matched == delimiter.count {
                    position += 1
                    return
                }
            } else {
                matched = 0
            }
            position += 1
        }
        position = start
        throw SyntaxError(offset: start, reason: "the comment is never closed; expected \(String(delimiter))")
    }

    /// The new delimiters of `{{=<% %>=}}`.
    mutating func readDelimiters(endDelimiter: [Character], tagOffset: Int) throws(SyntaxError) -> (start: [Character], end: [Character]) {
        let invalid = SyntaxError(offset: tagOffset, reason: "expected new delimiters as in {{=<% %>=}}")
        skipWhitespace()
        let startBegin = position
        while position < characters.count, !characters[position].isWhitespace { position += 1 }
        guard position < characters.count else { throw invalid }
        let start = Array(characters[startBegin..<position])
        skipWhitespace()
        let endBegin = position
        while position < characters.count, characters[position] != "=", !characters[position].isWhitespace { position += 1 }
        guard position < characters.count else { throw invalid }
        let end = Array(characters[endBegin..<position])
        skipWhitespace()
        guard position < characters.count else { throw SyntaxError(offset: position, reason: "the template ends inside a tag") }
        guard characters[position] == "=" else { throw invalid }
        position += 1
        guard try read(endDelimiter), !start.isEmpty, !end.isEmpty else { throw invalid }
        return (start, end)
    }

    /// `{{%CONTENT_TYPE: TEXT}}` or `HTML`: whether variables are escaped for HTML from here on.
    mutating func readContentType(endDelimiter: [Character], tagOffset: Int) throws(SyntaxError) -> Bool {
        let invalid = SyntaxError(offset: tagOffset, reason: "expected {{%CONTENT_TYPE: HTML}} or {{%CONTENT_TYPE: TEXT}}")
        skipWhitespace()
        let variable = read(while: Self.plainNameCharacters)
        skipWhitespace()
        guard current == ":" else { throw invalid }
        position += 1
        skipWhitespace()
        let value = read(while: Self.plainNameCharacters)
        skipWhitespace()
        guard (try? read(endDelimiter)) == true, variable == "CONTENT_TYPE" else { throw invalid }
        switch value {
        case "HTML": return true
        case "TEXT": return false
        default: throw invalid
        }
    }
}
