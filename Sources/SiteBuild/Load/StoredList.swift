import SiteSources

/// How a list field is kept in its record's own column: a JSON array of its items (the join table holds
/// them one per row for queries; this copy is what templates and dumps read).
enum StoredList {
    /// The column text for `items`.
    static func encode(_ items: [String]) -> String {
        // Every list of every record passes here: plain items (the usual tags) skip the JSON writer.
        let plain = items.allSatisfy { item in
            item.utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        }
        guard plain else { return JSONValue.array(items.map(JSONValue.string)).serialized(pretty: false) }
        return "[" + items.map { "\"" + $0 + "\"" }.joined(separator: ",") + "]"
    }

    /// The items a column text holds; none when it is not such an array.
    static func decode(_ text: String) -> [String] {
        var parser = JSONParser(bytes: Array(text.utf8))
        return ((try? parser.parseDocument())?.array ?? []).compactMap(\.string)
    }
}
