import SiteSources

/// How a list field is kept in its record's own column: a JSON array of its items (the join table holds
/// them one per row for queries; this copy is what templates and dumps read).
enum StoredList {
    /// The column text for `items`.
    static func encode(_ items: [String]) -> String {
        JSONValue.array(items.map(JSONValue.string)).serialized(pretty: false)
    }

    /// The items a column text holds; none when it is not such an array.
    static func decode(_ text: String) -> [String] {
        var parser = JSONParser(bytes: Array(text.utf8))
        return ((try? parser.parseDocument())?.array ?? []).compactMap(\.string)
    }
}
