import Foundation
import SiteRender
import SiteStore

extension PageRenderer {
    /// Writes the sitemap: `sitemap.xml` lists every page, or, past `pagesPerSitemap` pages (the sitemaps
    /// protocol allows 50,000 a file), is an index of `sitemap-1.xml`, `sitemap-2.xml`…, which list the
    /// pages that many at a time in path order. They change only when pages come or go: listing them all
    /// is not redone for edits. When pages came or went, the pages are read once, one at a time, never listed
    /// whole: each file's text is made with its fingerprint and written when the fingerprint is not the last
    /// build's.
    func renderSitemaps() throws {
        // The limit splits the pages into files: a different limit, different files from the same pages.
        var settings = Fingerprint()
        settings.combine(config.settingsFingerprint)
        settings.combine(pagesPerSitemap)
        // Plans the file at `path`, listing pages of fingerprint `data`; says whether it is to be written.
        let plans = { (path: String, data: Int64) in
            plan.needsRender([path], inputs: PageInputs(settings: settings.signed, template: 0, data: data),
                             about: PageRecord(inputs: nil, hash: 0), explain: { "pages added or removed" })
        }
        // The same pages as the last build, in files of the same form: their fingerprints are the last build's.
        guard let (pageCount, fingerprints) = lastSitemapFingerprints() else { return try streamSitemaps(plans) }
        let changed: Set<String>
        if pageCount > pagesPerSitemap {
            let parts = fingerprints.indices.map { "sitemap-\($0 + 1).xml" }
            changed = Set(parts.indices.filter { plans(parts[$0], fingerprints[$0]) }.map { parts[$0] })
            try writeSitemapIndex(parts, plans)
        } else {
            changed = plans("sitemap.xml", fingerprints.first ?? Fingerprint().signed) ? ["sitemap.xml"] : []
        }
        // Planned already: the pages are read again only to write the files that changed (settings did).
        if !changed.isEmpty { try streamSitemaps { path, _ in changed.contains(path) } }
    }

    /// How many pages the sitemap lists and the fingerprints of its files as the last build recorded them,
    /// when this build has the same pages and the last build wrote those files; nil otherwise.
    private func lastSitemapFingerprints() -> (pages: Int, fingerprints: [Int64])? {
        guard !plan.pageSetChanged() else { return nil }
        let pageCount = plan.currentPageCount()
        let partCount = pageCount > pagesPerSitemap ? (pageCount + pagesPerSitemap - 1) / pagesPerSitemap : 0
        guard plan.previous("sitemap.xml")?.inputs != nil, plan.previous("sitemap-\(partCount + 1).xml") == nil else { return nil }
        let paths = partCount == 0 ? ["sitemap.xml"] : (0..<partCount).map { "sitemap-\($0 + 1).xml" }
        var fingerprints: [Int64] = []
        for path in paths {
            guard let inputs = plan.previous(path)?.inputs else { return nil }
            fingerprints.append(inputs.data)
        }
        return (pageCount, fingerprints)
    }

    /// Plans the index of the files `parts`, and writes it when they are not the last build's.
    private func writeSitemapIndex(_ parts: [String], _ plans: (String, Int64) -> Bool) throws {
        guard plans("sitemap.xml", Fingerprint.of(["sitemapindex"] + parts)) else { return }
        let base = escapeXML(config.baseURL)
        var index = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
        for part in parts { index += "<sitemap><loc>" + base + part + "</loc></sitemap>\n" }
        try writer.write(index + "</sitemapindex>\n", to: "sitemap.xml")
    }

    /// Plans and writes the sitemap's files in one reading of the pages: each file's text is made as its
    /// fingerprint is, and written, when `plans` says so, once the next file's first page shows it is a
    /// part, or once the pages end. One file's text is held at a time.
    private func streamSitemaps(_ plans: (String, Int64) -> Bool) throws {
        let base = Array(escapeXML(config.baseURL).utf8)
        var text = Self.urlsetStart
        var fingerprint = Fingerprint()
        var count = 0
        var parts: [String] = []
        // The file of the pages since the last one, planned as `path`, and written unless the last build's lists them.
        func finish(as path: String) throws {
            if plans(path, fingerprint.signed) {
                text += Self.urlsetEnd
                try writer.write(Data(text), to: path)
            }
            text.removeAll(keepingCapacity: true)
            text += Self.urlsetStart
            fingerprint = Fingerprint()
        }
        try plan.forEachCurrentPagePath { page in
            if count > 0 && count % pagesPerSitemap == 0 {
                parts.append("sitemap-\(parts.count + 1).xml")
                try finish(as: parts[parts.count - 1])
            }
            fingerprint.combine(bytes: page)
            count += 1
            Self.appendURL(of: page, base: base, to: &text)
        }
        guard !parts.isEmpty else { return try finish(as: "sitemap.xml") }
        parts.append("sitemap-\(parts.count + 1).xml")
        try finish(as: parts[parts.count - 1])
        try writeSitemapIndex(parts, plans)
    }

    /// Appends the `<url>` line of the page whose path's UTF-8 bytes are `page` (`…/index.html`) to `text`.
    static func appendURL(of page: UnsafeRawBufferPointer, base: [UInt8], to text: inout [UInt8]) {
        let path = UnsafeRawBufferPointer(rebasing: page.dropLast("index.html".utf8.count))
        text += Self.openLocation
        text += base
        // Page paths are nearly always slugs with nothing to escape; escaping each cost a tenth of the main thread.
        if path.allSatisfy(Self.isPlainURLByte) {
            text += path
        } else {
            // A sitemap's addresses are URLs: `/tags/東京/` goes as `/tags/%E6%9D%B1%E4%BA%AC/`.
            let url = Self.urlPath(Substring(String(decoding: path, as: UTF8.self)))
            // Percent-encoding leaves `&` and `'`, which XML escapes.
            text += (url.utf8.contains { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "'") } ? escapeXML(url) : url).utf8
        }
        text += Self.closeLocation
    }

    private static let urlsetStart = Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n".utf8)
    private static let urlsetEnd = Array("</urlset>\n".utf8)
    private static let openLocation = Array("<url><loc>".utf8)
    private static let closeLocation = Array("</loc></url>\n".utf8)
}
