import SiteBuild
import XCTest

final class SiteConfigTests: XCTestCase {
    private let valid = """
        title: Test
        collections:
          banks:
            kind: csv
            sources: data/*.csv
            key: cert
            fields:
              cert: integer
              name: text
            detail:
              path: /banks/{key}/
        listings:
          home:
            from: banks
            sort: [-cert]
            path: /
        """

    private func error(_ yaml: String) -> ConfigError? {
        do {
            _ = try SiteConfig(yaml: yaml, file: "sitegen.yml")
            return nil
        } catch {
            return error
        }
    }

    /// A site's time zone is an IANA name; a change is a setting every page shows.
    func testTimeZoneIsAnIANANameAndASiteSetting() throws {
        let paris = try SiteConfig(yaml: "timeZone: Europe/Paris\n" + valid, file: "sitegen.yml")
        XCTAssertEqual(paris.timeZone?.identifier, "Europe/Paris")
        XCTAssertEqual(paris.templateSite.timeZone?.identifier, "Europe/Paris")
        XCTAssertNotEqual(paris.settingsFingerprint, try SiteConfig(yaml: valid, file: "sitegen.yml").settingsFingerprint)
        XCTAssertEqual(error("timeZone: CET+1\n" + valid)?.description,
                       "sitegen.yml:1:11: timeZone: 'CET+1' is not a time zone; write an IANA name such as Europe/Paris or America/New_York")
    }

    func testAValidConfigurationReadsCollectionsAndListings() throws {
        let config = try SiteConfig(yaml: valid, file: "sitegen.yml")
        XCTAssertEqual(config.collections.map(\.name), ["banks"])
        XCTAssertEqual(config.listings.first?.pageSize, 20)
        XCTAssertEqual(config.listings.first?.sort.first?.field, "cert")
        XCTAssertEqual(config.listings.first?.sort.first?.ascending, false)
        XCTAssertEqual(config.basePath, "/")
    }

    func testAMarkdownCollectionsPagesShowItsTextUnlessToldOtherwise() throws {
        func body(_ detail: String) throws -> String? {
            let yaml = "title: T\ncollections:\n  notes: {kind: markdown, sources: n/*.md, fields: {lede: text}, detail: {path: '/{key}/'\(detail)}}\n"
            return try SiteConfig(yaml: yaml, file: "sitegen.yml").collections[0].detail?.bodyField
        }
        XCTAssertEqual(try body(""), "body", "Hugo and Jekyll show a Markdown file's text on its page")
        XCTAssertEqual(try body(", body: lede"), "lede")
    }

    func testStaticFoldersAreInsideTheSiteAndNotWhereSitegenWrites() throws {
        XCTAssertEqual(try SiteConfig(yaml: valid, file: "sitegen.yml").staticFolders, ["static"], "Hugo's folder by default")
        XCTAssertEqual(try SiteConfig(yaml: "static: [assets, content/img]\n" + valid, file: "sitegen.yml").staticFolders, ["assets", "content/img"])
        XCTAssertEqual(error("static: ../shared\n" + valid)?.reason, "static: '../shared' must be a folder inside the site, such as static")
        XCTAssertEqual(error("static: output/img\n" + valid)?.reason,
                       "static: 'output/img' is where sitegen writes; name the folder of files to publish, such as static")
        XCTAssertEqual(error("static: .\n" + valid)?.line, 1)
    }

    func testInvalidYAMLNamesTheLineAndColumn() {
        let error = error("title: Test\ncollections:\n  banks: [oops\n")
        XCTAssertEqual(error?.file, "sitegen.yml")
        XCTAssertEqual(error?.line, 4)
        XCTAssertTrue(error?.reason.hasPrefix("invalid YAML") == true, error?.reason ?? "")
    }

    func testAnUnknownKeyNamesItsLineAndWhatIsAllowed() {
        let error = error(valid.replacingOccurrences(of: "    key: cert", with: "    key: cert\n    keys: cert"))
        XCTAssertEqual(error?.line, 7)
        XCTAssertEqual(error?.column, 5)
        XCTAssertEqual(error?.reason, "unknown key 'keys' in collection 'banks'; expected one of: detail, fields, keep, key, kind, refresh, relationships, sources")
    }

    func testAWrongTypeSaysWhatWasExpected() {
        let error = error(valid.replacingOccurrences(of: "name: text", with: "name: txt"))
        XCTAssertEqual(error?.line, 9)
        XCTAssertEqual(error?.reason, "unknown type 'txt' for 'name'; expected one of: text, integer, real, date, datetime, bool, list")
    }

