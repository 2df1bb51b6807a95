/// A declared to-one relationship: sort keys and filters may reach through it with `name.column`.
///
/// `Relationship(name: "details", table: "bank_details", foreignKey: "details_id")` lets a request sort on
/// `details.closeDate`, which becomes `LEFT JOIN "bank_details" AS "details" ON "details".rowid = t."details_id"`.
public struct Relationship: Sendable, Hashable {
    /// The name key paths use, and the join's alias.
    public var name: String
    /// The related table.
    public var table: String
    /// The column of the fetched table holding the related row's key.
    public var foreignKey: String
    /// The related table's column that `foreignKey` refers to.
    public var targetKey: String

    /// Declares that `foreignKey` of the fetched table refers to `targetKey` of `table`, reachable as `name.column`.
    public init(name: String, table: String, foreignKey: String, targetKey: String = "rowid") {
        self.name = name
        self.table = table
        self.foreignKey = foreignKey
        self.targetKey = targetKey
    }
}

/// A section declared ahead of the data: its place in the order, its titles, and whether it shows when empty.
public struct SectionDeclaration: Sendable, Hashable {
    /// The section key's value (as text) the section holds.
    public var name: String
    /// The title pages show; the name when absent.
    public var displayTitle: String?
    /// The section index title; the first letter of the display title when absent.
    public var indexTitle: String?

    /// Declares the section holding rows whose section key is `name`.
    public init(name: String, displayTitle: String? = nil, indexTitle: String? = nil) {
        self.name = name
        self.displayTitle = displayTitle
        self.indexTitle = indexTitle
    }
}
