import Foundation

/// Computes `work(0)`, `work(1)`, … on a background thread, a bounded number ahead of the caller, who
/// takes the results in order with `next()`: the load reads and parses the next source files while the
/// caller's thread (the only one that may touch the store) writes the last one's rows.
///
/// Each side wakes the other only when it waits: the reader, once it is a whole window ahead, until
/// half of it is taken; the caller, for the result it asked for.
final class ReadAhead<Result>: @unchecked Sendable {
    private let count: Int
    private let window: Int
    private let work: (Int) -> Result
    private let condition = NSCondition()
    private var ready: [Int: Result] = [:]
    private var taken = 0
    private var cancelled = false
    /// Whether the caller waits for the result at `taken`.
    private var takerWaits = false
    /// Whether the reader waits for room in its window.
    private var producerWaits = false

    /// Starts computing `work` for `0..<count`, at most `window` results ahead of the ones taken.
    init(count: Int, window: Int = 32, work: @escaping (Int) -> Result) {
        self.count = count
        self.window = max(1, window)
        self.work = work
        guard count > 0 else { return }
        // The thread holds `self` until it stops (all computed, or cancelled); holding the thread here too
        // made a cycle that kept every read-ahead, and its thread object, for good.
        let thread = Thread { [self] in produce() }
        thread.stackSize = 1 << 22
        thread.start()
    }

    /// The next result, in order, waiting for it if need be; nil after the last.
    func next() -> Result? {
        condition.lock()
        defer { condition.unlock() }
        guard taken < count else { return nil }
        while ready[taken] == nil {
            takerWaits = true
            condition.wait()
        }
        takerWaits = false
        let result = ready.removeValue(forKey: taken)
        taken += 1
        if producerWaits && ready.count <= window / 2 { condition.signal() }
        return result
    }

    /// Stops computing results nobody will take (the caller failed part way).
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    private func produce() {
        for index in 0..<count {
            condition.lock()
            if index - taken >= window {
                producerWaits = true
                while index - taken > window / 2 && !cancelled { condition.wait() }
                producerWaits = false
            }
            let stop = cancelled
            condition.unlock()
            if stop { return }
            let result = work(index)
            condition.lock()
            ready[index] = result
            if takerWaits && index == taken { condition.signal() }
            condition.unlock()
        }
    }
}
