import Foundation

/// The changes gathered for a watcher's next batch, and when the first and the last of them came: the
/// debouncing every `ChangeWatcher` shares, so that each hands out batches by the same rules.
struct PendingBatch {
    private(set) var changed = Set<String>()
    /// Paths whose first change in this batch made them appear: gone again at its end, they changed nothing.
    private var created = Set<String>()
    private var firstChange = 0.0
    private var lastChange = 0.0

    /// How waiting for changes ended.
    enum WaitOutcome {
        /// `stop()` was called.
        case stopped
        /// Changes that count arrived.
        case changed
        /// The wait's deadline passed, or only changes that do not count arrived.
        case nothing
    }

    /// Adds `path`; `appeared` when the change made it appear (made, or moved in). Made in this batch only if
    /// that is the first thing that happened to it: a file deleted and made again, then deleted, was there
    /// before and is gone.
    mutating func add(_ path: String, appeared: Bool = false) {
        if appeared && !changed.contains(path) { created.insert(path) }
        changed.insert(path)
    }

    /// Collects one batch: calls `wait` with the batch so far and the time (`monotonicNow()`) to wait until
    /// (nil: for good) until the batch is due, as `ChangeWatcher.nextBatch` describes; `exists` says whether
    /// a path (relative to the root, or absolute) is there now.
    static func collect(quietPeriod: Double, maximumDelay: Double, retryAfter: Double?,
                        whenQuiet: (seconds: Double, action: () -> Void)?, exists: (String) -> Bool,
                        wait: (inout PendingBatch, Double?) throws -> WaitOutcome) rethrows -> [String]? {
        var batch = PendingBatch()
        let retryAt = retryAfter.map { monotonicNow() + $0 }
        var quietAt = whenQuiet.map { monotonicNow() + $0.seconds }
        while true {
            let now = monotonicNow()
            let deadline: Double?
            if batch.changed.isEmpty {
                if let retryAt, now >= retryAt { return [] }
                if let at = quietAt, now >= at {
                    whenQuiet?.action()
                    quietAt = nil
                    continue
                }
                deadline = [retryAt, quietAt].compactMap { $0 }.min()
            } else {
                let due = min(batch.lastChange + quietPeriod, batch.firstChange + maximumDelay)
                if now >= due {
                    // A file made and removed within the batch (sed -i's sedXXXXXX, an editor's scratch file)
                    // changed nothing; a batch of only such files builds nothing.
                    let paths = batch.changed.filter { !batch.created.contains($0) || exists($0) }
                    if !paths.isEmpty { return paths.sorted() }
                    batch = PendingBatch()
                    continue
                }
                deadline = due
            }
            switch try wait(&batch, deadline) {
            case .stopped:
                return nil
            case .changed:
                // Quiet is measured from the last change that counts: a swap file's writes do not hold a build back.
                let now = monotonicNow()
                if batch.firstChange == 0 { batch.firstChange = now }
                batch.lastChange = now
            case .nothing:
                break
            }
        }
    }
}

/// Seconds on a clock that only moves forward (not the wall clock, which may be set back).
func monotonicNow() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Milliseconds from now until `deadline` (a `monotonicNow()` time) for `poll`, rounded up; -1 (no limit) for none.
func pollTimeout(until deadline: Double?) -> Int32 {
    guard let deadline else { return -1 }
    return Int32(max(0, min(((deadline - monotonicNow()) * 1_000).rounded(.up), Double(Int32.max))))
}
