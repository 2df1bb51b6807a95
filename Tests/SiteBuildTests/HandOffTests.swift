import Foundation
@testable import SiteBuild
@testable import SiteRender
import TestSupport
import XCTest

/// The two hand-offs between threads of a build: the read-ahead of source files (results in order, never
/// more than its window ahead, stopped by `cancel`) and the render queue (every page written, with
/// back-pressure on a small queue, and a worker's error reaching the caller without a hang, the pages
/// still queued dropped). Both wake the other side only when it waits, so these run them with random
/// delays on either side; a lost wake-up fails the test by its time limit instead of hanging the run.
final class HandOffTests: XCTestCase {
    private var output: URL!

    override func setUpWithError() throws {
        output = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-handoff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: output)
    }

    func testReadAheadGivesEveryResultInOrderAndStaysWithinItsWindow() throws {
        try finishes { try Self.readAheadInOrder() }
    }

    private static func readAheadInOrder() throws {
        for window in [1, 2, 5, 32] {
            let taken = Counter()
            let furthest = Counter()
            let count = 600
            let readAhead = ReadAhead(count: count, window: window) { index -> Int in
                // The caller counts a result only once next() returned it, so it may lag by one.
                furthest.raise(to: index - taken.value)
                if index % 7 == 0 { usleep(UInt32.random(in: 0...200)) }
                return index * 3
            }
            var results: [Int] = []
            while let result = readAhead.next() {
                results.append(result)
                taken.add(1)
                if results.count % 5 == 0 { usleep(UInt32.random(in: 0...200)) }
            }
            XCTAssertEqual(results, (0..<count).map { $0 * 3 }, "window \(window)")
            XCTAssertLessThanOrEqual(furthest.value, window, "window \(window): the reader ran further ahead than its window")
        }
    }

    func testReadAheadStopsWhenCancelled() throws {
        try finishes { try Self.readAheadCancelled() }
    }

    private static func readAheadCancelled() throws {
        weak var gone: ReadAhead<Int>?
        do {
            let readAhead = ReadAhead(count: 10_000, window: 4) { index -> Int in index }
            gone = readAhead
            XCTAssertEqual(readAhead.next(), 0)
            XCTAssertEqual(readAhead.next(), 1)
            readAhead.cancel()
        }
        // The reader's thread holds the read-ahead until it stops; a reader still waiting for room in its
        // window (cancel ignored) would hold it for ever.
        for _ in 0..<200 where gone != nil { usleep(10_000) }
        XCTAssertNil(gone, "the reader went on after being cancelled")
    }

    func testTheRenderQueuesFIFOTakesInTheOrderItWasGivenWhateverTheInterleaving() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<50 {
            var fifo = FIFO<Int>(), oracle: [Int] = [], next = 0
            for _ in 0..<Int.random(in: 1...300, using: &generator) {
                if Bool.random(using: &generator) || Int.random(in: 0..<4, using: &generator) == 0 {
                    for _ in 0..<Int.random(in: 1...5, using: &generator) {
                        fifo.append(next)
                        oracle.append(next)
                        next += 1
                    }
                } else {
                    XCTAssertEqual(fifo.removeFirst(), oracle.isEmpty ? nil : oracle.removeFirst())
                }
                XCTAssertEqual(fifo.count, oracle.count)
                XCTAssertEqual(fifo.isEmpty, oracle.isEmpty)
            }
            while let first = fifo.removeFirst() { XCTAssertEqual(first, oracle.removeFirst()) }
            XCTAssertTrue(oracle.isEmpty)
        }
    }

    func testRenderQueueWritesEveryPageThroughASmallQueue() throws {
        try finishes { [output] in try Self.everyPageWritten(in: output!) }
    }

    private static func everyPageWritten(in output: URL) throws {
        for (workers, capacity) in [(1, 1), (2, 1), (2, 3), (3, 64)] {
            let folder = output.appendingPathComponent("w\(workers)-c\(capacity)")
            let writer = OutputWriter(root: folder)
            let queue = try makeQueue(writer: writer, workers: workers, capacity: capacity)
            let pages = 400
            for number in 0..<pages {
                try queue.submit(template: "page", path: "p\(number)/index.html") { _ in
                    // Slow pages and fast ones, so the queue fills up and drains by turns.
                    if number % 50 < 10 { usleep(UInt32.random(in: 0...300)) }
                    return ["number": number]
                }
                if number % 97 == 0 { usleep(2_000) }
            }
            try queue.finish()
            try writer.publish()
            for number in 0..<pages {
                XCTAssertEqual(try String(contentsOf: folder.appendingPathComponent("p\(number)/index.html"), encoding: .utf8),
                               "page \(number)\n", "\(workers) workers, capacity \(capacity)")
            }
        }
    }

    func testAWorkersErrorReachesTheCallerAndTheQueuedPagesAreDropped() throws {
        try finishes { [output] in try Self.errorReachesTheCaller(in: output!) }
    }

    private static func errorReachesTheCaller(in output: URL) throws {
        for (workers, capacity) in [(1, 1), (1, 8), (2, 2), (2, 16)] {
            let queue = try makeQueue(writer: OutputWriter(root: output.appendingPathComponent("e\(workers)-\(capacity)")),
                                      workers: workers, capacity: capacity)
            let renderedAfter = Counter()
            let failed = Counter()
            var thrownBySubmit = false
            do {
                for number in 0..<2_000 {
                    try queue.submit(template: "page", path: "p\(number)/index.html") { _ in
                        if failed.value > 0 { renderedAfter.add(1) }
                        if number == 100 {
                            failed.add(1)
                            throw CocoaError(.fileWriteNoPermission)
                        }
                        return ["number": number]
                    }
                }
            } catch {
                thrownBySubmit = true
            }
            XCTAssertThrowsError(try queue.finish(), "\(workers) workers, capacity \(capacity)")
            XCTAssertTrue(thrownBySubmit, "\(workers) workers, capacity \(capacity): submit went on after the error")
            // A lone worker records its error before it takes another page, so the pages still queued
            // are dropped, not rendered. (With more workers, others may take pages in between.)
            if workers == 1 { XCTAssertEqual(renderedAfter.value, 0, "capacity \(capacity): queued pages were rendered after the error") }
        }
    }

    /// Runs `body` on a thread of its own and fails if it has not returned within `seconds`.
    private func finishes(within seconds: Double = 60, _ body: @escaping @Sendable () throws -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        let failure = Box()
        let thread = Thread {
            do { try body() } catch { failure.error = error }
            done.signal()
        }
        thread.start()
        guard done.wait(timeout: .now() + seconds) == .success else {
            XCTFail("did not finish within \(seconds) s: a side waits for a wake-up that never comes")
            return
        }
        if let error = failure.error { throw error }
    }

    private static func makeQueue(writer: OutputWriter, workers: Int, capacity: Int) throws -> RenderQueue {
        let templates = try TemplateSet(texts: [(name: "page", file: "page.mustache", text: "page {{number}}\n")])
        return RenderQueue(templates: templates, knownNames: [], writer: writer,
                           workerCount: workers, capacity: capacity)
    }
}

/// An error thrown on another thread.
private final class Box: @unchecked Sendable {
    var error: (any Error)?
}

/// A number several threads change and read.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    var value: Int { lock.withLock { count } }

    func add(_ amount: Int) { lock.withLock { count += amount } }

    func raise(to candidate: Int) { lock.withLock { count = max(count, candidate) } }
}
