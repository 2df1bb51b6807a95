import Foundation
import SiteBuild
import SiteSources
import TestSupport
import XCTest

/// Runs the built `sitegen` executable as a user would.
final class CommandLineTests: XCTestCase {
    private var executable: URL {
        // The products folder of the same build: the bundle itself on Linux, its parent on macOS.
        let bundle = Bundle(for: Self.self).bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("sitegen") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    private func run(_ arguments: [String], in folder: URL, executable: URL? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let output = try ProcessOutput.of(executable ?? self.executable, arguments, in: folder)
        return (output.status, output.stdout, output.stderr)
    }

    private func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        return folder
    }

    /// A copy of the bundled example site in a new folder.
    private func exampleSite() throws -> URL {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let site = try temporaryFolder()
        for item in ["sitegen.yml", "content", "Templates"] {
            try FileManager.default.copyItem(at: repository.appendingPathComponent(item), to: site.appendingPathComponent(item))
        }
        return site
    }

    /// `-o ''` (an unset variable) wrote the site into the folder the command ran in, and `-o .`, `-o content`
    /// or `-o .sitegen` put pages among the sources, where patterns could read them back: refused before
    /// anything is written.
    func testAnOutputFolderAmongTheSourcesIsRefusedBeforeAnythingIsWritten() throws {
        let site = try exampleSite()
        let before = try files(under: site)
        let empty = try run(["build", "-o", ""], in: site)
        XCTAssertEqual(empty.status, 64)
        XCTAssertTrue(empty.stderr.contains("--output needs a folder, and it was given an empty one (an unset variable?)"), empty.stderr)
        for (folder, said) in [(".", "it is the site folder: the pages would lie among its sources"), ("..", "it holds the site folder"),
                               ("content/records/html", "it is in 'content/records', where collection 'banks' reads its sources"),
                               ("content/feeds", "it is in 'content/feeds', where collection 'news' reads its sources"),
                               (".sitegen/pages", "it is in the store's folder"), ("Templates", "it is in Templates/")] {
            let result = try run(["build", "-o", folder], in: site)
            XCTAssertEqual(result.status, 2, folder)
            XCTAssertTrue(result.stderr.contains(said), "\(folder): \(result.stderr)")
        }
        XCTAssertEqual(try files(under: site).keys.filter { !$0.hasPrefix(".sitegen/") }.sorted(), before.keys.sorted(), "nothing written")
        XCTAssertEqual(try run(["build", "-o", "docs"], in: site).status, 0)
        // Through a link to a source folder, to a folder not made yet.
        try FileManager.default.createSymbolicLink(atPath: site.appendingPathComponent("records-link").path, withDestinationPath: "content/records")
        let linked = try run(["build", "-o", "records-link/new/deeper"], in: site)
        XCTAssertEqual(linked.status, 2)
        XCTAssertTrue(linked.stderr.contains("it is in 'content/records'"), linked.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.appendingPathComponent("content/records/new").path))
        // A watch says so before its first build and stops: no save would fix it.
        let watch = try run(["watch", "-o", "Templates/x"], in: site)
        XCTAssertEqual(watch.status, 2)
        XCTAssertTrue(watch.stderr.contains("it is in Templates/"), watch.stderr)
    }

    /// A pattern from the site's own folder (`**/*.md`) read the pages the build wrote as Markdown
    /// (`formats: [html, md]`) back as sources: the walk never enters the output folder.
    func testAPatternFromTheSitesFolderNeverReadsTheOutputBack() throws {
        let site = try exampleSite()
        let config = site.appendingPathComponent("sitegen.yml")
        try String(contentsOf: config, encoding: .utf8).replacingOccurrences(of: "sources: content/pages/*.md", with: "sources: \"**/*.md\"")
            .write(to: config, atomically: true, encoding: .utf8)
        for _ in 0..<2 {
            let result = try run(["build"], in: site)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        let sources = try run(["sources"], in: site)
        XCTAssertFalse(sources.stdout.contains("output/"), sources.stdout)
        XCTAssertTrue(sources.stdout.contains("content/pages/about.md"), sources.stdout)
    }

    /// Every file under `folder`, by relative path, with its bytes.
    private func files(under folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let prefix = folder.standardizedFileURL.path + "/"
        for case let url as URL in FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)! {
            guard (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true else { continue }
            files[String(url.standardizedFileURL.path.dropFirst(prefix.count))] = try Data(contentsOf: url)
        }
        return files
    }

    /// Writes files of a user's own into the site's output folder (a `CNAME`, a `.git` folder, a note in a
    /// folder of pages), which no build may touch; returns them by path.
    private func addFilesOfTheUsers(to site: URL) throws -> [String: String] {
        let own = ["CNAME": "banks.example.org\n", ".git/HEAD": "ref: refs/heads/gh-pages\n", "banks/notes.txt": "mine\n"]
        for (path, text) in own {
            let url = site.appendingPathComponent("output/" + path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: false, encoding: .utf8)
        }
        return own
    }

    func testABuildKilledAtAnyMomentIsFinishedByTheNextOneAsACleanBuildWritesIt() throws {
        var generator = SeededGenerator(seed: UInt64(ProcessInfo.processInfo.environment["SITEGEN_SEED"] ?? "") ?? 20261122)
        let site = try exampleSite(), reference = try exampleSite()
        XCTAssertEqual(try run(["build", "--site", reference.path], in: reference).status, 0)
        XCTAssertEqual(try run(["build", "--site", site.path], in: site).status, 0)
        let own = try addFilesOfTheUsers(to: site)
        let csv = "content/records/failed-banks.csv"
        func append(_ line: String, to folder: URL) throws {
            let handle = try FileHandle(forWritingTo: folder.appendingPathComponent(csv))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(line.utf8))
            try handle.close()
        }
        // The killed builds are incremental: they are killed within the time one takes, process start included.
        for folder in [site, reference] { try append("Warm-up Bank,Springfield,IL,89999,None,2024-02-01,1,\"Warm.\"\n", to: folder) }
        let start = Date()
        XCTAssertEqual(try run(["build", "--site", site.path], in: site).status, 0)
        let incrementalBuild = Date().timeIntervalSince(start)
        for round in 1...4 {
            // Both sites get the same new bank; the reference is built clean, into a new store and folder.
            for folder in [site, reference] {
                try append("Round \(round) Bank,Springfield,IL,\(90_000 + round),None,2024-03-0\(round),1,\"Round \(round).\"\n", to: folder)
            }
            // The killed build also sees a bank that is gone again before the next build: its page, if the
            // killed build wrote it, must go.
            let before = try String(contentsOf: site.appendingPathComponent(csv), encoding: .utf8)
            try append("Doomed \(round) Bank,Springfield,IL,\(80_000 + round),None,2024-04-0\(round),1,\"Gone.\"\n", to: site)
            try? FileManager.default.removeItem(at: reference.appendingPathComponent("output"))
            try? FileManager.default.removeItem(at: reference.appendingPathComponent(".sitegen"))
            XCTAssertEqual(try run(["build", "--site", reference.path], in: reference).status, 0)

            // The site's build is killed at a random moment, then built again.
            let process = Process()
            process.executableURL = executable
            process.arguments = ["build", "--site", site.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let delay = Double(generator.next() % 1_000) / 1_000 * incrementalBuild
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try before.write(to: site.appendingPathComponent(csv), atomically: true, encoding: .utf8)
            let finished = try run(["build", "--site", site.path], in: site)
            XCTAssertEqual(finished.status, 0, finished.stderr)
            let expected = try files(under: reference.appendingPathComponent("output"))
            var got = try files(under: site.appendingPathComponent("output"))
            for (path, text) in own {
                XCTAssertEqual(got.removeValue(forKey: path), Data(text.utf8), "round \(round), killed after \(delay) s: \(path) kept")
            }
            XCTAssertEqual(Set(got.keys), Set(expected.keys), "round \(round), killed after \(delay) s: the same files")
            XCTAssertTrue(expected.allSatisfy { got[$0.key] == $0.value }, "round \(round), killed after \(delay) s: the same bytes")
        }
    }

    /// A `sitegen build` of `site` run as a user that permissions bind: as nobody when the tests run as root
    /// (the site is given to nobody), else as the tests' user.
    private func buildAsAnotherUserThanRoot(_ site: URL) throws -> () throws -> (status: Int32, stdout: String, stderr: String) {
        guard getuid() == 0 else { return { try self.run(["build"], in: site) } }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { throw XCTSkip("no setpriv to build as another user") }
        let chown = try Process.run(URL(fileURLWithPath: "/bin/chown"), arguments: ["-R", "65534:65534", site.path])
        chown.waitUntilExit()
        let command = ["--reuid=65534", "--regid=65534", "--clear-groups", executable.path, "build"]
        return { try self.run(command, in: site, executable: URL(fileURLWithPath: "/usr/bin/setpriv")) }
    }

    /// A page folder the build may not write in failed at the page's exchange with a spare, once every
    /// page before it in the publishing had taken its place: a build that failed published half its pages.
    func testAPageFolderThatCannotBeWrittenStopsTheBuildBeforeAnyPageIsPublished() throws {
        let site = try exampleSite()
        let build = try buildAsAnotherUserThanRoot(site)
        let base = site.appendingPathComponent("Templates/base.mustache")
        func mark(_ text: String) throws {
            let template = try String(contentsOf: base, encoding: .utf8)
            try template.replacingOccurrences(of: "</footer>", with: "\(text)</footer>").write(to: base, atomically: false, encoding: .utf8)
        }
        XCTAssertEqual(try build().status, 0)
        try mark("first-edit")
        XCTAssertEqual(try build().status, 0, "a build that replaces pages, leaving spares")
        let locked = site.appendingPathComponent("output/banks/17443")
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: locked.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: locked.path) }
        try mark("second-edit")
        let failed = try build()
        XCTAssertEqual(failed.status, 2, "stopped: nothing published")
        XCTAssertTrue(failed.stderr.contains("banks/17443/"), failed.stderr)
        let published = try files(under: site.appendingPathComponent("output")).filter { $0.key.hasSuffix(".html") }
        XCTAssertGreaterThan(published.count, 300)
        let new = published.filter { String(decoding: $0.value, as: UTF8.self).contains("second-edit") }.keys.sorted()
        XCTAssertEqual(Array(new.prefix(3)), [], "\(new.count) pages published by a failed build")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: locked.path)
        XCTAssertEqual(try build().status, 0)
        let after = try files(under: site.appendingPathComponent("output")).filter { $0.key.hasSuffix(".html") }
        XCTAssertTrue(after.allSatisfy { String(decoding: $0.value, as: UTF8.self).contains("second-edit") || $0.key == "404.html" })
    }

    /// A folder of the output mounted from another file system (or linked to one) failed every build
    /// that replaced its pages, half published: the spares it was given are on the store's file system.
    func testAPageFolderOnAnotherFileSystemIsReplacedAsAnyOther() throws {
        guard getuid() == 0 else { throw XCTSkip("mounting a file system needs root") }
        let site = try exampleSite()
        let base = site.appendingPathComponent("Templates/base.mustache")
        func mark(_ text: String) throws {
            let template = try String(contentsOf: base, encoding: .utf8)
            try template.replacingOccurrences(of: "</footer>", with: "\(text)</footer>").write(to: base, atomically: false, encoding: .utf8)
        }
        XCTAssertEqual(try run(["build"], in: site).status, 0)
        try mark("first-edit")
        XCTAssertEqual(try run(["build"], in: site).status, 0, "a build that replaces pages, leaving spares")
        let elsewhere = try temporaryFolder()
        let mount = try Process.run(URL(fileURLWithPath: "/bin/mount"), arguments: ["-t", "tmpfs", "-o", "size=64m", "tmpfs", elsewhere.path])
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else { throw XCTSkip("this machine cannot mount a tmpfs here") }
        addTeardownBlock { try? Process.run(URL(fileURLWithPath: "/bin/umount"), arguments: [elsewhere.path]).waitUntilExit() }
        let banks = site.appendingPathComponent("output/banks")
        try FileManager.default.moveItem(at: banks, to: elsewhere.appendingPathComponent("banks"))
        try FileManager.default.createSymbolicLink(at: banks, withDestinationURL: elsewhere.appendingPathComponent("banks"))
        try mark("second-edit")
        let second = try run(["build"], in: site)
        XCTAssertEqual(second.status, 0, second.stderr)
        let pages = try files(under: elsewhere.appendingPathComponent("banks"))
        XCTAssertGreaterThan(pages.count, 250)
        XCTAssertTrue(pages.values.allSatisfy { String(decoding: $0, as: UTF8.self).contains("second-edit") })
    }

    /// Files and folders a build may not read were reported as something else: `sitegen.yml` as not UTF-8,
    /// the templates folder as missing, a template as a dump of Foundation's error.
    func testWhatCannotBeReadForItsPermissionsIsSaidSo() throws {
        let site = try exampleSite()
        let build = try buildAsAnotherUserThanRoot(site)
        for (path, expected) in [("sitegen.yml", "error: sitegen.yml: cannot be read: Permission denied"),
                                 ("Templates", "/Templates: cannot be read: Permission denied"),
                                 ("Templates/list.mustache", "/Templates/list.mustache: cannot be read: Permission denied")] {
            let url = site.appendingPathComponent(path)
            let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as! Int
            try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: url.path)
            let failed = try build()
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
            XCTAssertEqual(failed.status, 2, "\(path): stopped, nothing published")
            XCTAssertTrue(failed.stderr.contains(expected), "\(path): \(failed.stderr)")
        }
        XCTAssertEqual(try build().status, 0)
    }

    /// A damaged store failed every build with SQLite's words for whatever it read first ("database disk
    /// image is malformed" while setting the cache size), sometimes blamed on a line of `sitegen.yml`.
    func testADamagedStoreIsNamedWithWhatToDo() throws {
        let site = try exampleSite()
        XCTAssertEqual(try run(["build"], in: site).status, 0)
        let store = site.appendingPathComponent(".sitegen/store.sqlite")
        let handle = try FileHandle(forWritingTo: store)
        try handle.truncate(atOffset: 8_192)
        try handle.close()
        let failed = try run(["build"], in: site)
        XCTAssertEqual(failed.status, 2, "stopped: nothing published")
        XCTAssertFalse(failed.stderr.contains("Error:"), failed.stderr)
        XCTAssertTrue(failed.stderr.hasSuffix("FAILED: the build stopped at the error above\n"), failed.stderr)
        XCTAssertFalse(failed.stdout.contains("FAILED"), "the failure is said with its messages, on standard error")
        XCTAssertTrue(failed.stderr.contains("error: the store \(store.path) is damaged ("), failed.stderr)
        XCTAssertTrue(failed.stderr.contains("move \(site.appendingPathComponent(".sitegen").path) away and build again"), failed.stderr)
        try FileManager.default.moveItem(at: site.appendingPathComponent(".sitegen"), to: site.appendingPathComponent("sitegen-damaged"))
        XCTAssertEqual(try run(["build"], in: site).status, 0, "made again from the sources")
    }

    /// A source folder that could not be listed (its permissions changed) was taken for an empty one: its
    /// records and pages were deleted, with exit status 0. Run as a user the permissions bind (root is not).
    func testASourceFolderThatCannotBeListedKeepsItsRecordsAndFailsTheBuild() throws {
        let site = try exampleSite()
        try FileManager.default.createDirectory(at: site.appendingPathComponent("static/img"), withIntermediateDirectories: true)
        try "logo".write(to: site.appendingPathComponent("static/img/logo.svg"), atomically: true, encoding: .utf8)
        let build = try buildAsAnotherUserThanRoot(site)
        let first = try build()
        XCTAssertEqual(first.status, 0, first.stderr)
        let before = try files(under: site.appendingPathComponent("output"))
        let records = site.appendingPathComponent("content/records")
        let count = try FileManager.default.contentsOfDirectory(atPath: records.path).filter { $0.hasSuffix(".csv") }.count
        XCTAssertGreaterThan(count, 0)
        // A folder the pattern cannot find files in is none of the build's business, readable or not.
        let config = site.appendingPathComponent("sitegen.yml")
        try String(contentsOf: config, encoding: .utf8).replacingOccurrences(of: "sources: content/records/*.csv", with: "sources: content/rec*/*.csv")
            .write(to: config, atomically: false, encoding: .utf8)
        let other = site.appendingPathComponent("content/private")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        if getuid() == 0 { try Process.run(URL(fileURLWithPath: "/bin/chown"), arguments: ["65534:65534", other.path]).waitUntilExit() }
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: other.path)
        XCTAssertEqual(try build().status, 0)
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: records.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: records.path) }
        let hidden = try build()
        XCTAssertEqual(hidden.status, 1)
        XCTAssertTrue(hidden.stderr.contains("content/records: folder cannot be listed: Permission denied; the records of its \(count) file"
                                             + (count == 1 ? "" : "s") + " from the last build are kept"), hidden.stderr)
        let during = try files(under: site.appendingPathComponent("output"))
        XCTAssertEqual(Array(Set(before.keys).subtracting(during.keys).sorted().prefix(3)), [], "no page deleted")
        XCTAssertTrue(during == before)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: records.path)
        let again = try build()
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(try files(under: site.appendingPathComponent("output")) == before)

        // A static folder that cannot be listed stops the build; what it published stays.
        let images = site.appendingPathComponent("static/img")
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: images.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: images.path) }
        let stopped = try build()
        XCTAssertEqual(stopped.status, 2, "stopped: nothing published")
        XCTAssertTrue(stopped.stderr.contains("static/img: cannot be listed: Permission denied"), stopped.stderr)
        XCTAssertEqual(FileManager.default.contents(atPath: site.appendingPathComponent("output/img/logo.svg").path), Data("logo".utf8))
    }

    /// A build that fails on a template leaves its manifest unsaved and publishes none of its pages; the
    /// build after the fix builds as a clean build would, and deletes nothing else of the output folder's.
    func testTheBuildAfterATemplateErrorKeepsTheFilesSitegenDidNotMake() throws {
        let site = try exampleSite(), reference = try exampleSite()
        XCTAssertEqual(try run(["build", "--site", site.path], in: site).status, 0)
        let own = try addFilesOfTheUsers(to: site)
        // A new listing is added while the detail template is broken: the failed build renders the listing's
        // new pages (listings come before detail pages), but publishes none, and no manifest.
        let config = site.appendingPathComponent("sitegen.yml")
        let settings = try String(contentsOf: config, encoding: .utf8)
        try (settings + "  doomed:\n    from: banks\n    sort: name\n    pageSize: 100\n    path: /doomed/\n    title: Doomed\n")
            .write(to: config, atomically: true, encoding: .utf8)
        let template = site.appendingPathComponent("Templates/detail.mustache")
        let good = try String(contentsOf: template, encoding: .utf8)
        try good.replacingOccurrences(of: "{{title}}", with: "{{titel}}").write(to: template, atomically: true, encoding: .utf8)
        let failed = try run(["build", "--site", site.path], in: site)
        XCTAssertEqual(failed.status, 2, "stopped: nothing published")
        XCTAssertTrue(failed.stderr.contains("'titel'"), failed.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.appendingPathComponent("output/doomed").path))
        // Fixed, and the listing dropped again: its pages, in no manifest, must go.
        try good.write(to: template, atomically: true, encoding: .utf8)
        try settings.write(to: config, atomically: true, encoding: .utf8)
        let fixed = try run(["build", "--site", site.path], in: site)
        XCTAssertEqual(fixed.status, 0, fixed.stderr)

        XCTAssertEqual(try run(["build", "--site", reference.path], in: reference).status, 0)
        var got = try files(under: site.appendingPathComponent("output"))
        for (path, text) in own { XCTAssertEqual(got.removeValue(forKey: path), Data(text.utf8), "\(path) kept") }
        let expected = try files(under: reference.appendingPathComponent("output"))
        XCTAssertEqual(Set(got.keys), Set(expected.keys))
        XCTAssertTrue(expected.allSatisfy { got[$0.key] == $0.value })
    }

    func testABuildStoppedByATemplateSaysWhatItsLoadFoundAndWritesItsReport() throws {
        let site = try exampleSite()
        // A feed whose date is unreadable loads with a warning; the next build finds it unchanged and is silent.
        try """
            <rss version="2.0"><channel><title>Odd</title><link>https://odd.example.org/</link><description>d</description>
            <item><title>Odd date</title><link>https://odd.example.org/1</link><pubDate>sometime in May</pubDate></item>
            </channel></rss>
            """.write(to: site.appendingPathComponent("content/feeds/odd.xml"), atomically: true, encoding: .utf8)
        try "<rss><channel>".write(to: site.appendingPathComponent("content/feeds/cut.xml"), atomically: true, encoding: .utf8)
        let template = site.appendingPathComponent("Templates/detail.mustache")
        let good = try String(contentsOf: template, encoding: .utf8)
        try (good + "{{oops}}\n").write(to: template, atomically: true, encoding: .utf8)
        let report = site.appendingPathComponent("report.json")
        let failed = try run(["build", "--site", site.path, "--report", report.path], in: site)
        XCTAssertEqual(failed.status, 2, "stopped: nothing published")
        let lines = failed.stderr.split(separator: "\n").map(String.init)
        let warning = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("warning: content/feeds/odd.xml:2:") }, failed.stderr)
        let error = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("error: content/feeds/cut.xml:") }, failed.stderr)
        let stop = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("error: Templates/detail.mustache:") && $0.contains("'oops'") }, failed.stderr)
        XCTAssertLessThan(max(warning, error), stop, "the load's messages come before the error that stopped the build")
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any])
        XCTAssertEqual(json["succeeded"] as? Bool, false)
        let problems = try XCTUnwrap(json["problems"] as? [String])
        XCTAssertEqual(problems.count, 2, "\(problems)")
        XCTAssertTrue(problems[0].hasPrefix("content/feeds/cut.xml:"), "\(problems)")
        XCTAssertTrue(problems[1].hasPrefix("Templates/detail.mustache:"), "\(problems)")
        // For tools: whether the build stopped (nothing published), its warnings, and each message in parts.
        XCTAssertEqual(json["stopped"] as? Bool, true)
        XCTAssertEqual((json["warnings"] as? [String])?.contains { $0.hasPrefix("content/feeds/odd.xml:2:") }, true, "\(json["warnings"] ?? "")")
        let diagnostics = try XCTUnwrap(json["diagnostics"] as? [[String: Any]])
        let odd = try XCTUnwrap(diagnostics.first { $0["file"] as? String == "content/feeds/odd.xml" }, "\(diagnostics)")
        XCTAssertEqual(odd["severity"] as? String, "warning")
        XCTAssertEqual(odd["line"] as? Int, 2)
        XCTAssertEqual(diagnostics.first { $0["file"] as? String == "content/feeds/cut.xml" }?["severity"] as? String, "error")
        let stopping = try XCTUnwrap(diagnostics.first { $0["file"] as? String == "Templates/detail.mustache" }, "the error that stopped the build: \(diagnostics)")
        XCTAssertEqual(stopping["severity"] as? String, "error")
        XCTAssertNotNil(stopping["line"] as? Int)
        XCTAssertTrue((stopping["message"] as? String)?.contains("'oops'") == true, "\(stopping)")
        let sources = try XCTUnwrap(json["sources"] as? [String: Int])
        XCTAssertEqual(Set(sources.keys), ["read", "sameBytes", "unchanged"])
        XCTAssertEqual(sources["read"], 6, "a first build reads the example's four sources and the two feeds: \(sources)")
    }

    /// `--report` was written to a temporary file renamed over its path: `/dev/stdout` (as root) became a
    /// file and the JSON never reached the pipe, a FIFO or a link was replaced, and a folder that was not
    /// there was found after the build had published.
    func testAReportGoesWhereItsPathLeadsAndAPathThatCannotTakeItIsRefusedFirst() throws {
        let site = try exampleSite()
        XCTAssertEqual(try run(["build"], in: site).status, 0)
        for destination in ["-", "/dev/stdout"] {
            let piped = try run(["build", "--report", destination], in: site)
            XCTAssertEqual(piped.status, 0, piped.stderr)
            let json = try JSONSerialization.jsonObject(with: Data(piped.stdout.utf8)) as? [String: Any]
            XCTAssertEqual(json?["succeeded"] as? Bool, true, "standard output holds the report alone: \(piped.stdout)")
            XCTAssertTrue(piped.stderr.contains("pages: 0 rendered"), "the summary goes to standard error: \(piped.stderr)")
        }
        var status = stat()
        XCTAssertEqual(lstat("/dev/stdout", &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFLNK, "/dev/stdout is still a link")

        let kept = site.appendingPathComponent("kept.json"), link = site.appendingPathComponent("link.json")
        try "x".write(to: kept, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: kept)
        XCTAssertEqual(try run(["build", "--report", "link.json"], in: site).status, 0)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link.path), kept.path, "the link stays a link")
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(contentsOf: kept)) as? [String: Any], "what it leads to has the report")
        // A link to a file not there yet: the file is made where it leads.
        let later = site.appendingPathComponent("later.json")
        try FileManager.default.createSymbolicLink(atPath: later.path, withDestinationPath: "content/later-report.json")
        XCTAssertEqual(try run(["build", "--report", "later.json"], in: site).status, 0)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: later.path), "content/later-report.json")
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(contentsOf: site.appendingPathComponent("content/later-report.json"))) as? [String: Any])

        let fifo = site.appendingPathComponent("fifo")
        XCTAssertEqual(mkfifo(fifo.path, 0o644), 0)
        final class Received: @unchecked Sendable { var data = Data(); let done = DispatchSemaphore(value: 0) }
        let received = Received()
        Thread { [path = fifo.path] in
            received.data = FileHandle(forReadingAtPath: path)?.readDataToEndOfFile() ?? Data()
            received.done.signal()
        }.start()
        XCTAssertEqual(try run(["build", "--report", "fifo"], in: site).status, 0)
        XCTAssertEqual(received.done.wait(timeout: .now() + 10), .success)
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: received.data) as? [String: Any], "the reader of the pipe got the report")
        XCTAssertEqual(lstat(fifo.path, &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFIFO, "the pipe is still a pipe")

        // Refused before anything is built: the edit below is not published.
        let records = site.appendingPathComponent("content/records/failed-banks.csv")
        let csv = try String(contentsOf: records, encoding: .utf8)
        try csv.replacingOccurrences(of: "Capitol Bank,", with: "Capitol Bank Z,").write(to: records, atomically: true, encoding: .utf8)
        let refused = try run(["build", "--report", "no/such/folder/r.json"], in: site)
        XCTAssertEqual(refused.status, 64)
        XCTAssertTrue(refused.stderr.contains("--report no/such/folder/r.json: there is no folder no/such/folder"), refused.stderr)
        XCTAssertFalse(try String(contentsOf: site.appendingPathComponent("output/banks/23917/index.html"), encoding: .utf8).contains("Capitol Bank Z"))
    }

    /// A page that could not be put in its place (an immutable file) stopped the build after the rest of
    /// its pages were published, and a deleted record's page that could not be deleted was forgotten, exit
    /// status 0: it stayed published for good, `--full` included.
    func testAPageThatCannotBeReplacedOrDeletedIsSaidAndNothingElseOfThatBuildIsPublished() throws {
        let site = try exampleSite()
        XCTAssertEqual(try run(["build"], in: site).status, 0)
        let output = site.appendingPathComponent("output")
        func chattr(_ flag: String, _ file: URL) throws -> Bool {
            let process = try Process.run(URL(fileURLWithPath: "/usr/bin/chattr"), arguments: [flag, file.path])
            process.waitUntilExit()
            return process.terminationStatus == 0
        }
        func files() throws -> [String: Data] {
            var found: [String: Data] = [:]
            for case let path as String in FileManager.default.enumerator(atPath: output.path)! {
                if let data = FileManager.default.contents(atPath: output.appendingPathComponent(path).path) { found[path] = data }
            }
            return found
        }
        let locked = output.appendingPathComponent("banks/19507/index.html")
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr"), try chattr("+i", locked) else {
            throw XCTSkip("needs root and a file system that keeps a file immutable")
        }
        var unlocked = false
        defer { if !unlocked { _ = try? chattr("-i", locked) } }
        let before = try files()
        let base = site.appendingPathComponent("Templates/base.mustache")
        let layout = try String(contentsOf: base, encoding: .utf8)
        try layout.replacingOccurrences(of: "<head>", with: "<head><!-- edited -->").write(to: base, atomically: true, encoding: .utf8)
        // A new record too: its page's new folder goes with it.
        let records = site.appendingPathComponent("content/records/failed-banks.csv")
        let original = try String(contentsOf: records, encoding: .utf8)
        try (original + "New Bank,Nowhere,ZZ,990001,Nobody,2024-03-01,1,\r\n").write(to: records, atomically: true, encoding: .utf8)
        let failed = try run(["build"], in: site)
        XCTAssertEqual(failed.status, 2, failed.stderr)
        XCTAssertTrue(failed.stderr.contains("banks/19507/index.html"), failed.stderr)
        XCTAssertEqual(try files(), before, "none of the failed build's pages is published")
        for folder in ["banks/990001", "states/zz"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: output.appendingPathComponent(folder).path), "\(folder): no folder left of a page not published")
        }
        try original.write(to: records, atomically: true, encoding: .utf8)
        XCTAssertTrue(try chattr("-i", locked))
        XCTAssertEqual(try run(["build"], in: site).status, 0)
        XCTAssertTrue(try String(contentsOf: locked, encoding: .utf8).contains("<!-- edited -->"))

        let csv = try String(contentsOf: records, encoding: .utf8)
        // Rows end in CRLF (a line feed alone is inside a quoted field).
        try csv.components(separatedBy: "\r\n").filter { !$0.contains(",17443,") }.joined(separator: "\r\n")
            .write(to: records, atomically: true, encoding: .utf8)
        let gone = output.appendingPathComponent("banks/17443/index.html")
        XCTAssertTrue(try chattr("+i", gone))
        let kept = try run(["build"], in: site)
        XCTAssertEqual(kept.status, 1, "published, with a problem")
        XCTAssertTrue(kept.stderr.contains("banks/17443/index.html: cannot be deleted"), kept.stderr)
        XCTAssertTrue(try chattr("-i", gone))
        unlocked = true
        let again = try run(["build"], in: site)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: gone.path), "the next build deletes it")

        // The same in another output folder, whose files are remembered while output/ is built.
        XCTAssertEqual(try run(["build", "-o", "public"], in: site).status, 0)
        try csv.components(separatedBy: "\r\n").filter { !$0.contains(",19507,") && !$0.contains(",17443,") }.joined(separator: "\r\n")
            .write(to: records, atomically: true, encoding: .utf8)
        XCTAssertEqual(try run(["build"], in: site).status, 0)
        let deployed = site.appendingPathComponent("public/banks/19507/index.html")
        XCTAssertTrue(try chattr("+i", deployed))
        defer { _ = try? chattr("-i", deployed) }
        for attempt in 1...2 {
            let stuck = try run(["build", "-o", "public"], in: site)
            XCTAssertEqual(stuck.status, 1, "attempt \(attempt)")
            XCTAssertTrue(stuck.stderr.contains("public/banks/19507/index.html: cannot be deleted"), "attempt \(attempt): \(stuck.stderr)")
        }
        XCTAssertTrue(try chattr("-i", deployed))
        XCTAssertEqual(try run(["build", "-o", "public"], in: site).status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: deployed.path))
    }

    /// Under `ulimit -n 14` the runtime crashed (SIGILL) when it could not open a file of its own, and under
    /// `ulimit -f` the signal killed the build without a word; both are errors that say what to do.
    func testTightProcessLimitsAreErrorsNotCrashes() throws {
        let site = try exampleSite()
        func build(under limit: String) throws -> (status: Int32, stdout: String, stderr: String) {
            try run(["-c", "ulimit \(limit) && exec \"$0\" build", executable.path], in: site, executable: URL(fileURLWithPath: "/bin/sh"))
        }
        let files = try build(under: "-n 14")
        XCTAssertEqual(files.status, 2, files.stderr)
        XCTAssertEqual(files.stderr, "error: sitegen needs at least 64 open files, and this process may have 14 (ulimit -n); raise the limit\n")
        let size = try build(under: "-f 100")
        XCTAssertEqual(size.status, 2, "not killed by SIGXFSZ: \(size.stderr)")
        XCTAssertTrue(size.stderr.contains(site.appendingPathComponent(".sitegen/store.sqlite").path), "the file that could not grow is named: \(size.stderr)")
        XCTAssertEqual(try run(["build"], in: site).status, 0, "and the next build, without the limit, builds")
    }

    /// A file whose name is near 255 bytes failed every build: its temporary file's name was longer.
    func testAStaticFileWithANameNearTheLimitIsPublishedAndReplaced() throws {
        let site = try exampleSite()
        let folder = site.appendingPathComponent("static")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The last two are alike in their first 230 bytes: their temporary files must not be one.
        let names = [String(repeating: "c", count: 250) + ".txt", String(repeating: "é", count: 125) + ".txt",
                     String(repeating: "d", count: 230) + "1.txt", String(repeating: "d", count: 230) + "2.txt"]
        for (round, text) in ["one", "two"].enumerated() {
            for (index, name) in names.enumerated() {
                try "\(text) \(index)".write(to: folder.appendingPathComponent(name), atomically: false, encoding: .utf8)
            }
            let built = try run(["build"], in: site)
            XCTAssertEqual(built.status, 0, "round \(round): \(built.stderr)")
            for (index, name) in names.enumerated() {
                XCTAssertEqual(try String(contentsOf: site.appendingPathComponent("output/" + name), encoding: .utf8), "\(text) \(index)", "round \(round)")
            }
        }
    }

    /// A folder with no sitegen.yml got a `.sitegen/` from the build that said it was no site; `--plan` made
    /// one in a new site; and in a checkout this user may not write, `--plan` failed on its store.
    func testAPlanAndAFolderThatIsNoSiteAreLeftAsTheyWere() throws {
        let folder = try temporaryFolder()
        XCTAssertEqual(try run(["build"], in: folder).status, 2)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [], "nothing made in a folder that is no site")
        let site = try exampleSite()
        let fresh = try run(["build", "--plan"], in: site)
        XCTAssertEqual(fresh.status, 0, fresh.stderr)
        XCTAssertTrue(fresh.stdout.contains("render / — first build\n"), fresh.stdout)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: site.path).sorted(), ["Templates", "content", "sitegen.yml"])

        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return }
        XCTAssertEqual(try run(["build"], in: site).status, 0)
        let base = site.appendingPathComponent("Templates/base.mustache")
        try String(contentsOf: base, encoding: .utf8).replacingOccurrences(of: "<head>", with: "<head><!-- edited -->")
            .write(to: base, atomically: true, encoding: .utf8)
        for (tool, arguments) in [("/bin/chown", ["-R", "65534:65534", site.path]), ("/bin/chmod", ["-R", "a-w", site.path])] {
            let process = try Process.run(URL(fileURLWithPath: tool), arguments: arguments)
            process.waitUntilExit()
        }
        defer { _ = try? Process.run(URL(fileURLWithPath: "/bin/chmod"), arguments: ["-R", "u+w", site.path]).waitUntilExit() }
        let readOnly = try run(["--reuid=65534", "--regid=65534", "--clear-groups", executable.path, "build", "--plan"], in: site,
                               executable: URL(fileURLWithPath: "/usr/bin/setpriv"))
        XCTAssertEqual(readOnly.status, 0, readOnly.stderr)
        XCTAssertTrue(readOnly.stdout.contains("— template changed: base.mustache"), readOnly.stdout)
        XCTAssertFalse(readOnly.stdout.contains("first build"), "planned from the store's copy: \(readOnly.stdout.prefix(300))")
    }

    func testABuildWaitsWhileAnotherProcessBuildsTheSite() throws {
        let site = try exampleSite()
        XCTAssertEqual(try run(["build", "--site", site.path], in: site).status, 0)
        // The test holds the lock another build would hold.
        let lock = open(site.appendingPathComponent(".sitegen/lock").path, O_RDWR | O_CREAT, 0o644)
        XCTAssertEqual(flock(lock, LOCK_EX), 0)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["build", "--site", site.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: 1)
        XCTAssertTrue(process.isRunning, "the second build waits")
        close(lock)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(said.hasPrefix("waiting for another sitegen building this site to finish\n"), said)
    }

    func testNewPostWritesAPostIntoTheSiteAndSaysWhere() throws {
        let folder = try temporaryFolder()
        XCTAssertEqual(try run(["new", "blog"], in: folder).status, 0)
        let made = try run(["new", "post", "A title", "--site", "blog"], in: folder)
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertEqual(made.stdout, "Wrote content/posts/a-title.md\n")
        let text = try String(contentsOf: folder.appendingPathComponent("blog/content/posts/a-title.md"), encoding: .utf8)
        XCTAssertTrue(text.hasPrefix("---\ntitle: \"A title\"\ndate: 20"), text)
        let again = try run(["new", "post", "A title", "--site", "blog"], in: folder)
        XCTAssertEqual(again.status, 1)
        XCTAssertEqual(again.stderr, "error: content/posts/a-title.md is there already; pick another title, or edit that file\n")
        XCTAssertEqual(try run(["new", "post", "A title"], in: folder).stderr,
                       "error: no sitegen.yml in .: run sitegen new post in a site's folder, or pass it with --site\n")
    }

    /// `build --drafts` publishes drafts, marked, and says how many on standard error; `build` alone leaves
    /// them out again.
    func testBuildDraftsPublishesDraftsMarkedAndSaysHowMany() throws {
        let folder = try temporaryFolder()
        XCTAssertEqual(try run(["new", "blog"], in: folder).status, 0)
        let site = folder.appendingPathComponent("blog")
        try "---\ntitle: Next steps\ndate: 2026-02-01T09:00:00Z\ndraft: true\n---\nNot yet.\n"
            .write(to: site.appendingPathComponent("content/posts/next.md"), atomically: true, encoding: .utf8)
        let page = site.appendingPathComponent("output/posts/next/index.html")
        let plain = try run(["build"], in: site)
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertEqual(plain.stderr, "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: page.path))

        let drafts = try run(["build", "--drafts"], in: site)
        XCTAssertEqual(drafts.status, 0, drafts.stderr)
        XCTAssertEqual(drafts.stderr, "including 1 draft (--drafts): build without --drafts for the site you publish\n")
        XCTAssertTrue(drafts.stdout.hasPrefix("pages: "), drafts.stdout)
        XCTAssertTrue(try String(contentsOf: page, encoding: .utf8).contains(#"<h1>Next steps<span class="draft">Draft</span></h1>"#))
        let home = try String(contentsOf: site.appendingPathComponent("output/index.html"), encoding: .utf8)
        XCTAssertTrue(home.contains(#"<a href="/posts/next/">Next steps</a><span class="draft">Draft</span>"#), home)

        XCTAssertEqual(try run(["build"], in: site).status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: page.path), "a build without the flag takes the draft away")
        XCTAssertTrue(try run(["build", "--help"], in: site).stdout.contains("--drafts"))
    }

    func testNewMakesASiteThatBuildsAndNeverWritesOverOne() throws {
        let folder = try temporaryFolder()
        let made = try run(["new", "blog"], in: folder)
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertTrue(made.stdout.hasPrefix("Made a new site in blog: sitegen.yml, .gitignore, content/posts/welcome.md"), made.stdout)
        let built = try run(["build", "--site", "blog"], in: folder)
        XCTAssertEqual(built.status, 0, built.stderr)
        XCTAssertTrue(built.stdout.hasPrefix("pages: 11 rendered"), built.stdout)   // ten pages and static/favicon.svg
        let config = try Data(contentsOf: folder.appendingPathComponent("blog/sitegen.yml"))
        let again = try run(["new", "blog"], in: folder)
        XCTAssertEqual(again.status, 1)
        XCTAssertEqual(again.stderr, "error: \(folder.appendingPathComponent("blog").path) already has sitegen.yml, content/, Templates/; "
                       + "`sitegen new` makes a site only in a new folder or one without these\n")
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("blog/sitegen.yml")), config)
        // A folder without a site says how to make one.
        let empty = try run(["build"], in: folder)
        XCTAssertTrue(empty.stderr.contains("`sitegen new <folder>` makes a new site"), empty.stderr)
    }

    func testHelpDescribesTheBuildCommand() throws {
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: executable.path), "sitegen was not built at \(executable.path)")
        let result = try run(["build", "--help"], in: try temporaryFolder())
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.stdout.contains("USAGE: sitegen build [--site <folder>] [--output <folder>]"), result.stdout)
    }

    func testAMissingConfigurationFailsNamingTheFile() throws {
        let result = try run(["build"], in: try temporaryFolder())
        XCTAssertEqual(result.status, 2, "stopped: nothing published")
        XCTAssertTrue(result.stderr.hasPrefix("error: sitegen.yml: not found"), result.stderr)
    }

    func testAnInvalidConfigurationFailsNamingTheLine() throws {
        let folder = try temporaryFolder()
        try "title: x\ncollections:\n  a:\n    kind: spreadsheet\n".write(to: folder.appendingPathComponent("sitegen.yml"), atomically: true, encoding: .utf8)
        let result = try run(["build"], in: folder)
        XCTAssertEqual(result.status, 2, "stopped: nothing published")
        XCTAssertEqual(result.stderr, "error: sitegen.yml:4:11: unknown kind 'spreadsheet'; expected one of: csv, json, ndjson, feed, markdown, opml\n"
                       + "FAILED: the build stopped at the error above\n")
    }

    func testParsePrintsAFeedAsJSONAndFailsOnABrokenOne() throws {
        let folder = try temporaryFolder()
        try """
            <rss version="2.0"><channel><title>T</title>
            <item><guid isPermaLink="false">g1</guid><title>A &amp; B</title><pubDate>Thu, 01 Jan 2004 19:48:21 GMT</pubDate>
            <enclosure url="https://example.org/a.mp3" type="audio/mpeg" length="123"/></item>
            </channel></rss>
            """.write(to: folder.appendingPathComponent("feed.xml"), atomically: true, encoding: .utf8)
        let result = try run(["parse", "--json", "feed.xml"], in: folder)
        XCTAssertEqual(result.status, 0)
        var parser = JSONParser(bytes: Array(result.stdout.utf8))
        let report = try parser.parseDocument()
        XCTAssertEqual(report["kind"]?.string, "rss20")
        let item = try XCTUnwrap(report["items"]?.array?.first)
        XCTAssertEqual(item["title"]?.string, "A & B")
        XCTAssertEqual(item["published"]?.string, "2004-01-01T19:48:21Z")
        XCTAssertEqual(item["link"], .null)
        XCTAssertEqual(item["enclosures"]?.array?.first?["length"]?.scalarText, "123")

        // What a build loads: the first item of an id, no link that is not a web address, with their warnings.
        try """
            <rss version="2.0"><channel><title>T</title>
            <item><guid>same</guid><title>One</title><link>javascript:alert(1)</link></item>
            <item><guid>same</guid><title>Two</title></item>
            </channel></rss>
            """.write(to: folder.appendingPathComponent("twice.xml"), atomically: true, encoding: .utf8)
        let twice = try run(["parse", "--json", "twice.xml"], in: folder)
        var twiceParser = JSONParser(bytes: Array(twice.stdout.utf8))
        let loaded = try twiceParser.parseDocument()
        XCTAssertEqual(loaded["items"]?.array?.map { $0["title"]?.string }, ["One"])
        XCTAssertEqual(loaded["items"]?.array?.first?["link"], .null)
        XCTAssertEqual(loaded["warnings"]?.array?.count, 2, twice.stdout)

        try "<rss version=\"2.0\"><channel><item></channel></rss>".write(to: folder.appendingPathComponent("bad.xml"), atomically: true, encoding: .utf8)
        let bad = try run(["parse", "bad.xml"], in: folder)
        XCTAssertEqual(bad.status, 1)
        XCTAssertEqual(bad.stderr, "error: bad.xml:1:45: not well-formed XML: a closing tag does not match the element it closes\n")
        let folderGiven = try run(["parse", "."], in: folder)
        XCTAssertEqual(folderGiven.status, 1)
        XCTAssertEqual(folderGiven.stderr, "error: .: is a folder; pass one source file\n")
    }

    /// With a broken sitegen.yml, `parse` showed a CSV untyped as if no collection declared it, and said nothing.
    func testParseSaysAFileIsUntypedWhenTheConfigurationHasAnError() throws {
        let folder = try temporaryFolder()
        try "title: x\ncollections:\n  a:\n    kind: spreadsheet\n".write(to: folder.appendingPathComponent("sitegen.yml"), atomically: true, encoding: .utf8)
        try "cert,closed\n1,2024-02-30\n".write(to: folder.appendingPathComponent("z.csv"), atomically: true, encoding: .utf8)
        let result = try run(["parse", "z.csv"], in: folder)
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stdout, "z.csv: csv, 1 rows\n")
        XCTAssertEqual(result.stderr, "warning: z.csv: shown untyped (every value as text): sitegen.yml has an error: "
                       + "sitegen.yml:4:11: unknown kind 'spreadsheet'; expected one of: csv, json, ndjson, feed, markdown, opml\n")
    }

    /// `parse` read a collection's file without the site's `timeZone`, so it showed other datetimes than the
    /// build stores; `--dump` prints a row at a time now, and a field declared since the build shows as null.
    func testParseAndDumpShowWhatTheBuildStores() throws {
        let folder = try temporaryFolder()
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("Templates"), withIntermediateDirectories: true)
        try "x".write(to: folder.appendingPathComponent("Templates/list.mustache"), atomically: true, encoding: .utf8)
        let config = "title: T\ntimeZone: America/New_York\ncollections:\n  people:\n    kind: ndjson\n    sources: '*.ndjson'\n    key: id\n"
            + "    fields: {id: text, at: datetime}\n"
        try config.write(to: folder.appendingPathComponent("sitegen.yml"), atomically: true, encoding: .utf8)
        try "{\"id\": \"a\", \"at\": \"2024-03-10\"}\n{\"id\": \"b\", \"at\": \"2024-03-10T00:00:00Z\"}\n"
            .write(to: folder.appendingPathComponent("p.ndjson"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try run(["parse", "p.ndjson"], in: folder).stdout, "p.ndjson: ndjson, 2 rows (collection people)\n")
        var parser = JSONParser(bytes: Array(try run(["parse", "--json", "p.ndjson"], in: folder).stdout.utf8))
        XCTAssertEqual(try parser.parseDocument()["rows"]?.array?.map { $0["at"] }, [.string("2024-03-10T05:00:00Z"), .string("2024-03-10T00:00:00Z")])
        XCTAssertEqual(try run(["build"], in: folder).status, 0)
        try config.replacingOccurrences(of: "at: datetime}", with: "at: datetime, note: text}")
            .write(to: folder.appendingPathComponent("sitegen.yml"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try run(["sources", "--dump", "people"], in: folder).stdout, """
            [
              {
                "key": "a",
                "source": "p.ndjson",
                "line": 1,
                "id": "a",
                "at": "2024-03-10T05:00:00Z",
                "note": null
              },
              {
                "key": "b",
                "source": "p.ndjson",
                "line": 2,
                "id": "b",
                "at": "2024-03-10T00:00:00Z",
                "note": null
              }
            ]

            """)
    }

    /// `parse --json` held every row of a declared file before printing (768 MB for a 500,000-row CSV); it
    /// prints each as it is read, the same bytes, and a file that fails after its first rows ends with them
    /// and its errors.
    func testParseJSONPrintsADeclaredFileAsItIsReadWithTheSameBytes() throws {
        let folder = try temporaryFolder()
        try "title: T\ncollections:\n  people:\n    kind: csv\n    sources: '*.csv'\n    key: id\n    fields: {id: text, age: integer, note: text}\n"
            .write(to: folder.appendingPathComponent("sitegen.yml"), atomically: true, encoding: .utf8)
        // A column no field declares is a warning: the report's last part, after the rows.
        try "id,age,note,shoe\na,3,\"says \"\"hi\"\"\",9\nb,,,\nc,40,\"two\nlines\",1\n".write(to: folder.appendingPathComponent("good.csv"), atomically: true, encoding: .utf8)
        try "id,age,note\n".write(to: folder.appendingPathComponent("empty.csv"), atomically: true, encoding: .utf8)
        let inspector = SourceInspector(root: folder)
        for name in ["good.csv", "empty.csv"] {
            let printed = try run(["parse", "--json", name], in: folder)
            XCTAssertEqual(printed.status, 0, name)
            XCTAssertEqual(printed.stdout, inspector.parse(folder.appendingPathComponent(name).path).report.serialized() + "\n", name)
        }
        XCTAssertTrue(try run(["parse", "--json", "good.csv"], in: folder).stdout.contains("\"message\": \"columns not declared as fields are ignored: shoe\""))

        try "id,age,note\na,1,x\nb,2,y\nc,old,z\n".write(to: folder.appendingPathComponent("bad.csv"), atomically: true, encoding: .utf8)
        let bad = try run(["parse", "--json", "bad.csv"], in: folder)
        XCTAssertEqual(bad.status, 1)
        var parser = JSONParser(bytes: Array(bad.stdout.utf8))
        let report = try parser.parseDocument()
        XCTAssertEqual(report["rows"]?.array?.map { $0["key"] }, [.string("a"), .string("b")])
        XCTAssertEqual(report["errors"]?.array?.first?["line"], .integer(4))
        XCTAssertEqual(report["errors"]?.array?.first?["message"], .string("column 'age': expected an integer, found 'old'"))
    }

    func testSourcesListsEachCollectionsFilesAndDumpsRows() throws {
        let folder = try temporaryFolder()
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("Templates"), withIntermediateDirectories: true)
        try "x".write(to: folder.appendingPathComponent("Templates/list.mustache"), atomically: true, encoding: .utf8)
        try "title: T\ncollections:\n  people:\n    kind: ndjson\n    sources: '*.ndjson'\n    key: id\n    fields: {id: text, age: integer}\n"
            .write(to: folder.appendingPathComponent("sitegen.yml"), atomically: true, encoding: .utf8)
        try "{\"id\": \"a\", \"age\": 40}\n".write(to: folder.appendingPathComponent("p.ndjson"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try run(["sources"], in: folder).stdout, "people (ndjson): 0 rows\n  p.ndjson  not loaded  0 rows\n")
        XCTAssertEqual(try run(["build"], in: folder).status, 0)
        XCTAssertEqual(try run(["sources"], in: folder).stdout, "people (ndjson): 1 rows\n  p.ndjson  ok  1 rows\n")
        var parser = JSONParser(bytes: Array(try run(["sources", "--dump", "people"], in: folder).stdout.utf8))
        XCTAssertEqual(try parser.parseDocument(), .array([.object([
            ("key", .string("a")), ("source", .string("p.ndjson")), ("line", .integer(1)), ("id", .string("a")), ("age", .integer(40)),
        ])]))
    }
}
