import Foundation
import ResultsController
import SiteRender
import SiteStore

/// The items of one list page, made of the pieces earlier builds rendered for its rows where a row is as
/// it was then (its version, and no related record changed), and of its rows read and presented
/// otherwise: a newest-first listing's pages after a new record hold the same rows shifted along, and
/// are then made without reading or rendering them again (decisions.md 39d).
struct ListItemPieces: Sendable {
    /// The key of the listing's pieces: its template and the settings its pages show.
    let key: Int64
    /// The page's section, whose pieces are kept together.
    let section: String
    let versions: [Int64]
    /// Each row's place in the listing's order (`ResultsController.orderBytes`), where its piece is kept.
    let places: [[UInt8]]
    /// Rows whose related records changed: their pieces show the old ones.
    let stale: Set<Int64>
    /// The page's rows, read only for the items that have no piece.
    let reading: RowReading
    let sink: ItemPieceSink
    /// Whether pieces are used, or only rendered: not after a build that was killed, whose changes to
    /// related records no build has seen, nor when the output folder starts over.
    let reuses: Bool

    /// The page's items on a worker's `database`: a placeholder for each item with a piece, the
    /// presented row (`present`) for the others; with the pieces to render them with.
    func items(on database: Database, present: (RowReading) throws -> [TemplateRecord]) throws -> ([TemplateRecord], ItemFragments) {
        let ids = reading.ids
        var cached = [String?](repeating: nil, count: ids.count)
        if reuses, let first = places.first, let last = places.last {
            var gone: [ItemFragmentStore.Piece] = []
            for piece in try ItemFragmentStore.pieces(in: database, run: .init(key: key, section: section, first: first, last: last)) {
                if let place = ids.firstIndex(of: piece.id), piece.place == places[place] {
                    if piece.version == versions[place], !stale.contains(piece.id) { cached[place] = piece.html }
                } else if piece.place.lexicographicallyPrecedes(last), first.lexicographicallyPrecedes(piece.place) {
                    // Strictly between this page's first and last rows, only this page's rows can be: the
                    // piece is of a row that moved or went.
                    gone.append(piece)
                }
            }
            sink.drop(gone, key: key, section: section)
        }
        let missing = ids.indices.filter { cached[$0] == nil }
        var presented = try present(reading.only(missing.map { ids[$0] })).makeIterator()
        let placeholder = TemplateRecord(names: [], values: [])
        let items = cached.map { $0 == nil ? presented.next()! : placeholder }
        return (items, ItemFragments(section: "items", cached: cached))
    }

    /// Hands the pieces a render made to the sink, to be kept for later builds.
    func keep(_ fragments: ItemFragments) {
        sink.reuse(fragments.cached.count - fragments.rendered.count)
        guard !fragments.rendered.isEmpty else { return }
        sink.add(fragments.rendered.map { ItemFragmentStore.Piece(id: reading.ids[$0.key], version: versions[$0.key], place: places[$0.key], html: $0.value) },
                 key: key, section: section)
    }

    /// The page values a piece may not name: they differ from page to page of a listing.
    static let pageValues: Set<String> = ["pageTitle", "pageURL", "items", "empty", "pagination", "section", "feeds"]
}

/// Collects the pieces render workers made and saves them in batches, on a thread and a store connection
/// of their own (`CacheWriter`), while the pages are still being made: a full build's pieces are never
/// all in memory. `finish` must be called before the build's thread writes to the store again.
final class ItemPieceSink: @unchecked Sendable {
    /// Where a batch's pieces go: a listing's key and one of its sections.
    private struct Place: Hashable {
        let key: Int64
        let section: String
    }

    private let lock = NSLock()
    private let storePath: String
    private var batch: [Place: (kept: [ItemFragmentStore.Piece], gone: [ItemFragmentStore.Piece])] = [:]
    private var count = 0
    private var writer: CacheWriter?
    private var keys = Set<Int64>()
    /// How many items were put in from pieces, and how many rendered into new ones.
    private(set) var reused = 0, rendered = 0
    /// How many pieces wait before a batch is saved.
    static let batchSize = 4_096

    /// A sink saving into the store at `storePath`.
    init(storePath: String) {
        self.storePath = storePath
    }

    /// Notes that this build's pages use `key`: the pieces of other keys are dropped at its end.
    func use(key: Int64) {
        _ = lock.withLock { keys.insert(key) }
    }

    /// The keys this build's pages use.
    var keysUsed: Set<Int64> { lock.withLock { keys } }

    /// Counts the items a page put in from pieces.
    func reuse(_ items: Int) {
        lock.withLock { reused += items }
    }

    /// Adds `pieces` rendered under `key` in `section`.
    func add(_ pieces: [ItemFragmentStore.Piece], key: Int64, section: String) {
        lock.withLock {
            batch[Place(key: key, section: section), default: ([], [])].kept += pieces
            count += pieces.count
            rendered += pieces.count
            if count >= Self.batchSize { flush() }
        }
    }

    /// Drops pieces a page found in its range that belong to none of its rows.
    func drop(_ pieces: [ItemFragmentStore.Piece], key: Int64, section: String) {
        guard !pieces.isEmpty else { return }
        lock.withLock {
            batch[Place(key: key, section: section), default: ([], [])].gone += pieces
            count += pieces.count
            if count >= Self.batchSize { flush() }
        }
    }

    /// Saves what is left and waits until every batch is saved.
    func finish() {
        let writer = lock.withLock { () -> CacheWriter? in
            flush()
            return self.writer
        }
        writer?.finish()
    }

    /// Queues the batch for saving (called with the lock held).
    private func flush() {
        guard count > 0 else { return }
        let pieces = batch
        (batch, count) = ([:], 0)
        if writer == nil { writer = CacheWriter(storePath: storePath) }
        writer?.submit { database in
            for (place, pieces) in pieces {
                try ItemFragmentStore.save(pieces.kept, dropping: pieces.gone, key: place.key, section: place.section, in: database)
            }
        }
    }
}
