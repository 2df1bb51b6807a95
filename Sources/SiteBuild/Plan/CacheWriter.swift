import Foundation
import SiteStore

/// Saves the listings' cached results (`ResultsController.pendingCacheWrite`) on a thread and a store
/// connection of its own, one after another, while the build's thread goes on rendering: at 100,000
/// records, encoding and writing the snapshots was a twentieth of what that thread spent on a build
/// with few changes.
///
/// A snapshot that fails to save costs the next build a fresh fetch, nothing else, so failures are not
/// reported. `finish` must be called before the build's thread writes to the store again.
final class CacheWriter: @unchecked Sendable {
    private let condition = NSCondition()
    private var writes: [@Sendable (Database) throws -> Void] = []
    /// Whether a write taken from `writes` is running.
    private var writing = false
    private var closed = false
    private var finished = false

    /// Starts the writer's thread, which opens the store at `storePath`.
    init(storePath: String) {
        let thread = Thread { [self] in run(storePath: storePath) }
        thread.start()
    }

    /// Queues a cache write.
    func submit(_ write: @escaping @Sendable (Database) throws -> Void) {
        condition.lock()
        writes.append(write)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until every write queued so far is done, and with it the results each held (a listing's whole
    /// snapshot, after a fetch from nothing), while the writer's thread goes on.
    func waitUntilIdle() {
        condition.lock()
        while !writes.isEmpty || writing { condition.wait() }
        condition.unlock()
    }

    /// Waits until every queued write is done and the thread has ended; later calls return at once.
    func finish() {
        condition.lock()
        closed = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func run(storePath: String) {
        var database = try? Database(path: storePath)
        while true {
            condition.lock()
            while writes.isEmpty && !closed { condition.wait() }
            guard !writes.isEmpty else {
                // Closed before `finish` returns, as the render queue's connections are.
                database = nil
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            var write: (@Sendable (Database) throws -> Void)? = writes.removeFirst()
            writing = true
            condition.unlock()
            if let database, let work = write { try? database.transaction { try work(database) } }
            // Let go of what the write held before a waiter is told that it is done.
            write = nil
            condition.lock()
            writing = false
            condition.broadcast()
            condition.unlock()
        }
    }
}
