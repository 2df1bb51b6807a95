import Foundation
import ResultsController
import SiteRender
import SiteSources
import SiteStore

extension PageRenderer {
    /// change time are the last build's is kept unread. Hidden files and folders (`.DS_Store`,
    /// `.git`) are left out, except `.well-known/` and `.htaccess`, which servers read; links are followed.
    func renderStaticFiles(root: URL) throws -> [SourceError] {
        var warnings: [SourceError] = []
        var published = Set<String>()
        for folder in config.staticFolders {
            let base = root.appendingPathComponent(folder, isDirectory: true).resolvingSymlinksInPath()
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: base.path, isDirectory: &isFolder), isFolder.boolValue else {
                // A folder sitegen.yml names and that is not there is a checkout or a mount missing: the files
                // it published stay, rather than being deleted as if removed.
                if config.staticFoldersNamed {
                    throw BuildError.config(ConfigError(file: config.file, at: config.staticMark,
                                                        reason: "static folder '\(folder)' is not there"))
                }
                continue
            }
            // An output folder in a static folder was refused before the build began (`checkOutputFolder`).
            var found: [(path: String, url: URL)] = []
            try collectFiles(in: base, relative: "", label: folder, into: &found, warnings: &warnings) { name, _, _ in
                // GitHub Pages publishes a branch through Jekyll unless it holds `.nojekyll`.
                !name.hasPrefix(".") || name == ".well-known" || name == ".htaccess" || name == ".nojekyll"
            }
            // In path order, so that which files are planned first does not depend on the file system's order.
            for file in found.sorted(by: { $0.path < $1.path }) where published.insert(file.path).inserted {
                try publishAsItIs(file.url, at: file.path, owner: "static file \(folder)/\(file.path)")
            }
        }
        return warnings
    }

    /// Publishes the file at `url` as it is at `path` of the output folder, planned as a page owned by
    /// `owner`: kept unread while its size and change time are the last build's.
    func publishAsItIs(_ url: URL, at path: String, owner: String) throws {
        // `stat`, which follows a link: its target's size and time are what change when the file does.
        var status = stat()
        guard stat(url.path, &status) == 0 else { return }
        var data = Fingerprint()
        data.combine(Int64(status.st_size))
        // The change time, which setting the modification time back (`touch -d`) moves forward too.
        data.combine(Int64(status.changeTime.tv_sec))
        data.combine(Int64(status.changeTime.tv_nsec))
        let inputs = PageInputs(settings: 0, template: 0, data: data.signed)
        let record = PageRecord(inputs: nil, hash: 0, owner: owner, key: "")
        guard plan.needsRender([path], inputs: inputs, about: record, explain: { "the file changed" }) else { return }
        let bytes: Data
        do {
            bytes = try Data(contentsOf: url)
        } catch {
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: url.path,
                                                          NSLocalizedDescriptionKey: "cannot be read: \(error.localizedDescription)"])
        }
        try writer.write(bytes, to: path)
    }
    /// Writes a redirect page at each of a record's `aliases` (a `list` field of that name, Hugo's front
    /// matter key), pointing at its detail page: a site moved to sitegen keeps its old addresses
    /// (`/2024/01/15/hello.html`, `/blog/hello/`) working. Planned as pages, after the detail pages: an
    /// alias at a page's address is an error naming both, and an alias dropped is deleted.
    func renderAliases() throws -> [SourceError] {
        var problems: [SourceError] = []
        for collection in config.collections where collection.detail != nil
            && collection.fields.contains(where: { $0.name == "aliases" && $0.type == .list }) {
            let presenter = RecordPresenter(collection: collection, config: config)
            let table = collection.name, join = CollectionSchema.listTable(table, "aliases")
            var targets: [Int64: (key: String, source: String, url: String)] = [:]
            for row in try database.fetchAll("SELECT * FROM \(quoteIdentifier(table)) WHERE _id IN (SELECT record_id FROM \(quoteIdentifier(join)))") {
                guard let id = row["_id"]?.int64Value, let path = presenter.detailPath(row) else { continue }
                targets[id] = (row["_key"]?.stringValue ?? "", row["_source"]?.stringValue ?? "", reportLink(presenter.url(path)))
            }
            // By alias, then by key: of two records with one alias the first key keeps it, whatever ids the
            // rows were given, as a clean build decides.
            let items = try database.fetchAll("SELECT record_id, value FROM \(quoteIdentifier(join))").compactMap { item in
                item["record_id"]?.int64Value.flatMap { id in targets[id].map { ($0, item["value"]?.stringValue ?? "") } }
            }.sorted { ($0.1, $0.0.key) < ($1.1, $1.0.key) }
            for (target, alias) in items {
                guard let file = Self.aliasFile(alias) else {
                    let shown = alias.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
                    problems.append(SourceError(file: target.source, reason: "alias '\(shown)' is not a path on the site, such as /2024/01/hello.html or /old/hello/"))
                    continue
                }
                if RenderPlan.isSiteFile(file) {
                    problems.append(SourceError(file: target.source, reason: "alias '\(alias)' would replace the site's own /\(file)"))
                    continue
                }
                if let long = file.split(separator: "/").first(where: { $0.utf8.count > Self.longestName }) {
                    problems.append(SourceError(file: target.source, reason:
                        "alias '\(alias)' has a name of \(long.utf8.count) bytes, longer than the \(Self.longestName) a file system takes"))
                    continue
                }
                let inputs = PageInputs(settings: config.settingsFingerprint, template: 0, data: Fingerprint.of(["alias", target.url]))
                let record = PageRecord(inputs: nil, hash: 0, owner: "alias '\(alias)' of record '\(target.key)'", key: "")
                guard plan.needsRedirect(file, inputs: inputs, about: record, explain: { "its record's page moved" }) else { continue }
                try writer.write(Self.redirectPage(to: target.url), to: file)
            }
        }
        return problems
    }

    /// The file an alias is published as: `old/hello/index.html` for `/old/hello/` (or `/old/hello`), the
    /// file itself for `/2024/01/hello.html`; nil for what is no path on the site (`..`, a query, a web address).
    /// An address copied from a browser or an export is percent-encoded (`/2019/%C3%A9t%C3%A9.html`): servers
    /// decode a request before they look for its file, so the file is named by the decoded path.
    static func aliasFile(_ written: String) -> String? {
        guard let alias = written.contains("%") ? written.removingPercentEncoding : written else { return nil }
        let parts = alias.split(separator: "/")
        // A control character (NUL above all: a C path ends there, so `/index.html\0/` would be the home page).
        guard !parts.isEmpty, !alias.contains("://"), !alias.contains(where: { "?#\\".contains($0) || $0.isNewline }),
              !alias.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
              !parts.contains(where: { $0 == "." || $0 == ".." || $0.hasPrefix(".") }) else { return nil }
        let path = parts.joined(separator: "/")
        let last = parts.last!.lowercased()
        return !alias.hasSuffix("/") && (last.hasSuffix(".html") || last.hasSuffix(".htm")) ? path : path + "/index.html"
    }

    /// The longest file or folder name, in bytes, that Linux's and macOS's file systems take.
    static let longestName = 255

    /// A page that sends browsers and search engines to `url`, as Hugo writes an alias.
    static func redirectPage(to url: String) -> String {
        let escaped = escapeXML(url)
        return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>\(escaped)</title>\n"
            + "<link rel=\"canonical\" href=\"\(escaped)\">\n<meta name=\"robots\" content=\"noindex\">\n"
            + "<meta http-equiv=\"refresh\" content=\"0; url=\(escaped)\">\n</head>\n"
            + "<body><p>This page has moved to <a href=\"\(escaped)\">\(escaped)</a>.</p></body>\n</html>\n"
    }


    /// Publishes the files beside each Markdown page written as a bundle (`posts/hello/index.md` with its
    /// `cat.png`) in the page's folder (`posts/hello/cat.png`), as Hugo publishes a leaf bundle's
    /// resources: `![cat](cat.png)` then shows. Its folder's files at any depth count, but not Markdown
    /// files (pages, drafts), hidden ones, a collection's sources (a CSV beside it) or another bundle's.
    func renderBundleResources(root: URL) throws -> [SourceError] {
        var warnings: [SourceError] = []
        let siteRoot = Self.realPath(root.path) ?? root.standardizedFileURL.path
        for collection in config.collections where collection.kind == .markdown && collection.detail != nil {
            let presenter = RecordPresenter(collection: collection, config: config)
            // The bundles' sources from an index of them alone, then their rows by the index on `_source`: a
            // scan of every source for its name was a fifth of a watch's build at 100,000 records.
            let table = quoteIdentifier(collection.name)
            let rowOfSource = try database.cachedStatement("SELECT * FROM \(table) WHERE _source = ?")
            let bundles = try SiteStore.bundleSources(ofCollection: collection.name, in: database).flatMap {
                try rowOfSource.fetchAll([.text($0)])
            }
            for row in bundles {
                guard let source = row["_source"]?.stringValue, let path = presenter.detailPath(row) else { continue }
                // `root` may have no trailing slash, so a relative source is appended, not resolved against it.
                let folder = (source.hasPrefix("/") ? URL(fileURLWithPath: source) : root.appendingPathComponent(source))
                    .deletingLastPathComponent().standardizedFileURL
                let sourceFolder = (source as NSString).deletingLastPathComponent
                var found: [(path: String, url: URL)] = []
                try collectFiles(in: folder, relative: "", label: sourceFolder, into: &found, warnings: &warnings, within: siteRoot) { name, url, isFolder in
                    guard !name.hasPrefix(".") else { return false }
                    if isFolder {
                        let inner = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
                        return !inner.contains("index.md") && !inner.contains("index.markdown")
                    }
                    return !["md", "markdown"].contains((name as NSString).pathExtension.lowercased())
                }
                let pageFolder = String(path.drop { $0 == "/" })
                for file in found.sorted(by: { $0.path < $1.path }) {
                    // A file some collection reads (a CSV beside the post) is a source, not a resource.
                    let relative = sourceFolder + "/" + file.path
                    guard try database.fetchAll("SELECT 1 FROM sitegen_sources WHERE path = ?", [.text(relative)]).isEmpty else { continue }
                    try publishAsItIs(file.url, at: pageFolder + file.path, owner: "file \(relative)")
                }
            }
        }
        return warnings
    }

    /// The files under `folder` (`relative` to the folder published, which `label` names in warnings) whose
    /// names, and whose folders' names, `keep` accepts, following links; a link that leads to nothing is a warning.
    func collectFiles(in folder: URL, relative: String, label: String, into found: inout [(path: String, url: URL)],
                              warnings: inout [SourceError], within confinement: String? = nil,
                              keep: (String, URL, Bool) -> Bool) throws {
        let output = Self.realPath(writer.root.path) ?? writer.root.standardizedFileURL.path
        var walk = FolderWalk(confinement: confinement, output: output, ancestors: [])
        if let identity = FolderIdentity(of: folder.path) { walk.ancestors.insert(identity) }
        try collectFiles(in: folder, relative: relative, label: label, into: &found, warnings: &warnings, walk: walk, keep: keep)
    }

    /// What a walk of `collectFiles` carries down: where links may lead, and the folders it is in.
    struct FolderWalk {
        /// The folder links may not lead out of (a bundle's site), by its real path; nil for none.
        let confinement: String?
        /// The output folder's real path: a folder that holds it, or is in it, would publish the output again.
        let output: String
        /// The folders above, by device and inode: a link to one of them (`a -> .`) would publish the folder
        /// again inside itself, and two such links without end.
        var ancestors: Set<FolderIdentity>
    }

    func collectFiles(in folder: URL, relative: String, label: String, into found: inout [(path: String, url: URL)],
                              warnings: inout [SourceError], walk: FolderWalk, keep: (String, URL, Bool) -> Bool) throws {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch {
            // Gone since it was found: nothing to publish. Taken for empty, a folder that cannot be listed (its
            // permissions) would have its files deleted from the output: the build stops instead, as it does
            // for a file that cannot be read.
            // Foundation's error keeps no errno on Linux: the folder is opened again for it.
            guard let listing = opendir(folder.path) else {
                if errno == ENOENT || errno == ENOTDIR { return }
                throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: folder.path,
                                                              NSLocalizedDescriptionKey: "cannot be listed: " + String(cString: strerror(errno))])
            }
            closedir(listing)
            throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: folder.path,
                                                          NSLocalizedDescriptionKey: "cannot be listed: \(error.localizedDescription)"])
        }
        let here = Self.realPath(folder.path) ?? folder.path
        for name in names.sorted() where !EditorScratch.isScratch(name) {
            let url = folder.appendingPathComponent(name)
            let path = relative.isEmpty ? name : relative + "/" + name
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
                // Foundation lists a name that is not UTF-8 with replacement characters, under which it is not found.
                let reason = name.contains("\u{FFFD}") && !Self.isLink(url) ? "has a name that is not UTF-8 text; rename it" : "is a link to nothing"
                if !name.hasPrefix(".") { warnings.append(SourceError(file: label + "/" + path, reason: reason + "; left out")) }
                continue
            }
            guard keep(name, url, isFolder.boolValue) else { continue }
            // A page bundle is someone's content: a link in it may not publish what is outside the site
            // (`notes.txt -> /etc/passwd`, a key file).
            if let confinement = walk.confinement, let target = Self.linkTarget(url), !Self.path(target, isIn: confinement) {
                warnings.append(SourceError(file: label + "/" + path, reason: "is a link to \(target), outside the site; left out"))
                continue
            }
            guard isFolder.boolValue else {
                found.append((path, url))
                continue
            }
            let real = Self.realPath(url.path) ?? url.path
            guard let identity = FolderIdentity(of: url.path), !walk.ancestors.contains(identity), !Self.path(here, isIn: real) else {
                warnings.append(SourceError(file: label + "/" + path, reason: "is a link to a folder it is in; left out"))
                continue
            }
            // `static/up -> ..` reached the output folder, and each build published the last one's output again.
            if Self.path(walk.output, isIn: real) || Self.path(real, isIn: walk.output) {
                warnings.append(SourceError(file: label + "/" + path, reason: "is a link to a folder that holds the output folder, or is in it; left out"))
                continue
            }
            var inner = walk
            inner.ancestors.insert(identity)
            try collectFiles(in: url, relative: path, label: label, into: &found, warnings: &warnings, walk: inner, keep: keep)
        }
    }

    /// Whether `path` is `folder` or inside it (both real paths).
    static func path(_ path: String, isIn folder: String) -> Bool {
        path == folder || path.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/")
    }

    /// `path` with every link resolved (`realpath`); nil when nothing is there.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether there is a symbolic link at `url` (whatever it leads to).
    static func isLink(_ url: URL) -> Bool {
        var status = stat()
        return lstat(url.path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
    }

    /// Where the link at `url` leads in the end, resolved whole; nil when `url` is no link.
    static func linkTarget(_ url: URL) -> String? {
        guard isLink(url) else { return nil }
        return realPath(url.path)
    }

    /// Writes the files every site has besides its pages: `404.html` (when the templates have a `404`),
    /// `robots.txt`, and `sitemap.xml` listing every page written so far, which needs an absolute `baseURL`.
    func renderSiteFiles(navigation: [[String: Any]]) throws {
        // A static file of the same name is the site's own choice (a robots.txt that disallows a folder): it wins.
        if templates.names.contains("404"), plan.claimant(of: ["404.html"]) == nil {
            let inputs = PageInputs(settings: siteFingerprint, template: templateFingerprint("404"), data: 0)
            if plan.needsRender(["404.html"], inputs: inputs, about: PageRecord(inputs: nil, hash: 0), explain: { "" }) {
                let context: [String: Any] = ["site": site, "nav": navigation, "pageTitle": "Page not found"]
                try writer.write(templates.render("404", context: context, knownNames: config.templateNames,
                                                    recordNames: config.recordFieldNames, page: .notFound,
                                                    site: config.templateSite), to: "404.html")
            }
        }
        let absolute = URL(string: config.baseURL)?.scheme != nil
        var robots = "User-agent: *\nAllow: /\n"
        if absolute, plan.claimant(of: ["sitemap.xml"]) == nil {
            robots += "\nSitemap: \(config.baseURL)sitemap.xml\n"
            try renderSitemaps()
        }
        let inputs = PageInputs(settings: config.settingsFingerprint, template: 0, data: 0)
        if plan.claimant(of: ["robots.txt"]) == nil,
           plan.needsRender(["robots.txt"], inputs: inputs, about: PageRecord(inputs: nil, hash: 0), explain: { "" }) {
            try writer.write(robots, to: "robots.txt")
        }
    }
}

/// A folder as the file system knows it (device and inode), whatever path or link led to it.
struct FolderIdentity: Hashable {
    let device: UInt64
    let inode: UInt64

    /// The folder at `path` (links followed); nil when nothing is there.
    init?(of path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}
