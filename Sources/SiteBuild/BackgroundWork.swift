import Foundation

/// Work started on a thread of its own, whose result the caller waits for when it needs it.
final class BackgroundWork<Value>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    // Written by the worker before it signals, read by the caller after waiting: the semaphore orders them.
    private var result: Result<Value, any Error>?

    /// Starts `work` at once.
    init(_ work: @escaping @Sendable () throws -> Value) {
        let thread = Thread { [self] in
            result = Result { try work() }
            done.signal()
        }
        thread.start()
    }

    /// Whether the work has ended, so that `value()` would not wait.
    var isFinished: Bool {
        guard done.wait(timeout: .now()) == .success else { return false }
        done.signal()
        return true
    }

    /// Waits for the work to end; its value, or the error it threw.
    func value() throws -> Value {
        done.wait()
        done.signal()
        return try result!.get()
    }
}
