import Foundation
import SiteBuild
import SiteStore
import TestSupport
import XCTest

/// What each load changes in the store, on a small site of a CSV, an NDJSON file and a feed.
final class LoadingTests: XCTestCase {
    private var site: URL!

    override func setUpWithError() throws {
        site = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-load-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: site.appendingPathComponent("data"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: site.appendingPathComponent("Templates"), withIntermediateDirectories: true)
        try "{{#items}}{{title}};{{/items}}".write(to: site.appendingPathComponent("Templates/list.mustache"), atomically: true, encoding: .utf8)
        try write("sitegen.yml", """
            title: Test
            collections:
              banks:
                kind: csv
                sources: data/*.csv
                key: cert
                fields: {cert: integer, name: text, closed: date}
              people:
                kind: ndjson
                sources: data/*.ndjson
                key: id
                fields: {id: text, name: text}
              news:
                kind: feed
                sources: data/*.xml
            listings:
              home: {from: banks, sort: [-closed], path: /}
            """)
        try write("data/banks.csv", "cert,name,closed\n1,Alpha,2024-01-01\n2,Beta,2024-02-01\n3,Gamma,2024-03-01\n")
        try write("data/people.ndjson", "{\"id\": \"p1\", \"name\": \"Ann\"}\n{\"id\": \"p2\", \"name\": \"Bo\"}\n")
        try write("data/news.xml", """
            <rss version="2.0"><channel><title>N</title>
            <item><guid>g1</guid><title>One</title></item>
            <item><guid>g1</guid><title>One again</title></item>
            <item><guid>g2</guid><title>Two</title></item>
            </channel></rss>
            """)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: site)
    }

    private func write(_ path: String, _ text: String) throws {
        try text.write(to: site.appendingPathComponent(path), atomically: true, encoding: .utf8)
    }

    /// Writes each file of `files` (path to text).
    private func write(_ files: [String: String]) throws {
        for (path, text) in files { try write(path, text) }
    }

    private func build() throws -> BuildSummary { try SiteBuilder(root: site).build() }

    /// The text of a file the build wrote, by its path in the output folder.
    private func page(_ path: String) throws -> String {
        try String(contentsOf: site.appendingPathComponent("output/" + path), encoding: .utf8)
    }

    private func changes(_ summary: BuildSummary) -> [Int] { [summary.rowsInserted, summary.rowsUpdated, summary.rowsDeleted] }

    func testTheFirstLoadInsertsEveryRowAndARepeatedGuidIsOneRowWithAWarning() throws {
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        XCTAssertEqual(changes(summary), [3 + 2 + 2, 0, 0])
        XCTAssertEqual(summary.warnings.map(\.description), ["data/news.xml:3: item id 'g1' repeats the item at line 2; the first one is kept"])
    }

    func testEditingRemovingAndAppendingRowsAreOneUpdateOneDeleteOneInsert() throws {
        _ = try build()
        try write("data/banks.csv", "cert,name,closed\n1,Alpha,2024-01-01\n2,Beta Bank,2024-02-01\n3,Gamma,2024-03-01\n")
        XCTAssertEqual(changes(try build()), [0, 1, 0])
        try write("data/banks.csv", "cert,name,closed\n1,Alpha,2024-01-01\n2,Beta Bank,2024-02-01\n")
        XCTAssertEqual(changes(try build()), [0, 0, 1])
        try write("data/banks.csv", "cert,name,closed\n1,Alpha,2024-01-01\n2,Beta Bank,2024-02-01\n4,Delta,2024-04-01\n")
        XCTAssertEqual(changes(try build()), [1, 0, 0])
        try write("data/people.ndjson", "{\"id\": \"p2\", \"name\": \"Bo\"}\n{\"id\": \"p1\", \"name\": \"Ann\"}\n")
        XCTAssertEqual(changes(try build()), [0, 0, 0], "reordering lines changes no row")
    }

    func testAnUnchangedOrMerelyTouchedSourceIsNotParsedAndChangesNothing() throws {
        waitPastTheClocksTick()
        _ = try build()
        let again = try build()
        XCTAssertEqual(changes(again), [0, 0, 0])
        XCTAssertEqual(again.sourcesRead, 0)
        XCTAssertEqual(again.sourcesUnchanged, 3)
        let csv = site.appendingPathComponent("data/banks.csv").path
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: csv)
        waitPastTheClocksTick()
        let touched = try build()
        XCTAssertEqual(changes(touched), [0, 0, 0])
        XCTAssertEqual(touched.sourcesRead, 1, "the touched file is read to compare its bytes")
        XCTAssertEqual(touched.sourcesUnchanged, 2, "read or not read, never both: the three files are counted once")
        XCTAssertEqual(touched.sourcesSameBytes, 1)
        XCTAssertEqual(try build().sourcesRead, 0, "its new time is remembered")
    }

    /// A feed whose status changed but not its bytes (a fresh checkout, a restored cache) had its whole
    /// collection parsed again; it is now found unchanged by its hash, as record files are.
    func testAFeedWithANewStatusAndTheSameBytesIsNotParsedAgainNorAreTheOthers() throws {
        try write("data/more.xml", "<rss version=\"2.0\"><channel><title>M</title><item><guid>m1</guid><title>M one</title></item></channel></rss>")
        waitPastTheClocksTick()
        XCTAssertEqual(try build().sourcesRead, 4)
        let news = site.appendingPathComponent("data/news.xml").path
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: news)
        waitPastTheClocksTick()
        let touched = try build()
        XCTAssertEqual([touched.sourcesRead, touched.sourcesSameBytes, touched.sourcesUnchanged], [1, 1, 3], "only the touched feed is looked at, by its hash")
        XCTAssertEqual(changes(touched), [0, 0, 0])
        // A real edit still reads the collection's feeds again, in order (an item two feeds have is the first's).
        try write("data/more.xml", "<rss version=\"2.0\"><channel><title>M</title><item><guid>g2</guid><title>Two elsewhere</title></item></channel></rss>")
        let edited = try build()
        XCTAssertEqual(edited.sourcesRead, 2)
        XCTAssertEqual(changes(edited), [1, 0, 2], "m1 goes, and g2 is now more.xml's, the first file by path: a row of it replaces news.xml's")
    }

    func testASourceTooLargeToReadWholeIsStreamedDiffedRowByRowAndKeptWhenItBreaks() throws {
        // Over 8 MiB: hashed and parsed a chunk at a time, rows written as they are read.
        let padding = String(repeating: "word ", count: 60)
        func people(_ count: Int, renamed: Int? = nil, broken: Int? = nil) -> String {
            (0..<count).map { index in
                if index == broken { return "{\"id\": \"p\(index)\", " }
                return "{\"id\": \"p\(index)\", \"name\": \"\(index == renamed ? "Renamed" : "Person \(index)") \(padding)\"}"
            }.joined(separator: "\n") + "\n"
        }
        let large = people(30_000)
        XCTAssertGreaterThan(large.utf8.count, 8 << 20)
        try write("data/people.ndjson", large)
        var builder = SiteBuilder(root: site)
        let reports = Reports()
        builder.onLoadProgress = { reports.list.append($0) }
        XCTAssertEqual(try builder.build().rowsInserted, 3 + 30_000 + 2)
        let last = try XCTUnwrap(reports.list.last)
        XCTAssertEqual([last.file, "\(last.rows)", "\(last.finished)", "\(last.bytesRead)"],
                       ["data/people.ndjson", "30000", "true", "\(large.utf8.count)"], "the last report says the file is done")
        XCTAssertEqual(reports.list.filter(\.finished).count, 1)
        try write("data/people.ndjson", people(30_000, renamed: 29_999))
        XCTAssertEqual(changes(try build()), [0, 1, 0])
        // Touched, same bytes: one hashing pass finds the hash its load recorded, and nothing is streamed.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 120)],
                                              ofItemAtPath: site.appendingPathComponent("data/people.ndjson").path)
        reports.list.removeAll()
        XCTAssertEqual(changes(try builder.build()), [0, 0, 0])
        XCTAssertEqual(reports.list.count, 0, "the touched file's rows were not read again")
        try write("data/people.ndjson", people(30_000, renamed: 29_999, broken: 20_000))
        let failed = try build()
        XCTAssertEqual(failed.problems.map(\.description), ["data/people.ndjson:20001:18: not valid JSON: the text ends inside an object"])
        XCTAssertEqual(changes(failed), [0, 0, 0], "rows written before the bad line are rolled back")
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        XCTAssertEqual(try store.rowCount(of: "people"), 30_000)
        let name = try store.database.fetchValue("SELECT name FROM people WHERE _key = 'p29999'")?.stringValue
        XCTAssertEqual(name, "Renamed " + padding, "the last good load's rows stay")

        // A key another file holds stops the writer mid-stream; the reader thread is stopped with it.
        try write("data/a.ndjson", "{\"id\": \"p30000\", \"name\": \"Elsewhere\"}\n")
        try write("data/people.ndjson", people(30_001))
        let clash = try build()
        XCTAssertEqual(clash.problems.map(\.description), [
            "data/people.ndjson:30001: key 'p30000' is already used in collection 'people' by data/a.ndjson; keys must be unique across a collection's sources",
        ])
        XCTAssertEqual(try store.rowCount(of: "people"), 30_001)
    }

    func testAFeedTooLargeToReadWholeIsParsedAsItIsReadAndATruncatedOneKeepsItsRows() throws {
        let padding = String(repeating: "news &amp; more ", count: 30)
        func feed(_ count: Int, retitled: Int? = nil) -> String {
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rss version=\"2.0\"><channel><title>Big</title>\n"
                + (0..<count).map { index in
                    "<item><guid>n\(index)</guid><title>\(index == retitled ? "Retitled" : "Item \(index)")</title>"
                        + "<description>\(padding)&nbsp;\(index)</description></item>"
                }.joined(separator: "\n") + "\n</channel></rss>\n"
        }
        let large = feed(20_000)
        XCTAssertGreaterThan(large.utf8.count, 8 << 20)
        try write("data/news.xml", large)
        let first = try build()
        XCTAssertTrue(first.succeeded, "\(first.problems)")
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        XCTAssertEqual(try store.rowCount(of: "news"), 20_000)
        let summary = try store.database.fetchValue("SELECT summary FROM news WHERE _key = 'n19999'")?.stringValue
        XCTAssertEqual(summary, padding.replacingOccurrences(of: "&amp;", with: "&") + "\u{A0}19999", "entities decoded, HTML ones too")

        try write("data/news.xml", feed(20_000, retitled: 12_345))
        XCTAssertEqual(changes(try build()), [0, 1, 0])

        // A download cut short: not well-formed, so nothing is deleted.
        try write("data/news.xml", String(large.prefix(large.utf8.count / 2)))
        let cut = try build()
        XCTAssertEqual(cut.problems.count, 1)
        XCTAssertTrue(cut.problems[0].description.hasPrefix("data/news.xml:"), cut.problems[0].description)
        XCTAssertTrue(cut.problems[0].description.contains("not well-formed XML"), cut.problems[0].description)
        XCTAssertEqual(changes(cut), [0, 0, 0])
        XCTAssertEqual(try store.rowCount(of: "news"), 20_000)
        XCTAssertEqual(try store.database.fetchValue("SELECT title FROM news WHERE _key = 'n12345'")?.stringValue, "Retitled")
    }

    func testAFileTwoPatternsNameLoadsOnceAndAFileRemovedTakesItsRowsAlong() throws {
        try write("sitegen.yml", """
            title: Test
            collections:
              banks:
                kind: csv
                sources: [data/*.csv, data/b*.csv, more/*.csv]
                key: cert
                fields: {cert: integer, name: text, closed: date}
            listings:
              home: {from: banks, sort: [-closed], path: /}
            """)
        try FileManager.default.createDirectory(at: site.appendingPathComponent("more"), withIntermediateDirectories: true)
        try write("more/extra.csv", "cert,name,closed\n7,Eta,2024-07-01\n8,Theta,2024-08-01\n")
        waitPastTheClocksTick()
        let first = try build()
        XCTAssertTrue(first.succeeded, "\(first.problems)")
        XCTAssertEqual(changes(first), [5, 0, 0], "banks.csv, named by two patterns, is loaded once")
        try FileManager.default.removeItem(at: site.appendingPathComponent("more/extra.csv"))
        XCTAssertEqual(changes(try build()), [0, 0, 2])
        XCTAssertEqual(try build().sourcesRead, 0)
    }

    /// A folder that is not there is a checkout or a mount missing: deploying an emptied site would be
    /// the worst outcome. A folder emptied of its files is a collection emptied on purpose.
    func testAMissingSourceFolderFailsTheBuildAndKeepsItsRowsAndAnEmptiedOneEmptiesTheCollection() throws {
        try write("sitegen.yml", """
            title: Test
            collections:
              banks:
                kind: csv
                sources: [data/*.csv, more/deeper/*.csv]
                key: cert
                fields: {cert: integer, name: text, closed: date}
            listings:
              home: {from: banks, sort: [-closed], path: /}
            """)
        try FileManager.default.createDirectory(at: site.appendingPathComponent("more/deeper"), withIntermediateDirectories: true)
        try write("more/deeper/extra.csv", "cert,name,closed\n7,Eta,2024-07-01\n")
        XCTAssertEqual(changes(try build()), [4, 0, 0])
        try FileManager.default.moveItem(at: site.appendingPathComponent("more"), to: site.appendingPathComponent("elsewhere"))
        let failed = try build()
        XCTAssertFalse(failed.succeeded)
        XCTAssertEqual(failed.problems.map(\.description), [
            "sitegen.yml:5:14: collection 'banks': the folder 'more/deeper' is missing; the records of its 1 file from the last build "
                + "are kept (to empty the collection, keep the folder and remove its files)",
        ])
        XCTAssertEqual(changes(failed), [0, 0, 0])
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8), "7;3;2;1;", "the missing folder's record is still listed")
        try FileManager.default.moveItem(at: site.appendingPathComponent("elsewhere"), to: site.appendingPathComponent("more"))
        let back = try build()
        XCTAssertTrue(back.succeeded, "\(back.problems)")
        XCTAssertEqual(changes(back), [0, 0, 0])
        try FileManager.default.removeItem(at: site.appendingPathComponent("more/deeper/extra.csv"))
        let emptied = try build()
        XCTAssertTrue(emptied.succeeded, "\(emptied.problems)")
        XCTAssertEqual(changes(emptied), [0, 0, 1])
        try FileManager.default.removeItem(at: site.appendingPathComponent("data/banks.csv"))
        let none = try build()
        XCTAssertEqual(none.warnings.map(\.description).filter { $0.contains("no file matches") },
                       ["sitegen.yml:5:14: collection 'banks': no file matches data/*.csv, more/deeper/*.csv"])
    }

    /// A clean checkout in CI whose data folder is not there built an empty site with status 0: only a
    /// store with the folder's rows made it an error. Other collections still build.
    func testAMissingSourceFolderFailsAFirstBuildTooWhileTheOtherCollectionsBuild() throws {
        try write("sitegen.yml", """
            title: Test
            collections:
              banks:
                kind: csv
                sources: records/*.csv
                key: cert
                fields: {cert: integer, name: text, closed: date}
              others:
                kind: csv
                sources: data/*.csv
                key: cert
                fields: {cert: integer, name: text, closed: date}
            listings:
              home: {from: banks, sort: [-closed], path: /}
              others: {from: others, sort: [-closed], path: /others/}
            """)
        let failed = try build()
        XCTAssertFalse(failed.succeeded)
        XCTAssertEqual(failed.problems.map(\.description), [
            "sitegen.yml:5:14: collection 'banks': the folder 'records' is missing; to build the collection empty, make the folder",
        ])
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/others/index.html"), encoding: .utf8), "3;2;1;")
        try FileManager.default.createDirectory(at: site.appendingPathComponent("records"), withIntermediateDirectories: true)
        let emptied = try build()
        XCTAssertTrue(emptied.succeeded, "\(emptied.problems)")
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8), "")
    }

    func testSourcesBesideTheSiteOrAtAnAbsolutePathLoadAndAreNamedByThatPath() throws {
        let shared = site.deletingLastPathComponent().appendingPathComponent(site.lastPathComponent + "-shared")
        addTeardownBlock { try? FileManager.default.removeItem(at: shared) }
        try FileManager.default.createDirectory(at: shared.appendingPathComponent("2024"), withIntermediateDirectories: true)
        try "cert,name,closed\n7,Eta,2024-07-01\n".write(to: shared.appendingPathComponent("beside.csv"), atomically: true, encoding: .utf8)
        let deep = shared.appendingPathComponent("2024/deep.csv")
        try "cert,name,closed\n8,Theta,2024-08-01\n9,Iota,2024-09-01\n".write(to: deep, atomically: true, encoding: .utf8)
        try write("sitegen.yml", """
            title: Test
            collections:
              banks:
                kind: csv
                sources: [data/*.csv, ../\(shared.lastPathComponent)/*.csv, \(shared.path)/20*/*.csv]
                key: cert
                fields: {cert: integer, name: text, closed: date}
            listings:
              home: {from: banks, sort: [-closed], path: /}
            """)
        let first = try build()
        XCTAssertTrue(first.succeeded, "\(first.problems)")
        XCTAssertTrue(first.warnings.isEmpty, "\(first.warnings)")
        XCTAssertEqual(changes(first), [6, 0, 0])

        try "cert,name,closed\n8,Theta,2024-08-01\nnine,Iota,2024-09-01\n".write(to: deep, atomically: true, encoding: .utf8)
        let broken = try build()
        XCTAssertFalse(broken.succeeded)
        XCTAssertEqual(changes(broken), [0, 0, 0], "the bad file keeps its rows")
        XCTAssertTrue(broken.problems.map(\.description).joined().contains("\(deep.path):3"), "\(broken.problems)")

        try FileManager.default.removeItem(at: shared.appendingPathComponent("beside.csv"))
        XCTAssertEqual(changes(try build()), [0, 0, 1])
    }

    func testABoolFieldPrintsTrueOrFalseAndItsSectionShowsForTrueOnly() throws {
        try write("sitegen.yml", """
            title: Test
            collections:
              banks:
                kind: csv
                sources: data/flags.csv
                key: cert
                fields: {cert: integer, name: text, active: bool}
            listings:
              home: {from: banks, sort: [cert], path: /, formats: [html, md]}
            """)
        try write("data/flags.csv", "cert,name,active\n1,Alpha,yes\n2,Beta,false\n3,Gamma,\n")
        try write("Templates/list.mustache", "{{#items}}{{name}}:{{active}}{{#active}}!{{/active}}{{^active}}-{{/active}};{{/items}}")
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8),
                       "Alpha:true!;Beta:false-;Gamma:-;")
        let report = try String(contentsOf: site.appendingPathComponent("output/index.md"), encoding: .utf8)
        XCTAssertTrue(report.contains("| 1 | 1 | Alpha | true |\n| 2 | 2 | Beta | false |\n| 3 | 3 | Gamma |  |"), report)
    }

    func testABadFileKeepsItsRowsIsRetriedAndTheOthersStillLoad() throws {
        _ = try build()
        try write("data/banks.csv", "cert,name,closed\n1,Alpha,2024-01-01\n2,\"Beta,2024-02-01\n")
        try write("data/people.ndjson", "{\"id\": \"p1\", \"name\": \"Ann\"}\n{\"id\": \"p3\", \"name\": \"Cy\"}\n")
        let failed = try build()
        XCTAssertEqual(failed.problems.map(\.description), ["data/banks.csv:3:3: a quoted field is never closed; expected a closing quote (\")"])
        XCTAssertEqual(changes(failed), [1, 0, 1], "people still load: p3 in, p2 out")
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        XCTAssertEqual(try store.rowCount(of: "banks"), 3, "the bad file's last good rows stay")
        XCTAssertEqual(try store.sourceStatuses().first { $0.path == "data/banks.csv" }?.status, "failed")
        XCTAssertFalse(try build().succeeded, "a failed source is read again, and fails again, though unchanged")
    }

    func testATextWithANULInsideKeepsEveryCharacterAfterIt() throws {
        try write("data/people.ndjson", "{\"id\": \"p1\", \"name\": \"A\\u0000B tail\"}\n")
        try write("data/banks.csv", "cert,name,closed\n1,Nul\u{0}here,2024-01-01\n")
        XCTAssertTrue(try build().succeeded)
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        XCTAssertEqual(try store.database.fetchValue("SELECT name FROM people")?.stringValue, "A\u{0}B tail")
        XCTAssertEqual(try store.database.fetchValue("SELECT length(CAST(name AS BLOB)) FROM people")?.int64Value, 8, "stored whole, not read back to the NUL only")
        XCTAssertEqual(try store.database.fetchValue("SELECT name FROM banks")?.stringValue, "Nul\u{0}here")
        XCTAssertEqual(changes(try build()), [0, 0, 0], "and read back as stored: the row is unchanged")
    }

    /// Feeds written are read elsewhere: a summary a feed gave as HTML goes out as the text it shows, and a
    /// relative link in a body leads where it led on its page, not where the reader's feed is.
    func testWrittenFeedsCarrySummariesAsTextAndBodiesWithAbsoluteLinks() throws {
        try FileManager.default.createDirectory(at: site.appendingPathComponent("posts"), withIntermediateDirectories: true)
        try write("sitegen.yml", """
            title: Test
            baseURL: https://example.org/blog/
            collections:
              news:
                kind: feed
                sources: data/*.xml
                detail: {path: "/news/{slug}/"}
              posts:
                kind: markdown
                sources: posts/*.md
                fields: {date: date}
                detail: {path: "/posts/{slug}/"}
            listings:
              home: {from: news, sort: [-published], path: /, feeds: [atom, json]}
              blog: {from: posts, sort: [-date], path: /blog/, feeds: [atom]}
            """)
        try write("data/news.xml", """
            <rss version="2.0"><channel><title>N</title><link>https://f.example.org/</link>
            <item><guid>g1</guid><title>One</title><link>https://f.example.org/one</link><description>&lt;p&gt;Hello &lt;b&gt;bold&lt;/b&gt; &amp;amp; more&lt;/p&gt;</description></item>
            </channel></rss>
            """)
        try write("posts/hello.md", "---\ntitle: Hello\ndate: 2024-01-05\n---\nSee [other](../other/) and ![c](chart.png) and [top](#top).\n")
        try "{{title}}".write(to: site.appendingPathComponent("Templates/detail.mustache"), atomically: true, encoding: .utf8)
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        func file(_ path: String) throws -> String { try String(contentsOf: site.appendingPathComponent("output/" + path), encoding: .utf8) }
        let home = try file("atom.xml")
        XCTAssertTrue(home.contains("<summary>Hello bold &amp; more</summary>"), home)
        let json = try file("feed.json")
        XCTAssertTrue(json.contains(#""summary": "Hello bold & more""#), json)
        let atom = try file("blog/atom.xml")
        XCTAssertTrue(atom.contains("href=&quot;https://example.org/blog/posts/other/&quot;"), atom)
        XCTAssertTrue(atom.contains("src=&quot;https://example.org/blog/posts/hello/chart.png&quot;"), atom)
        // A fragment is on the entry's page: in a feed, `#top` would be the feed's (RFC 3986 resolves it against
        // the document it is in), and readers that drop ids would have nowhere to go.
        XCTAssertTrue(atom.contains("href=&quot;https://example.org/blog/posts/hello/#top&quot;"), atom)
    }

    func testFeedsOfACollectionWithoutTitlesAreAWarningAtTheirLine() throws {
        try write("sitegen.yml", """
            title: Test
            baseURL: https://example.org/
            collections:
              banks:
                kind: csv
                sources: data/banks.csv
                key: cert
                fields: {cert: integer, name: text, closed: date}
            listings:
              home:
                from: banks
                sort: [-closed]
                path: /
                feeds: [rss]
            """)
        let summary = try build()
        XCTAssertEqual(summary.warnings.map(\.description).filter { $0.contains("feeds") }, [
            "sitegen.yml:14:12: listing 'home': its feeds title each entry by its key, since collection 'banks' has no 'title' field; "
                + "name one in its detail (detail: {path: ..., title: FIELD}) or call a field 'title'",
        ])
        try write("sitegen.yml", try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
            .replacingOccurrences(of: "name: text", with: "title: text"))
        try write("data/banks.csv", "cert,title,closed\n1,Alpha,2024-01-01\n")
        XCTAssertEqual(try build().warnings.filter { $0.reason.contains("feeds") }.count, 0, "a title field")
    }

    func testTitlesInOtherScriptsMakeTheirOwnPagesAndTheSitemapEncodesThem() throws {
        try FileManager.default.createDirectory(at: site.appendingPathComponent("posts"), withIntermediateDirectories: true)
        try write("sitegen.yml", """
            title: Test
            baseURL: https://example.org/
            collections:
              posts:
                kind: markdown
                sources: posts/*.md
                detail: {path: "/posts/{slug}/"}
            listings:
              home: {from: posts, sort: [title], path: /}
            """)
        try write("posts/tokyo.md", "---\ntitle: 東京\nslug: 東京\n---\nx\n")
        try write("posts/moscow.md", "---\ntitle: Москва\n---\nx\n")
        try "{{title}}".write(to: site.appendingPathComponent("Templates/detail.mustache"), atomically: true, encoding: .utf8)
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        func file(_ path: String) throws -> String { try String(contentsOf: site.appendingPathComponent("output/" + path), encoding: .utf8) }
        XCTAssertEqual(try file("posts/東京/index.html"), "東京")
        XCTAssertEqual(try file("posts/moscow/index.html"), "Москва", "a Markdown record's slug is its file name")
        let sitemap = try file("sitemap.xml")
        XCTAssertTrue(sitemap.contains("<loc>https://example.org/posts/%E6%9D%B1%E4%BA%AC/</loc>"), sitemap)
    }

    func testARealFieldShowsAWholeNumberAsTheDataWritesIt() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "fields: {cert: integer, name: text, closed: date}", with: "fields: {cert: integer, name: text, closed: date, fund: real}")
        try write("sitegen.yml", config)
        try write("data/banks.csv", "cert,name,closed,fund\n1,Alpha,2024-01-01,10\n2,Beta,2024-02-01,-1234\n3,Gamma,2024-03-01,0.5\n"
                  + "4,Delta,2024-04-01,0.00001\n5,Epsilon,2024-05-01,12345678901234567\n")
        try "{{#items}}{{fund}} {{number(fund)}};{{/items}}".write(to: site.appendingPathComponent("Templates/list.mustache"), atomically: true, encoding: .utf8)
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8),
                       "12345678901234568 12,345,678,901,234,568;0.00001 0.00001;0.5 0.5;-1234 -1,234;10 10;", "never in exponent form")
    }

    /// Sections group records by a field's value; a record without one (an empty cell) is in none, as a
    /// record without tags is on no tag's page, and stays in the listings without sections.
    func testARecordWithNoValueForTheSectionFieldIsInNoSection() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "fields: {cert: integer, name: text, closed: date}", with: "fields: {cert: integer, name: text, closed: date, state: text}")
        config += "\n  states: {from: banks, section: state, sort: [name], path: \"/states/{section}/\"}\n"
        try write("sitegen.yml", config)
        try "{{#sections}}{{name}}={{count}};{{/sections}}{{rowCount}}".write(to: site.appendingPathComponent("Templates/sections.mustache"), atomically: true, encoding: .utf8)
        try write("data/banks.csv", "cert,name,closed,state\n1,Alpha,2024-01-01,CA\n2,Beta,2024-02-01,\n3,Gamma,2024-03-01,TX\n")
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        func file(_ path: String) throws -> String { try String(contentsOf: site.appendingPathComponent("output/" + path), encoding: .utf8) }
        XCTAssertEqual(try file("states/index.html"), "CA=1;TX=1;2")
        XCTAssertEqual(try file("index.html"), "3;2;1;", "titled by key")
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.appendingPathComponent("output/states/untitled").path))
        // Given a state, it joins that section; emptied again, it leaves it.
        try write("data/banks.csv", "cert,name,closed,state\n1,Alpha,2024-01-01,CA\n2,Beta,2024-02-01,CA\n3,Gamma,2024-03-01,TX\n")
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try file("states/ca/index.html"), "1;2;")
        try write("data/banks.csv", "cert,name,closed,state\n1,Alpha,2024-01-01,CA\n2,Beta,2024-02-01,\n3,Gamma,2024-03-01,TX\n")
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try file("states/ca/index.html"), "1;")
        XCTAssertEqual(try file("states/index.html"), "CA=1;TX=1;2")
    }

    /// A page path is written through a temporary file named after it, and file systems take 255 bytes a
    /// name: a record titled at length made a path part too long, and every build failed.
    func testATitleTooLongForAFileNameMakesAShortenedPageOfItsOwn() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "fields: {cert: integer, name: text, closed: date}",
                                             with: "fields: {cert: integer, name: text, closed: date}\n    detail: {path: \"/banks/{name}/\", title: name}")
        XCTAssertTrue(config.contains("/banks/{name}/"))
        try write("sitegen.yml", config)
        try "{{title}}".write(to: site.appendingPathComponent("Templates/detail.mustache"), atomically: true, encoding: .utf8)
        let long = "Report of the Special Committee" + String(repeating: " on the investigation of the failure", count: 7)
        try write("data/banks.csv", "cert,name,closed\n1,\(long) one,2024-01-01\n2,\(long) two,2024-02-01\n3,Short,2024-03-01\n")
        try "{{#items}}{{url}};{{/items}}".write(to: site.appendingPathComponent("Templates/list.mustache"), atomically: true, encoding: .utf8)
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        let links = try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8).split(separator: ";").map(String.init)
        XCTAssertEqual(links.count, 3)
        XCTAssertEqual(links[0], "/banks/short/")
        for link in links.dropFirst() {
            let name = link.split(separator: "/").last!
            XCTAssertLessThanOrEqual(name.utf8.count, 200, link)
            XCTAssertTrue(name.hasPrefix("report-of-the-special-committee-on-the-investigation"), link)
            XCTAssertTrue(FileManager.default.fileExists(atPath: site.appendingPathComponent("output\(link)index.html").path), link)
        }
        XCTAssertNotEqual(links[1], links[2], "two long titles that begin alike are two pages")
    }

    func testADeclaredFieldThatARecordsOwnURLHidesIsAWarningAtItsLine() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "fields: {cert: integer, name: text, closed: date}\n", with: """
            fields: {cert: integer, name: text, closed: date, url: text}
                detail: {path: "/banks/{key}/", title: name}

            """)
        try write("sitegen.yml", config)
        try write("data/banks.csv", "cert,name,closed,url\n1,Alpha,2024-01-01,https://e.com/a\n")
        try "{{#record}}{{url}}{{/record}}".write(to: site.appendingPathComponent("Templates/detail.mustache"), atomically: true, encoding: .utf8)
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        XCTAssertEqual(summary.warnings.map(\.description).filter { $0.contains("templates read") }, [
            "sitegen.yml:7:55: collection 'banks': templates read 'url' as the address of the record's page, not as this field; "
                + "its values are stored but no page shows them (rename the field in the data to show it)",
        ])
    }

    func testSectionsOfABoolFieldAreNamedTrueAndFalse() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "fields: {cert: integer, name: text, closed: date}", with: "fields: {cert: integer, name: text, closed: date, open: bool}")
            .replacingOccurrences(of: "listings:\n", with: """
            listings:
              byopen: {from: banks, section: open, sort: [open, name], path: "/open/{section}/"}

            """)
        try write("sitegen.yml", config)
        try write("data/banks.csv", "cert,name,closed,open\n1,Alpha,2024-01-01,true\n2,Beta,2024-02-01,false\n")
        try "{{section.title}}:{{#items}}{{name}}{{/items}}".write(to: site.appendingPathComponent("Templates/list.mustache"), atomically: true, encoding: .utf8)
        try "{{#sections}}{{name}}={{url}};{{/sections}}".write(to: site.appendingPathComponent("Templates/sections.mustache"), atomically: true, encoding: .utf8)
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        func page(_ path: String) throws -> String { try String(contentsOf: site.appendingPathComponent("output/" + path), encoding: .utf8) }
        XCTAssertEqual(try page("open/index.html"), "false=/open/false/;true=/open/true/;")
        XCTAssertEqual(try page("open/true/index.html"), "true:Alpha")
    }

    func testRecordsThatTieAreListedInTheOrderOfANumberKeysNumbers() throws {
        try write("data/banks.csv", "cert,name,closed\n1,A,2024-01-01\n10,B,2024-01-01\n2,C,2024-01-01\n9,D,2024-01-01\n")
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8), "1;2;9;10;",
                       "cert is an integer: 2 before 10")
    }

    func testNewFieldsThatAFileWithRowsLacksChangeNothingRatherThanLoseItsRows() throws {
        XCTAssertTrue(try build().succeeded)
        let home = try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8)
        let config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        try write("sitegen.yml", config.replacingOccurrences(of: "closed: date}", with: "closed: date, extra: text}"))
        XCTAssertThrowsError(try build()) { error in
            XCTAssertEqual("\(error)", "data/banks.csv:1: no column 'extra' in the header; it has: cert, name, closed"
                + "\nerror: sitegen.yml: collection 'banks' has new fields, and the sources above do not load with them; "
                + "nothing was changed (the store and the pages are as the last build left them)")
        }
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        XCTAssertEqual(try store.rowCount(of: "banks"), 3, "the rows of the last build")
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8), home)
        try write("data/banks.csv", "cert,name,closed,extra\n1,Alpha,2024-01-01,x\n2,Beta,2024-02-01,y\n")
        let fixed = try build()
        XCTAssertTrue(fixed.succeeded, "\(fixed.problems)")
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8), "2;1;", "Gamma is gone")
    }

    func testAFileWhoseKeyIsTakenFailsAloneAmongHundredsStoredInBatches() throws {
        // Enough files for several of the load's batches (files stored together in one savepoint).
        let count = 700
        func person(_ number: Int, _ letter: String, _ name: String) -> String { "{\"id\": \"p\(number)-\(letter)\", \"name\": \"\(name)\"}\n" }
        func path(_ number: Int) -> String { String(format: "data/people-%03d.ndjson", number) }
        for number in 0..<count { try write(path(number), person(number, "a", "A\(number)") + person(number, "b", "B\(number)")) }
        let first = try build()
        XCTAssertTrue(first.succeeded, "\(first.problems)")
        XCTAssertEqual(first.rowsInserted, 3 + 2 + 2 + 2 * count)

        // File 300 takes file 5's key; the files around it, in its batch, change too.
        try write(path(10), person(10, "a", "A10 edited") + person(10, "b", "B10"))
        try write(path(300), person(300, "a", "A300 edited") + person(300, "b", "B300") + person(5, "a", "taken"))
        try write(path(301), person(301, "a", "A301") + person(301, "b", "B301 edited"))
        try write(path(500), person(500, "a", "A500"))
        let second = try build()
        XCTAssertEqual(second.problems.map(\.file), [path(300)])
        XCTAssertEqual(second.problems.first?.line, 3, "the line of the key another file has")
        XCTAssertEqual(changes(second), [0, 2, 1], "files 10 and 301 updated, file 500 lost a row; file 300 changed nothing")
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        func name(_ key: String) throws -> String? {
            try store.database.fetchValue("SELECT name FROM people WHERE id = ?", [.text(key)])?.stringValue
        }
        XCTAssertEqual(try name("p300-a"), "A300", "the failing file keeps its last good rows")
        XCTAssertEqual(try name("p5-a"), "A5")
        XCTAssertEqual(try name("p10-a"), "A10 edited")
        XCTAssertEqual(try name("p301-b"), "B301 edited")
        XCTAssertNil(try name("p500-b"))
        XCTAssertEqual(try store.rowCount(of: "people"), 2 + 2 * count - 1)
        XCTAssertEqual(try store.sourceStatuses().filter { $0.status != "ok" }.map(\.path), [path(300)])
        XCTAssertNotEqual(try store.database.fetchValue("SELECT hash FROM sitegen_sources WHERE path = ?", [.text(path(300))])?.int64Value, 0,
                          "a file that failed is recorded with the hash of the bytes that were read")

        // From nothing, the same files: file 300 alone fails, and nothing of it is stored.
        try FileManager.default.removeItem(at: site.appendingPathComponent(".sitegen"))
        let fresh = try build()
        XCTAssertEqual(fresh.problems.map(\.file), [path(300)])
        let again = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        XCTAssertEqual(try again.rowCount(of: "people"), 2 + 2 * count - 1 - 2)
        XCTAssertEqual(try again.database.fetchValue("SELECT count(*) FROM people WHERE _source = ?", [.text(path(300))])?.int64Value, 0)
        XCTAssertEqual(try again.database.fetchValue("SELECT name FROM people WHERE id = 'p301-b'")?.stringValue, "B301 edited")
    }

    /// A key keeps its record wherever its file goes: a file renamed, its folder moved, or the key moved to a
    /// file loaded before the one that had it. Only a key two files still both have is a problem.
    func testKeysFollowTheirRecordsToRenamedFilesMovedFoldersAndEarlierFiles() throws {
        try write("data/z-more.csv", "cert,name,closed\n4,Delta,2024-04-01\n")
        XCTAssertTrue(try build().succeeded)
        let files = FileManager.default
        func names() throws -> [String] {
            let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
            return try store.database.fetchAll("SELECT cert, name, _source FROM banks ORDER BY cert").map {
                "\($0["cert"]?.int64Value ?? 0) \($0["name"]?.stringValue ?? "") \($0["_source"]?.stringValue ?? "")"
            }
        }

        try files.moveItem(at: site.appendingPathComponent("data/banks.csv"), to: site.appendingPathComponent("data/a-renamed.csv"))
        let renamed = try build()
        XCTAssertTrue(renamed.succeeded, "\(renamed.problems)")
        XCTAssertEqual(try names(), ["1 Alpha data/a-renamed.csv", "2 Beta data/a-renamed.csv", "3 Gamma data/a-renamed.csv", "4 Delta data/z-more.csv"])

        try files.createDirectory(at: site.appendingPathComponent("archive"), withIntermediateDirectories: true)
        for name in ["a-renamed.csv", "z-more.csv"] {
            try files.moveItem(at: site.appendingPathComponent("data/" + name), to: site.appendingPathComponent("archive/" + name))
        }
        let config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        try write("sitegen.yml", config.replacingOccurrences(of: "sources: data/*.csv", with: "sources: archive/*.csv"))
        let moved = try build()
        XCTAssertTrue(moved.succeeded, "\(moved.problems)")
        XCTAssertEqual(try names().map { $0.replacingOccurrences(of: "archive/", with: "") },
                       ["1 Alpha a-renamed.csv", "2 Beta a-renamed.csv", "3 Gamma a-renamed.csv", "4 Delta z-more.csv"])

        // Delta moves to the file loaded first; the file that had it is loaded after.
        try write("archive/a-renamed.csv", "cert,name,closed\n1,Alpha,2024-01-01\n2,Beta,2024-02-01\n3,Gamma,2024-03-01\n4,Delta moved,2024-04-01\n")
        try write("archive/z-more.csv", "cert,name,closed\n5,Epsilon,2024-05-01\n")
        let keyMoved = try build()
        XCTAssertTrue(keyMoved.succeeded, "\(keyMoved.problems)")
        XCTAssertEqual(changes(keyMoved), [2, 0, 1], "Delta is a new row of its new file, Epsilon is new, the old Delta is gone")
        XCTAssertEqual(try names().suffix(2), ["4 Delta moved archive/a-renamed.csv", "5 Epsilon archive/z-more.csv"])

        // Both files now name Epsilon: as in a clean build, the first file has it and the other one fails,
        // keeping its other rows.
        try write("archive/a-renamed.csv", "cert,name,closed\n1,Alpha,2024-01-01\n4,Delta moved,2024-04-01\n5,Copy,2024-05-01\n")
        try write("archive/z-more.csv", "cert,name,closed\n5,Epsilon edited,2024-05-01\n6,Zeta,2024-06-01\n")
        let clash = try build()
        XCTAssertEqual(clash.problems.map(\.description), ["archive/z-more.csv:2: key '5' is already used in collection 'banks' by "
            + "archive/a-renamed.csv; keys must be unique across a collection's sources"])
        XCTAssertEqual(try names(), ["1 Alpha archive/a-renamed.csv", "4 Delta moved archive/a-renamed.csv", "5 Copy archive/a-renamed.csv"])

        // A swap, and a chain through a third file: each key ends where the files now put it.
        try write("archive/a-renamed.csv", "cert,name,closed\n1,Alpha,2024-01-01\n7,Eta,2024-07-01\n")
        try write("archive/m-middle.csv", "cert,name,closed\n4,Delta,2024-04-01\n")
        try write("archive/z-more.csv", "cert,name,closed\n5,Epsilon,2024-05-01\n")
        XCTAssertTrue(try build().succeeded)
        try write("archive/a-renamed.csv", "cert,name,closed\n4,Delta,2024-04-01\n5,Epsilon,2024-05-01\n")
        try write("archive/m-middle.csv", "cert,name,closed\n7,Eta,2024-07-01\n")
        try write("archive/z-more.csv", "cert,name,closed\n1,Alpha,2024-01-01\n")
        let shuffled = try build()
        XCTAssertTrue(shuffled.succeeded, "\(shuffled.problems)")
        XCTAssertEqual(try names(), ["1 Alpha archive/z-more.csv", "4 Delta archive/a-renamed.csv", "5 Epsilon archive/a-renamed.csv",
                                     "7 Eta archive/m-middle.csv"])
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        XCTAssertEqual(try store.sourceStatuses().filter { $0.path.hasPrefix("archive/") }.map { "\($0.path) \($0.rows)" },
                       ["archive/a-renamed.csv 2", "archive/m-middle.csv 1", "archive/z-more.csv 1"])

        // A new file loaded before an unchanged one that has its key takes it, as in a clean build; the
        // unchanged file, read again, fails on that key and keeps its other rows.
        try write("archive/z-more.csv", "cert,name,closed\n1,Alpha,2024-01-01\n8,Theta,2024-08-01\n")
        // Past the file's clock tick, so that the build vouches for it and the next one does not read it.
        waitPastTheClocksTick()
        XCTAssertTrue(try build().succeeded)
        try write("archive/b-new.csv", "cert,name,closed\n8,Theta from b,2024-08-02\n")
        let taken = try build()
        XCTAssertEqual(taken.problems.map(\.description), ["archive/z-more.csv:3: key '8' is already used in collection 'banks' by "
            + "archive/b-new.csv; keys must be unique across a collection's sources"])
        XCTAssertEqual(try names(), ["1 Alpha archive/z-more.csv", "4 Delta archive/a-renamed.csv", "5 Epsilon archive/a-renamed.csv",
                                     "7 Eta archive/m-middle.csv", "8 Theta from b archive/b-new.csv"])
        // Fixed in the later file, which now loads whole again.
        try write("archive/z-more.csv", "cert,name,closed\n1,Alpha,2024-01-01\n9,Iota,2024-09-01\n")
        let fixed = try build()
        XCTAssertTrue(fixed.succeeded, "\(fixed.problems)")
        XCTAssertEqual(try names().suffix(2), ["8 Theta from b archive/b-new.csv", "9 Iota archive/z-more.csv"])

        // The same with the later file touched (a new status, the same bytes, so not parsed): it gave its
        // key up all the same, and fails on it.
        let zMore = site.appendingPathComponent("archive/z-more.csv").path
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: zMore)
        try write("archive/c-new.csv", "cert,name,closed\n9,Iota from c,2024-09-02\n")
        let touched = try build()
        XCTAssertEqual(touched.problems.map(\.description), ["archive/z-more.csv:3: key '9' is already used in collection 'banks' by "
            + "archive/c-new.csv; keys must be unique across a collection's sources"])
        XCTAssertEqual(try names(), ["1 Alpha archive/z-more.csv", "4 Delta archive/a-renamed.csv", "5 Epsilon archive/a-renamed.csv",
                                     "7 Eta archive/m-middle.csv", "8 Theta from b archive/b-new.csv", "9 Iota from c archive/c-new.csv"])
    }

    /// Feeds that carry each other's items, changed at random: after every build the store holds what a
    /// clean load of the same files holds (an item once, from the first file that has it), and a copy in a
    /// later file is a warning naming both files, not a failure of that file.
    func testAnItemTwoFeedsCarryIsTheFirstFilesAfterEveryChangeAsACleanLoadHasIt() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? UInt64.random(in: 1...999_999)
        var random = SeededGenerator(seed: seed)
        let files = ["data/a.xml", "data/m.xml", "data/z.xml"]
        try FileManager.default.removeItem(at: site.appendingPathComponent("data/news.xml"))
        func feed(_ ids: [Int], version: Int) -> String {
            "<rss version=\"2.0\"><channel><title>F</title>\n"
                + ids.map { "<item><guid>g\($0)</guid><title>Item \($0) v\(version)</title></item>\n" }.joined()
                + "</channel></rss>\n"
        }
        func items(in root: URL) throws -> [String] {
            let store = try SiteStore(path: root.appendingPathComponent(".sitegen/store.sqlite").path)
            return try store.database.fetchAll("SELECT _key, title, _source FROM news ORDER BY _key").map {
                "\($0["_key"]?.stringValue ?? "") \($0["title"]?.stringValue ?? "") \($0["_source"]?.stringValue ?? "")"
            }
        }
        for step in 0..<40 {
            let context = "seed \(seed) (SITEGEN_SEED=\(seed) replays it), step \(step)"
            let file = files[Int.random(in: 0..<files.count, using: &random)]
            if Int.random(in: 0..<5, using: &random) == 0 {
                try? FileManager.default.removeItem(at: site.appendingPathComponent(file))
            } else {
                let ids = (0..<6).filter { _ in Bool.random(using: &random) }
                try write(file, feed(ids, version: step))
            }
            let summary = try build()
            XCTAssertTrue(summary.succeeded, "\(context): \(summary.problems)")
            for warning in summary.warnings where warning.file.hasSuffix(".xml") {
                XCTAssertTrue(warning.reason.contains("which comes first; that one is kept"), "\(context): \(warning)")
            }
            let clean = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-clean-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: clean) }
            try FileManager.default.copyItem(at: site, to: clean)
            try FileManager.default.removeItem(at: clean.appendingPathComponent(".sitegen"))
            try? FileManager.default.removeItem(at: clean.appendingPathComponent("output"))
            _ = try SiteBuilder(root: clean).build()
            XCTAssertEqual(try items(in: site), try items(in: clean), context)
            if try items(in: site) != items(in: clean) { return }
        }
        // The case the random steps may miss, and the warning itself: the first file gains the later one's item.
        try write("data/z.xml", feed([1, 2], version: 100))
        try write("data/a.xml", feed([9], version: 100))
        try? FileManager.default.removeItem(at: site.appendingPathComponent("data/m.xml"))
        XCTAssertTrue(try build().succeeded)
        try write("data/a.xml", feed([2, 9], version: 101))
        let gained = try build()
        XCTAssertEqual(gained.warnings.map(\.description).filter { $0.contains(".xml") },
                       ["data/z.xml:3: item id 'g2' is also in data/a.xml, which comes first; that one is kept"])
        XCTAssertEqual(try items(in: site).filter { $0.hasPrefix("g") },
                       ["g1 Item 1 v100 data/z.xml", "g2 Item 2 v101 data/a.xml", "g9 Item 9 v101 data/a.xml"])
        try write("data/a.xml", feed([9], version: 102))
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try items(in: site).filter { $0.hasPrefix("g") },
                       ["g1 Item 1 v100 data/z.xml", "g2 Item 2 v100 data/z.xml", "g9 Item 9 v102 data/a.xml"],
                       "the later file's copy comes back though that file did not change")
    }

    /// A site of Markdown notes, dated, listed newest first.
    private static let notesSite = """
        title: Test
        collections:
          notes:
            kind: markdown
            sources: notes/*.md
            fields: {day: date}
        listings:
          home: {from: notes, sort: [-day], path: /}
        """

    /// Text, date and datetime fields are all stored as text, but each reads its values its own way: a field's
    /// type changed reads the files again, unchanged or not, as a clean build reads them.
    func testAFieldsTypeChangedReadsEveryFileAgain() throws {
        try FileManager.default.createDirectory(at: site.appendingPathComponent("notes"), withIntermediateDirectories: true)
        try write("sitegen.yml", Self.notesSite.replacingOccurrences(of: "fields: {day: date}", with: "fields: {day: text}"))
        try "{{#items}}{{day}};{{/items}}".write(to: site.appendingPathComponent("Templates/list.mustache"), atomically: true, encoding: .utf8)
        try write("notes/a.md", "---\nday: 2024-01-15\n---\nA\n")
        try write("notes/b.md", "---\nday: 2024-03-10T09:30:00Z\n---\nB\n")
        XCTAssertTrue(try build().succeeded)
        func home() throws -> String { try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8) }
        XCTAssertEqual(try home(), "2024-03-10T09:30:00Z;2024-01-15;")
        try write("sitegen.yml", Self.notesSite.replacingOccurrences(of: "fields: {day: date}", with: "fields: {day: datetime}"))
        let asDatetime = try build()
        XCTAssertTrue(asDatetime.succeeded, "\(asDatetime.problems)")
        XCTAssertEqual(asDatetime.sourcesRead, 2)
        XCTAssertEqual(try home(), "2024-03-10T09:30:00Z;2024-01-15T00:00:00Z;")
        // A date field rejects b.md's time: a table made again must hold every file, so the build stops.
        try write("sitegen.yml", Self.notesSite)
        XCTAssertThrowsError(try build()) { XCTAssertTrue("\($0)".contains("notes/b.md:2"), "\($0)") }
    }

    /// A record edited keeps its items' rows: its tags' listings report an update, as its other listings do.
    func testAnEditedRecordIsAnUpdateInItsTagsListingsAndItsItemsMoveWithTheirPlaces() throws {
        try FileManager.default.createDirectory(at: site.appendingPathComponent("notes"), withIntermediateDirectories: true)
        try write("sitegen.yml", Self.notesSite.replacingOccurrences(of: "fields: {day: date}", with: "fields: {day: date, tags: list}")
            + "\n  tags: {from: notes, taxonomy: tags, sort: [-day], path: \"/tags/{section}/\"}\n")
        try "{{#sections}}{{name}}={{count}};{{/sections}}".write(to: site.appendingPathComponent("Templates/sections.mustache"), atomically: true, encoding: .utf8)
        try write("notes/a.md", "---\nday: 2024-01-01\ntags: [x, y]\n---\nA\n")
        try write("notes/b.md", "---\nday: 2024-01-02\ntags: [y]\n---\nB\n")
        XCTAssertTrue(try build().succeeded)
        try write("notes/a.md", "---\nday: 2024-01-01\ntags: [x, y]\n---\nA, edited\n")
        let edited = try build()
        let tags = try XCTUnwrap(edited.deltas.first { $0.name == "tags" })
        XCTAssertEqual([tags.insertedRows, tags.deletedRows, tags.updatedRows], [0, 0, 2], "\(tags)")
        XCTAssertTrue(edited.rendered.allSatisfy { !$0.reason.contains("added") }, "\(edited.rendered)")
        // Tags reordered, one dropped and one added: only those are rows added and removed.
        try write("notes/a.md", "---\nday: 2024-01-01\ntags: [z, y]\n---\nA, edited\n")
        let retagged = try build()
        let changed = try XCTUnwrap(retagged.deltas.first { $0.name == "tags" })
        XCTAssertEqual([changed.insertedRows, changed.deletedRows], [1, 1], "\(changed)")
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/tags/index.html"), encoding: .utf8), "y=2;z=1;")
    }

    /// A Markdown file renamed (its key is its name) moves its page, and the listing links to the new one.
    func testARenamedMarkdownFileMovesItsPageAndItsLink() throws {
        try FileManager.default.createDirectory(at: site.appendingPathComponent("notes"), withIntermediateDirectories: true)
        try write("sitegen.yml", Self.notesSite.replacingOccurrences(of: "fields: {day: date}",
                                                                     with: "fields: {day: date}\n    detail: {path: \"/{key}/\", body: body}"))
        try "{{#items}}{{url}};{{/items}}".write(to: site.appendingPathComponent("Templates/list.mustache"), atomically: true, encoding: .utf8)
        try "{{{body}}}".write(to: site.appendingPathComponent("Templates/detail.mustache"), atomically: true, encoding: .utf8)
        try write("notes/a.md", "---\nday: 2024-01-01\n---\nFirst\n")
        try write("notes/b.md", "---\nday: 2024-02-01\n---\nNewest\n")
        XCTAssertTrue(try build().succeeded)
        try FileManager.default.moveItem(at: site.appendingPathComponent("notes/b.md"), to: site.appendingPathComponent("notes/c.md"))
        let renamed = try build()
        XCTAssertTrue(renamed.succeeded, "\(renamed.problems)")
        let output = site.appendingPathComponent("output")
        XCTAssertEqual(try String(contentsOf: output.appendingPathComponent("index.html"), encoding: .utf8), "/c/;/a/;")
        XCTAssertEqual(try String(contentsOf: output.appendingPathComponent("c/index.html"), encoding: .utf8), "<p>Newest</p>\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.appendingPathComponent("b/index.html").path))
    }

    /// Swift calls a composed name (NFC, as Linux and Windows write `й`) and its decomposed form (NFD, as a
    /// Mac may write it) equal; file systems, SQLite and web servers do not. A tag written both ways made one
    /// page at whichever bytes came first, and the other post's link led nowhere; a file renamed from one
    /// form to the other failed on its own key; two CSV keys were one key in a file and two across files.
    func testANameComposedOrDecomposedIsOneKeyOneSectionAndOneAddress() throws {
        try FileManager.default.createDirectory(at: site.appendingPathComponent("notes"), withIntermediateDirectories: true)
        try write("sitegen.yml", Self.notesSite.replacingOccurrences(of: "fields: {day: date}", with: "fields: {day: date, tags: list}\n    detail: {path: \"/{key}/\", body: body}")
            .replacingOccurrences(of: "listings:", with: "  codes: {kind: ndjson, sources: codes/*.ndjson, key: code, fields: {code: text}}\nlistings:")
                  + "\n  bytag: {from: notes, taxonomy: tags, sort: [-day], path: \"/t/{section}/\", template: tagged}\n")
        try FileManager.default.createDirectory(at: site.appendingPathComponent("codes"), withIntermediateDirectories: true)
        try write("codes/one.ndjson", #"{"code": "caf\u00e9"}"# + "\n")
        try write("Templates/list.mustache", "{{#items}}{{url}}={{#tags}}/t/{{slug(.)}}/{{/tags}};{{/items}}")
        try write("Templates/tagged.mustache", "{{#items}}{{url}};{{/items}}")
        try write("Templates/sections.mustache", "{{#sections}}{{url}};{{/sections}}")
        try write("Templates/detail.mustache", "{{{body}}}")
        let composed = "\u{D55C}\u{AD6D}", decomposed = "\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}"
        let yogaComposed = "\u{0439}\u{043E}\u{0433}\u{0430}", yogaDecomposed = "\u{0438}\u{0306}\u{043E}\u{0433}\u{0430}"
        XCTAssertEqual(composed, decomposed, "Swift compares them equal")
        try write("notes/a.md", "---\nday: 2024-01-01\ntags: [\(composed)]\n---\nA\n")
        try write("notes/b.md", "---\nday: 2024-02-01\ntags: [\(decomposed)]\n---\nB\n")
        try write("notes/\(yogaComposed).md", "---\nday: 2024-03-01\n---\nYoga\n")
        XCTAssertTrue(try build().succeeded)
        let tagPage = "/t/\(composed)/"
        XCTAssertEqual(try page("index.html"), "/\(yogaComposed)/=;/b/=\(tagPage);/a/=\(tagPage);")
        XCTAssertEqual(Array(try page("t/index.html").utf8), Array("\(tagPage);".utf8), "one section, at the composed bytes")
        XCTAssertEqual(try page("t/\(composed)/index.html"), "/b/;/a/;")

        let output = site.appendingPathComponent("output")
        try FileManager.default.moveItem(atPath: site.appendingPathComponent("notes/\(yogaComposed).md").path,
                                         toPath: site.appendingPathComponent("notes/\(yogaDecomposed).md").path)
        let renamed = try build()
        XCTAssertTrue(renamed.succeeded, "\(renamed.problems)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.path).filter { $0.hasPrefix("\u{0438}") || $0.hasPrefix("\u{0439}") }
                        .map { Array($0.utf8) }, [Array(yogaComposed.utf8)], "the page stays where it was")

        try write("codes/two.ndjson", #"{"code": "cafe\u0301"}"# + "\n")
        let twoFiles = try build()
        XCTAssertEqual(twoFiles.problems.map(\.description).filter { $0.contains("codes/") }.count, 1,
                       "the same key in two files fails, as it does twice in one file: \(twoFiles.problems)")
    }

    /// A file from an old archive named in Latin-1 (`caf\xE9.md`) was left out without a word, and the build
    /// succeeded without its record; a static file so named was called a link to nothing.
    func testAFileWhoseNameIsNotUTF8FailsTheBuildByName() throws {
        try FileManager.default.createDirectory(at: site.appendingPathComponent("notes"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: site.appendingPathComponent("static"), withIntermediateDirectories: true)
        try write("sitegen.yml", Self.notesSite)
        try write("notes/a.md", "---\nday: 2024-01-01\n---\nA\n")
        for name in ["notes/caf\u{E9}.md", "static/r\u{E9}sum\u{E9}.pdf"] {
            let bytes = (site.path + "/").utf8.map { CChar(bitPattern: $0) } + name.unicodeScalars.map { CChar(bitPattern: UInt8($0.value)) } + [0]
            let descriptor = open(bytes, O_WRONLY | O_CREAT | O_EXCL, 0o644)
            XCTAssertGreaterThanOrEqual(descriptor, 0)
            close(descriptor)
        }
        let summary = try build()
        XCTAssertFalse(summary.succeeded)
        XCTAssertEqual(summary.problems.map(\.description), [#"notes/caf\xE9.md: has a name that is not UTF-8 text; rename it"#])
        XCTAssertEqual(summary.warnings.map(\.description).filter { $0.hasPrefix("static/") },
                       ["static/r\u{FFFD}sum\u{FFFD}.pdf: has a name that is not UTF-8 text; rename it; left out"])
        XCTAssertEqual(try page("index.html"), "a;", "the other note is published")
    }

    /// Rows added above an unchanged row moved it down the file, but the store kept the line of its first
    /// load: messages about it (a key it refers to that is missing) named a line a clean build does not.
    func testAnUnchangedRowMovedDownItsFileHasTheLineACleanBuildGivesIt() throws {
        _ = try build()
        try write("data/banks.csv", "cert,name,closed\n9,\"Two\nlines\",2024-05-01\n8,Eight,2024-04-01\n1,Alpha,2024-01-01\n2,Beta,2024-02-01\n3,Gamma,2024-03-01\n")
        let summary = try build()
        XCTAssertEqual(changes(summary), [2, 0, 0], "the moved rows are not updates: no page changes for them")
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        let lines = try store.database.fetchAll("SELECT _key, _line FROM banks ORDER BY _line").map { "\($0["_key"]!.stringValue!):\($0["_line"]!.int64Value!)" }
        XCTAssertEqual(lines, ["9:2", "8:4", "1:5", "2:6", "3:7"])
    }

    /// A page's reasons name its rows in the delta's order: added, moved in, changed. They were found by
    /// going through the whole delta for every page, 13 s of a build that changed 50,000 rows; each page now
    /// looks up its own rows.
    func testAPagesReasonsNameItsRowsInTheDeltasOrder() throws {
        _ = try build()
        try write("data/banks.csv", "cert,name,closed\n1,Alpha Bank,2024-01-01\n2,Beta Bank,2024-02-01\n3,Gamma,2024-03-01\n"
                  + "4,Delta,2024-04-01\n5,Epsilon,2024-05-01\n6,Zeta,2024-06-01\n7,Eta,2023-06-01\n8,Theta,2023-07-01\n9,Iota,2023-08-01\n")
        let summary = try SiteBuilder(root: site).build(options: SiteBuilder.Options(dryRun: true))
        XCTAssertEqual(summary.rendered.first { $0.path == "index.html" }?.reason, "rows 6, 5, 4 and 3 more added; rows 2, 1 changed")
    }

    func testChangingACollectionsKeyReadsItsSourcesAgain() throws {
        waitPastTheClocksTick()
        _ = try build()
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "key: cert", with: "key: name")
        try write("sitegen.yml", config)
        let summary = try build()
        XCTAssertEqual(summary.sourcesRead, 1)
        XCTAssertEqual(changes(summary), [3, 0, 0], "a new table, keyed by name")
    }

    /// New rows take ids in path order, however the folder lists its files, and records that tie on a
    /// listing's sort are listed as a clean build lists them.
    func testFilesAreStoredInPathOrderAndRecordsThatTieAreListedAsACleanBuildListsThem() throws {
        try FileManager.default.createDirectory(at: site.appendingPathComponent("notes"), withIntermediateDirectories: true)
        let config = Self.notesSite
        try write("sitegen.yml", config)
        let names = (0..<300).map { String(format: "n%03d", $0) }.shuffled()
        for name in names { try write("notes/\(name).md", "---\nday: 2024-01-01\n---\nBody of \(name)\n") }
        let listed = try FileManager.default.contentsOfDirectory(atPath: site.appendingPathComponent("notes").path)
        try XCTSkipIf(listed == listed.sorted(), "this file system lists a folder sorted: nothing to tell apart")
        func storedOrder() throws -> [String] {
            let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
            return try store.database.fetchAll("SELECT _source FROM notes ORDER BY _id").map { $0["_source"]?.stringValue ?? "" }
        }
        func paths(_ names: [String]) -> [String] { names.sorted().map { "notes/\($0).md" } }

        _ = try build()
        XCTAssertEqual(try storedOrder(), paths(names), "a first load")
        let added = ["n150a", "a-first", "z-last", "n007b"]
        for name in added { try write("notes/\(name).md", "---\nday: 2024-01-01\n---\nBody of \(name)\n") }
        try write("notes/n299.md", "---\nday: 2024-01-01\n---\nChanged\n")
        _ = try build()
        XCTAssertEqual(Array(try storedOrder().suffix(added.count)), paths(added), "files added beside unchanged ones")
        // The records all tie on the listing's sort: a clean build lists them as this one does.
        let clean = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-clean-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: clean) }
        try FileManager.default.createDirectory(at: clean, withIntermediateDirectories: true)
        for item in ["sitegen.yml", "notes", "Templates"] {
            try FileManager.default.copyItem(at: site.appendingPathComponent(item), to: clean.appendingPathComponent(item))
        }
        _ = try SiteBuilder(root: clean).build()
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8),
                       try String(contentsOf: clean.appendingPathComponent("output/index.html"), encoding: .utf8))
        // Another field makes the table again: every file is read again, the unchanged ones too.
        try write("sitegen.yml", config.replacingOccurrences(of: "{day: date}", with: "{day: date, extra: text}"))
        _ = try build()
        XCTAssertEqual(try storedOrder(), paths(names + added), "a rebuilt table")
    }

    func testListFieldsReachTheirJoinTablesFromCSVNDJSONAndFeeds() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "fields: {cert: integer, name: text, closed: date}", with: "fields: {cert: integer, name: text, closed: date, tags: list}")
            .replacingOccurrences(of: "fields: {id: text, name: text}", with: "fields: {id: text, name: text, roles: list}")
        try write("sitegen.yml", config)
        try write("data/banks.csv", "cert,name,closed,tags\n1,Alpha,2024-01-01,loans; audits\n2,Beta,2024-02-01,\n")
        try write("data/people.ndjson", "{\"id\": \"p1\", \"name\": \"Ann\", \"roles\": [\"editor\", \"writer\"]}\n")
        try write("data/news.xml", "<rss version=\"2.0\"><channel><item><guid>g1</guid><category>CA</category><category>closings</category></item></channel></rss>")
        XCTAssertTrue(try build().succeeded)
        let store = try SiteStore(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        func values(_ table: String) throws -> [String] {
            try store.database.fetchAll("SELECT value FROM \(table) ORDER BY record_id, position").compactMap { $0["value"]?.stringValue }
        }
        XCTAssertEqual(try values("banks__tags"), ["loans", "audits"])
        XCTAssertEqual(try values("people__roles"), ["editor", "writer"])
        XCTAssertEqual(try values("news__categories"), ["CA", "closings"])

        try write("data/banks.csv", "cert,name,closed,tags\n1,Alpha,2024-01-01,audits\n2,Beta,2024-02-01,loans\n")
        let summary = try build()
        XCTAssertEqual(changes(summary), [0, 2, 0], "two records changed; their join rows are not counted as records")
        XCTAssertEqual(try values("banks__tags"), ["audits", "loans"])
    }

    func testAListingSortsThroughARelationshipAndItsTemplateReadsTheRelatedRecord() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "listings:\n", with: """
              notes:
                kind: csv
                sources: data/*.notes
                key: id
                fields: {id: text, bank: integer, text: text}
                relationships: {bank: banks}
            listings:
              notes: {from: notes, sort: [-bank.closed], path: /notes/, template: notes}

            """)
        try write("sitegen.yml", config)
        try write("data/n.notes", "id,bank,text\nn1,1,first\nn2,3,second\nn3,2,third\nn4,99,dangling\n")
        try "{{#items}}{{text}}@{{bank.name}}({{bank.closed}}){{#bank}}[{{name}} {{url}}]{{/bank}}{{^bank}}[none]{{/bank}};{{/items}}".write(
            to: site.appendingPathComponent("Templates/notes.mustache"), atomically: true, encoding: .utf8)
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        let page = try String(contentsOf: site.appendingPathComponent("output/notes/index.html"), encoding: .utf8)
        XCTAssertEqual(page, "second@Gamma(2024-03-01)[Gamma ];third@Beta(2024-02-01)[Beta ];first@Alpha(2024-01-01)[Alpha ];dangling@()[none];",
                       "newest bank first; a note whose bank does not exist sorts last and shows no bank, not its own values")
    }

    func testPagesShowingARelatedRecordFollowItsCollectionsDetailPathAndTitle() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "fields: {cert: integer, name: text, closed: date}\n", with: """
            fields: {cert: integer, name: text, closed: date}
                detail: {path: "/bank/{key}/", title: name}

            """).replacingOccurrences(of: "listings:\n", with: """
              notes:
                kind: csv
                sources: data/*.notes
                key: id
                fields: {id: text, bank: integer, text: text}
                relationships: {bank: banks}
                detail: {path: "/notes/{key}/", template: note}
            listings:
              notes: {from: notes, sort: [id], path: /notes/, template: notes}

            """)
        try write("sitegen.yml", config)
        try "{{title}}".write(to: site.appendingPathComponent("Templates/detail.mustache"), atomically: true, encoding: .utf8)
        try write("data/n.notes", "id,bank,text\nn1,1,first\n")
        try "{{#items}}{{text}}:{{#bank}}{{title}} {{url}}{{/bank}};{{/items}}".write(
            to: site.appendingPathComponent("Templates/notes.mustache"), atomically: true, encoding: .utf8)
        try "{{#record}}{{text}}:{{#bank}}{{title}} {{url}}{{/bank}}{{/record}}".write(
            to: site.appendingPathComponent("Templates/note.mustache"), atomically: true, encoding: .utf8)
        XCTAssertTrue(try build().succeeded)
        func page(_ path: String) throws -> String {
            try String(contentsOf: site.appendingPathComponent("output/" + path), encoding: .utf8)
        }
        XCTAssertEqual(try page("notes/index.html"), "first:Alpha /bank/1/;")
        XCTAssertEqual(try page("notes/n1/index.html"), "first:Alpha /bank/1/")
        try write("sitegen.yml", config.replacingOccurrences(of: "detail: {path: \"/bank/{key}/\", title: name}",
                                                             with: "detail: {path: \"/banks/{key}/\", title: closed}"))
        let changed = try build()
        XCTAssertTrue(changed.succeeded, "\(changed.problems)")
        XCTAssertEqual(try page("notes/index.html"), "first:2024-01-01 /banks/1/;", "the listing shows the related record's new link and title")
        XCTAssertEqual(try page("notes/n1/index.html"), "first:2024-01-01 /banks/1/", "and so does the detail page")
    }

    func testAToManyRelationshipGivesTemplatesTheRelatedRecordsInListOrderAndWarnsOfMissingKeys() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "listings:\n", with: """
              reports:
                kind: ndjson
                sources: data/*.reports
                key: id
                fields: {id: text, title: text, banks: list}
                relationships: {banks: banks}
                detail: {path: "/reports/{key}/", template: report}
            listings:
              reports: {from: reports, sort: [id], path: /reports/, template: reports}

            """)
        try write("sitegen.yml", config)
        try write("data/r.reports", """
            {"id": "r1", "title": "West", "banks": ["3", "1"]}
            {"id": "r2", "title": "None", "banks": []}
            {"id": "r3", "title": "Gone", "banks": ["2", "77"]}

            """)
        try "{{#items}}{{title}}:{{#banks}}{{name}}({{closed}}),{{/banks}}{{^banks}}-{{/banks}};{{/items}}".write(
            to: site.appendingPathComponent("Templates/reports.mustache"), atomically: true, encoding: .utf8)
        try "{{#record}}{{title}}:{{#banks}}{{key}}={{name}},{{/banks}}{{/record}}".write(
            to: site.appendingPathComponent("Templates/report.mustache"), atomically: true, encoding: .utf8)
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        XCTAssertEqual(summary.warnings.map(\.description).filter { $0.contains("not a key") },
                       ["data/r.reports:3: record 'r3': banks '77' is not a key of 'banks'; templates see no record for it"])
        func page(_ path: String) throws -> String {
            try String(contentsOf: site.appendingPathComponent("output/" + path), encoding: .utf8)
        }
        XCTAssertEqual(try page("reports/index.html"), "West:Gamma(2024-03-01),Alpha(2024-01-01),;None:-;Gone:Beta(2024-02-01),;",
                       "in the list's order, one query per page; a missing key is left out")
        XCTAssertEqual(try page("reports/r1/index.html"), "West:3=Gamma,1=Alpha,")

        // The reference breaks from the other side too: a bank removed is warned about at the next load.
        try write("data/banks.csv", "cert,name,closed\n1,Alpha,2024-01-01\n2,Beta,2024-02-01\n")
        let next = try build()
        XCTAssertEqual(next.warnings.map(\.description).filter { $0.contains("not a key") }, [
            "data/r.reports:1: record 'r1': banks '3' is not a key of 'banks'; templates see no record for it",
            "data/r.reports:3: record 'r3': banks '77' is not a key of 'banks'; templates see no record for it",
        ])
        XCTAssertEqual(try page("reports/r1/index.html"), "West:1=Alpha,")
    }

    /// A data review: front matter and JSON lists made a section named "" and let " data" take `data`'s address,
    /// where CSV trimmed; and the index filed `Évian` after Z and every digit under its own heading.
    func testListItemsAreTrimmedInEveryFormatAndTheIndexFilesSectionsByTheirLetter() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "fields: {id: text, name: text}", with: "fields: {id: text, name: text, tags: list}")
            .replacingOccurrences(of: "listings:\n", with: """
            listings:
              bytag: {from: people, taxonomy: tags, sort: [name], path: "/t/{section}/", template: tagged}

            """)
        try write("sitegen.yml", config)
        try write("data/people.ndjson", """
            {"id": "p1", "name": "Ann", "tags": ["data", " data", "", "Évian", "data\\n"]}
            {"id": "p2", "name": "Bo", "tags": ["data ", "1st Ward", "Zug", "straße", "eschen"]}

            """)
        try "{{section.title}}:{{#items}}{{name}}{{/items}}".write(to: site.appendingPathComponent("Templates/tagged.mustache"), atomically: true, encoding: .utf8)
        try "{{#groups}}{{indexTitle}}[{{#sections}}{{name}}={{count}}@{{url}};{{/sections}}]{{/groups}}".write(
            to: site.appendingPathComponent("Templates/sections.mustache"), atomically: true, encoding: .utf8)
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        XCTAssertEqual(try page("t/index.html"),
                       "#[1st Ward=1@/t/1st-ward/;]D[data=2@/t/data/;]E[eschen=1@/t/eschen/;Évian=1@/t/evian/;]S[straße=1@/t/strasse/;]Z[Zug=1@/t/zug/;]")
        XCTAssertEqual(try page("t/data/index.html"), "data:AnnBo", "one section for data, whatever blanks were around it")
        try "{{#items}}{{name}}={{#tags}}[{{.}}]{{/tags}};{{/items}}".write(to: site.appendingPathComponent("Templates/list.mustache"), atomically: true, encoding: .utf8)
        try write("sitegen.yml", config + "\n  everyone: {from: people, sort: [name], path: /people/}\n")
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try page("people/index.html"), "Ann=[data][Évian];Bo=[data][1st Ward][Zug][straße][eschen];", "each item once, as the join table lists it")
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.appendingPathComponent("output/t/untitled").path), "no section for a blank item")
    }

    /// Images, style sheets and `CNAME` were never published: a site had no way to ship a file as it is.
    func testStaticFilesArePublishedAsTheyAreAndFollowTheirSources() throws {
        let fm = FileManager.default
        try fm.createDirectory(at: site.appendingPathComponent("static/img"), withIntermediateDirectories: true)
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF, 0xFE, 0x80])
        try png.write(to: site.appendingPathComponent("static/img/logo.png"))
        try write("static/CNAME", "banks.example.org\n")
        try write("static/.DS_Store", "junk")
        func output(_ path: String) -> Data? { fm.contents(atPath: site.appendingPathComponent("output/" + path).path) }
        let first = try build()
        XCTAssertTrue(first.succeeded, "\(first.problems)")
        XCTAssertEqual(output("img/logo.png"), png, "bytes as they are, not text")
        XCTAssertEqual(output("CNAME"), Data("banks.example.org\n".utf8))
        XCTAssertNil(output(".DS_Store"), "hidden files stay out")
        XCTAssertTrue(first.rendered.contains { $0.path == "img/logo.png" })

        // Unchanged: kept without reading. Changed: written. Deleted: gone from the output too.
        let again = try build()
        XCTAssertFalse(again.rendered.contains { $0.path.hasPrefix("img/") || $0.path == "CNAME" }, "\(again.rendered)")
        try write("static/CNAME", "records.example.org\n")
        try fm.removeItem(at: site.appendingPathComponent("static/img/logo.png"))
        let changed = try build()
        XCTAssertTrue(changed.succeeded, "\(changed.problems)")
        XCTAssertEqual(changed.rendered.first { $0.path == "CNAME" }?.reason, "the file changed")
        XCTAssertEqual(output("CNAME"), Data("records.example.org\n".utf8))
        XCTAssertNil(output("img/logo.png"))
        XCTAssertEqual(changed.deletedPaths, ["img/logo.png"])

        // A static file at a page's address is left out, and the build says so.
        try write("static/index.html", "<p>mine</p>")
        let clash = try build()
        XCTAssertEqual(clash.problems.map(\.description),
                       ["sitegen.yml: static file static/index.html would be published at /, which listing 'home' already has; give one of them another path"])
        XCTAssertEqual(output("index.html").map { String(decoding: $0, as: UTF8.self) }, "3;2;1;", "the listing keeps its page")
        try fm.removeItem(at: site.appendingPathComponent("static/index.html"))
    }

    /// What a blogger's review found: a robots.txt of one's own failed every build; links, `.well-known/`
    /// and a second folder's files were left out or clashed; a misspelt folder deleted what it had published.
    func testStaticFilesOfOnesOwnWinAndFoldersAreFollowedAsServersNeedThem() throws {
        let fm = FileManager.default
        for folder in ["static/.well-known", "extra", "elsewhere"] {
            try fm.createDirectory(at: site.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try write([
            "static/robots.txt": "User-agent: *\nDisallow: /private/\n", "static/.well-known/security.txt": "Contact: mailto:a@example.org\n",
            "static/.htaccess": "Options -Indexes\n", "static/both.txt": "from static\n", "extra/both.txt": "from extra\n",
            "extra/only.txt": "only in extra\n", "elsewhere/shared.css": "body{}\n", "static/.nojekyll": "",
            "static/Thumbs.db": "x", "static/desktop.ini": "x", "static/~$report.docx": "x", "static/~notes.txt": "kept\n",
        ])
        try fm.createSymbolicLink(atPath: site.appendingPathComponent("static/site.css").path, withDestinationPath: "../elsewhere/shared.css")
        try fm.createSymbolicLink(atPath: site.appendingPathComponent("static/gone.png").path, withDestinationPath: "nothing.png")
        try write("sitegen.yml", "static: [static, extra]\n" + String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8))
        func output(_ path: String) -> String? {
            fm.contents(atPath: site.appendingPathComponent("output/" + path).path).map { String(decoding: $0, as: UTF8.self) }
        }
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        XCTAssertEqual(output("robots.txt"), "User-agent: *\nDisallow: /private/\n", "the site's own robots.txt replaces sitegen's")
        XCTAssertEqual(output(".well-known/security.txt"), "Contact: mailto:a@example.org\n")
        XCTAssertEqual(output(".htaccess"), "Options -Indexes\n")
        XCTAssertEqual(output(".nojekyll"), "", "GitHub Pages publishes a branch as it is only with it")
        XCTAssertEqual(["Thumbs.db", "desktop.ini", "~$report.docx"].compactMap(output), [], "what Windows and Office leave in folders")
        XCTAssertEqual(output("~notes.txt"), "kept\n")
        XCTAssertEqual(output("both.txt"), "from static\n", "the first folder named has a path both have")
        XCTAssertEqual(output("only.txt"), "only in extra\n")
        XCTAssertEqual(output("site.css"), "body{}\n", "a link is followed")
        XCTAssertEqual(summary.warnings.map(\.description).filter { $0.contains("gone.png") }, ["static/gone.png: is a link to nothing; left out"])

        // A link's target edited: what the link publishes follows it.
        try write("elsewhere/shared.css", "body{color:red}\n")
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(output("site.css"), "body{color:red}\n")

        // A folder sitegen.yml names that is not there stops the build; what it published stays.
        try fm.moveItem(at: site.appendingPathComponent("extra"), to: site.appendingPathComponent("extra-moved"))
        XCTAssertThrowsError(try build()) { XCTAssertEqual("\($0)", "sitegen.yml:1:9: static folder 'extra' is not there") }
        XCTAssertEqual(output("only.txt"), "only in extra\n")
        try fm.moveItem(at: site.appendingPathComponent("extra-moved"), to: site.appendingPathComponent("extra"))
        XCTAssertThrowsError(try SiteBuilder(root: site, outputDirectory: site.appendingPathComponent("extra/site")).build()) {
            XCTAssertEqual("\($0)", "sitegen.yml:1:9: static folder 'extra' holds the output folder; write the site elsewhere, or name another static folder")
        }
        // The same through a link, to a folder not made yet.
        try fm.createSymbolicLink(atPath: site.appendingPathComponent("to-extra").path, withDestinationPath: "extra")
        XCTAssertThrowsError(try SiteBuilder(root: site, outputDirectory: site.appendingPathComponent("to-extra/new/site")).build()) {
            XCTAssertTrue("\($0)".hasSuffix("static folder 'extra' holds the output folder; write the site elsewhere, or name another static folder"), "\($0)")
        }
        XCTAssertFalse(fm.fileExists(atPath: site.appendingPathComponent("extra/new").path))
    }

    /// An edit of the same size whose modification time was set back (`touch -d`, `tar --mtime`, `rsync -t`)
    /// went unseen by every build, `--full` too: the output was no longer what a clean build writes.
    func testAnEditUnderARestoredModificationTimeIsReadAndFullReadsEverySource() throws {
        let fm = FileManager.default
        let csv = site.appendingPathComponent("data/banks.csv").path
        let old = Date(timeIntervalSince1970: 1_577_836_800)
        try fm.setAttributes([.modificationDate: old], ofItemAtPath: csv)
        XCTAssertTrue(try build().succeeded)
        try write("data/banks.csv", "cert,name,closed\n1,Alpha,2024-01-01\n2,Betb,2024-02-01\n3,Gamma,2024-03-01\n")
        try fm.setAttributes([.modificationDate: old], ofItemAtPath: csv)
        let edited = try build()
        XCTAssertEqual(changes(edited), [0, 1, 0], "the renamed bank is read")
        // --full trusts no status: every source is read, and those whose bytes are the last load's are not parsed.
        let full = try SiteBuilder(root: site).build(options: SiteBuilder.Options(full: true))
        XCTAssertEqual([full.sourcesRead, full.sourcesUnchanged], [3, 0])
        XCTAssertGreaterThanOrEqual(full.sourcesSameBytes, 2, "the CSV and the NDJSON file are not parsed again")
        XCTAssertEqual(changes(full), [0, 0, 0])
    }

    /// A source linked in from elsewhere whose target went (a mount, a moved file) was taken for a deleted
    /// file: its records and pages went, with no word.
    func testASourceLinkedToNothingKeepsItsRecordsAndFailsTheBuild() throws {
        let fm = FileManager.default
        let elsewhere = site.appendingPathComponent("elsewhere")
        try fm.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try "cert,name,closed\n7,Linked,2024-05-01\n".write(to: elsewhere.appendingPathComponent("more.csv"), atomically: true, encoding: .utf8)
        try fm.createSymbolicLink(atPath: site.appendingPathComponent("data/more.csv").path, withDestinationPath: "../elsewhere/more.csv")
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try page("index.html"), "7;3;2;1;")
        try fm.moveItem(at: elsewhere, to: site.appendingPathComponent("elsewhere-moved"))
        let dangling = try build()
        XCTAssertFalse(dangling.succeeded)
        XCTAssertEqual(dangling.problems.map(\.description),
                       ["data/more.csv: is a link to ../elsewhere/more.csv, which is not there; its records from the last build are kept"])
        XCTAssertEqual(try page("index.html"), "7;3;2;1;")
        // A watch's build, told only of a template edit, looks at it again: it is marked failed.
        let told = try SiteBuilder(root: site).build(options: SiteBuilder.Options(changedSources: ["Templates/list.mustache"]))
        XCTAssertEqual(told.problems.map(\.description), dangling.problems.map(\.description))
        // A new link to nothing loses nothing: a warning.
        try fm.createSymbolicLink(atPath: site.appendingPathComponent("data/new.csv").path, withDestinationPath: "nowhere.csv")
        XCTAssertTrue(try build().warnings.map(\.description).contains("data/new.csv: is a link to nowhere.csv, which is not there; left out"))
        try fm.removeItem(at: site.appendingPathComponent("data/new.csv"))
        // The link mended: read as before. The link removed: its records go.
        try fm.moveItem(at: site.appendingPathComponent("elsewhere-moved"), to: elsewhere)
        XCTAssertTrue(try build().succeeded)
        try fm.removeItem(at: site.appendingPathComponent("data/more.csv"))
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try page("index.html"), "3;2;1;")
    }

    /// A record could not link to its tags' pages: `{{slug(.)}}` makes an item's part of the address as a
    /// taxonomy listing makes it.
    func testTheSlugHelperLinksAnItemToItsTaxonomyPage() throws {
        let config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        try write("sitegen.yml", config.replacingOccurrences(of: "fields: {id: text, name: text}", with: "fields: {id: text, name: text, tags: list}")
                  + "\n  everyone: {from: people, sort: [name], path: /people/}\n  bytag: {from: people, taxonomy: tags, sort: [name], path: \"/t/{section}/\", template: tagged}\n")
        try write("data/people.ndjson", #"{"id": "p1", "name": "Ann", "tags": ["Machine Learning", "C++", "Café Société", "東京"]}"# + "\n")
        try write("Templates/list.mustache", "{{#items}}{{#tags}}{{site.basePath}}t/{{slug(.)}}/;{{/tags}}{{/items}}")
        try write("Templates/tagged.mustache", "{{section.name}}")
        try write("Templates/sections.mustache", "{{#sections}}{{url}};{{/sections}}")
        XCTAssertTrue(try build().succeeded)
        let links = try page("people/index.html").split(separator: ";").map(String.init)
        XCTAssertEqual(links, ["/t/machine-learning/", "/t/c/", "/t/cafe-societe/", "/t/東京/"])
        XCTAssertEqual(Set(try page("t/index.html").split(separator: ";").map(String.init)), Set(links), "the taxonomy's own addresses")
    }

    /// `--plan` said "template changed" whatever changed: a page's own template, a partial, a layout, or a
    /// template that a dynamic partial might include. The reason names the files.
    func testARenderForATemplateEditNamesTheTemplateFiles() throws {
        try write("Templates/list.mustache", "{{#items}}{{title}};{{/items}}{{>pager}}")
        try write("Templates/pager.mustache", "[pages]")
        try write("Templates/other.mustache", "other")
        XCTAssertTrue(try build().succeeded)
        try write("Templates/pager.mustache", "[pages!]")
        XCTAssertEqual(try build().rendered.first { $0.path == "index.html" }?.reason, "template changed: pager.mustache")
        try write("Templates/list.mustache", "{{#items}}{{title}};{{/items}}{{>pager}}{{>*site.title}}")
        try write("Templates/Test.mustache", "!")
        XCTAssertEqual(try build().rendered.first { $0.path == "index.html" }?.reason,
                       "template changed: Test.mustache (new), list.mustache (list.mustache includes a template its data names, which may be any)")
        try write("Templates/other.mustache", "other, edited")
        let plan = try SiteBuilder(root: site).build(options: SiteBuilder.Options(dryRun: true))
        XCTAssertEqual(plan.rendered.first { $0.path == "index.html" }?.reason,
                       "template changed: other.mustache (list.mustache includes a template its data names, which may be any)")
    }

    /// A site had nowhere for its own values (an author, a menu of links): `params:` is read by templates
    /// as `site.params`, typed as YAML types it, and a change renders every page again.
    func testParamsAreTheSitesOwnValuesForTemplatesAndAChangeRendersEveryPage() throws {
        let config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        try write("sitegen.yml", config.replacingOccurrences(of: "title: Test\n", with: """
            title: Test
            params:
              author: Ann Example
              comments: false
              since: 2019
              zip: 02134
              version: 1.10
              country: NO
              noon: 12:30
              links: [{name: Code, url: "https://example.org/code"}, {name: Mail, url: "mailto:a@example.org"}]
              tags: [b, a, c]
              counts: [3, 1, 10]

            """))
        try write("Templates/list.mustache", "{{#sorted(site.params.tags)}}{{.}}{{/sorted(site.params.tags)}} "
                  + "{{#sorted(site.params.counts)}}{{.}},{{/sorted(site.params.counts)}} "
                  + "{{site.params.zip}} {{site.params.version}} {{site.params.country}} {{site.params.noon}}|"
                  + "{{site.params.author}} {{site.params.since}}{{#site.params.comments}} comments{{/site.params.comments}}:"
                  + "{{#site.params.links}}<a href=\"{{url}}\">{{name}}</a>{{/site.params.links}}")
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try page("index.html"), "abc 1,3,10, 02134 1.10 NO 12:30|"
                       + "Ann Example 2019:<a href=\"https://example.org/code\">Code</a><a href=\"mailto:a@example.org\">Mail</a>",
                       "values print as written, not as YAML 1.1 types them")
        try write("sitegen.yml", try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
            .replacingOccurrences(of: "comments: false", with: "comments: true"))
        let changed = try build()
        XCTAssertEqual(changed.rendered.first { $0.path == "index.html" }?.reason, "settings changed (sitegen.yml or the menu)")
        XCTAssertTrue(try page("index.html").contains("|Ann Example 2019 comments:"))
        // A misspelt name is an error, as any other is.
        try write("Templates/list.mustache", "{{site.params.autor}}")
        XCTAssertThrowsError(try build()) { XCTAssertTrue("\($0)".contains("'site.params.autor' is not a field or a value this page has"), "\($0)") }
        try write("sitegen.yml", config.replacingOccurrences(of: "title: Test\n", with: "title: Test\nparams: [a, b]\n"))
        XCTAssertThrowsError(try build()) {
            XCTAssertEqual("\($0)", "sitegen.yml:2:9: params must be a mapping of names to values, such as params: {author: Ann}")
        }
    }

    /// A static file that became a folder of the same name (or back) failed every build until `output/`
    /// was cleared by hand: the last build's file stood where the new folder goes.
    func testAStaticFileThatBecomesAFolderAndBackIsPublishedAndWhatSitegenDidNotMakeIsKept() throws {
        let fm = FileManager.default
        func output(_ path: String) -> String? {
            fm.contents(atPath: site.appendingPathComponent("output/" + path).path).map { String(decoding: $0, as: UTF8.self) }
        }
        try fm.createDirectory(at: site.appendingPathComponent("static"), withIntermediateDirectories: true)
        try write("static/docs", "a file\n")
        XCTAssertTrue(try build().succeeded)

        try fm.removeItem(at: site.appendingPathComponent("static/docs"))
        try fm.createDirectory(at: site.appendingPathComponent("static/docs/api"), withIntermediateDirectories: true)
        try write(["static/docs/api/a.txt": "in a folder\n", "static/docs/b.txt": "b\n"])
        let toFolder = try build()
        XCTAssertTrue(toFolder.succeeded, "\(toFolder.problems)")
        XCTAssertEqual(output("docs/api/a.txt"), "in a folder\n")
        XCTAssertEqual(toFolder.deletedPaths, ["docs"])

        try fm.removeItem(at: site.appendingPathComponent("static/docs"))
        try write("static/docs", "a file again\n")
        let toFile = try build()
        XCTAssertTrue(toFile.succeeded, "\(toFile.problems)")
        XCTAssertEqual(output("docs"), "a file again\n")
        XCTAssertEqual(toFile.deletedPaths, ["docs/api/a.txt", "docs/b.txt"])
        let names = try fm.contentsOfDirectory(atPath: site.appendingPathComponent("output").path)
        XCTAssertFalse(names.contains { $0.hasSuffix(".tmp") }, "nothing left aside: \(names)")

        // A build that stops puts the last build's file back where it was.
        try fm.removeItem(at: site.appendingPathComponent("static/docs"))
        try fm.createDirectory(at: site.appendingPathComponent("static/docs"), withIntermediateDirectories: true)
        try write("static/docs/c.txt", "c\n")
        try write("Templates/list.mustache", "{{#items}}{{dat(closed)}};{{/items}}")
        XCTAssertThrowsError(try build())
        XCTAssertEqual(output("docs"), "a file again\n")
        try write("Templates/list.mustache", "{{#items}}{{title}};{{/items}}")
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(output("docs/c.txt"), "c\n")

        // What sitegen did not make is never moved: the build says what is in the way.
        try fm.createDirectory(at: site.appendingPathComponent("static/mine"), withIntermediateDirectories: true)
        try write("static/mine/x.txt", "x\n")
        try "user's own\n".write(to: site.appendingPathComponent("output/mine"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try build()) {
            XCTAssertTrue("\($0)".contains("output/mine: cannot write: mine/x.txt needs a folder here, and this is a file sitegen did not make (move or delete it)"), "\($0)")
        }
        XCTAssertEqual(output("mine"), "user's own\n")
        try fm.removeItem(at: site.appendingPathComponent("output/mine"))
        XCTAssertTrue(try build().succeeded)
        try "user's own\n".write(to: site.appendingPathComponent("output/mine/notes.txt"), atomically: true, encoding: .utf8)
        try fm.removeItem(at: site.appendingPathComponent("static/mine"))
        try write("static/mine", "now a file\n")
        try write("data/banks.csv", "cert,name,closed\n1,Alpha,2024-01-01\n2,Beta,2024-02-01\n")
        XCTAssertThrowsError(try build()) {
            XCTAssertTrue("\($0)".contains("output/mine: cannot write: the file mine goes here, and this folder holds mine/notes.txt, which sitegen did not make (move or delete it)"), "\($0)")
        }
        XCTAssertEqual(output("mine/notes.txt"), "user's own\n")
        XCTAssertEqual(output("mine/x.txt"), "x\n")
        XCTAssertEqual(output("index.html"), "3;2;1;", "a build stopped by what is in the way publishes none of its pages")
        try fm.removeItem(at: site.appendingPathComponent("static/mine"))
        try fm.removeItem(at: site.appendingPathComponent("output/mine"))
        XCTAssertTrue(try build().succeeded)

        // A file and a folder of one build at one address: the file planned after the pages (a static file) is
        // left out with an error, whether the page is new (its folder where the last build's static file was)
        // or kept, and the incremental build writes what a clean build writes.
        let config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        try write("static/about", "about, a file\n")
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(output("about"), "about, a file\n")
        try write("sitegen.yml", config + "\n  about: {from: banks, sort: [cert], path: /about/}\n")
        let expected = ["sitegen.yml: static file static/about would be published at /about, where this build has the folder of /about/index.html; give one of them another path"]
        let dryRun = try SiteBuilder(root: site).build(options: SiteBuilder.Options(dryRun: true))
        XCTAssertEqual(dryRun.problems.map(\.description), expected, "--plan says what the build will")
        let clash = try build()
        XCTAssertEqual(clash.problems.map(\.description), expected)
        XCTAssertEqual(output("about/index.html"), "1;2;")
        try assertSameAsCleanBuild()
        let again = try build()
        XCTAssertEqual(again.problems.map(\.description), expected, "a kept page's folder too")
        XCTAssertEqual(again.rendered.map(\.path), [])
        try assertSameAsCleanBuild()

        // The last build's static folder where a new page goes (`stats/index.html/`) is moved aside.
        try fm.removeItem(at: site.appendingPathComponent("static/about"))
        try fm.createDirectory(at: site.appendingPathComponent("static/stats/index.html"), withIntermediateDirectories: true)
        try write("static/stats/index.html/x.txt", "x\n")
        XCTAssertTrue(try build().succeeded)
        try fm.removeItem(at: site.appendingPathComponent("static/stats"))
        try write("sitegen.yml", config + "\n  stats: {from: banks, sort: [cert], path: /stats/}\n")
        let moved = try build()
        XCTAssertTrue(moved.succeeded, "\(moved.problems)")
        XCTAssertEqual(output("stats/index.html"), "1;2;")
        try assertSameAsCleanBuild()
    }

    /// Builds a copy of the site's sources from nothing and compares its output with this site's.
    private func assertSameAsCleanBuild(file: StaticString = #filePath, line: UInt = #line) throws {
        let fm = FileManager.default
        let clean = fm.temporaryDirectory.appendingPathComponent("sitegen-clean-\(UUID().uuidString)")
        defer { try? fm.removeItem(at: clean) }
        try fm.createDirectory(at: clean, withIntermediateDirectories: true)
        for item in try fm.contentsOfDirectory(atPath: site.path) where ![".sitegen", "output"].contains(item) {
            try fm.copyItem(at: site.appendingPathComponent(item), to: clean.appendingPathComponent(item))
        }
        _ = try? SiteBuilder(root: clean).build()
        func files(_ root: URL) -> [String: Data] {
            var found: [String: Data] = [:]
            let prefix = root.standardizedFileURL.path + "/"
            for case let url as URL in fm.enumerator(at: root, includingPropertiesForKeys: nil)! where !url.hasDirectoryPath {
                found[String(url.standardizedFileURL.path.dropFirst(prefix.count))] = fm.contents(atPath: url.path)
            }
            return found
        }
        let mine = files(site.appendingPathComponent("output")), theirs = files(clean.appendingPathComponent("output"))
        XCTAssertEqual(mine.keys.sorted(), theirs.keys.sorted(), file: file, line: line)
        XCTAssertTrue(mine == theirs, "the bytes of some files differ", file: file, line: line)
    }

    /// The menu listed a site's pages by file name, whatever their order should be: a declared `weight`
    /// (Hugo's menu weight) orders them, pages without one after.
    func testTheMenuOrdersPagesByWeightThenKey() throws {
        try FileManager.default.createDirectory(at: site.appendingPathComponent("pages"), withIntermediateDirectories: true)
        try write("sitegen.yml", """
            title: Test
            collections:
              pages: {kind: markdown, sources: "pages/*.md", fields: {weight: integer}, detail: {path: "/{key}/"}}
              banks: {kind: csv, sources: data/*.csv, key: cert, fields: {cert: integer, name: text, closed: date}}
            listings:
              home: {from: banks, sort: [-closed], path: /}
            """)
        try write("Templates/list.mustache", "{{#nav}}{{title}};{{/nav}}")
        try write("Templates/detail.mustache", "{{title}}")
        try write(["pages/about.md": "---\ntitle: About\n---\n", "pages/contact.md": "---\ntitle: Contact\nweight: 2\n---\n",
                   "pages/start.md": "---\ntitle: Start\nweight: 1\n---\n", "pages/blog.md": "---\ntitle: Blog\n---\n"])
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try page("index.html"), "home;Start;Contact;About;Blog;")
        try write("pages/about.md", "---\ntitle: About\nweight: 1\n---\n")
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try page("index.html"), "home;About;Start;Contact;Blog;", "a tie falls to the key; a new order renders the pages again")
    }

    /// A site moved from Jekyll or Hugo lost every old address: `aliases` (Hugo's front matter key, declared
    /// as a list) publishes a redirect page at each, which follows its record and goes when it is dropped.
    func testAliasesAreRedirectPagesThatFollowTheirRecord() throws {
        let fm = FileManager.default
        try fm.createDirectory(at: site.appendingPathComponent("posts"), withIntermediateDirectories: true)
        try write("sitegen.yml", """
            title: Test
            baseURL: https://example.org/blog/
            collections:
              posts: {kind: markdown, sources: "posts/*.md", fields: {aliases: list}, detail: {path: "/posts/{key}/"}}
            listings:
              home: {from: posts, sort: [key], path: /}
            """)
        try "{{{body}}}".write(to: site.appendingPathComponent("Templates/detail.mustache"), atomically: true, encoding: .utf8)
        try write("posts/hello.md", "---\ntitle: Hello\naliases: [/2024/01/15/hello.html, /old/hello/, old/hi]\n---\nHi\n")
        try write("posts/other.md", "---\ntitle: Other\n---\nOther\n")
        func output(_ path: String) -> String? {
            fm.contents(atPath: site.appendingPathComponent("output/" + path).path).map { String(decoding: $0, as: UTF8.self) }
        }
        let first = try build()
        XCTAssertTrue(first.succeeded, "\(first.problems)")
        let page = try XCTUnwrap(output("2024/01/15/hello.html"))
        XCTAssertTrue(page.contains(#"<meta http-equiv="refresh" content="0; url=https://example.org/blog/posts/hello/">"#), page)
        XCTAssertTrue(page.contains(#"<link rel="canonical" href="https://example.org/blog/posts/hello/">"#), page)
        XCTAssertEqual(output("old/hello/index.html"), page)
        XCTAssertEqual(output("old/hi/index.html"), page)
        XCTAssertFalse(try XCTUnwrap(output("sitemap.xml")).contains("old/hello"), "a redirect is no page of the sitemap")

        // Unchanged: kept. The record's page moves: the redirects follow. An alias dropped: its page goes.
        XCTAssertFalse(try build().rendered.contains { $0.path.hasPrefix("old/") })
        try write("posts/hello.md", "---\ntitle: Hello\naliases: [/old/hello/, /posts/other/, \"../up\"]\n---\nHi\n")
        try fm.moveItem(at: site.appendingPathComponent("posts/hello.md"), to: site.appendingPathComponent("posts/welcome.md"))
        let moved = try build()
        XCTAssertTrue(try XCTUnwrap(output("old/hello/index.html")).contains("url=https://example.org/blog/posts/welcome/"))
        XCTAssertNil(output("2024/01/15/hello.html"))
        XCTAssertEqual(Set(moved.deletedPaths).intersection(["2024/01/15/hello.html", "old/hi/index.html"]).count, 2)
        // An alias at a page's address, or one that is no path on the site, is an error; the page keeps its address.
        XCTAssertEqual(moved.problems.map(\.description).sorted(), [
            "posts/welcome.md: alias '../up' is not a path on the site, such as /2024/01/hello.html or /old/hello/",
            "sitegen.yml: alias '/posts/other/' of record 'welcome' would be published at /posts/other/, which record 'other' of 'posts' already has; give one of them another path",
        ])
        XCTAssertEqual(output("posts/other/index.html"), "<p>Other</p>\n")
        try assertSameAsCleanBuild()

        // Two records with one alias: the first key keeps it, whatever ids their rows were given.
        try write("posts/welcome.md", "---\ntitle: Hello\naliases: [/x/]\n---\nHi\n")
        try write("posts/other.md", "---\ntitle: Other\naliases: [/x/]\n---\nOther\n")
        _ = try build()
        XCTAssertTrue(try XCTUnwrap(output("x/index.html")).contains("posts/other/"))
        try fm.moveItem(at: site.appendingPathComponent("posts/other.md"), to: site.appendingPathComponent("other.md"))
        _ = try build()
        try fm.moveItem(at: site.appendingPathComponent("other.md"), to: site.appendingPathComponent("posts/other.md"))
        _ = try build()
        XCTAssertTrue(try XCTUnwrap(output("x/index.html")).contains("posts/other/"), "'other' before 'welcome', though its row is newer")
        try assertSameAsCleanBuild()
        // An address that turns from a redirect into a page is in the sitemap, though the files are the same.
        try write("posts/other.md", "---\ntitle: Other\n---\nOther\n")
        try write("posts/welcome.md", "---\ntitle: Hello\naliases: [/posts/x/]\n---\nHi\n")
        _ = try build()
        try write("posts/welcome.md", "---\ntitle: Hello\n---\nHi\n")
        try write("posts/x.md", "---\ntitle: X\n---\nX\n")
        _ = try build()
        XCTAssertTrue(try XCTUnwrap(output("sitemap.xml")).contains("https://example.org/blog/posts/x/"))
        try assertSameAsCleanBuild()
    }


    /// An alias from someone else's record took over any page: `/index.html<NUL>/` was cut at the NUL and
    /// written over the home page (status 0); `/404.html` replaced the 404 page; a name too long for the file
    /// system stopped the whole build at the output file. Each is an error at the record's file, and the
    /// pages stay.
    func testAnAliasCannotReplaceAPageOrTheSitesOwnFiles() throws {
        let fm = FileManager.default
        try fm.createDirectory(at: site.appendingPathComponent("posts"), withIntermediateDirectories: true)
        try write("sitegen.yml", """
            title: Test
            baseURL: https://example.org/
            collections:
              posts: {kind: markdown, sources: "posts/*.md", fields: {aliases: list}, detail: {path: "/posts/{key}/"}}
            listings:
              home: {from: posts, sort: [key], path: /}
            """)
        try "{{{body}}}".write(to: site.appendingPathComponent("Templates/detail.mustache"), atomically: true, encoding: .utf8)
        try write("Templates/404.mustache", "not here")
        try write("posts/a.md", "---\ntitle: A\n---\nA\n")
        XCTAssertTrue(try build().succeeded)
        func output(_ path: String) -> String? {
            fm.contents(atPath: site.appendingPathComponent("output/" + path).path).map { String(decoding: $0, as: UTF8.self) }
        }
        let long = String(repeating: "a", count: 300)
        try write("posts/b.md", "---\ntitle: B\naliases: [\"/index.html\\u0000/\", \"/sitemap.xml\\u0000/\", /404.html, /\(long)/, /fine/, "
                  + "/2019/%C3%A9t%C3%A9.html, /old/hello%20world/, /%2e%2e/x/, /caf%E9/, /a%00/]\n---\nB\n")
        let summary = try build()
        XCTAssertEqual(summary.problems.map(\.description).sorted(), ([
            "posts/b.md: alias '/404.html' would replace the site's own /404.html",
            "posts/b.md: alias '/\(long)/' has a name of 300 bytes, longer than the 255 a file system takes",
            "posts/b.md: alias '/index.html\\u{0}/' is not a path on the site, such as /2024/01/hello.html or /old/hello/",
            "posts/b.md: alias '/sitemap.xml\\u{0}/' is not a path on the site, such as /2024/01/hello.html or /old/hello/",
        ] + ["/%2e%2e/x/", "/a%00/", "/caf%E9/"].map { "posts/b.md: alias '\($0)' is not a path on the site, such as /2024/01/hello.html or /old/hello/" }).sorted())
        // Percent-encoded, as a browser shows an address: published where a server looks for the decoded path.
        XCTAssertNotNil(output("2019/\u{E9}t\u{E9}.html"))
        XCTAssertNotNil(output("old/hello world/index.html"))
        XCTAssertEqual(output("index.html"), "A;B;")
        XCTAssertTrue(try XCTUnwrap(output("sitemap.xml")).hasPrefix("<?xml"))
        XCTAssertEqual(output("404.html"), "not here")
        XCTAssertNil(output(long + "/index.html"))
        XCTAssertTrue(try XCTUnwrap(output("fine/index.html")).contains("url=https://example.org/posts/b/"), "the record's good alias is published")
        XCTAssertFalse(fm.fileExists(atPath: site.appendingPathComponent("output/index.html\u{0}").path))
    }


    /// A post written as a Hugo page bundle (`posts/hello/index.md` beside `cat.png`) showed a broken image:
    /// the files beside it are now published in its page's folder.
    func testTheFilesOfAPageBundleArePublishedBesideItsPage() throws {
        let fm = FileManager.default
        for folder in ["posts/hello/img", "posts/hello/sub"] {
            try fm.createDirectory(at: site.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try write("sitegen.yml", """
            title: Test
            collections:
              posts: {kind: markdown, sources: "posts/**/*.md", detail: {path: "/posts/{key}/"}}
              numbers: {kind: csv, sources: "posts/**/*.csv", key: n, fields: {n: integer}}
            listings:
              home: {from: posts, sort: [key], path: /}
            """)
        try "{{{body}}}".write(to: site.appendingPathComponent("Templates/detail.mustache"), atomically: true, encoding: .utf8)
        try write("posts/hello/index.md", "---\ntitle: Hello\n---\n![cat](cat.png)\n")
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF])
        try png.write(to: site.appendingPathComponent("posts/hello/cat.png"))
        try write([
            "posts/hello/img/deep.svg": "<svg/>", "posts/hello/notes.md": "---\ntitle: Notes\n---\nA page of its own.\n",
            "posts/hello/.draft.txt": "hidden", "posts/hello/figures.csv": "n\n1\n",
            "posts/hello/sub/index.md": "---\ntitle: Sub\n---\n![dog](dog.png)\n", "posts/hello/sub/dog.png": "dog",
        ])
        func output(_ path: String) -> Data? { fm.contents(atPath: site.appendingPathComponent("output/" + path).path) }
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        XCTAssertTrue(String(decoding: output("posts/hello/index.html") ?? Data(), as: UTF8.self).contains(#"<img src="cat.png" alt="cat" />"#))
        XCTAssertEqual(output("posts/hello/cat.png"), png)
        XCTAssertEqual(output("posts/hello/img/deep.svg"), Data("<svg/>".utf8))
        XCTAssertEqual(output("posts/sub/dog.png"), Data("dog".utf8), "a bundle inside a bundle has its own files")
        for absent in ["posts/hello/sub/dog.png", "posts/hello/notes.md", "posts/hello/.draft.txt", "posts/hello/figures.csv"] {
            XCTAssertNil(output(absent), absent)
        }
        try fm.removeItem(at: site.appendingPathComponent("posts/hello/cat.png"))
        let removed = try build()
        XCTAssertEqual(removed.deletedPaths, ["posts/hello/cat.png"])
    }

    /// A hostile-input review: a link in a page bundle published any file of the machine (`notes.txt ->
    /// /etc/passwd`); `static/a -> .` published 41 nested copies, and two such links never finished; editors'
    /// backups (`site.css~`, Emacs's `#site.css#` of unsaved text, Vim's `4913`) were published by a build
    /// though a watch ignored them, so the output depended on what was open in an editor.
    func testLinksOutOfTheSiteLoopsAndEditorsScratchFilesAreNotPublished() throws {
        let fm = FileManager.default
        let outside = site.deletingLastPathComponent().appendingPathComponent("outside-\(UUID().uuidString)")
        try fm.createDirectory(at: outside, withIntermediateDirectories: true)
        defer { try? fm.removeItem(at: outside) }
        try "secret".write(to: outside.appendingPathComponent("key.txt"), atomically: true, encoding: .utf8)
        for folder in ["posts/hello", "static/css", "shared"] {
            try fm.createDirectory(at: site.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try write("sitegen.yml", """
            title: Test
            collections:
              posts: {kind: markdown, sources: "posts/**/*.md", detail: {path: "/posts/{key}/"}}
            listings:
              home: {from: posts, sort: [key], path: /}
            """)
        try "{{{body}}}".write(to: site.appendingPathComponent("Templates/detail.mustache"), atomically: true, encoding: .utf8)
        try write(["posts/hello/index.md": "---\ntitle: Hello\n---\nHi\n", "posts/hello/cat.png": "cat", "posts/hello/cat.png~": "old cat",
                   "shared/logo.svg": "<svg/>", "static/css/site.css": "body{}", "static/css/site.css~": "old",
                   "static/css/#site.css#": "unsaved", "static/css/4913": "", "static/robots.txt~": "old"])
        XCTAssertEqual(symlink(outside.appendingPathComponent("key.txt").path, site.appendingPathComponent("posts/hello/notes.txt").path), 0)
        XCTAssertEqual(symlink(outside.path, site.appendingPathComponent("posts/hello/out").path), 0)
        XCTAssertEqual(symlink("../../shared/logo.svg", site.appendingPathComponent("posts/hello/logo.svg").path), 0)
        XCTAssertEqual(symlink(".", site.appendingPathComponent("static/css/a").path), 0)
        XCTAssertEqual(symlink("..", site.appendingPathComponent("static/css/b").path), 0)
        // The site's folder holds the output folder: each build published the last one's output again, deeper.
        XCTAssertEqual(symlink("..", site.appendingPathComponent("static/site").path), 0)
        XCTAssertEqual(symlink("../output", site.appendingPathComponent("static/out").path), 0)
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        XCTAssertEqual(summary.warnings.map(\.description).sorted(), [
            "posts/hello/notes.txt: is a link to \(outside.resolvingSymlinksInPath().path)/key.txt, outside the site; left out",
            "posts/hello/out: is a link to \(outside.resolvingSymlinksInPath().path), outside the site; left out",
            "static/css/a: is a link to a folder it is in; left out",
            "static/css/b: is a link to a folder it is in; left out",
            "static/out: is a link to a folder that holds the output folder, or is in it; left out",
            "static/site: is a link to a folder it is in; left out",
        ])
        var published: [String] = []
        let output = site.appendingPathComponent("output")
        for case let url as URL in fm.enumerator(at: output, includingPropertiesForKeys: nil)! where !url.hasDirectoryPath {
            published.append(String(url.standardizedFileURL.path.dropFirst(output.standardizedFileURL.path.count + 1)))
        }
        XCTAssertEqual(published.filter { $0.hasPrefix("posts/") || $0.hasPrefix("css/") }.sorted(),
                       ["css/site.css", "posts/hello/cat.png", "posts/hello/index.html", "posts/hello/logo.svg"])
        XCTAssertEqual(try build().warnings.count, 6, "the next build finds the same, and publishes no more")
        XCTAssertFalse(fm.fileExists(atPath: output.appendingPathComponent("site").path) || fm.fileExists(atPath: output.appendingPathComponent("out").path))
    }

    func testATaxonomyListsEachRecordUnderEveryItemOfItsList() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "fields: {cert: integer, name: text, closed: date}", with: "fields: {cert: integer, name: text, closed: date, tags: list}")
            .replacingOccurrences(of: "listings:\n", with: """
            listings:
              bytag: {from: banks, taxonomy: tags, where: "cert <> 3", sort: [-closed], pageSize: 1, path: "/tags/{section}/", template: tagged}

            """)
        try write("sitegen.yml", config)
        try write("data/banks.csv", "cert,name,closed,tags\n1,Alpha,2024-01-01,loans; audits\n2,Beta,2024-02-01,audits\n3,Gamma,2024-03-01,audits; loans\n")
        try "{{section.title}}({{section.count}}):{{#items}}{{name}}{{/items}} {{pagination.number}}/{{pagination.pageCount}}".write(
            to: site.appendingPathComponent("Templates/tagged.mustache"), atomically: true, encoding: .utf8)
        try "{{rowCount}} records: {{#groups}}{{indexTitle}}[{{#sections}}{{name}}={{count}};{{/sections}}]{{/groups}}".write(
            to: site.appendingPathComponent("Templates/sections.mustache"), atomically: true, encoding: .utf8)
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        XCTAssertEqual(try page("tags/index.html"), "2 records: A[audits=2;]L[loans=1;]", "Gamma is filtered out of both; Alpha counts once")
        XCTAssertEqual(try page("tags/audits/index.html"), "audits(2):Beta 1/2", "newest first, one a page")
        XCTAssertEqual(try page("tags/audits/page/2/index.html"), "audits(2):Alpha 2/2")
        XCTAssertEqual(try page("tags/loans/index.html"), "loans(1):Alpha 1/1", "Alpha is under both of its tags")
        // A tag given twice lists its record once.
        try write("data/banks.csv", "cert,name,closed,tags\n1,Alpha,2024-01-01,loans; audits; loans\n2,Beta,2024-02-01,audits\n3,Gamma,2024-03-01,audits; loans\n")
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try page("tags/loans/index.html"), "loans(1):Alpha 1/1")
        XCTAssertEqual(try page("tags/index.html"), "2 records: A[audits=2;]L[loans=1;]")
        // The same sections, counts and items, spread over one record more: the index says so.
        try write("data/banks.csv", "cert,name,closed,tags\n1,Alpha,2024-01-01,loans\n2,Beta,2024-02-01,audits\n3,Gamma,2024-03-01,audits; loans\n4,Delta,2024-04-01,audits\n")
        XCTAssertTrue(try build().succeeded)
        XCTAssertEqual(try page("tags/index.html"), "3 records: A[audits=2;]L[loans=1;]")
    }

    func testSectionsThatMakeOneSlugAreNumberedInOrderAndTheBuildSaysTheirAddressesCanMove() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "fields: {cert: integer, name: text, closed: date}", with: "fields: {cert: integer, name: text, closed: date, tags: list}")
            .replacingOccurrences(of: "listings:\n", with: """
            listings:
              bytag: {from: banks, taxonomy: tags, sort: [-closed], path: "/tags/{section}/"}

            """)
        try write("sitegen.yml", config)
        try write("data/banks.csv", "cert,name,closed,tags\n1,Alpha,2024-01-01,C#; C++\n2,Beta,2024-02-01,C#\n")
        try "{{#sections}}{{name}}={{url}};{{/sections}}".write(to: site.appendingPathComponent("Templates/sections.mustache"), atomically: true, encoding: .utf8)
        let first = try build()
        XCTAssertTrue(first.succeeded, "\(first.problems)")
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/tags/index.html"), encoding: .utf8), "C#=/tags/c/;C++=/tags/c-2/;")
        XCTAssertEqual(first.warnings.filter { $0.reason.contains("slug") }.map(\.description), [
            "sitegen.yml:17: listing 'bytag': sections 'C#' and 'C++' make the same slug; 'C++' is at /tags/c-2/, an address that changes if a section before it takes that slug, and links made with {{slug(…)}} lead to 'C#'",
        ])
        try write("data/banks.csv", "cert,name,closed,tags\n1,Alpha,2024-01-01,C#; C++\n2,Beta,2024-02-01,C#\n3,Gamma,2024-03-01,C\n")
        let second = try build()
        XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/tags/index.html"), encoding: .utf8),
                       "C=/tags/c/;C#=/tags/c-2/;C++=/tags/c-3/;", "the pages stay apart, in the order of their names")
        XCTAssertEqual(second.warnings.filter { $0.reason.contains("slug") }.count, 2, "each build says it again")
    }

    /// A listing reads its rows without the fields its templates never name; a template that names one gets it.
    func testListingsReadTheFieldsTheirTemplatesName() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "fields: {cert: integer, name: text, closed: date}",
                                             with: "fields: {cert: integer, name: text, closed: date, notes: text, tags: list}")
            .replacingOccurrences(of: "listings:\n", with: """
            listings:
              excerpts: {from: banks, sort: [-closed], path: /excerpts/, template: excerpted}
              styled: {from: banks, sort: [-closed], path: /styled/, template: styled}
              bytag: {from: banks, taxonomy: tags, sort: [-closed], path: "/tags/{section}/", template: tagged}

            """)
        try write("sitegen.yml", config)
        try write("data/banks.csv", "cert,name,closed,notes,tags\n1,Alpha,2024-01-01,First notes,loans\n2,Beta,2024-02-01,Second notes,loans\n")
        try "{{#items}}{{name}}: {{excerpt(notes)}};{{/items}}".write(
            to: site.appendingPathComponent("Templates/excerpted.mustache"), atomically: true, encoding: .utf8)
        // `notes` only as literal text, a class name: not a field the page shows. `{{.}}` prints a row's fields.
        try "<p class=\"notes\">{{#items}}{{.}}{{/items}}</p>".write(
            to: site.appendingPathComponent("Templates/styled.mustache"), atomically: true, encoding: .utf8)
        try "{{> row}}".write(to: site.appendingPathComponent("Templates/tagged.mustache"), atomically: true, encoding: .utf8)
        try "{{#items}}{{name}}={{notes}};{{/items}}".write(to: site.appendingPathComponent("Templates/row.mustache"), atomically: true, encoding: .utf8)
        try "{{#groups}}{{#sections}}{{name}}{{/sections}}{{/groups}}".write(
            to: site.appendingPathComponent("Templates/sections.mustache"), atomically: true, encoding: .utf8)
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        XCTAssertEqual(try page("index.html"), "2;1;", "the home list names only the title (here the key)")
        XCTAssertEqual(try page("excerpts/index.html"), "Beta: Second notes;Alpha: First notes;")
        let styled = try page("styled/index.html")
        XCTAssertTrue(styled.contains("&quot;key&quot;: 1") && styled.contains("&quot;key&quot;: 2"), styled)
        XCTAssertFalse(styled.contains("&quot;notes&quot;"), "a word of the template's text (the class) is not a field it names: \(styled)")
        XCTAssertEqual(try page("tags/loans/index.html"), "Beta=Second notes;Alpha=First notes;", "named in a partial, through a taxonomy")
    }

    func testTheCollectionTableIsIndexedOnItsListingsFirstSortFieldsOnly() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "fields: {cert: integer, name: text, closed: date}",
                                             with: "fields: {cert: integer, name: text, closed: date, state: text, tags: list}")
            .replacingOccurrences(of: "listings:\n", with: """
            listings:
              bystate: {from: banks, section: state, sort: [-closed], path: "/states/{section}/"}
              bytag: {from: banks, taxonomy: tags, sort: [-closed], path: "/tags/{section}/"}

            """)
        try write("sitegen.yml", config)
        try write("data/banks.csv", "cert,name,closed,state,tags\n1,Alpha,2024-01-01,CA,loans\n2,Beta,2024-02-01,TX,loans\n")
        try "{{#groups}}{{#sections}}{{name}}{{/sections}}{{/groups}}".write(
            to: site.appendingPathComponent("Templates/sections.mustache"), atomically: true, encoding: .utf8)
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        let database = try Database(path: site.appendingPathComponent(".sitegen/store.sqlite").path)
        let indexed = try database.fetchAll("SELECT name FROM pragma_index_info(?) WHERE name IS NOT NULL AND name != '_id'", [.text("banks_closed")])
            .compactMap { $0["name"]?.stringValue }
        XCTAssertEqual(indexed, ["closed"], "the home listing sorts on closed")
        // The taxonomy sorts its list table by value: no index on a `value` the collection has not (SQLite
        // would have indexed the string 'value').
        let indexes = try database.fetchAll("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'banks' AND sql IS NOT NULL")
            .compactMap { $0["name"]?.stringValue }.sorted()
        XCTAssertEqual(indexes, ["banks__source", "banks_closed", "banks_state"])
    }

    func testDeclaredSectionsComeFirstWithTheirTitlesAndAnEmptyOneStillGetsItsPage() throws {
        var config = try String(contentsOf: site.appendingPathComponent("sitegen.yml"), encoding: .utf8)
        config = config.replacingOccurrences(of: "listings:\n", with: """
            listings:
              byname:
                from: banks
                section: name
                sort: [-closed]
                path: /names/{section}/
                template: named
                sections: [{name: Gamma, title: The third}, {name: Omega, title: Not yet}]
                showEmpty: true

            """)
        try write("sitegen.yml", config)
        try "{{section.title}}={{section.count}}{{#empty}} empty{{/empty}}".write(
            to: site.appendingPathComponent("Templates/named.mustache"), atomically: true, encoding: .utf8)
        try "{{#sections}}{{title}}:{{count}};{{/sections}}".write(
            to: site.appendingPathComponent("Templates/sections.mustache"), atomically: true, encoding: .utf8)
        let summary = try build()
        XCTAssertTrue(summary.succeeded, "\(summary.problems)")
        XCTAssertEqual(try page("names/index.html"), "The third:1;Not yet:0;Alpha:1;Beta:1;", "declared first, in their order")
        XCTAssertEqual(try page("names/omega/index.html"), "Not yet=0 empty")
        XCTAssertEqual(try page("names/gamma/index.html"), "The third=1")
    }

    func testRelationshipsAreCheckedWhereTheyAreDeclared() throws {
        func error(_ relationships: String, sort: String = "[-closed]") -> String? {
            let yaml = """
                title: T
                collections:
                  banks: {kind: csv, sources: a, key: cert, fields: {cert: integer, closed: date}}
                  notes:
                    kind: csv
                    sources: b
                    key: id
                    fields: {id: text, bank: text, tags: list}
                    relationships: \(relationships)
                listings:
                  home: {from: notes, sort: \(sort), path: /}
                """
            do { _ = try SiteConfig(yaml: yaml, file: "sitegen.yml"); return nil } catch { return error.description }
        }
        XCTAssertEqual(error("{bank: banks}", sort: "[-bank.closed]"), nil)
        XCTAssertEqual(error("{bank: vaults}"), "sitegen.yml:9:27: no collection named 'vaults'; collections: banks, notes")
        XCTAssertEqual(error("{branch: banks}"), "sitegen.yml:9:21: 'branch' is not a field of 'notes'; a relationship names the field holding another collection's key")
        XCTAssertEqual(error("{tags: banks}", sort: "[id]"), nil, "a list of keys is a to-many relationship")
        XCTAssertEqual(error("{tags: banks}", sort: "[tags.closed]"),
                       "sitegen.yml:11:29: cannot sort on 'tags.closed': 'tags' relates each record to several; sort through a to-one relationship")
        XCTAssertEqual(error("{bank: banks}", sort: "[bank.city]"), "sitegen.yml:11:29: cannot sort on 'bank.city': 'city' is not a field of 'banks'")
        XCTAssertEqual(error("{bank: banks}", sort: "[vault.closed]"), "sitegen.yml:11:29: cannot sort on 'vault.closed': 'vault' is not a relationship of 'notes'")
    }

    func testATemplateTheFolderLacksAndAWhereSQLiteRejectsAreErrorsAtTheirLineOfTheConfiguration() throws {
        func buildError(_ listing: String, detail: String = "") throws -> String? {
            try write("sitegen.yml", """
                title: Test
                collections:
                  banks:
                    kind: csv
                    sources: data/*.csv
                    key: cert
                    fields: {cert: integer, name: text, closed: date}
                \(detail)
                listings:
                  home:
                    from: banks
                \(listing)
                """)
            do { _ = try build(); return nil } catch { return "\(error)" }
        }
        XCTAssertEqual(try buildError("    path: /\n  later:\n    from: banks\n    where: closd > '2024'\n    path: /later/"),
                       "sitegen.yml:15:12: listing 'later': no such column: closd")
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.appendingPathComponent("output/index.html").path),
                       "the listing before the bad one is not written either")
        XCTAssertNil(try buildError("    path: /"))
        let available = "(it has: list); add it, or name another with"
        XCTAssertEqual(try buildError("    template: lsit\n    path: /"),
                       "sitegen.yml:12:15: listing 'home' renders through 'lsit.mustache', which is not in the templates folder \(available) 'template'")
        XCTAssertEqual(try buildError("    section: name\n    path: /{section}/"),
                       "sitegen.yml:10:3: the section index of listing 'home' renders through 'sections.mustache', which is not in the templates folder \(available) 'indexTemplate'",
                       "a default template the folder lacks points at the declaration relying on it")
        XCTAssertEqual(try buildError("    path: /", detail: "    detail: {path: '/banks/{key}/', template: bank}"),
                       "sitegen.yml:8:47: the detail of 'banks' renders through 'bank.mustache', which is not in the templates folder \(available) 'template'")
        XCTAssertEqual(try buildError("    where: closed >>> '2024'\n    path: /"), "sitegen.yml:12:12: listing 'home': near \">\": syntax error")
        XCTAssertEqual(try buildError("    where: closd > '2024'\n    path: /"), "sitegen.yml:12:12: listing 'home': no such column: closd")
    }
}

