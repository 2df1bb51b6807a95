// Release benchmark of server-side highlighting (decisions.md 41c):
//   swift build -c release --scratch-path .build-release --product HighlightBenchmark
//   .build-release/release/HighlightBenchmark [PAGES]
// Renders a typical post (prose, a list, and four fenced blocks of about 30 lines: Python, shell, C and
// JavaScript) from Markdown to HTML with and without highlighting, and prints the CPU time per page of each
// (best of 5 rounds of PAGES renders, default 2,000) and the ratio; then the time to open the library's
// definitions and load a language, and the pages per second on every core with a highlighter per thread
// (the pool) against one highlighter behind a lock.
import Foundation
import SiteRender

/// `lines` lines of code in `language`, shaped as a post's example: definitions, calls, strings, comments.
func block(_ language: String, lines: Int) -> String {
    let line: (Int) -> String
    switch language {
    case "python": line = { "    total += rows[\($0)].fund * 1.05  # fund \($0) in \"dollars\"" }
    case "sh": line = { "curl -fsS \"$BASE/banks/\($0)/\" | grep -c 'closed' >> \"$OUT\"  # bank \($0)" }
    case "c": line = { "    if (rows[\($0)].fund > 0x\($0)) { total += rows[\($0)].fund; } /* row \($0) */" }
    default: line = { "  const bank\($0) = await fetch(`/banks/${id}/\($0)`).then(r => r.json()); // \($0)" }
    }
    return "```\(language)\n" + (0..<lines).map(line).joined(separator: "\n") + "\n```\n"
}

let paragraph = "Regulators closed the bank on a Friday; deposits and branches moved to the acquirer, and the "
    + "fund paid the difference. The numbers below come from the agency's *weekly* list, read with `sitegen`.\n\n"
let post = "# Reading the failed-bank list\n\n" + paragraph + "## Fetching\n\n" + paragraph + block("sh", lines: 30) + "\n"
    + "## Summing\n\n" + paragraph + block("python", lines: 30) + "\n- one\n- two\n- three\n\n" + paragraph
    + block("c", lines: 30) + "\n## In the browser\n\n" + paragraph + block("javascript", lines: 30) + "\n" + paragraph

/// The CPU time this process has used, in seconds.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// The best CPU time per page, in microseconds, of 5 rounds of `pages` renders.
func perPage(_ renderer: MarkdownRenderer, pages: Int) -> Double {
    var best = Double.infinity
    for _ in 0..<5 {
        let start = cpuSeconds()
        for _ in 0..<pages { _ = renderer.html(post) }
        best = min(best, (cpuSeconds() - start) / Double(pages) * 1e6)
    }
    return best
}

/// Pages per second of wall time, rendering `pages` pages on every core with `renderer`.
func throughput(_ renderer: MarkdownRenderer, pages: Int) -> Double {
    let start = Date()
    DispatchQueue.concurrentPerform(iterations: pages) { _ in _ = renderer.html(post) }
    return Double(pages) / Date().timeIntervalSince(start)
}

let pages = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 2_000 : 2_000
let opening = Date()
let highlighter = CodeHighlighter()
let opened = Date().timeIntervalSince(opening) * 1e3
if let problem = highlighter.problem { fatalError("no highlighting: \(problem)") }
let firstPage = Date()
let highlightedHTML = MarkdownRenderer(highlighter: highlighter).html(post)
let loaded = Date().timeIntervalSince(firstPage) * 1e3
guard highlightedHTML.contains("<span class=\"sg-keyword\">"), post.utf8.count > 4_000 else { fatalError("the page was not highlighted") }

let plain = perPage(MarkdownRenderer(), pages: pages)
let highlighted = perPage(MarkdownRenderer(highlighter: highlighter), pages: pages)
print("page: \(post.utf8.count) bytes of Markdown, 4 fenced blocks of 30 lines; \(pages) pages a round, best of 5")
print(String(format: "without highlighting: %.1f µs CPU a page", plain))
print(String(format: "with highlighting:    %.1f µs CPU a page (%.1f× ; +%.1f µs)", highlighted, highlighted / plain, highlighted - plain))
print(String(format: "once a process: opening the definitions %.1f ms; the first page (loading 4 languages) %.1f ms", opened, loaded))

// Which languages' definitions cost most: one block of 30 lines each, highlighted alone.
let blockCosts = ["python", "sh", "c", "javascript"].map { language -> String in
    let markdown = block(language, lines: 30), renderer = MarkdownRenderer(highlighter: highlighter)
    let start = cpuSeconds()
    for _ in 0..<max(1, pages / 4) { _ = renderer.html(markdown) }
    return String(format: "%@ %.0f µs", language, (cpuSeconds() - start) / Double(max(1, pages / 4)) * 1e6)
}
print("a block of 30 lines alone: " + blockCosts.joined(separator: ", "))

let cores = ProcessInfo.processInfo.activeProcessorCount
let pooled = MarkdownRenderer(highlighter: CodeHighlighter(limit: cores)), locked = MarkdownRenderer(highlighter: CodeHighlighter(limit: 1))
_ = (throughput(pooled, pages: cores * 4), throughput(locked, pages: 4))
print(String(format: "on %d cores: a highlighter per thread %.0f pages/s; one behind a lock %.0f pages/s; none %.0f pages/s",
             cores, throughput(pooled, pages: pages), throughput(locked, pages: pages), throughput(MarkdownRenderer(), pages: pages)))
