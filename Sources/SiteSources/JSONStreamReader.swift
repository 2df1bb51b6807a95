/// Reads a JSON document fed in chunks and hands over its parts one at a time, so a file of a million
/// records is never held whole: the values of a top-level array, or the members of a top-level object
/// with the values of one array member (a JSON Feed's `items`) handed over one by one.
///
/// Only the outer structure is followed here (strings, nesting, commas); each part is parsed by
/// `JSONParser`, which reports errors inside it at their line and column in the file.
struct JSONStreamReader {
    /// What the document is expected to be.
    enum Layout {
        /// `[ value, value, … ]`
        case array
        /// `{ "name": value, … }`, where the array member `streamedMember` has its values handed over one by one.
        case object(streamedMember: String)
    }

    /// A part of the document.
    enum Part {
        /// A value of the top-level array (or of the streamed member), with the line it starts on.
        case element(JSONValue, line: Int)
        /// A member of the top-level object, other than the streamed one.
        case member(String, JSONValue)
    }

    private enum State {
        case start, open, beforeKey, inKey, afterKey, beforeMemberValue, inMemberValue, afterMember
        case beforeFirstElement, beforeElement, inElement, afterElement, end
    }

    let layout: Layout
    private var state = State.start
    private var line = 1, column = 0
    private var atStart = true
    private var firstBytes: [UInt8] = []
    // The part being gathered, where it started, and how far its value is nested.
    private var part: [UInt8] = []
    private var partLine = 1, partColumn = 1
    private var depth = 0, inString = false, escaped = false, isScalar = false
    private var key = ""
    /// Whether the elements are those of the streamed member (then `]` returns to the object).
    private var inStreamedMember = false

    /// Prepares to read a document laid out as `layout`.
    init(layout: Layout) {
        self.layout = layout
    }

