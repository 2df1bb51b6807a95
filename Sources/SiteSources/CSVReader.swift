import Foundation

/// Reads RFC 4180 CSV: a header row, quoted fields with embedded commas, quotes and newlines, an optional BOM.
///
/// Each row keeps the line it starts on, so type errors can name it.
public struct CSVReader {
    /// One data row: its fields and the 1-based line it starts on.
    public struct Row: Sendable, Equatable {
        /// The row's fields, as text.
        public var fields: [String]
        /// The 1-based line the row starts on.
        public var line: Int
    }

    /// The file name used in errors.
    public let file: String

    /// Makes a reader whose errors name `file`.
    public init(file: String) {
        self.file = file
    }

    /// Splits `text` into the header and the data rows; throws at the first malformed row.
    public func read(_ text: String) throws(SourceError) -> (header: [String], rows: [Row]) {
        var rows: [Row] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var line = 1, column = 0
        var rowStartLine = 1
        var inQuotes = false
        var quoteStart = (line: 1, column: 1)
        var fieldWasQuoted = false
        var bytes = Array(text.utf8)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }

        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
            fieldWasQuoted = false
        }
        func endRow() {
            endField()
            // A blank line is no row (a trailing newline, or spacing between rows).
            if !(fields.count == 1 && fields[0].isEmpty) { rows.append(Row(fields: fields, line: rowStartLine)) }
            fields.removeAll(keepingCapacity: true)
        }

        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            column += 1
            if inQuotes {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\"") {
                        field.append(byte)
                        index += 1
                        column += 1
                    } else {
                        inQuotes = false
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1; column = 0 }
                    field.append(byte)
                }
            } else {
                switch byte {
                case UInt8(ascii: ","):
                    endField()
                case UInt8(ascii: "\n"):
                    endRow()
                    line += 1; column = 0
                    rowStartLine = line
                case UInt8(ascii: "\r"):
                    break  // CRLF line ends; a lone CR inside a quoted field is kept above
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
                        throw SourceError(file: file, line: line, column: column,
                                          reason: "text after a closing quote; expected a comma or the end of the line")
                    }
                    field.append(byte)
                }
            }
            index += 1
        }
        if inQuotes {
            throw SourceError(file: file, line: quoteStart.line, column: quoteStart.column,
                              reason: "a quoted field is never closed; expected a closing quote (\")")
        }
        if !field.isEmpty || !fields.isEmpty || fieldWasQuoted { endRow() }

        guard let header = rows.first else {
            throw SourceError(file: file, reason: "the file is empty; expected a header row naming the columns")
        }
        let body = Array(rows.dropFirst())
        for row in body where row.fields.count != header.fields.count {
            throw SourceError(file: file, line: row.line,
                              reason: "\(row.fields.count) fields, but the header names \(header.fields.count)")
        }
        return (header.fields.map { $0.trimmingCharacters(in: .whitespaces) }, body)
    }
}
