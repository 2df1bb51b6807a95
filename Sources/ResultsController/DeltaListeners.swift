import Foundation

/// The continuations of a controller's delta streams, which end on their own tasks' threads.
final class DeltaListeners: @unchecked Sendable {
    private let lock = NSLock()
    private var continuations: [Int: AsyncStream<Delta>.Continuation] = [:]
    private var nextID = 0

    func add(_ continuation: AsyncStream<Delta>.Continuation) -> Int {
        lock.withLock {
            nextID += 1
            continuations[nextID] = continuation
            return nextID
        }
    }

    var count: Int { lock.withLock { continuations.count } }

    func remove(_ id: Int) {
        _ = lock.withLock { continuations.removeValue(forKey: id) }
    }

    func yield(_ delta: Delta) {
        for continuation in lock.withLock({ Array(continuations.values) }) { continuation.yield(delta) }
    }

    func finish() {
        for continuation in lock.withLock({ Array(continuations.values) }) { continuation.finish() }
    }
}
