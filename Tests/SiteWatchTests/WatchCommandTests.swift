import Foundation
import XCTest

/// Runs `sitegen watch` on a copy of the example site and edits the site under it.
final class WatchCommandTests: XCTestCase {
    func testAnEditedRecordReachesItsPageWithinASecondAndNewFilesInNewFoldersBuild() throws {
        let site = try ExampleSite.copy(for: self)
        // Nested pages, so that a folder made during the watch holds a page the build picks up.
        try site.appendingPathComponent("sitegen.yml").replace("sources: content/pages/*.md", with: "sources: content/pages/**/*.md")
        let watch = try RunningSitegen(["watch", "--site", site.path], in: site)
        XCTAssertTrue(watch.waitFor("for changes"), "no first build: \(watch.stdout) \(watch.stderr)")
        try renameCapitolBank(in: site.appendingPathComponent("content/records/failed-banks.csv"), shownAs: "content/records/failed-banks.csv",
                              site: site, watched: watch)

        try FileManager.default.createDirectory(at: site.appendingPathComponent("content/pages/guides/deeper"), withIntermediateDirectories: true)
        try addACallReport(at: "content/pages/guides/deeper/call-reports.md", in: site, watched: watch)
    }

    /// `sitegen watch` on a site reached through a symbolic link failed at once (`inotify_add_watch: Not a
    /// directory`) while `build` worked through it; a linked folder inside (the records kept elsewhere) was
    /// never watched. Both rebuild after an edit now, and so does a linked folder made during the watch.
    func testAWatchOnASiteReachedThroughALinkRebuildsAfterAnEdit() throws {
        let real = try ExampleSite.copy(for: self)
        // The records live elsewhere, linked into the site.
        let records = real.deletingLastPathComponent().appendingPathComponent("sitegen-records-\(UUID().uuidString)")
        try FileManager.default.moveItem(at: real.appendingPathComponent("content/records"), to: records)
        addTeardownBlock { try? FileManager.default.removeItem(at: records) }
        try FileManager.default.createSymbolicLink(at: real.appendingPathComponent("content/records"), withDestinationURL: records)
        let site = real.deletingLastPathComponent().appendingPathComponent("sitegen-link-\(UUID().uuidString)")
        try FileManager.default.createSymbolicLink(at: site, withDestinationURL: real)
        addTeardownBlock { try? FileManager.default.removeItem(at: site) }

        let watch = try RunningSitegen(["watch", "--site", site.path], in: site.deletingLastPathComponent())
        XCTAssertTrue(watch.waitFor("for changes"), "no first build: \(watch.stdout) \(watch.stderr)")
        try renameCapitolBank(in: records.appendingPathComponent("failed-banks.csv"), shownAs: "content/records/failed-banks.csv",
                              site: site, watched: watch)
        // A folder of pages linked in while watching is watched from then on.
        let guides = real.deletingLastPathComponent().appendingPathComponent("sitegen-guides-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: guides, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: guides) }
        try site.appendingPathComponent("sitegen.yml").replace("sources: content/pages/*.md", with: "sources: content/pages/**/*.md")
        XCTAssertTrue(watch.waitFor("sitegen.yml changed: built in"), watch.stdout)
        try FileManager.default.createSymbolicLink(at: site.appendingPathComponent("content/pages/guides"), withDestinationURL: guides)
        XCTAssertTrue(watch.waitFor("content/pages/guides changed"), watch.stdout)
        try addACallReport(at: guides.appendingPathComponent("call-reports.md").path, in: site, watched: watch, shownAs: "content/pages/guides/call-reports.md")
    }

    /// `watch --drafts` publishes drafts, marked, and says how many at its first build and whenever a save
    /// changes their number.
    func testWatchDraftsPublishesDraftsAndSaysSoWhenTheirNumberChanges() throws {
        let site = try ExampleSite.copy(for: self)
        try Data("---\ntitle: Plans\ndraft: true\n---\nNot yet.\n".utf8).write(to: site.appendingPathComponent("content/pages/plans.md"))
        let watch = try RunningSitegen(["watch", "--drafts", "--site", site.path], in: site)
        XCTAssertTrue(watch.waitFor("for changes"), "no first build: \(watch.stdout) \(watch.stderr)")
        XCTAssertTrue(watch.stderr.contains("including 1 draft (--drafts): build without --drafts for the site you publish\n"), watch.stderr)
        let plans = site.appendingPathComponent("output/plans/index.html")
        XCTAssertTrue(plans.text.contains(#"<h1>Plans<span class="draft">Draft</span></h1>"#), plans.text)

        try site.appendingPathComponent("content/pages/about.md").replace("title: About Failed Bank Watch\n", with: "title: About Failed Bank Watch\npublished: false\n")
        XCTAssertTrue(watch.waitFor("including 2 drafts (--drafts)", inStandardError: true), watch.stderr)
        XCTAssertTrue(poll(timeout: 10) { site.appendingPathComponent("output/about/index.html").text.contains(#"<span class="draft">Draft</span>"#) })
        XCTAssertEqual(watch.stop(), 0)
    }

    /// Renames Capitol Bank in the records file `csv` and checks that its page changes within a second and
    /// that the watch's line names the file as `shown`.
    private func renameCapitolBank(in csv: URL, shownAs shown: String, site: URL, watched watch: RunningSitegen) throws {
        let page = site.appendingPathComponent("output/banks/23917/index.html")
        XCTAssertTrue(page.text.contains("Capitol Bank"))
        let edited = Date()
        try csv.replace("\nCapitol Bank,", with: "\nCapitol Savings Bank,")
        XCTAssertTrue(poll(timeout: 1) { page.text.contains("Capitol Savings Bank") }, "not rebuilt within 1 s: \(watch.stdout)")
        print("edit to page: \(String(format: "%.3f", Date().timeIntervalSince(edited))) s")
        XCTAssertTrue(watch.waitFor(shown + " changed: built in"), watch.stdout)
    }

    /// Writes a new Markdown page at `path`, checks that the watch builds its page, then stops the watch.
    private func addACallReport(at path: String, in site: URL, watched watch: RunningSitegen, shownAs shown: String? = nil) throws {
        let file = path.hasPrefix("/") ? URL(fileURLWithPath: path) : site.appendingPathComponent(path)
        try "---\ntitle: Reading a call report\n---\nStart with the balance sheet.\n"
            .write(to: file, atomically: false, encoding: .utf8)
        let newPage = site.appendingPathComponent("output/call-reports/index.html")
        XCTAssertTrue(poll(timeout: 5) { newPage.text.contains("Start with the balance sheet.") }, "new page not built: \(watch.stdout)")
        XCTAssertTrue(watch.waitFor(shown ?? path), watch.stdout)

        XCTAssertEqual(watch.stop(with: SIGINT), 0, watch.stderr)
        XCTAssertFalse(watch.stderr.contains("error:"), watch.stderr)
    }

    /// Ctrl-C during a long build printed only `^C`, and the build went on in silence; a second one stopped the
    /// process with status 0 and a half-published build. The first is now acknowledged, the second exits 130
    /// and says the next build finishes the job, which it does.
    /// A watch whose build waited for another process's build (a `sitegen build` in another terminal) ran
    /// that build before it stopped at Ctrl-C; nothing of it had begun, so it stops at once.
    func testCtrlCWhileWaitingForAnotherProcesssBuildStopsAtOnce() throws {
        let site = try ExampleSite.copy(for: self)
        try FileManager.default.createDirectory(at: site.appendingPathComponent(".sitegen"), withIntermediateDirectories: true)
        let lock = open(site.appendingPathComponent(".sitegen/lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        XCTAssertEqual(flock(lock, LOCK_EX), 0)
        defer { close(lock) }
        let watch = try RunningSitegen(["watch", "--site", site.path], in: site)
        XCTAssertTrue(watch.waitFor("waiting for another sitegen building this site to finish", inStandardError: true, timeout: 10), watch.stderr)
        XCTAssertEqual(watch.stop(with: SIGINT, timeout: 2), 0, watch.stderr)
        XCTAssertTrue(watch.stderr.contains("stopped while waiting for another sitegen's build"), watch.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.appendingPathComponent("output").path), "nothing built")
    }

    func testCtrlCDuringABuildSaysWhatItWaitsForAndASecondStopsWithAFailure() throws {
        let site = try ExampleSite.copy(for: self)
        var rows = "cert,name,city,state,acquirer,closing_date,fund,notes\n"
        for n in 100_000..<120_000 { rows += "\(n),Bank \(n),Town,CA,,2020-01-01,1,\n" }
        try rows.write(to: site.appendingPathComponent("content/records/many.csv"), atomically: true, encoding: .utf8)
        let watch = try RunningSitegen(["watch", "--site", site.path], in: site)
        Thread.sleep(forTimeInterval: 0.5)
        kill(watch.process.processIdentifier, SIGINT)
        XCTAssertTrue(watch.waitFor("stopping once the build under way is done (Ctrl-C again to stop now)", inStandardError: true, timeout: 10),
                      watch.stdout + watch.stderr)
        XCTAssertEqual(watch.stop(with: SIGINT), 130, watch.stderr)
        XCTAssertTrue(watch.stderr.contains("stopped during a build: the next build finishes what it left"), watch.stderr)
        XCTAssertEqual(try RunningSitegen.build(site), 0)
        XCTAssertTrue(site.appendingPathComponent("output/banks/119999/index.html").text.contains("Bank 119999"))
    }

    /// A page deleted from `output/` by hand comes back with a watch's first build, which looks for every page;
    /// one edited by hand is left to `--full` (as `build` has it), which renders every page.
    func testAWatchsFirstBuildPutsBackAPageDeletedByHandAndAFullOneAPageEditedByHand() throws {
        let site = try ExampleSite.copy(for: self)
        XCTAssertEqual(try RunningSitegen.build(site), 0)
        let deleted = site.appendingPathComponent("output/about/index.html")
        let edited = site.appendingPathComponent("output/index.html")
        let (deletedBytes, editedBytes) = (try Data(contentsOf: deleted), try Data(contentsOf: edited))
        try FileManager.default.removeItem(at: deleted)
        try Data("edited by hand".utf8).write(to: edited)
        let plain = try RunningSitegen(["watch", "--site", site.path], in: site)
        XCTAssertTrue(plain.waitFor("for changes"), plain.stdout + plain.stderr)
        XCTAssertEqual(plain.stop(with: SIGINT), 0)
        XCTAssertEqual(try Data(contentsOf: deleted), deletedBytes)
        XCTAssertEqual(try Data(contentsOf: edited), Data("edited by hand".utf8), "a build that trusts the manifest keeps what it thinks is there")
        let full = try RunningSitegen(["watch", "--full", "--site", site.path], in: site)
        XCTAssertTrue(full.waitFor("for changes"), full.stdout + full.stderr)
        XCTAssertEqual(full.stop(with: SIGINT), 0)
        XCTAssertEqual(try Data(contentsOf: edited), editedBytes)
    }

    /// A site is free to keep its sources out of `content/`: the watch follows where `sitegen.yml` reads them
    /// from, and where it reads them from after an edit.
    func testSourcesOutsideContentAreWatchedWhereverSitegenYmlSaysTheyAre() throws {
        let site = try ExampleSite.copy(for: self)
        let files = FileManager.default
        try files.moveItem(at: site.appendingPathComponent("content/records"), to: site.appendingPathComponent("data"))
        let config = site.appendingPathComponent("sitegen.yml")
        try config.replace("sources: content/records/*.csv", with: "sources: data/*.csv")
        let watch = try RunningSitegen(["watch", "--site", site.path], in: site)
        XCTAssertTrue(watch.waitFor("for changes"), "no first build: \(watch.stdout) \(watch.stderr)")
        try renameCapitolBank(in: site.appendingPathComponent("data/failed-banks.csv"), shownAs: "data/failed-banks.csv", site: site, watched: watch)

        // The pages move to a top-level folder of their own: after the edit to sitegen.yml, that folder is watched.
        try files.moveItem(at: site.appendingPathComponent("content/pages"), to: site.appendingPathComponent("notes"))
        try config.replace("sources: content/pages/*.md", with: "sources: notes/*.md")
        XCTAssertTrue(watch.waitFor("sitegen.yml changed: built in", timeout: 10), watch.stdout + watch.stderr)
        try addACallReport(at: "notes/call-reports.md", in: site, watched: watch)
    }

    /// Sources may live beside the site (`../`) or anywhere (an absolute path): those folders are watched too,
    /// and a folder `sitegen.yml` stops reading is no longer watched.
    func testSourcesOutsideTheSiteAreWatchedAndAFolderNoLongerReadIsNot() throws {
        let site = try ExampleSite.copy(for: self)
        let files = FileManager.default
        let data = site.deletingLastPathComponent().appendingPathComponent(site.lastPathComponent + "-data")
        addTeardownBlock { try? FileManager.default.removeItem(at: data) }
        try files.createDirectory(at: data, withIntermediateDirectories: true)
        try files.moveItem(at: site.appendingPathComponent("content/records"), to: data.appendingPathComponent("records"))
        try files.moveItem(at: site.appendingPathComponent("content/pages"), to: data.appendingPathComponent("pages"))
        let config = site.appendingPathComponent("sitegen.yml")
        try config.replace("sources: content/records/*.csv", with: "sources: ../\(data.lastPathComponent)/records/*.csv")
        try config.replace("sources: content/pages/*.md", with: "sources: \(data.path)/pages/*.md")
        let watch = try RunningSitegen(["watch", "--site", site.path], in: site)
        XCTAssertTrue(watch.waitFor("for changes"), "no first build: \(watch.stdout) \(watch.stderr)")
        XCTAssertTrue(watch.stdout.contains("watching content/, Templates/, \(data.path)/records/, \(data.path)/pages/, static/ and sitegen.yml"),
                      watch.stdout)
        try renameCapitolBank(in: data.appendingPathComponent("records/failed-banks.csv"), shownAs: "\(data.path)/records/failed-banks.csv",
                              site: site, watched: watch)

        // The pages come back into the site (copied: a build of content/pages), and sitegen.yml reads them there
        // (a build of sitegen.yml): then a file written where they were builds nothing.
        try files.copyItem(at: data.appendingPathComponent("pages"), to: site.appendingPathComponent("content/pages"))
        XCTAssertTrue(watch.waitFor("changed: built in", count: 2, timeout: 10), watch.stdout + watch.stderr)
        try config.replace("sources: \(data.path)/pages/*.md", with: "sources: content/pages/*.md")
        XCTAssertTrue(watch.waitFor("sitegen.yml changed: built in", timeout: 10), watch.stdout + watch.stderr)
        try "---\ntitle: Stray\n---\n".write(to: data.appendingPathComponent("pages/stray.md"), atomically: false, encoding: .utf8)
        try addACallReport(at: "content/pages/call-reports.md", in: site, watched: watch)
        XCTAssertFalse(watch.stdout.contains("stray.md"), watch.stdout)
    }

    func testAFailingBuildPrintsItsErrorAndTheWatchBuildsTheFix() throws {
        let site = try ExampleSite.copy(for: self)
        let watch = try RunningSitegen(["watch", "--site", site.path], in: site)
        XCTAssertTrue(watch.waitFor("for changes"), "no first build: \(watch.stdout) \(watch.stderr)")
        let config = site.appendingPathComponent("sitegen.yml")

        try config.replace("kind: csv", with: "kind: spreadsheet")
        XCTAssertTrue(watch.waitFor("error: sitegen.yml:7:11: unknown kind 'spreadsheet'", inStandardError: true, timeout: 10), watch.stderr)
        XCTAssertTrue(watch.waitFor("sitegen.yml changed: build failed in"), watch.stdout)

        // Fixed the way many editors save: a new file renamed over the old one.
        let fixed = config.text.replacingOccurrences(of: "kind: spreadsheet", with: "kind: csv")
        try fixed.write(to: site.appendingPathComponent(".sitegen.yml.swp"), atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(site.appendingPathComponent(".sitegen.yml.swp").path, config.path), 0)
        XCTAssertTrue(watch.waitFor("sitegen.yml changed: built in", timeout: 10), watch.stdout)

        // A broken template fails the build the same way, naming the template.
        let template = site.appendingPathComponent("Templates/page.mustache")
        let original = template.text
        try Data((original + "{{#unclosed}}").utf8).write(to: template)
        XCTAssertTrue(watch.waitFor("Templates/page.mustache changed: build failed in", timeout: 10), watch.stdout + watch.stderr)
        XCTAssertTrue(watch.stderr.contains("page.mustache"), watch.stderr)
        try Data(original.utf8).write(to: template)
        XCTAssertTrue(watch.waitFor("Templates/page.mustache changed: built in", timeout: 10), watch.stdout)

        XCTAssertEqual(watch.stop(with: SIGTERM), 0)
    }
}
