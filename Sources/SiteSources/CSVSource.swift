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

    /// Reads `url`, keyed by column `key`, typing the declared `fields`.
    public init(url: URL, displayName: String, key: String, fields: [(name: String, type: FieldType)]) {
        self.url = url
        self.displayName = displayName
        self.key = key
        self.fields = fields
    }

    /// Reads every row as a typed record; a malformed file, a mistyped value or a repeated key fails it.
    public func read(_ data: Data) throws(SourceError) -> SourceResult {
        let text = try decodeText(data, displayName: displayName)
        let (header, rows) = try CSVReader(file: displayName).read(text)
        var warnings: [SourceError] = []
        var columnIndex: [String: Int] = [:]
        for (index, name) in header.enumerated() {
            guard columnIndex[name] == nil else {
                throw SourceError(file: displayName, line: 1, reason: "the header names column '\(name)' twice")
            }
            columnIndex[name] = index
        }
        for (name, _) in fields where columnIndex[name] == nil {
            throw SourceError(file: displayName, line: 1,
                              reason: "no column '\(name)' in the header; it has: \(header.joined(separator: ", "))")
        }
        let declared = Set(fields.map(\.name))
        let ignored = header.filter { !declared.contains($0) }
        if !ignored.isEmpty {
            warnings.append(SourceError(file: displayName, line: 1,
                                        reason: "columns not declared as fields are ignored: \(ignored.joined(separator: ", "))"))
        }
        var records: [Record] = []
        var firstLineOfKey: [String: Int] = [:]
        for row in rows {
            var values: [String: FieldValue] = [:]
            for (name, type) in fields {
                let raw = row.fields[columnIndex[name]!]
                do {
                    values[name] = try type.value(from: raw)
                } catch {
                    throw SourceError(file: displayName, line: row.line,
                                      reason: "column '\(name)': expected \(error.expected), found '\(error.found)'")
                }
            }
            guard let key = values[key]?.text else {
                throw SourceError(file: displayName, line: row.line, reason: "the key column '\(key)' is empty")
            }
            if let earlier = firstLineOfKey[key] {
                throw SourceError(file: displayName, line: row.line,
                                  reason: "duplicate key '\(key)' in column '\(self.key)'; line \(earlier) has it too")
            }
            firstLineOfKey[key] = row.line
            records.append(Record(key: key, line: row.line, fields: values))
        }
        return SourceResult(records: records, warnings: warnings)
    }
}
