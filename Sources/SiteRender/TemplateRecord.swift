/// A record's fields as templates see them: names looked up like a `[String: Any]`'s keys, and for
/// everything else (transforms, printing) the dictionary itself, so a template renders the same bytes
/// from either.
///
/// A list page presents twenty rows and each row's half-dozen fields are looked up once or twice: building
/// and hashing a dictionary per row cost more than the lookups it served. A record is the row's values
/// beside names shared by every row of the page, found by comparing names (short ones compare as two
/// machine words).
///
/// ```swift
/// let names = ["title", "state", "url"]
/// let record = TemplateRecord(names: names, values: ["First Bank", nil, "/banks/1/"])
/// record["title"]   // "First Bank"
/// record["state"]   // nil: the record has no state, as if the key were absent
/// ```
public struct TemplateRecord: @unchecked Sendable {
    /// The names, each once.
    public let names: [String]
    /// Each name's value, `nil` where the record has none.
    public let values: [Any?]

    /// A record with `values[i]` under `names[i]`; the names must differ from one another.
    public init(names: [String], values: [Any?]) {
        precondition(names.count == values.count, "a value per name")
        self.names = names
        self.values = values
    }

    /// The value under `name`, `nil` when there is none.
    public subscript(name: String) -> Any? {
        for index in names.indices where names[index] == name {
            return values[index]
        }
        return nil
    }

    /// The record as the dictionary it stands for (with records inside it as dictionaries too): what a
    /// transform or `{{record}}` works on.
    public var dictionary: [String: Any] {
        var dictionary: [String: Any] = [:]
        for (name, value) in zip(names, values) {
            guard let value else { continue }
            dictionary[name] = Self.plain(value)
        }
        return dictionary
    }

    /// `value` with records made dictionaries.
    static func plain(_ value: Any) -> Any {
        if let record = value as? TemplateRecord { return record.dictionary }
        if let records = value as? [TemplateRecord] { return records.map(\.dictionary) }
        return value
    }
}

/// Printed as the dictionary it stands for, so that a context that holds it prints as it did with the
/// dictionary (`{{.}}` on a page's context), its keys in order (`TemplateValue.describe`).
extension TemplateRecord: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { TemplateValue.describe(dictionary) }
    public var debugDescription: String { TemplateValue.describe(dictionary) }
}
