import CSourceHighlight
import Foundation

/// Colours fenced code on the server: GNU source-highlight splits a block into tokens, and each token of a
/// kind sitegen names is wrapped in a `<span class="sg-…">`, every character escaped.
///
/// ```swift
/// CodeHighlighter.shared.html(of: "x = 1  # one\n", language: "python")
/// // x = <span class="sg-number">1</span>  <span class="sg-comment"># one</span>\n
/// ```
///
/// The library's objects are not thread-safe, and pages render on several threads: each call takes a
/// library highlighter of its own from a pool, opening one when none is idle (decisions.md 41c).
public final class CodeHighlighter: @unchecked Sendable {
    /// The class of each kind of token source-highlight's language files name, as pages carry them. Kinds not
    /// listed (`normal`, `symbol`, `cbracket`, …) are plain text. docs/guide/templates.md lists the classes.
    public static let classes: KeyValuePairs<String, String> = [
        "keyword": "sg-keyword",
        "type": "sg-type", "usertype": "sg-type", "classname": "sg-type",
        "string": "sg-string", "regexp": "sg-string", "specialchar": "sg-string", "value": "sg-string",
        "comment": "sg-comment", "todo": "sg-comment",
        "number": "sg-number",
        "function": "sg-function", "predef_func": "sg-function",
        "variable": "sg-variable", "predef_var": "sg-variable", "attribute": "sg-variable", "property": "sg-variable",
        "preproc": "sg-meta", "label": "sg-meta", "difflines": "sg-meta",
        "newfile": "sg-inserted", "oldfile": "sg-deleted",
    ]

    /// The highlighter of the library's own language definitions (Debian's `/usr/share/source-highlight`, or
    /// where `SOURCE_HIGHLIGHT_DATADIR` says), which builds use.
    public static let shared = CodeHighlighter()

    /// Why nothing is highlighted (the definitions cannot be read), or nil when highlighting works.
    public let problem: String?
    /// The names a fence may give its language (`python`, `py`, `sh`, …), as the library's `lang.map` lists them.
    public let languages: Set<String>

    /// Guards `idle` and `opened`.
    private let pool = NSCondition()
    /// Library highlighters no call is using; each keeps the language definitions it has loaded.
    private var idle: [OpaquePointer] = []
    /// How many library highlighters are open, idle or in use.
    private var opened = 0
    /// The most that may be open: a call beyond waits for one to be idle.
    private let limit: Int
    private let dataDirectory: String?

    /// Opens the language definitions in `dataDirectory` (nil: the library's own); at most `limit` library
    /// highlighters are opened, one for each call running at once (1 makes every call wait its turn).
    public init(dataDirectory: String? = nil, limit: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.dataDirectory = dataDirectory
        self.limit = max(1, limit)
        var problem: String?
        if let first = Self.open(dataDirectory, problem: &problem) {
            let names = sitegen_highlighter_language_names(first)
            defer { free(names) }
            languages = Set(String(cString: names!).split(separator: "\n").map(String.init))
            idle = [first]
            opened = 1
        } else {
            languages = []
        }
        self.problem = problem
    }

    deinit {
        for highlighter in idle { sitegen_highlighter_close(highlighter) }
    }

    /// The name of `language` (a fence's first word) as the library knows it, or nil: `Python` is `python`.
    public func knownName(of language: String) -> String? {
        if languages.contains(language) { return language }
        let lowercased = language.lowercased()
        return languages.contains(lowercased) ? lowercased : nil
    }

    /// `code` as HTML with its tokens in spans, every character escaped; nil when `language` is not one the
    /// library knows (then the caller writes the block as it always has).
    public func html(of code: String, language: String) -> String? {
        guard let name = knownName(of: language), let highlighter = checkOut() else { return nil }
        defer { checkIn(highlighter) }
        var length = 0
        let html = code.withCString { sitegen_highlighter_html(highlighter, name, $0, code.utf8.count, &length) }
        guard let html else { return nil }
        defer { free(html) }
        return String(decoding: UnsafeRawBufferPointer(start: html, count: length), as: UTF8.self)
    }

    /// An idle library highlighter, one newly opened, or (at the limit) the next to be idle.
    private func checkOut() -> OpaquePointer? {
        pool.lock()
        defer { pool.unlock() }
        while idle.isEmpty {
            if opened < limit {
                opened += 1
                // Opening reads `lang.map`: a few milliseconds, once per thread for a whole build.
                var ignored: String?
                if let highlighter = Self.open(dataDirectory, problem: &ignored) { return highlighter }
                opened -= 1
                return nil
            }
            pool.wait()
        }
        return idle.removeLast()
    }

    /// Gives a library highlighter back to the pool.
    private func checkIn(_ highlighter: OpaquePointer) {
        pool.lock()
        idle.append(highlighter)
        pool.signal()
        pool.unlock()
    }

    /// A library highlighter on the definitions in `directory`, or nil with the reason in `problem`.
    private static func open(_ directory: String?, problem: inout String?) -> OpaquePointer? {
        let elements = classes.map { strdup($0.key) }, names = classes.map { strdup($0.value) }
        defer { (elements + names).forEach { free($0) } }
        var error: UnsafeMutablePointer<CChar>?
        let highlighter = elements.map { UnsafePointer($0) }.withUnsafeBufferPointer { elementPointers in
            names.map { UnsafePointer($0) }.withUnsafeBufferPointer { classPointers in
                sitegen_highlighter_open(directory, elementPointers.baseAddress, classPointers.baseAddress, classes.count, &error)
            }
        }
        if let error {
            problem = String(cString: error)
            free(error)
        }
        return highlighter
    }
}
