import Foundation
import SiteBuild
import SiteServe
import XCTest

/// The server answering while builds rewrite the pages it serves.
final class ServeUnderRebuildTests: XCTestCase {
    func testAThousandRequestsDuringRebuildsAllGetWholePages() throws {
        let site = try ExampleSite.copy(for: self)
        let builder = SiteBuilder(root: site)
        XCTAssertTrue(try builder.build().succeeded)
        let server = try SiteServer(SiteServer.Configuration(outputDirectory: builder.outputDirectory, port: 0))
        let port = try startBlocking(server).port
        defer { stopBlocking(server) }

        // Renaming a bank back and forth rewrites its page and the listing pages that show it, on every build.
        let csv = site.appendingPathComponent("content/records/failed-banks.csv")
        let stop = Flag(), builds = Counter(), pagesWritten = Counter()
        let rebuilder = Thread {
            let builder = SiteBuilder(root: site)
            var renamed = false
            while !stop.isSet {
                renamed.toggle()
                let text = csv.text
                let edited = renamed ? text.replacingOccurrences(of: "\nCapitol Bank,", with: "\nCapitol Savings Bank,")
                                     : text.replacingOccurrences(of: "\nCapitol Savings Bank,", with: "\nCapitol Bank,")
                try? Data(edited.utf8).write(to: csv)
                if let summary = try? builder.build() {
                    builds.add(1)
                    pagesWritten.add(summary.pagesWritten)
                }
            }
        }
        rebuilder.start()

        let pages = ["/banks/23917/", "/", "/states/mn/", "/banks/23917/index.html"]
        let connections = 4, requestsEach = 250
        let failures = Counter(), completed = Counter()
        let start = Date()
        DispatchQueue.concurrentPerform(iterations: connections) { client in
            do {
                let connection = try RawHTTPConnection(port: port)
                for number in 0..<requestsEach {
                    let response = try connection.request(pages[(client + number) % pages.count])
                    let text = response.text.trimmingCharacters(in: .whitespacesAndNewlines)
                    if response.status == 200 && text.hasSuffix("</html>") && text.contains(LiveReload.script + "</body>") {
                        completed.add(1)
                    } else {
                        failures.add(1)
                        XCTFail("status \(response.status), \(response.body.count) bytes ending \(text.suffix(80))")
                    }
                }
            } catch {
                failures.add(1)
                XCTFail("connection \(client): \(error)")
            }
        }
        let seconds = Date().timeIntervalSince(start)
        stop.set()
        while rebuilder.isExecuting { Thread.sleep(forTimeInterval: 0.01) }

        XCTAssertEqual(completed.value, connections * requestsEach)
        XCTAssertEqual(failures.value, 0)
        XCTAssertGreaterThanOrEqual(builds.value, 2, "the requests overlapped at least two builds")
        print("\(completed.value) whole pages in \(String(format: "%.2f", seconds)) s over \(connections) connections "
              + "while \(builds.value) builds wrote \(pagesWritten.value) pages")
    }
}

/// A flag set by one thread and read by another.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var state = false
    var isSet: Bool { lock.withLock { state } }
    func set() { lock.withLock { state = true } }
}

/// A count several threads add to.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add(_ amount: Int) { lock.withLock { count += amount } }
}