    func testSortingOnAnUnknownFieldIsAnError() {
        let error = error(valid.replacingOccurrences(of: "[-cert]", with: "[-closed]"))
        XCTAssertEqual(error?.line, 15)
        XCTAssertEqual(error?.reason, "cannot sort on 'closed': it is not a field of 'banks'")
    }

    func testADuplicateKeyNamesTheLineOfItsSecondDefinition() {
        let error = error(valid.replacingOccurrences(of: "    key: cert", with: "    key: cert\n    key: name"))
        XCTAssertEqual(error?.line, 7)
        XCTAssertEqual(error?.reason, "'key' appears twice in the same mapping; each key may appear once")
    }

    func testMissingTitleAndEmptyFileAreErrors() {
        XCTAssertEqual(error("collections: {}\n")?.reason.hasPrefix("missing 'title'"), true)
        XCTAssertEqual(error("")?.reason, "the file is empty; expected at least 'title' and 'collections'")
    }

    func testFeedsNeedAKnownFormatAnAbsoluteBaseURLAndADate() {
        let absolute = valid.replacingOccurrences(of: "title: Test", with: "title: Test\nbaseURL: https://x.org/")
        XCTAssertEqual(error(absolute + "\n    feeds: [atom, mastodon]")?.description,
                       "sitegen.yml:18:12: unknown feed format 'mastodon'; expected atom, rss or json")
        XCTAssertEqual(error(valid + "\n    feeds: [atom]")?.description,
                       "sitegen.yml:17:12: feeds need an absolute baseURL (such as https://example.org/): feed readers need full links")
        XCTAssertEqual(error(absolute + "\n    feeds: [atom]")?.description,
                       "sitegen.yml:18:12: a feed dates its entries: sort listing 'home' by a date field first, or name one with feedDate")
        XCTAssertEqual(error(absolute + "\n    feeds: [atom]\n    feedDate: name")?.description,
                       "sitegen.yml:19:15: feedDate 'name' is not a date or datetime field of 'banks'")
    }

    /// `https://news.example.com/a b/` was taken (Foundation encodes it) and printed as written in the
    /// sitemap, feeds and pages, which then held no URL.
    func testABaseURLWithASpaceOrALetterOutsideASCIIIsAnErrorAtItsLine() throws {
        func with(_ url: String) -> String { valid.replacingOccurrences(of: "title: Test", with: "title: Test\nbaseURL: \"\(url)\"") }
        XCTAssertEqual(error(with("https://news.example.com/a b/"))?.description,
                       "sitegen.yml:2:10: baseURL must be a URL, and it has a space: write it percent-encoded (%20)")
        XCTAssertEqual(error(with("http://news.example.com/Ärchiv/"))?.description,
                       "sitegen.yml:2:10: baseURL must be a URL, and it has 'Ä': write it percent-encoded (%C3%84)")
        XCTAssertEqual(try SiteConfig(yaml: with("http://news.example.com/%C3%84rchiv/"), file: "sitegen.yml").baseURL, "http://news.example.com/%C3%84rchiv/")
        XCTAssertEqual(error(with("https://bücher.example/"))?.description,
                       "sitegen.yml:2:10: baseURL must be a URL, and it has 'ü' in its host name: write the name in its ASCII form (punycode, xn--…)")
    }

    /// A baseURL that is neither a full URL nor a path from the host's root made every link below the home
    /// page relative to its page, and one with a query or fragment put page addresses inside them.
    func testABaseURLIsAFullURLOrAPathFromTheRoot() throws {
        func with(_ url: String) -> String { valid.replacingOccurrences(of: "title: Test", with: "title: Test\nbaseURL: \"\(url)\"") }
        XCTAssertEqual(error(with("user.github.io/project"))?.description, "sitegen.yml:2:10: baseURL 'user.github.io/project/' is neither a "
            + "full URL (https://example.org/) nor a path from the host's root (/project/), so every link would be relative to its page: "
            + "write https://user.github.io/project/")
        XCTAssertTrue(error(with("project"))?.description.hasSuffix("write /project/") == true)
        XCTAssertTrue(error(with("./"))?.description.hasSuffix("write /") == true)
        XCTAssertTrue(error(with("../site/"))?.description.hasSuffix("write /site/") == true)
        XCTAssertTrue(error(with("mailto:a@b.org"))?.description.hasSuffix("write a full URL such as https://example.org/") == true)
        XCTAssertTrue(error(with("https:/example.org/"))?.description.hasSuffix("write a full URL such as https://example.org/") == true)
        XCTAssertTrue(error(with("localhost:4000"))?.description.hasSuffix("write https://localhost:4000/") == true)
        XCTAssertEqual(error(with("//cdn.example.org/p/"))?.description, "sitegen.yml:2:10: baseURL '//cdn.example.org/p/' has no scheme: write https://cdn.example.org/p/")
        XCTAssertEqual(error(with("https://e.org/p/?x=1"))?.description,
                       "sitegen.yml:2:10: baseURL cannot have a query ('?x=1'): every address on the site is written after it")
        XCTAssertTrue(error(with("https://e.org/#top"))?.description.contains("cannot have a fragment ('#top')") == true)
        for good in ["https://user.github.io/project/", "http://localhost:8080/", "/project/", "/", "file:///srv/site/", "https://e.org/a%20b/"] {
            XCTAssertNoThrow(try SiteConfig(yaml: with(good), file: "sitegen.yml"), good)
        }
        XCTAssertEqual(try SiteConfig(yaml: with("https://e.org/a%20b/"), file: "sitegen.yml").basePath, "/a%20b/", "links keep the escape")
    }

