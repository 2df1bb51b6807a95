import Foundation

/// A JSON array of objects, or NDJSON (one object per line): each object is a record keyed by one field.
public struct JSONRecordSource: Source {
    /// The two layouts sitegen reads.
    public enum Layout: Sendable {
        /// `[ {...}, {...} ]`
        case array
        /// One object per line; blank lines are skipped.
        case lines
    }

    /// Where the file is.
    public let url: URL
    /// The file as messages name it.
    public let displayName: String
    /// How the objects are laid out.
    public let layout: Layout
    /// The field identifying a record.
    public let key: String
    /// Declared fields and their types; other members are ignored.
    public let fields: [(name: String, type: FieldType)]
    /// The zone of a datetime written without an offset (the site's `timeZone`); UTC when nil.
    public var timeZone: TimeZone?

    /// Reads `url` in `layout`, keyed by `key`, typing the declared `fields`.
    public init(url: URL, displayName: String, layout: Layout, key: String, fields: [(name: String, type: FieldType)]) {
        self.url = url
        self.displayName = displayName
        self.layout = layout
        self.key = key
        self.fields = fields
    }

    /// Reads every object as a typed record (NDJSON a chunk at a time); bad JSON, a mistyped value or a
    /// repeated key fails the file.
    public func read(_ input: inout SourceInput, emit: (Record) throws(SourceError) -> Void) throws(SourceError) -> [SourceError] {
        try rejectUTF16(input)
        var keyLines = KeyLines()
        // The file fails at its first bad record; the ones after it are still checked, not stored, so that
        // the next few problems are reported with it.
        var failure: SourceError?
        func fail(_ problem: SourceError) { SourceError.note(problem, in: &failure) }
        func add(_ value: JSONValue, line: Int) throws(SourceError) {
            let record: Record
            do {
                record = try self.record(value, line: line)
            } catch {
                return fail(error)
            }
            if let earlier = keyLines.insert(record.key, line: line) {
                return fail(SourceError(file: displayName, line: line, reason: "duplicate key '\(record.key)' in field '\(key)'; line \(earlier) has it too"))
            }
            if failure == nil { try emit(record) }
        }
        do {
            try readValues(&input, add: add, problem: fail)
        } catch {
            // The file cannot be read past this (an array's syntax).
            throw SourceError.stopped(failure, at: error)
        }
        if let failure { throw failure }
        return []
    }

    /// Hands each value of the file to `add`, with its line; a line of NDJSON that is not JSON is a problem
    /// of that line, an array's syntax error ends the read.
    private func readValues(_ input: inout SourceInput, add: (JSONValue, Int) throws(SourceError) -> Void,
                            problem: (SourceError) -> Void) throws(SourceError) {
        switch layout {
        case .lines:
            try input.forEachLine { (line: UnsafeRawBufferPointer, number: Int) throws(SourceError) in
                var bytes = line
                if number == 1, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = UnsafeRawBufferPointer(rebasing: bytes[3...]) }
                guard bytes.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { return }
                var parser = JSONParser(bytes: Array(bytes), line: number)
                let value: JSONValue
                do throws(JSONParser.SyntaxError) {
                    value = try parser.parseDocument()
                } catch {
                    // One line of NDJSON is its own document: the lines after it still read.
                    return problem(SourceError(file: displayName, line: error.line, column: error.column, reason: "not valid JSON: \(error.reason)"))
                }
                try add(value, number)
            }
        case .array:
            // A value at a time, so an array of a million objects is never held whole.
            var reader = JSONStreamReader(layout: .array)
            func handle(_ part: JSONStreamReader.Part) throws(SourceError) {
                if case .element(let value, let line) = part { try add(value, line) }
            }
            let located = { (error: JSONParser.SyntaxError) in
                SourceError(file: displayName, line: error.line, column: error.column, reason: "not valid JSON: \(error.reason)")
            }
            try input.forEachChunk { (chunk: UnsafeRawBufferPointer) throws(SourceError) in
                try reader.feed(chunk, emit: handle, error: located)
            }
            try reader.finish(emit: handle, error: located)
        }
    }

    private func record(_ value: JSONValue, line: Int) throws(SourceError) -> Record {
        guard case .object(let members) = value else {
            throw SourceError(file: displayName, line: line, reason: "expected an object, found \(describe(value))")
        }
        var values: [String: FieldValue] = [:]
        for (name, type) in fields {
            var found: JSONValue?
            for member in members where member.key == name {
                // JSON leaves a repeated name's meaning open (JavaScript keeps the last, others the first):
                // picking one would publish a value the file may not mean.
                guard found == nil else {
                    throw SourceError(file: displayName, line: line, reason: "field '\(name)' appears twice in one object; which one is meant is unclear")
                }
                found = member.value
            }
            guard let member = found else { values[name] = .null; continue }
            switch member {
            case .array(let items) where type == .list:
                var texts: [String] = []
                for item in items {
                    guard let text = item.scalarText else {
                        throw SourceError(file: displayName, line: line, reason: "field '\(name)': a list may hold only texts and numbers")
                    }
                    texts.append(text)
                }
                values[name] = .list(texts)
            case .array, .object:
                throw SourceError(file: displayName, line: line, reason: "field '\(name)': expected a single value, found \(describe(member))")
            case .bool(let flag) where type == .bool:
                values[name] = .bool(flag)
            case .number(let number, nil) where type == .integer && abs(number) >= 0x1p63 && number.rounded() == number:
                // Printed back, such a number is `1.2345678901234567e+19`, not what the file has.
                throw SourceError(file: displayName, line: line, reason: "field '\(name)': expected an integer, found a whole number "
                    + "\(number < 0 ? "below" : "above") the 64-bit range (-9223372036854775808 to 9223372036854775807)")
            default:
                guard let raw = member.scalarText else { values[name] = .null; continue }
                do {
                    values[name] = try type.value(from: raw, zone: timeZone)
                } catch {
                    throw SourceError(file: displayName, line: line, reason: "field '\(name)': expected \(error.expected), found '\(error.found)'")
                }
            }
        }
        guard let keyText = values[key]?.text, !keyText.isEmpty else {
            throw SourceError(file: displayName, line: line, reason: "the key field '\(key)' is missing or empty")
        }
        return Record(key: keyText, line: line, fields: values)
    }

    private func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
