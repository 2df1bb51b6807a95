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

    public var description: String {
        switch self {
        case .invalidRequest(let reason): return "invalid fetch request: \(reason)"
        case .notFetched: return "performFetch() must run before rows are read"
        case .indexPathOutOfRange(let path): return "index path \(path) is outside the fetched results"
        case .rowVanished(let id):
            return "row \(id) is listed but no longer in the table: it was deleted by a write the controller was not "
                + "given (apply its changeset), or made outside trackingChanges after the results were cached"
        }
    }
}