    func testSectionsLeadTheSortAndNeedTheirPathSegment() throws {
        XCTAssertTrue(valid.hasSuffix("    path: /"))
        func listing(_ tail: String) -> String { String(valid.dropLast("path: /".count)) + tail }
        let sectioned = listing("path: /by-name/{section}/page/{page}/\n    section: name\n    sections: [Zed, {name: Alpha, title: The first}]")
        let config = try SiteConfig(yaml: sectioned, file: "sitegen.yml").listings[0]
        XCTAssertEqual(config.sort.map(\.field), ["name", "cert"])
        XCTAssertEqual(config.path, "/by-name/{section}/")
        XCTAssertEqual(config.indexPath, "/by-name/")
        XCTAssertEqual(config.sectionDeclarations.map(\.name), ["Zed", "Alpha"])
        XCTAssertEqual(config.sectionDeclarations.map(\.displayTitle), [nil, "The first"])
        XCTAssertEqual(error(listing("path: /\n    section: name"))?.description,
                       "sitegen.yml:14:5: listing 'home' has sections, so its path needs a {section} segment, e.g. /banks/{section}/")
        XCTAssertEqual(error(listing("path: /{section}/"))?.description,
                       "sitegen.yml:14:5: listing 'home' has {section} in its path but no 'section' field to fill it")
        XCTAssertEqual(error(listing("path: /{section}/\n    section: city"))?.description,
                       "sitegen.yml:17:14: cannot make sections of 'city': it is not a field of 'banks'")
    }

    func testAMissingFileIsNamed() {
        XCTAssertThrowsError(try SiteConfig(contentsOf: URL(fileURLWithPath: "/nonexistent/sitegen.yml"), displayName: "sitegen.yml")) { error in
            XCTAssertTrue((error as? ConfigError)?.description.hasPrefix("sitegen.yml: not found") == true, "\(error)")
        }
    }

    /// An alias bomb in `params:` (nine levels of nine aliases, 387 million values) grew past 11 GB; it is
    /// an error at the line whose aliases repeat too much, at once, while a few aliases still read.
    func testAnAliasBombInParamsFailsAtOnceAtItsLine() throws {
        var bomb = "params:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for (previous, name) in zip("abcdefgh", "bcdefghi") {
            bomb += "  \(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ", ") + "]\n"
        }
        let start = Date()
        let found = error(bomb + valid)
        XCTAssertLessThan(Date().timeIntervalSince(start), 1, "refused without expanding the aliases")
        XCTAssertEqual(found?.description, "sitegen.yml:7:10: the alias *e takes what aliases repeat past 100000 values "
                       + "(an alias bomb?); write the values out, or alias fewer of them")
        // An alias as a mapping's key: Yams hashed the whole expansion to look for a duplicate.
        XCTAssertEqual(error(bomb + "  ? *i\n  : x\n" + valid)?.description.hasPrefix("sitegen.yml:7:10: the alias *e"), true)

        let few = try SiteConfig(yaml: "params:\n  author: &me Ann\n  editors: [*me, Bob]\n  team: &t {lead: *me}\n  again: *t\n" + valid,
                                 file: "sitegen.yml")
        XCTAssertEqual(few.params["editors"], .list([.text("Ann"), .text("Bob")]))
        XCTAssertEqual(few.params["again"], .mapping(["lead": .text("Ann")]))
    }
}
