import Foundation

/// A JSON value, as sitegen's own parser reads it (object keys keep their order).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double, integer: Int64?)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    /// The member named `key` of an object (the first, if repeated).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The value as text when it is a string.
    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The items when it is an array.
    public var array: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// The value as a record field's raw text: strings as they are, numbers and booleans in JSON notation,
    /// `nil` for null; arrays and objects are not scalars and give `nil` too.
    public var scalarText: String? {
        switch self {
        case .null, .array, .object: return nil
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number, let integer): return integer.map(String.init) ?? String(number)
        case .string(let text): return text
        }
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a, _), .number(let b, _)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a.map(\.key) == b.map(\.key) && a.map(\.value) == b.map(\.value)
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let flag): hasher.combine(flag)
        case .number(let number, _): hasher.combine(number)
        case .string(let text): hasher.combine(text)
        case .array(let items): hasher.combine(items)
        case .object(let members): for member in members { hasher.combine(member.key); hasher.combine(member.value) }
        }
    }
}

/// Parses JSON (RFC 8259) from UTF-8 bytes, reporting errors at their line and column.
public struct JSONParser {
    /// A syntax error: where, and what was expected.
    public struct SyntaxError: Error, Sendable, Equatable {
        public var line: Int
        public var column: Int
        public var reason: String
    }

    private let bytes: [UInt8]
    private var position: Int
    private var line: Int
    private var lineStart: Int
    private var depth = 0
    private static let maximumDepth = 512

    /// Prepares to parse `bytes`; `line` is the line number of the first byte (for NDJSON lines).
    public init(bytes: [UInt8], line: Int = 1) {
        self.bytes = bytes
        position = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        self.line = line
        lineStart = position
    }