/// Progress reports collected by a test.
private final class Reports: @unchecked Sendable {
    var list: [LoadProgress] = []
}

final class LoadProgressTests: XCTestCase {
    func testAProgressLineSaysHowFarHowFastAndHowLong() {
        let progress = LoadProgress(file: "data/records.ndjson", bytesRead: 1_395_864_371, totalBytes: 3_328_599_654,
                                    rows: 412_000, elapsed: 22.5, finished: false)
        XCTAssertEqual(progress.line, "data/records.ndjson  41%  1.2 GB of 3.0 GB  412,000 rows  18,311 rows/s  32 s left")
        var done = progress
        done.bytesRead = done.totalBytes
        done.finished = true
        XCTAssertEqual(done.line, "data/records.ndjson  100%  3.0 GB of 3.0 GB  412,000 rows  18,311 rows/s  done in 23 s")
        let render = RenderProgress(step: "detail pages of banks", pages: 41_000, totalPages: 100_000, elapsed: 20, finished: false)
        XCTAssertEqual(render.line, "detail pages of banks  41%  41,000 of 100,000 pages  2,050 pages/s  29 s left")
        // Before its first page, a listing fetched afresh reads its rows in order: seconds at a million rows.
        let reading = RenderProgress(step: "listing home", pages: 0, totalPages: 0, elapsed: 3, finished: false, rowsRead: 410_000)
        XCTAssertEqual(reading.line, "listing home  reading its rows in order  410,000 so far")
    }
}

/// Waits until a file written now is past the tick of the file system's clock a build starting then would
/// read it in: such a build vouches for the file (`SiteStore.racyWindow`), and the next one does not read
/// it again.
func waitPastTheClocksTick() {
    Thread.sleep(forTimeInterval: 0.1)
}
