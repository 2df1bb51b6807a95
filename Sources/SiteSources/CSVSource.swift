import Foundation

/// A CSV file whose header names the columns; each row is a record keyed by one column.
public struct CSVSource: Source {
    /// Where the file is.
    public let url: URL
    /// The file as messages name it.
    public let displayName: String
    /// The column identifying a row.
    public let key: String
    /// Declared columns and their types; header columns not declared are ignored with a warning.
    public let fields: [(name: String, type: FieldType)]
    /// The zone of a datetime written without an offset (the site's `timeZone`); UTC when nil.
    public var timeZone: TimeZone?

    /// Reads `url`, keyed by column `key`, typing the declared `fields`.
    public init(url: URL, displayName: String, key: String, fields: [(name: String, type: FieldType)]) {
        self.url = url
        self.displayName = displayName
        self.key = key
        self.fields = fields
    }

    /// Reads every row as a typed record, a chunk at a time; a malformed file, a mistyped value or a
    /// repeated key fails it.
    public func read(_ input: inout SourceInput, emit: (Record) throws(SourceError) -> Void) throws(SourceError) -> [SourceError] {
        try rejectUTF16(input)
        var reader = CSVReader(file: displayName)
        var typer: RowTyper?
        var warnings: [SourceError] = []
        // The file fails at its first bad row; the rows after it are still checked, not stored, so that the
        // next few problems are reported with it.
        var failure: SourceError?
        func handle(_ row: CSVReader.Row) throws(SourceError) {
            if let typer {
                let record: Record
                do {
                    record = try typer.record(from: row)
                } catch {
                    return SourceError.note(error, in: &failure)
                }
                if failure == nil { try emit(record) }
            } else {
                let made = try RowTyper(header: row, source: self)
                warnings += made.warnings
                typer = made
            }
        }
        do {
            try input.forEachChunk { (chunk: UnsafeRawBufferPointer) throws(SourceError) in try reader.feed(chunk, emit: handle) }
            try reader.finish(emit: handle)
        } catch {
            // The file cannot be read past this (an unclosed quote).
            throw SourceError.stopped(failure, at: error)
        }
        if let failure { throw failure }
        guard typer != nil else {
            throw SourceError(file: displayName, reason: "the file is empty; expected a header row naming the columns")
        }
        return warnings
    }

    /// Turns data rows into records once the header has said where each declared column is.
    private final class RowTyper {
        let source: CSVSource
        let header: [String]
        let columns: [(name: String, type: FieldType, index: Int)]
        var warnings: [SourceError] = []
        var keyLines = KeyLines()

        init(header row: CSVReader.Row, source: CSVSource) throws(SourceError) {
            self.source = source
            header = CSVReader.columnNames(row)
            let file = source.displayName
            let declared = Set(source.fields.map(\.name))
            var columnIndex: [String: Int] = [:]
            for (index, name) in header.enumerated() {
                // A repeated column a field reads is ambiguous; one no field reads (Excel pads headers with
                // empty names) is ignored like any other.
                guard columnIndex[name] == nil || !declared.contains(name) else {
                    throw SourceError(file: file, line: row.line, reason: "the header names column '\(name)' twice")
                }
                if columnIndex[name] == nil { columnIndex[name] = index }
            }
            var columns: [(name: String, type: FieldType, index: Int)] = []
            for (name, type) in source.fields {
                guard let index = columnIndex[name] else {
                    throw SourceError(file: file, line: row.line,
                                      reason: "no column '\(name)' in the header; it has: \(header.joined(separator: ", "))"
                                          + Self.separatorHint(header))
                }
                columns.append((name, type, index))
            }
            self.columns = columns
            var seen = Set<String>()
            let ignored = header.filter { !declared.contains($0) && seen.insert($0).inserted }.map { $0.isEmpty ? "(unnamed)" : $0 }
            if !ignored.isEmpty {
                warnings.append(SourceError(file: file, line: row.line,
                                            reason: "columns not declared as fields are ignored: \(ignored.joined(separator: ", "))"))
            }
        }

        /// Files saved by Excel where the decimal mark is a comma, or exported as TSV, arrive as one
        /// column whose name holds every column's: saying so beats a bare "no column".
        static func separatorHint(_ header: [String]) -> String {
            guard header.count == 1 else { return "" }
            let semicolons = header[0].utf8.count(where: { $0 == UInt8(ascii: ";") })
            let tabs = header[0].utf8.count(where: { $0 == UInt8(ascii: "\t") })
            guard semicolons + tabs > 0 else { return "" }
            let separator = tabs > semicolons ? "tabs" : "';'"
            return " (the header looks separated by \(separator); sitegen reads comma-separated values)"
        }

        func record(from row: CSVReader.Row) throws(SourceError) -> Record {
            let file = source.displayName
            try CSVReader.check(row, against: header, file: file)
            var values: [String: FieldValue] = [:]
            for (name, type, index) in columns {
                do {
                    values[name] = try type.value(from: row.fields[index], zone: source.timeZone)
                } catch {
                    throw SourceError(file: file, line: row.line,
                                      reason: "column '\(name)': expected \(error.expected), found '\(error.found)'")
                }
            }
            guard let key = values[source.key]?.text else {
                throw SourceError(file: file, line: row.line, reason: "the key column '\(source.key)' is empty")
            }
            if let earlier = keyLines.insert(key, line: row.line) {
                throw SourceError(file: file, line: row.line,
                                  reason: "duplicate key '\(key)' in column '\(source.key)'; line \(earlier) has it too")
            }
            return Record(key: key, line: row.line, fields: values)
        }
    }
}
