import Foundation
import SiteSources
import SiteStore

/// Reads a large source on a second thread while the caller's thread writes its rows to the store, so
/// parsing and SQLite each have a core: loading the benchmark corpus spent about as long in one as in the other.
///
/// The reader hands over rows in batches through a queue of bounded length, so memory stays constant in
/// the file's size whichever side is slower. When the writer fails, the reader is stopped at its next batch.
final class RowPipeline: @unchecked Sendable {
    /// Rows per batch: large enough that the lock is rare, small enough to be a few megabytes.
    static let batchSize = 256
    /// Batches the reader may get ahead of the writer.
    static let queueLength = 8

    private let condition = NSCondition()
    private var queue: [[StoredRow]] = []
    private var readerDone = false
    private var writerStopped = false
    private var readerFailure: (any Error)?
    private var readerWarnings: [SourceError] = []
    private var readerHash: Int64 = 0
    private var readerBytes: Int64 = 0

    private struct Stopped: Error {}

    /// What the reader gave: its warnings and the hash of the bytes it read.
    struct Result {
        var warnings: [SourceError]
        var hash: Int64
    }

    /// Streams `source`'s records from the file at `url` into `rows`, typed by `schema`. Throws the
    /// reader's `SourceError`, or the writer's error; either way nothing is left running.
    static func load(_ source: any Source, from url: URL, into rows: RowReplacement, schema: CollectionSchema,
                     size: Int64, progress: ((LoadProgress) -> Void)? = nil) throws -> Result
    {
        let pipeline = RowPipeline()
        let reader = Thread { pipeline.read(source, from: url, schema: schema) }
        reader.stackSize = 1 << 22
        reader.start()
        let start = DispatchTime.now().uptimeNanoseconds
        var lastReport = start
        var written = 0
        func report(finished: Bool) {
            let now = DispatchTime.now().uptimeNanoseconds
            guard let progress, finished || now - lastReport >= 500_000_000 else { return }
            lastReport = now
            progress(LoadProgress(file: source.displayName, bytesRead: finished ? size : pipeline.bytesRead, totalBytes: size,
                                  rows: written, elapsed: Double(now - start) / 1e9, finished: finished))
        }
        do {
            while let batch = pipeline.nextBatch() {
                written += batch.count
                report(finished: false)
                for row in batch {
                    do {
                        try rows.write(row)
                    } catch let error as StoreError {
                        // A row the store refuses (a key another file has) fails the source at its line.
                        throw SourceError(file: source.displayName, line: row.line, reason: error.description)
                    }
                }
            }
        } catch {
            pipeline.stopReader()
            throw error
        }
        let result = try pipeline.outcome()
        report(finished: true)
        return result
    }

    /// Bytes the reader has read so far.
    private var bytesRead: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return readerBytes
    }

    private func read(_ source: any Source, from url: URL, schema: CollectionSchema) {
        var batch: [StoredRow] = []
        batch.reserveCapacity(Self.batchSize)
        do {
            var input = try SourceInput(contentsOf: url, displayName: source.displayName)
            input.onChunkRead = { bytes in
                self.condition.lock()
                self.readerBytes = bytes
                self.condition.unlock()
            }
            let warnings = try source.read(&input) { (record: Record) throws(SourceError) in
                batch.append(CollectionLoader.storedRow(record, schema: schema))
                if batch.count == Self.batchSize {
                    guard send(batch) else { throw SourceError(file: source.displayName, reason: "stopped") }
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if !batch.isEmpty { _ = send(batch) }
            finish(failure: nil, warnings: warnings, hash: input.hash.signed)
        } catch {
            finish(failure: error, warnings: [], hash: 0)
        }
    }

    /// Queues a batch, waiting while the queue is full; false when the writer has stopped.
    private func send(_ batch: [StoredRow]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= Self.queueLength && !writerStopped { condition.wait() }
        guard !writerStopped else { return false }
        queue.append(batch)
        condition.broadcast()
        return true
    }

    private func finish(failure: (any Error)?, warnings: [SourceError], hash: Int64) {
        condition.lock()
        readerDone = true
        readerFailure = failure
        readerWarnings = warnings
        readerHash = hash
        condition.broadcast()
        condition.unlock()
    }

    /// The next batch, waiting for the reader; nil once it has finished (or failed) and the queue is empty.
    private func nextBatch() -> [StoredRow]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !readerDone { condition.wait() }
        // A failed read stops here: rows after the error would be thrown away with the savepoint anyway.
        guard !queue.isEmpty, readerFailure == nil else { return nil }
        let batch = queue.removeFirst()
        condition.broadcast()
        return batch
    }

    /// Tells the reader to stop and waits until it has.
    private func stopReader() {
        condition.lock()
        writerStopped = true
        queue.removeAll()
        condition.broadcast()
        while !readerDone { condition.wait() }
        condition.unlock()
    }

    private func outcome() throws -> Result {
        condition.lock()
        defer { condition.unlock() }
        while !readerDone { condition.wait() }
        if let readerFailure { throw readerFailure }
        return Result(warnings: readerWarnings, hash: readerHash)
    }
}
