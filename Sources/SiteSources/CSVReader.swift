import Foundation

/// Reads RFC 4180 CSV: a header row, quoted fields with embedded commas, quotes and newlines, an optional BOM.
///
/// Rows end at LF, CRLF or a bare CR (old Mac line ends, as Excel's "CSV (Macintosh)" still writes);
/// each of them counts as one line in errors.
///
/// Bytes are fed in chunks of any size (`feed`, then `finish`), so a file of any length is read in
/// constant memory; each row keeps the line it starts on, so type errors can name it.
///
/// ```swift
/// var reader = CSVReader(file: "banks.csv")
/// try reader.feed(chunk) { row in … }    // the header is the first row
/// try reader.finish { row in … }
/// ```
public struct CSVReader {
    /// One row: its fields and the 1-based line it starts on.
    public struct Row: Sendable, Equatable {
        /// The row's fields, as text.
        public var fields: [String]
        /// The 1-based line the row starts on.
        public var line: Int
    }

    /// The file name used in errors.
    public let file: String

    private var fields: [String] = []
    private var field: [UInt8] = []
    private var line = 1, column = 0
    private var rowStartLine = 1
    private var inQuotes = false
    private var quoteStart = (line: 1, column: 1)
    private var fieldWasQuoted = false
    /// A quote just closed a quoted field, unless the next byte (maybe in the next chunk) is another quote.
    private var quoteMayBeDoubled = false
    /// The last byte was a CR, which already ended the line; an LF next (maybe in the next chunk) is part of that CRLF.
    private var lineEndedByCR = false
    private var atStart = true
    private var startBytes: [UInt8] = []

    /// Makes a reader whose errors name `file`.
    public init(file: String) {
        self.file = file
    }

    /// Splits `text` into the header and the data rows; throws at the first malformed row.
    public func read(_ text: String) throws(SourceError) -> (header: [String], rows: [Row]) {
        var reader = self
        var rows: [Row] = []
        try withTypedBytes(of: Array(text.utf8)) { (buffer: UnsafeRawBufferPointer) throws(SourceError) in
            try reader.feed(buffer) { rows.append($0) }
        }
        try reader.finish { rows.append($0) }
        guard let header = rows.first else {
            throw SourceError(file: file, reason: "the file is empty; expected a header row naming the columns")
        }
        let body = Array(rows.dropFirst())
        for row in body { try Self.check(row, against: header.fields, file: file) }
        return (Self.columnNames(header), body)
    }

    /// The header's column names, trimmed of surrounding spaces.
    public static func columnNames(_ header: Row) -> [String] {
        header.fields.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// Throws when `row` has not as many fields as the header names.
    public static func check(_ row: Row, against header: [String], file: String) throws(SourceError) {
        guard row.fields.count == header.count else {
            throw SourceError(file: file, line: row.line, reason: "\(row.fields.count) fields, but the header names \(header.count)")
        }
    }

    /// Reads the next bytes of the file, handing each row completed in them to `emit` (the header first).
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, emit: (Row) throws(SourceError) -> Void) throws(SourceError) {
        var index = 0
        if atStart {
            // The BOM may straddle chunks: hold the first bytes until there are three.
            let take = min(3 - startBytes.count, chunk.count)
            startBytes.append(contentsOf: chunk.prefix(take))
            index = take
            guard startBytes.count == 3 else { return }
            atStart = false
            let held = startBytes
            startBytes = []
            if held != [0xEF, 0xBB, 0xBF] {
                try withTypedBytes(of: held) { (bytes: UnsafeRawBufferPointer) throws(SourceError) in try scan(bytes, from: 0, emit: emit) }
            }
        }
        try scan(chunk, from: index, emit: emit)
    }

    /// Ends the file: emits the last row and throws if a quoted field was left open.
    public mutating func finish(emit: (Row) throws(SourceError) -> Void) throws(SourceError) {
        if atStart {
            atStart = false
            let held = startBytes
            startBytes = []
            try withTypedBytes(of: held) { (bytes: UnsafeRawBufferPointer) throws(SourceError) in try scan(bytes, from: 0, emit: emit) }
        }
        if quoteMayBeDoubled { inQuotes = false; quoteMayBeDoubled = false }
        if inQuotes {
            throw SourceError(file: file, line: quoteStart.line, column: quoteStart.column,
                              reason: "a quoted field is never closed; expected a closing quote (\")")
        }
        if !field.isEmpty || !fields.isEmpty || fieldWasQuoted { try endRow(emit) }
    }