    /// Parses one whole document: a value and nothing after it but white space.
    public mutating func parseDocument() throws(SyntaxError) -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        guard position == bytes.count else { throw error("unexpected text after the JSON value") }
        return value
    }

    /// Parses a value and returns it with the line it started on.
    public mutating func parseValue() throws(SyntaxError) -> JSONValue {
        skipWhitespace()
        guard position < bytes.count else { throw error("the text ends where a value was expected") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character '\(character(at: position))'; expected a value")
        }
    }

    /// The line the parser is at (for callers reading several values).
    public var currentLine: Int { line }

    /// Skips white space; returns whether anything but white space remains.
    public mutating func hasMoreContent() -> Bool {
        skipWhitespace()
        return position < bytes.count
    }

    /// Consumes `byte` after optional white space, or throws saying it was expected.
    public mutating func expect(_ byte: UInt8, _ what: String) throws(SyntaxError) {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else {
            throw error(position < bytes.count ? "unexpected character '\(character(at: position))'; expected \(what)" : "the text ends; expected \(what)")
        }
        position += 1
    }

    /// Consumes `byte` after optional white space if it is next.
    public mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    private mutating func parseObject() throws(SyntaxError) -> JSONValue {
        try enter()
        position += 1
        var members: [(key: String, value: JSONValue)] = []
        if consume(UInt8(ascii: "}")) { depth -= 1; return .object(members) }
        repeat {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw error(position < bytes.count ? "unexpected character '\(character(at: position))'; expected a quoted member name" : "the text ends inside an object")
            }
            let key = try parseString()
            try expect(UInt8(ascii: ":"), "':' after the member name")
            members.append((key, try parseValue()))
        } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"), "',' or '}' in an object")
        depth -= 1
        return .object(members)
    }

    private mutating func parseArray() throws(SyntaxError) -> JSONValue {
        try enter()
        position += 1
        var items: [JSONValue] = []
        if consume(UInt8(ascii: "]")) { depth -= 1; return .array(items) }
        repeat { items.append(try parseValue()) } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"), "',' or ']' in an array")
        depth -= 1
        return .array(items)
    }

    private mutating func enter() throws(SyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw error("values nested more than \(Self.maximumDepth) deep") }
    }

    private mutating func parseString() throws(SyntaxError) -> String {
        let start = position
        position += 1
        var scalars: [UInt8] = []
        var segmentStart = position
        while position < bytes.count {
            // Plain text runs to the next quote, backslash or control character: skipped through the buffer
            // (bodies of kilobytes are most of a record file's bytes).
            position = bytes.withUnsafeBufferPointer { buffer in
                var index = position
                while index < buffer.count {
                    let byte = buffer[index]
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                    index += 1
                }
                return index
            }
            guard position < bytes.count else { break }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text: String?
                // From contiguous memory: the generic path of String(validating:) is several times slower.
                if scalars.isEmpty {
                    let range = segmentStart..<position
                    text = bytes.withUnsafeBufferPointer { String(validating: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
                } else {
                    scalars.append(contentsOf: bytes[segmentStart..<position])
                    text = scalars.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) }
                }
                position += 1
                guard let text else { throw error("a string is not valid UTF-8", at: start) }
                return text
            }
            if byte < 0x20 {
                throw error(byte == 0x0A ? "a string is not closed before the end of the line" : "a control character inside a string; escape it")
            }
            if byte == UInt8(ascii: "\\") {
                scalars.append(contentsOf: bytes[segmentStart..<position])
                position += 1
                guard position < bytes.count else { break }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hexQuad()
                    if (0xD800...0xDBFF).contains(code) {
                        // A high surrogate must be followed by an escaped low one.
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                            throw error("a lone UTF-16 surrogate in a \\u escape")
                        }
                        position += 2
                        let low = try hexQuad()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("a lone UTF-16 surrogate in a \\u escape") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(code) {
                        throw error("a lone UTF-16 surrogate in a \\u escape")
                    }
                    scalars.append(contentsOf: Array(String(Character(Unicode.Scalar(code)!)).utf8))
                default:
                    throw error("unknown escape '\\\(character(at: position - 1))' in a string")
                }
                segmentStart = position
                continue
            }
            position += 1
        }
        throw error("a string is never closed", at: start)
    }

    private mutating func hexQuad() throws(SyntaxError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for byte in bytes[position..<(position + 4)] {
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - 48)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - 87)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - 55)
            default: throw error("a \\u escape needs four hex digits")
            }
            value = value * 16 + digit
        }
        position += 4
        return value
    }

    private mutating func parseNumber() throws(SyntaxError) -> JSONValue {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        func digits() -> Int {
            let from = position
            while position < bytes.count, bytes[position] >= 48, bytes[position] <= 57 { position += 1 }
            return position - from
        }
        let integerDigits = digits()
        guard integerDigits > 0 else { throw error("a number needs digits", at: start) }
        if integerDigits > 1, bytes[position - integerDigits] == UInt8(ascii: "0") { throw error("a number may not start with 0", at: start) }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            isInteger = false
            guard digits() > 0 else { throw error("a number needs digits after '.'", at: start) }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            isInteger = false
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { throw error("a number needs digits in its exponent", at: start) }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        let number = Double(text) ?? 0
        return .number(number, integer: isInteger ? Int64(text) : nil)
    }

    private mutating func parseLiteral(_ word: String, _ value: JSONValue) throws(SyntaxError) -> JSONValue {
        let utf8 = Array(word.utf8)
        guard bytes.count - position >= utf8.count, Array(bytes[position..<(position + utf8.count)]) == utf8 else {
            throw error("unexpected text; expected a value such as \(word)")
        }
        position += utf8.count
        return value
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0D: position += 1
            case 0x0A:
                position += 1
                line += 1
                lineStart = position
            default: return
            }
        }
    }

    private func character(at index: Int) -> String {
        guard index < bytes.count else { return "" }
        let byte = bytes[index]
        return byte >= 0x20 && byte < 0x7F ? String(UnicodeScalar(byte)) : String(format: "\\u{%02X}", byte)
    }

    private func error(_ reason: String, at index: Int? = nil) -> SyntaxError {
        let at = index ?? position
        // Columns count characters, not bytes, from the start of the line.
        let column = String(decoding: bytes[min(lineStart, at)..<min(at, bytes.count)], as: UTF8.self).count + 1
        return SyntaxError(line: line, column: column, reason: reason)
    }
}
