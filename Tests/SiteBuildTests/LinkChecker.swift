import Foundation

/// Follows every `href` of a built site's HTML pages: each internal link must lead to a written file, and a
/// link with a fragment (`/guide/feeds/#stable-archives`) to an element with that `id`.
struct LinkChecker {
    /// The output folder.
    let output: URL

    /// One link that leads nowhere: the page it is on, and the link as written.
    struct BrokenLink: CustomStringConvertible, Equatable {
        let page: String
        let href: String
        let reason: String
        var description: String { "\(page) links to \"\(href)\": \(reason)" }
    }

    /// The HTML files under the output folder, by path relative to it, sorted.
    func pages() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: output.path)!
        return enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".html") }.sorted()
    }

    /// Every broken internal link, and how many internal links were checked.
    func brokenLinks() throws -> (broken: [BrokenLink], checked: Int) {
        let hrefs = try NSRegularExpression(pattern: #"href="([^"]*)""#)
        var broken: [BrokenLink] = [], checked = 0
        var ids: [String: Set<String>] = [:]
        for page in pages() {
            let html = try String(contentsOf: output.appendingPathComponent(page), encoding: .utf8)
            for match in hrefs.matches(in: html, range: NSRange(html.startIndex..., in: html)) {
                let href = String(html[Range(match.range(at: 1), in: html)!])
                if href.isEmpty { broken.append(BrokenLink(page: page, href: href, reason: "an empty href")); continue }
                guard !href.contains(":") else { continue }   // http:, mailto:, data:
                checked += 1
                let parts = href.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let target = parts[0].isEmpty ? page : resolve(String(parts[0]), from: page)
                guard FileManager.default.fileExists(atPath: output.appendingPathComponent(target).path) else {
                    broken.append(BrokenLink(page: page, href: href, reason: "\(target) was not written")); continue
                }
                guard parts.count == 2, target.hasSuffix(".html") else { continue }
                if ids[target] == nil { ids[target] = try elementIDs(in: target) }
                let fragment = String(parts[1]).removingPercentEncoding ?? String(parts[1])
                if !ids[target]!.contains(fragment) {
                    broken.append(BrokenLink(page: page, href: href, reason: "\(target) has no id \"\(fragment)\""))
                }
            }
        }
        return (broken, checked)
    }

    /// The file `href` leads to from `page`, relative to the output folder (`/a/` is `a/index.html`).
    private func resolve(_ href: String, from page: String) -> String {
        let folder = URL(fileURLWithPath: "/" + page).deletingLastPathComponent()
        let decoded = href.removingPercentEncoding ?? href
        let target = decoded.hasPrefix("/") ? URL(fileURLWithPath: decoded) : folder.appendingPathComponent(decoded)
        return String(target.standardized.path.dropFirst()) + (href.hasSuffix("/") ? (target.path == "/" ? "index.html" : "/index.html") : "")
    }

    private func elementIDs(in page: String) throws -> Set<String> {
        let html = try String(contentsOf: output.appendingPathComponent(page), encoding: .utf8)
        let ids = try NSRegularExpression(pattern: #"\bid="([^"]*)""#)
        return Set(ids.matches(in: html, range: NSRange(html.startIndex..., in: html)).map {
            String(html[Range($0.range(at: 1), in: html)!])
        })
    }
}