    /// Reads the next bytes, handing each part completed in them to `emit`.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, emit: (Part) throws(SourceError) -> Void,
                       error: (JSONParser.SyntaxError) -> SourceError) throws(SourceError)
    {
        var index = 0
        if atStart {
            // A byte order mark is not part of the document (the parser skips it too); it may straddle chunks.
            let take = min(3 - firstBytes.count, bytes.count)
            firstBytes += bytes.prefix(take)
            index = take
            guard firstBytes.count == 3 else { return }
            try endStart(emit: emit, error: error)
        }
        while index < bytes.count {
            try consume(bytes[index], emit: emit, error: error)
            index += 1
        }
    }

    private mutating func endStart(emit: (Part) throws(SourceError) -> Void, error: (JSONParser.SyntaxError) -> SourceError) throws(SourceError) {
        atStart = false
        let held = firstBytes
        firstBytes = []
        guard held != [0xEF, 0xBB, 0xBF] else { return }
        for byte in held { try consume(byte, emit: emit, error: error) }
    }

    private mutating func consume(_ byte: UInt8, emit: (Part) throws(SourceError) -> Void,
                                  error: (JSONParser.SyntaxError) -> SourceError) throws(SourceError)
    {
        if byte == 0x0A { line += 1; column = 0 } else { column += 1 }
        try step(byte, emit: emit, error: error)
    }

    /// Ends the document: a scalar still open is finished, and a document cut short is an error.
    mutating func finish(emit: (Part) throws(SourceError) -> Void, error: (JSONParser.SyntaxError) -> SourceError) throws(SourceError) {
        if atStart { try endStart(emit: emit, error: error) }
        if isScalar, state == .inElement || state == .inMemberValue {
            try endPart(emit: emit, error: error)
        }
        guard state == .end else {
            let expected: String
            switch state {
            case .start: expected = layoutOpening
            case .inKey, .inMemberValue, .inElement: expected = "the end of the value"
            case .afterElement, .beforeFirstElement: expected = inStreamedMember ? "',' or ']' in \(streamedName)" : "',' or ']' in the array"
            case .afterMember, .beforeKey, .open: expected = "',' or '}' after a member"
            default: expected = "a value"
            }
            throw error(JSONParser.SyntaxError(line: line, column: column + 1, reason: "the text ends; expected \(expected)"))
        }
    }

    private var streamedName: String {
        if case .object(let member) = layout { return member }
        return "the array"
    }

    private var layoutOpening: String {
        switch layout {
        case .array: return "'[': the file must hold an array of objects"
        case .object: return "'{': a JSON Feed is one object"
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    private func unexpected(_ byte: UInt8, _ expected: String) -> JSONParser.SyntaxError {
        let shown = byte >= 0x20 && byte < 0x7F ? String(UnicodeScalar(byte)) : "\\u{" + String(byte, radix: 16, uppercase: true) + "}"
        return JSONParser.SyntaxError(line: line, column: column, reason: "unexpected character '\(shown)'; expected \(expected)")
    }

    private mutating func step(_ byte: UInt8, emit: (Part) throws(SourceError) -> Void,
                               error: (JSONParser.SyntaxError) -> SourceError) throws(SourceError)
    {
        switch state {
        case .start:
            guard !Self.isSpace(byte) else { return }
            switch (layout, byte) {
            case (.array, UInt8(ascii: "[")): state = .beforeFirstElement
            case (.object, UInt8(ascii: "{")): state = .open
            default: throw error(unexpected(byte, layoutOpening))
            }
        case .open, .beforeKey:
            guard !Self.isSpace(byte) else { return }
            if state == .open, byte == UInt8(ascii: "}") { state = .end; return }
            guard byte == UInt8(ascii: "\"") else { throw error(unexpected(byte, "a quoted member name")) }
            begin(byte)
            part.append(byte)
            state = .inKey
        case .inKey:
            part.append(byte)
            if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") {
                guard case .string(let name) = try parse(error: error) else { return }
                key = name
                state = .afterKey
            }
        case .afterKey:
            guard !Self.isSpace(byte) else { return }
            guard byte == UInt8(ascii: ":") else { throw error(unexpected(byte, "':' after the member name")) }
            state = .beforeMemberValue
        case .beforeMemberValue:
            guard !Self.isSpace(byte) else { return }
            if case .object(let streamed) = layout, key == streamed {
                guard byte == UInt8(ascii: "[") else { throw error(unexpected(byte, "'[': \(streamed) is an array")) }
                inStreamedMember = true
                state = .beforeFirstElement
                return
            }
            begin(byte)
            state = .inMemberValue
            try gather(byte, emit: emit, error: error)
        case .inMemberValue, .inElement:
            try gather(byte, emit: emit, error: error)
        case .afterMember:
            guard !Self.isSpace(byte) else { return }
            switch byte {
            case UInt8(ascii: ","): state = .beforeKey
            case UInt8(ascii: "}"): state = .end
            default: throw error(unexpected(byte, "',' or '}' after a member"))
            }
        case .beforeFirstElement, .beforeElement:
            guard !Self.isSpace(byte) else { return }
            if state == .beforeFirstElement, byte == UInt8(ascii: "]") { closeArray(); return }
            guard byte != UInt8(ascii: "]") else { throw error(unexpected(byte, "a value")) }
            begin(byte)
            state = .inElement
            try gather(byte, emit: emit, error: error)
        case .afterElement:
            guard !Self.isSpace(byte) else { return }
            switch byte {
            case UInt8(ascii: ","): state = .beforeElement
            case UInt8(ascii: "]"): closeArray()
            default: throw error(unexpected(byte, inStreamedMember ? "',' or ']' in \(streamedName)" : "',' or ']' in the array"))
            }
        case .end:
            guard !Self.isSpace(byte) else { return }
            let what = if case .array = layout { "the array" } else { "the feed object" }
            throw error(JSONParser.SyntaxError(line: line, column: column, reason: "unexpected text after \(what)"))
        }
    }

    private mutating func closeArray() {
        if inStreamedMember {
            inStreamedMember = false
            state = .afterMember
        } else {
            state = .end
        }
    }

    /// Starts gathering a part whose first byte is `byte`.
    private mutating func begin(_ byte: UInt8) {
        part.removeAll(keepingCapacity: true)
        partLine = line
        partColumn = column
        depth = 0
        inString = false
        escaped = false
        isScalar = byte != UInt8(ascii: "{") && byte != UInt8(ascii: "[") && byte != UInt8(ascii: "\"")
    }

    /// Adds `byte` to the part, and hands the part over when it is complete.
    private mutating func gather(_ byte: UInt8, emit: (Part) throws(SourceError) -> Void,
                                 error: (JSONParser.SyntaxError) -> SourceError) throws(SourceError)
    {
        if isScalar {
            // A number or literal ends at the first byte that cannot be in one; that byte is the structure's.
            if Self.isSpace(byte) || byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
                try endPart(emit: emit, error: error)
                try step(byte, emit: emit, error: error)
            } else {
                part.append(byte)
            }
            return
        }
        part.append(byte)
        if inString {
            if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") {
                inString = false
                if depth == 0 { try endPart(emit: emit, error: error) }
            }
            return
        }
        switch byte {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            if depth == 0 { try endPart(emit: emit, error: error) }
        default: break
        }
    }

    /// Parses the gathered part and hands it over.
    private mutating func endPart(emit: (Part) throws(SourceError) -> Void,
                                  error: (JSONParser.SyntaxError) -> SourceError) throws(SourceError)
    {
        let value = try parse(error: error)
        switch state {
        case .inElement:
            state = .afterElement
            try emit(.element(value, line: partLine))
        case .inMemberValue:
            state = .afterMember
            try emit(.member(key, value))
        default:
            break
        }
        isScalar = false
    }

    private func parse(error: (JSONParser.SyntaxError) -> SourceError) throws(SourceError) -> JSONValue {
        // Spaces before the part put its first byte in its own column, so errors inside it say where.
        var parser = JSONParser(bytes: Array(repeating: 0x20, count: partColumn - 1) + part, line: partLine)
        do throws(JSONParser.SyntaxError) {
            return try parser.parseDocument()
        } catch let syntaxError {
            throw error(syntaxError)
        }
    }
}
