/// The listing items' rendered pieces kept between builds (`sitegen_fragments`): each is a row's output in
/// a list section, under a key naming the template and settings it was rendered with, beside the row's
/// version (its content hash) then. A piece is used only when both still match, so the table is a cache:
/// a piece left by a build that stopped, or of a row since deleted, is never used wrongly.
public enum ItemFragmentStore {
    /// One row's piece.
    public struct Piece: Sendable {
        public let id: Int64
        public let version: Int64
        public let html: String

        /// Row `id`'s piece, rendered at `version`.
        public init(id: Int64, version: Int64, html: String) {
            self.id = id
            self.version = version
            self.html = html
        }
    }

    /// The pieces kept under `key` for the rows `ids` (those that have one), by id.
    public static func pieces(in database: Database, key: Int64, ids: [Int64]) throws -> [Int64: Piece] {
        guard !ids.isEmpty else { return [:] }
        let marks = String(repeating: "?,", count: ids.count).dropLast()
        let statement = try database.cachedStatement("SELECT id, version, html FROM sitegen_fragments WHERE key = ? AND id IN (\(marks))")
        var found: [Int64: Piece] = [:]
        try statement.forEachRow([.integer(key)] + ids.map { .integer($0) }) { row in
            let id = row.int64(at: 0)
            found[id] = Piece(id: id, version: row.int64(at: 1), html: row.string(at: 2) ?? "")
        }
        return found
    }

    /// Keeps `pieces` under `key`, replacing those of the same rows (inside the caller's transaction).
    public static func save(_ pieces: [Piece], key: Int64, in database: Database) throws {
        let statement = try database.cachedStatement("INSERT OR REPLACE INTO sitegen_fragments (key, id, version, html) VALUES (?, ?, ?, ?)")
        for piece in pieces {
            try statement.execute([.integer(key), .integer(piece.id), .integer(piece.version), .text(piece.html)])
        }
    }

    /// Drops every piece (a full build trusts nothing earlier builds kept).
    public static func dropAll(in database: Database) throws {
        try database.execute("DELETE FROM sitegen_fragments")
        try database.execute("DELETE FROM sitegen_state WHERE name = 'fragment-keys'")
    }

    /// Drops the pieces of every key but `keys` (templates or settings changed since they were rendered),
    /// when the keys are not those `state` remembers; remembers them.
    public static func keep(onlyKeys keys: Set<Int64>, in database: Database) throws {
        let listed = keys.sorted().map(String.init).joined(separator: " ")
        let remembered = try database.fetchValue("SELECT value FROM sitegen_state WHERE name = 'fragment-keys'")?.stringValue
        guard remembered != listed else { return }
        let old = Set((remembered ?? "").split(separator: " ").compactMap { Int64($0) })
        // Each key's pieces are one range of the table's tree; without a remembered list, all but these.
        if remembered == nil {
            try database.execute("DELETE FROM sitegen_fragments WHERE key NOT IN (\(listed.split(separator: " ").joined(separator: ",")))")
        } else {
            for key in old.subtracting(keys) { try database.execute("DELETE FROM sitegen_fragments WHERE key = ?", [.integer(key)]) }
        }
        try database.execute("INSERT OR REPLACE INTO sitegen_state (name, value) VALUES ('fragment-keys', ?)", [.text(listed)])
    }
}
