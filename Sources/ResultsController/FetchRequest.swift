import SiteStore

/// What a results controller lists: a table, a filter, an order, sections and a batch size.
///
/// ```swift
/// var request = FetchRequest(table: "banks")
/// request.filter = "state <> ?"
/// request.arguments = ["XX"]
/// request.sortDescriptors = [SortDescriptor(key: "state"), SortDescriptor(key: "details.closeDate", ascending: false)]
/// request.relationships = [Relationship(name: "details", table: "bank_details", foreignKey: "details_id")]
/// request.sectionKey = "state"
/// request.batchSize = 20
/// ```
public struct FetchRequest: Sendable, Hashable {
    /// The table (entity) the rows come from.
    public var table: String
    /// The column that identifies a row; `rowid` works for every ordinary table.
    public var idColumn: String
    /// An SQL predicate (the WHERE clause without the keyword), `nil` for every row.
    public var filter: String?
    /// Values bound to the `?` parameters of `filter`, in order.
    public var arguments: [DatabaseValue]
    /// The order of rows; ties are always broken by `idColumn`, so the order is total.
    /// A key is a column of `table` or `relationship.column`.
    public var sortDescriptors: [SortDescriptor]
    /// To-one relationships that sort keys, the filter and prefetching may reach through.
    public var relationships: [Relationship]
    /// The column whose value names a row's section; it must be the first sort key, so sections are contiguous.
    public var sectionKey: String?
    /// Sections in a fixed order with their titles, instead of the section key's own order; values not
    /// declared come after, in the first sort descriptor's order.
    public var sectionOrder: [SectionDeclaration]?
    /// Whether declared sections are listed even when no row falls in them.
    public var showsEmptySections: Bool
    /// A column whose value changes whenever a row's content does (a version or content hash); lets
    /// `apply` report updates only for rows that really changed.
    public var versionColumn: String?
    /// Relationships whose columns are read with each batch of rows, as `relationship.column`.
    public var prefetchedRelationships: [String]
    /// Columns that fetched rows leave out (a column of `table`, or `relationship.column` of a prefetched
    /// relationship): a long text no page of a listing shows need not be read for each of its rows.
    public var unfetchedProperties: Set<String>
    /// How many rows one batch query reads.
    public var batchSize: Int
    /// At most this many rows, `nil` for all.
    public var limit: Int?
    /// Rows skipped before the first one listed.
    public var offset: Int

    /// Makes a request; only `table` is required (every row, in id order, one unnamed section).
    public init(
        table: String, idColumn: String = "rowid", filter: String? = nil, arguments: [DatabaseValue] = [],
        sortDescriptors: [SortDescriptor] = [], relationships: [Relationship] = [], sectionKey: String? = nil,
        sectionOrder: [SectionDeclaration]? = nil, showsEmptySections: Bool = false, versionColumn: String? = nil,
        prefetchedRelationships: [String] = [], batchSize: Int = 20, limit: Int? = nil, offset: Int = 0,
        unfetchedProperties: Set<String> = []
    ) {
        self.unfetchedProperties = unfetchedProperties
        self.table = table
        self.idColumn = idColumn
        self.filter = filter
        self.arguments = arguments
        self.sortDescriptors = sortDescriptors
        self.relationships = relationships
        self.sectionKey = sectionKey
        self.sectionOrder = sectionOrder
        self.showsEmptySections = showsEmptySections
        self.versionColumn = versionColumn
        self.prefetchedRelationships = prefetchedRelationships
        self.batchSize = batchSize
        self.limit = limit
        self.offset = offset
    }

    /// Checks the request is one a controller can serve.
    func validate() throws {
        guard batchSize > 0 else { throw ResultsControllerError.invalidRequest("batchSize must be at least 1") }
        if let limit, limit < 0 { throw ResultsControllerError.invalidRequest("limit must not be negative") }
        guard offset >= 0 else { throw ResultsControllerError.invalidRequest("offset must not be negative") }
        if let sectionKey, sortDescriptors.first?.key != sectionKey {
            throw ResultsControllerError.invalidRequest(
                "the section key '\(sectionKey)' must be the first sort descriptor's key, so that sections are contiguous")
        }
        if sectionOrder != nil, sectionKey == nil {
            throw ResultsControllerError.invalidRequest("a section order needs a section key")
        }
        let names = Set(relationships.map(\.name))
        for key in sortDescriptors.map(\.key) + [sectionKey].compactMap({ $0 }) where key.contains(".") {
            let relationship = String(key.prefix { $0 != "." })
            guard names.contains(relationship) else {
                throw ResultsControllerError.invalidRequest("'\(key)' goes through '\(relationship)', which is not a declared relationship")
            }
        }
        for name in prefetchedRelationships where !names.contains(name) {
            throw ResultsControllerError.invalidRequest("cannot prefetch '\(name)': it is not a declared relationship")
        }
    }

    /// A stable text naming everything that decides the fetched ids and their order (for the cache).
    var fingerprint: String {
        var parts = [table, idColumn, filter ?? "", arguments.map(\.description).joined(separator: ","),
                     sortDescriptors.map { "\($0.key) \($0.ascending) \($0.collation ?? "") \($0.nulls.rawValue)" }.joined(separator: ","),
                     relationships.map { "\($0.name)=\($0.table).\($0.targetKey)<-\($0.foreignKey)" }.joined(separator: ","),
                     sectionKey ?? "", versionColumn ?? "", "\(showsEmptySections)", "\(limit ?? -1)", "\(offset)"]
        parts.append((sectionOrder ?? []).map { "\($0.name)|\($0.displayTitle ?? "")|\($0.indexTitle ?? "")" }.joined(separator: ","))
        return parts.joined(separator: "\u{1F}")
    }
}
