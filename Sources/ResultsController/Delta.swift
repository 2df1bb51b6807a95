/// What changed in a controller's results, in the terms a table view applies.
///
/// Apply it in this order: remove `deletedRows` and the `from` side of `movedRows` (old index paths,
/// highest first); remove `deletedSections` (old indexes, highest first; they are empty by then);
/// insert `insertedSections` (new indexes, lowest first); insert `insertedRows` and the `to` side of
/// `movedRows` (new index paths, lowest first). `updatedRows` stayed in place and changed content.
///
/// UIKit's batch updates refuse a move out of a section deleted in the same batch: give a table view such
/// a move (its `from.section` is in `deletedSections`) as a delete and an insert. A moved row's content may
/// have changed too, so reconfigure its cell after the move, as with NSFetchedResultsController.
public struct Delta: Sendable, Hashable {
    /// A section that appeared or went away.
    public struct SectionChange: Sendable, Hashable {
        /// The section's index: old for deletes, new for inserts.
        public var index: Int
        /// The section's name (its key value as text).
        public var name: String

        /// Makes a section change at `index`.
        public init(index: Int, name: String) {
            self.index = index
            self.name = name
        }
    }

    /// A row that appeared (new index path) or went away (old index path).
    public struct RowChange: Sendable, Hashable {
        public var id: Int64
        public var indexPath: IndexPath

        /// Makes a row change of row `id` at `indexPath`.
        public init(id: Int64, indexPath: IndexPath) {
            self.id = id
            self.indexPath = indexPath
        }
    }

    /// A row whose position changed because its sort key or section did.
    public struct RowMove: Sendable, Hashable {
        public var id: Int64
        /// Where the row was (old index path).
        public var from: IndexPath
        /// Where the row is now (new index path).
        public var to: IndexPath

        /// Makes a move of row `id`.
        public init(id: Int64, from: IndexPath, to: IndexPath) {
            self.id = id
            self.from = from
            self.to = to
        }
    }

    /// A row whose content changed while its relative position did not.
    public struct RowUpdate: Sendable, Hashable {
        public var id: Int64
        /// Where the row was before the change.
        public var oldIndexPath: IndexPath
        /// Where the row is after it (other rows may have shifted it).
        public var newIndexPath: IndexPath

        /// Makes an in-place update of row `id`.
        public init(id: Int64, oldIndexPath: IndexPath, newIndexPath: IndexPath) {
            self.id = id
            self.oldIndexPath = oldIndexPath
            self.newIndexPath = newIndexPath
        }
    }

    /// Sections removed, by old index, highest first.
    public var deletedSections: [SectionChange] = []
    /// Sections added, by new index, lowest first.
    public var insertedSections: [SectionChange] = []
    /// Rows removed, by old index path, highest first.
    public var deletedRows: [RowChange] = []
    /// Rows added, by new index path, lowest first.
    public var insertedRows: [RowChange] = []
    /// Rows moved, by new index path.
    public var movedRows: [RowMove] = []
    /// Rows changed in place, by new index path.
    public var updatedRows: [RowUpdate] = []

    /// An empty delta.
    public init() {}

    /// Whether nothing changed.
    public var isEmpty: Bool {
        deletedSections.isEmpty && insertedSections.isEmpty && deletedRows.isEmpty && insertedRows.isEmpty
            && movedRows.isEmpty && updatedRows.isEmpty
    }

    /// How many row-level changes it holds.
    public var rowChangeCount: Int { deletedRows.count + insertedRows.count + movedRows.count + updatedRows.count }

    mutating func sortForApplication() {
        deletedSections.sort { $0.index > $1.index }
        insertedSections.sort { $0.index < $1.index }
        deletedRows.sort { $0.indexPath > $1.indexPath }
        insertedRows.sort { $0.indexPath < $1.indexPath }
        movedRows.sort { $0.to < $1.to }
        updatedRows.sort { $0.newIndexPath < $1.newIndexPath }
    }
}
