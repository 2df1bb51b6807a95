/// The listing items' rendered pieces kept between builds (`sitegen_item_pieces`): each is a row's output
/// in a list section, under a key naming the template and settings it was rendered with, beside the row's
/// version (its content hash) then. A piece is used only when both still match, so the table is a cache:
/// a piece left by a build that stopped, or of a row since deleted, is never used wrongly.
///
/// Pieces are kept by listing key, section and the row's place in the listing's order (its order bytes),
/// so that a list page's twenty pieces are one range of the table's tree: one descent and a leaf or two,
/// where a lookup by row id was a descent and a leaf per piece (decisions.md 39h).
public enum ItemFragmentStore {
    /// One row's piece.
    public struct Piece: Sendable, Equatable {
        public let id: Int64
        public let version: Int64
        /// The row's place in its listing's order when the piece was kept (order bytes).
        public let place: [UInt8]
        public let html: String

        /// Row `id`'s piece, rendered at `version`, at `place`.
        public init(id: Int64, version: Int64, place: [UInt8], html: String) {
            self.id = id
            self.version = version
            self.place = place
            self.html = html
        }
    }

    /// Where a run of rows' pieces are: a listing's key, one of its sections, and the places from the first
    /// row's to the last's.
    public struct Run: Sendable, Hashable {
        public let key: Int64
        public let section: String
        public let first: [UInt8]
        public let last: [UInt8]

        /// The run of `section` under `key` from place `first` through `last`.
        public init(key: Int64, section: String, first: [UInt8], last: [UInt8]) {
            self.key = key
            self.section = section
            self.first = first
            self.last = last
        }
    }

    /// The pieces kept in `run`, in order: those of the run's rows, and any left by rows that have since
    /// moved or gone.
    public static func pieces(in database: Database, run: Run) throws -> [Piece] {
        let statement = try database.cachedStatement("""
            SELECT id, version, place, html FROM sitegen_item_pieces WHERE key = ? AND section = ? AND place BETWEEN ? AND ?
            """)
        var found: [Piece] = []
        try statement.forEachRow([.integer(run.key), .text(run.section), .blob(run.first), .blob(run.last)]) { row in
            found.append(Piece(id: row.int64(at: 0), version: row.int64(at: 1), place: row.withBlob(at: 2) { Array($0) }, html: row.string(at: 3) ?? ""))
        }
        return found
    }

    /// Keeps `pieces` in `section` under `key`, replacing those of the same rows at the same places, and drops
    /// `gone` (pieces a page found among its own that no row there has any more); inside the caller's
    /// transaction.
    public static func save(_ pieces: [Piece], dropping gone: [Piece], key: Int64, section: String, in database: Database) throws {
        let insert = try database.cachedStatement("""
            INSERT OR REPLACE INTO sitegen_item_pieces (key, section, place, id, version, html) VALUES (?, ?, ?, ?, ?, ?)
            """)
        for piece in pieces {
            try insert.execute([.integer(key), .text(section), .blob(piece.place), .integer(piece.id), .integer(piece.version), .text(piece.html)])
        }
        let delete = try database.cachedStatement("DELETE FROM sitegen_item_pieces WHERE key = ? AND section = ? AND place = ? AND id = ?")
        for piece in gone {
            try delete.execute([.integer(key), .text(section), .blob(piece.place), .integer(piece.id)])
        }
    }

    /// Drops every piece (a full build trusts nothing earlier builds kept).
    public static func dropAll(in database: Database) throws {
        try database.execute("DELETE FROM sitegen_item_pieces")
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
            try database.execute("DELETE FROM sitegen_item_pieces WHERE key NOT IN (\(listed.split(separator: " ").joined(separator: ",")))")
        } else {
            for key in old.subtracting(keys) { try database.execute("DELETE FROM sitegen_item_pieces WHERE key = ?", [.integer(key)]) }
        }
        try database.execute("INSERT OR REPLACE INTO sitegen_state (name, value) VALUES ('fragment-keys', ?)", [.text(listed)])
    }
}
