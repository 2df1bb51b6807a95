import SiteStore

/// Why a results controller could not do what was asked.
public enum ResultsControllerError: Error, CustomStringConvertible, Equatable {
    /// The fetch request cannot be served as written.
    case invalidRequest(String)
    /// `performFetch()` has not run yet.
    case notFetched
    /// An index path outside the fetched results.
    case indexPathOutOfRange(IndexPath)
    /// A row the snapshot lists is gone from the table (it changed behind the controller's back).
    case rowVanished(id: Int64)

    /// Two distinct values of the section key have the same text, which names a section (NULL and '', or
    /// 1 and '1' in an untyped column): their sections could not be told apart by name.
    case ambiguousSectionName(column: String, name: String, values: [DatabaseValue])
    /// A cached snapshot's chunk, read at its first use after the restore, was damaged (or replaced by
    /// another save): the results were fetched again, and whatever was shown from them must be reloaded.
    case cacheDamaged(name: String)

    public var description: String {
        switch self {
        case .invalidRequest(let reason): return "invalid fetch request: \(reason)"
        case .notFetched: return "performFetch() must run before rows are read"
        case .indexPathOutOfRange(let path): return "index path \(path) is outside the fetched results"
        case .ambiguousSectionName(let column, let name, let values):
            return "the section key '\(column)' has the values \(values.map(\.description).joined(separator: " and ")), which both read "
                + "'\(name)', the name of a section: store one of them (e.g. declare the column's type, or NOT NULL DEFAULT '')"
        case .cacheDamaged(let name):
            return "the cached snapshot '\(name)' was found damaged after it was restored; the results were fetched again, "
                + "so reload everything shown from them"
        case .rowVanished(let id):
            return "row \(id) is listed but no longer in the table: it was deleted by a write the controller was not "
                + "given (apply its changeset), or made outside trackingChanges after the results were cached"
        }
    }
}