    /// The offset of the first byte of `bytes` that does not begin or continue a UTF-8 character.
    private static func firstInvalidByte(in bytes: [UInt8]) -> Int {
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var offset = 0
        while case .valid(let encoded) = parser.parseScalar(from: &iterator) { offset += encoded.count }
        return min(offset, bytes.count - 1)
    }

    private mutating func endField() throws(SourceError) {
        guard let text = String(validating: field, as: UTF8.self) else {
            // Where: the field's place in its row, and the first byte that is no UTF-8 (Latin-1's é is 0xE9).
            if line == 1, fields.isEmpty, field.starts(with: [0xFF, 0xFE]) || field.starts(with: [0xFE, 0xFF]) {
                throw SourceError(file: file, line: 1, reason: "is UTF-16 text, not UTF-8; save the file as UTF-8")
            }
            let start = Self.firstInvalidByte(in: field)
            // A quoted field may span lines: the byte's own line, and what comes before it on that line.
            var badLine = fieldWasQuoted ? quoteStart.line : line
            var lineStart = 0
            for offset in 0..<start where field[offset] == UInt8(ascii: "\n")
                || (field[offset] == UInt8(ascii: "\r") && (offset + 1 == field.count || field[offset + 1] != UInt8(ascii: "\n"))) {
                badLine += 1
                lineStart = offset + 1
            }
            let before = String(decoding: field[max(lineStart, start - 20)..<start], as: UTF8.self)
            throw SourceError(file: file, line: badLine, reason: "field \(fields.count + 1) is not UTF-8 text (byte "
                + String(format: "0x%02X", field[start]) + (before.isEmpty ? "" : " after '\(before)'") + "); save the file as UTF-8")
        }
        fields.append(text)
        field.removeAll(keepingCapacity: true)
        fieldWasQuoted = false
    }

    private mutating func endRow(_ emit: (Row) throws(SourceError) -> Void) throws(SourceError) {
        try endField()
        // A blank line is no row (a trailing newline, or spacing between rows).
        if !(fields.count == 1 && fields[0].isEmpty) { try emit(Row(fields: fields, line: rowStartLine)) }
        fields.removeAll(keepingCapacity: true)
    }

    private mutating func scan(_ bytes: UnsafeRawBufferPointer, from start: Int, emit: (Row) throws(SourceError) -> Void) throws(SourceError) {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if lineEndedByCR {
                lineEndedByCR = false
                if byte == UInt8(ascii: "\n") {
                    if inQuotes { field.append(byte) }
                    index += 1
                    continue
                }
            }
            column += 1
            if quoteMayBeDoubled {
                quoteMayBeDoubled = false
                if byte == UInt8(ascii: "\"") {
                    field.append(byte)
                    index += 1
                    continue
                }
                inQuotes = false
            }
            if inQuotes {
                if byte == UInt8(ascii: "\"") {
                    quoteMayBeDoubled = true
                } else {
                    // The value keeps its line ends as written; only the count of lines is shared with unquoted text.
                    if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                        line += 1; column = 0
                        lineEndedByCR = byte == UInt8(ascii: "\r")
                    }
                    field.append(byte)
                }
            } else {
                switch byte {
                case UInt8(ascii: ","):
                    try endField()
                case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                    try endRow(emit)
                    line += 1; column = 0
                    rowStartLine = line
                    lineEndedByCR = byte == UInt8(ascii: "\r")
                case UInt8(ascii: "\""):
                    guard field.isEmpty, !fieldWasQuoted else {
                        throw SourceError(file: file, line: line, column: column,
                                          reason: "a quote inside an unquoted field; quote the whole field and double the quote (\"\")")
                    }
                    inQuotes = true
                    fieldWasQuoted = true
                    quoteStart = (line, column)
                default:
                    if fieldWasQuoted {
                        // A field that ran over lines to a quote that reads as its closing one was most likely
                        // never closed where it opened: that line is the one to fix.
                        if quoteStart.line != line {
                            throw SourceError(file: file, line: quoteStart.line, column: quoteStart.column,
                                              reason: "a quoted field opens here and runs to line \(line), where text follows the quote that closes it; "
                                                  + "is its closing quote (\") missing?")
                        }
                        throw SourceError(file: file, line: line, column: column,
                                          reason: "text after a closing quote; expected a comma or the end of the line")
                    }
                    field.append(byte)
                }
            }
            index += 1
        }
    }
}
