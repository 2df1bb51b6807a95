import Foundation
@testable import SiteRender
import SiteSources
import XCTest

/// The sanitizer that feed HTML goes through (`format: sanitized`): what it keeps, what it drops, and an
/// independent check that its output, read as a browser reads it, cannot run script.
final class HTMLSanitizerTests: XCTestCase {
    func testOrdinaryMarkupIsKeptAsWritten() {
        let ordinary = [
            #"<p>A <a href="https://example.org/a?b=1&amp;c=2" title="T">link</a>, <em>em</em>, <strong>strong</strong>.</p>"#,
            #"<p><img src="https://example.org/pic.png" alt="A picture" width="20" height="10"></p>"#,
            #"<ul><li>one</li><li>two <code>x &lt; y</code></li></ul><ol start="3"><li>three</li></ol>"#,
            #"<table><thead><tr><th scope="col">A</th></tr></thead><tbody><tr><td colspan="2">1</td></tr></tbody></table>"#,
            "<pre><code class=\"language-swift\">let a = b &amp;&amp; c\n  &lt;tag&gt;</code></pre>",
            #"<blockquote cite="https://example.org/q"><p>Quoted</p></blockquote><hr><p>Line<br>break</p>"#,
            #"<figure><img src="/relative/pic.png" srcset="a.png 1x, https://e.org/b.png 2x"><figcaption>Caption</figcaption></figure>"#,
            ##"<p><a href="mailto:editor@example.org">Write</a> <a href="#fn-1">1</a> <a href="../up/page.html">up</a></p>"##,
            "Plain text with “quotes” and an é",
        ]
        for html in ordinary {
            XCTAssertEqual(HTMLSanitizer.sanitize(html), html)
        }
    }

    func testScriptsAndTheirTextAreDropped() {
        XCTAssertEqual(HTMLSanitizer.sanitize("safe <script>alert(1)</script><b>description</b>"), "safe <b>description</b>")
        XCTAssertEqual(HTMLSanitizer.sanitize("<SCRIPT SRC=//evil.example/x.js></SCRIPT>text"), "text")
        XCTAssertEqual(HTMLSanitizer.sanitize("<p>a<script>document.write('<b>')</script>b</p>"), "<p>ab</p>")
    }

    func testEventHandlersAreDroppedWhateverTheirCase() {
        XCTAssertEqual(HTMLSanitizer.sanitize(#"<img src="https://e.org/a.png" onerror="alert(1)" OnLoad=alert(2)>"#),
                       #"<img src="https://e.org/a.png">"#)
        XCTAssertEqual(HTMLSanitizer.sanitize(#"<p onclick="x()" onmouseover='y()'>t</p>"#), "<p>t</p>")
        XCTAssertEqual(HTMLSanitizer.sanitize(#"<div/onclick=alert(1)>t</div>"#).contains("onclick"), false)
    }

    func testURLsWithAnotherSchemeThanHTTPOrMailtoAreDroppedHoweverWritten() {
        let hostile = [
            "javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "\u{1}javascript:alert(1)",
            "java\tscript:alert(1)", "java\nscript:alert(1)", "java&#x09;script:alert(1)", "&#106;avascript:alert(1)",
            "&#x6A;avascript:alert(1)", "&#106avascript:alert(1)", "&#0000106&#0000097vascript:alert(1)", "javascript&#58;alert(1)",
            "javascript&#x3A;alert(1)", "vbscript:msgbox(1)", "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
            "DATA:image/svg+xml,<svg onload=alert(1)>", "file:///etc/passwd", "jar:http://e.org/a!/b",
        ]
        for url in hostile {
            for (element, attribute) in [("a", "href"), ("img", "src"), ("video", "poster"), ("q", "cite"), ("source", "srcset")] {
                let html = "<\(element) \(attribute)=\"\(url)\">x</\(element)>"
                let sanitized = HTMLSanitizer.sanitize(html)
                XCTAssertFalse(sanitized.contains(attribute + "="), "\(html) → \(sanitized)")
                Self.assertCannotRunScript(sanitized, html)
            }
        }
    }

    func testElementsThatLoadOrRunSomethingAreDropped() {
        let cases = [
            #"<base href="javascript:alert(1)//">"#, #"<meta http-equiv="refresh" content="0;url=javascript:alert(1)">"#,
            #"<iframe src="https://evil.example/"></iframe>"#, #"<object data="x.swf"><param name="a" value="b"></object>"#,
            #"<embed src="x.swf">"#, #"<applet code="X.class"></applet>"#, #"<link rel="stylesheet" href="https://evil.example/x.css">"#,
            #"<style>body { background: url(javascript:alert(1)) }</style>"#, #"<form action="https://evil.example/"><input name="password"></form>"#,
            #"<svg><script>alert(1)</script></svg>"#, #"<svg onload="alert(1)"><circle r="1"/></svg>"#,
            #"<math><maction actiontype="statusline" xlink:href="javascript:alert(1)">x</maction></math>"#,
            "<template><script>alert(1)</script></template>", "<textarea><script>alert(1)</script></textarea>",
            "<title><script>alert(1)</script></title>", #"<select><option value="x">Choose</option></select>"#,
        ]
        for html in cases {
            XCTAssertEqual(HTMLSanitizer.sanitize("safe " + html + "<b>description</b>"), "safe <b>description</b>", html)
        }
    }

    /// What an unclosed `<embed>` or `<object>` holds, or an `<iframe>`'s fallback, is the entry's text
    /// (feedparser keeps it too); a `<noscript>`'s image is the one a lazy-loading page shows without script.
    func testTheContentOfADroppedFrameOrPluginIsKept() {
        XCTAssertEqual(HTMLSanitizer.sanitize(#"safe<embed src="http://example.com/"> <b>description</b>"#), "safe <b>description</b>")
        XCTAssertEqual(HTMLSanitizer.sanitize(#"safe<object classid="clsid:C932BA85"> <b>description</b>"#), "safe <b>description</b>")
        XCTAssertEqual(HTMLSanitizer.sanitize(#"safe<iframe src="http://example.com/"> description</iframe>"#), "safe description")
        XCTAssertEqual(HTMLSanitizer.sanitize(#"<img data-src="a.png"><noscript><img src="https://e.org/a.png"></noscript>"#),
                       #"<img><img src="https://e.org/a.png">"#)
    }

    func testStyleKeepsPlainDeclarationsAndDropsExpressionsAndURLs() {
        XCTAssertEqual(HTMLSanitizer.sanitize(#"<span style="color: red; font-weight:bold">t</span>"#),
                       #"<span style="color: red; font-weight: bold;">t</span>"#)
        XCTAssertEqual(HTMLSanitizer.sanitize(#"<span style="color: rgb(10, 20, 30); width: 100%">t</span>"#),
                       #"<span style="color: rgb(10, 20, 30); width: 100%;">t</span>"#)
        for hostile in ["width: expression(alert(1))", "background: url(javascript:alert(1))", "background-color: url(x)",
                        "color: red; behavior: url(x.htc)", "-moz-binding: url(x.xml#y)", #"color: \72 ed"#, "color: red /* */",
                        "position: fixed; top: 0", "color: e\\xpression(alert(1))"] {
            let sanitized = HTMLSanitizer.sanitize("<span style=\"\(hostile)\">t</span>")
            XCTAssertFalse(sanitized.lowercased().contains("url") || sanitized.contains("expression") || sanitized.contains("\\")
                           || sanitized.contains("position") || sanitized.contains("binding"), "\(hostile) → \(sanitized)")
        }
    }

    func testCommentsAndCDATANeverBecomeMarkup() {
        XCTAssertEqual(HTMLSanitizer.sanitize("a<!-- <script>alert(1)</script> -->b"), "ab")
        XCTAssertEqual(HTMLSanitizer.sanitize("a<!--><script>alert(1)</script>-->b").contains("<script"), false)
        XCTAssertEqual(HTMLSanitizer.sanitize("<![CDATA[<script>alert(1)</script>]]>").contains("<script"), false)
        XCTAssertEqual(HTMLSanitizer.sanitize("<!--[if IE]><script>alert(1)</script><![endif]-->ok"), "ok")
    }

    func testUnclosedAndMisnestedTagsAreClosed() {
        XCTAssertEqual(HTMLSanitizer.sanitize("<p>unclosed <b>bold <i>both"), "<p>unclosed <b>bold <i>both</i></b></p>")
        XCTAssertEqual(HTMLSanitizer.sanitize("<ul><li>a<li>b</ul>"), "<ul><li>a</li><li>b</li></ul>")
        Self.assertCannotRunScript(HTMLSanitizer.sanitize("<a href=\"https://e.org/\" title=\"unterminated>x"), "unterminated title")
        Self.assertCannotRunScript(HTMLSanitizer.sanitize("<img src=\"x\" alt=\"<script>alert(1)</script>"), "unterminated alt")
    }

    /// A listing shows a feed's summary as HTML through the helper, as a detail page shows its body.
    func testTheSanitizedHelperPrintsAFieldSanitized() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-sanitized-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "{{{sanitized(summary)}}}|{{summary}}".write(to: folder.appendingPathComponent("list.mustache"), atomically: true, encoding: .utf8)
        let site = TemplateText.Site(baseURL: "https://x.org/", allowsRawHTML: false)
        let html = try TemplateSet(directory: folder).render("list", context: [
            "summary": TemplateText(#"<p onclick="x()">Hi<script>alert(1)</script></p>"#, site: site),
        ])
        XCTAssertEqual(html, "<p>Hi</p>|&lt;p onclick=&quot;x()&quot;&gt;Hi&lt;script&gt;alert(1)&lt;/script&gt;&lt;/p&gt;")
    }

    func testDeepNestingNeitherCrashesNorLosesText() {
        let depth = 100_000
        let html = String(repeating: "<div><b>", count: depth) + "deep" + String(repeating: "</b></div>", count: depth)
        XCTAssertTrue(HTMLSanitizer.sanitize(html).contains("deep"))
    }

    /// feedparser's sanitizer tests (documents under Fixtures/sanitize, copied from its suite): each item's
    /// HTML, sanitized, is what feedparser expects, or differs as known-differences.txt lists and says why;
    /// and none can run script.
    func testFeedparsersSanitizeDocumentsComeOutAsItExpectsOrDifferAsListed() throws {
        let root = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/sanitize", withExtension: nil))
        let files = try FileManager.default.contentsOfDirectory(at: root, includingPropertiesForKeys: nil).filter { $0.pathExtension == "xml" }
        let pattern = try NSRegularExpression(pattern: #"entries\[0\]\[['"](content|summary|description)['"]\](?:\[0\]\[['"]value['"]\])? == u?'(.*)'$"#)
        var differences: [String: String] = [:], compared = 0
        for url in files.sorted(by: { $0.path < $1.path }) {
            let name = url.lastPathComponent
            let document = try FeedParser(file: name).parse(Data(contentsOf: url))
            guard let item = document.items.first else { continue }
            for html in [item.content, item.summary].compactMap({ $0 }) {
                Self.assertCannotRunScript(HTMLSanitizer.sanitize(html), name)
            }
            let text = try String(contentsOf: url, encoding: .utf8)
            guard let line = text.split(separator: "\n").first(where: { $0.contains("Expect:") }).map(String.init),
                  let match = pattern.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)),
                  let field = Range(match.range(at: 1), in: line), let literal = Range(match.range(at: 2), in: line),
                  let got = line[field] == "content" ? item.content ?? item.summary : item.summary ?? item.content
            else { continue }
            compared += 1
            // feedparser writes void elements XHTML's way (`<img … />`), browsers and sitegen HTML's.
            let expected = Self.decodePython(String(line[literal]).replacingOccurrences(of: "' + '", with: ""))
                .replacingOccurrences(of: " />", with: ">")
            let sanitized = HTMLSanitizer.sanitize(got)
            if sanitized != expected { differences[name] = "\(name): \(sanitized.debugDescription), expected \(expected.debugDescription)" }
        }
        let listed = try String(contentsOf: root.appendingPathComponent("known-differences.txt"), encoding: .utf8)
            .split(separator: "\n").map { String($0.prefix { $0 != " " }) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        XCTAssertGreaterThan(compared, 100)
        XCTAssertEqual(differences.filter { !listed.contains($0.key) }.values.sorted(), [], "new differences from feedparser's expectations")
        XCTAssertEqual(Set(listed).subtracting(differences.keys).sorted(), [], "listed differences that are gone")
        print("sanitize corpus: \(compared) documents compared with feedparser's expectations, \(differences.count) listed differences")
    }

    /// A Python string literal's escapes (\n, \t, \xNN, \uNNNN, \', \\) as the characters they stand for.
    static func decodePython(_ literal: String) -> String {
        var scalars = String.UnicodeScalarView(), iterator = Array(literal.unicodeScalars).makeIterator()
        while let scalar = iterator.next() {
            guard scalar == "\\", let next = iterator.next() else { scalars.append(scalar); continue }
            switch next {
            case "n": scalars.append("\n")
            case "t": scalars.append("\t")
            case "x", "u":
                let digits = String((0..<(next == "x" ? 2 : 4)).compactMap { _ in iterator.next().map(Character.init) })
                if let value = UInt32(digits, radix: 16), let decoded = Unicode.Scalar(value) { scalars.append(decoded) }
            default: scalars.append(next)
            }
        }
        return String(scalars)
    }

    func testEveryHostileFragmentOfTheCorpusComesOutUnableToRunScript() {
        for fragment in Self.hostileFragments {
            Self.assertCannotRunScript(HTMLSanitizer.sanitize(fragment), fragment)
        }
    }

    /// Fragments after the XSS filter evasion cheat sheets (OWASP's, html5sec.org's), written here.
    static let hostileFragments: [String] = [
        "<script>alert(1)</script>", "<SCRIPT SRC=http://xss.example/xss.js></SCRIPT>", "<IMG SRC=\"javascript:alert('XSS');\">",
        "<IMG SRC=javascript:alert('XSS')>", "<IMG SRC=JaVaScRiPt:alert('XSS')>", "<IMG SRC=`javascript:alert(\"RSnake says, 'XSS'\")`>",
        "<a onmouseover=\"alert(document.cookie)\">xxs link</a>", "<IMG \"\"\"><SCRIPT>alert(\"XSS\")</SCRIPT>\"\\>",
        "<IMG SRC=/ onerror=\"alert(String.fromCharCode(88,83,83))\"></img>", "<img src=x onerror=\"&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041\">",
        "<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29>",
        "<IMG SRC=\"jav&#x0A;ascript:alert('XSS');\">", "<IMG SRC=\" &#14;  javascript:alert('XSS');\">",
        "<SCRIPT/XSS SRC=\"http://xss.example/xss.js\"></SCRIPT>", "<BODY onload!#$%&()*~+-_.,:;?@[/|\\]^`=alert(\"XSS\")>",
        "<<SCRIPT>alert(\"XSS\");//<</SCRIPT>", "<SCRIPT SRC=http://xss.example/xss.js?< B >", "<IMG SRC=\"`<javascript:alert>`('XSS')\"",
        "<iframe src=http://xss.example/scriptlet.html <", "</TITLE><SCRIPT>alert(\"XSS\");</SCRIPT>",
        "<INPUT TYPE=\"IMAGE\" SRC=\"javascript:alert('XSS');\">", "<BODY BACKGROUND=\"javascript:alert('XSS')\">",
        "<IMG DYNSRC=\"javascript:alert('XSS')\">", "<STYLE>li {list-style-image: url(\"javascript:alert('XSS')\");}</STYLE><UL><LI>XSS</br>",
        "<svg/onload=alert('XSS')>", "<BGSOUND SRC=\"javascript:alert('XSS');\">", "<LINK REL=\"stylesheet\" HREF=\"javascript:alert('XSS');\">",
        "<META HTTP-EQUIV=\"refresh\" CONTENT=\"0;url=javascript:alert('XSS');\">",
        "<META HTTP-EQUIV=\"refresh\" CONTENT=\"0;url=data:text/html base64,PHNjcmlwdD5hbGVydCgnWFNTJyk8L3NjcmlwdD4K\">",
        "<IFRAME SRC=\"javascript:alert('XSS');\"></IFRAME>", "<FRAMESET><FRAME SRC=\"javascript:alert('XSS');\"></FRAMESET>",
        "<TABLE BACKGROUND=\"javascript:alert('XSS')\">", "<TABLE><TD BACKGROUND=\"javascript:alert('XSS')\">",
        "<DIV STYLE=\"background-image: url(javascript:alert('XSS'))\">", "<DIV STYLE=\"background-image:\\0075\\0072\\006C\\0028'\\006a\\0061\\0076\\0061\\0073\\0063\\0072\\0069\\0070\\0074\\003a\\0061\\006c\\0065\\0072\\0074\\0028.1027\\0058.1053\\0053\\0027\\0029'\\0029\">",
        "<DIV STYLE=\"width: expression(alert('XSS'));\">", "<IMG STYLE=\"xss:expr/*XSS*/ession(alert('XSS'))\">",
        "<BASE HREF=\"javascript:alert('XSS');//\">", "<OBJECT TYPE=\"text/x-scriptlet\" DATA=\"http://xss.example/scriptlet.html\"></OBJECT>",
        "<EMBED SRC=\"data:image/svg+xml;base64,PHN2ZyB4bWxuczpzdmc9Imh0dH A6Ly93d3cudzMub3JnLzIwMDAvc3ZnIiB4bWxucz0iaHR0cDovL3d3dy53My5vcmcv MjAwMC9zdmciIHhtbG5zOnhsaW5rPSJodHRwOi8vd3d3LnczLm9yZy8xOTk5L3hs aW5rIiB2ZXJzaW9uPSIxLjAiIHg9IjAiIHk9IjAiIHdpZHRoPSIxOTQiIGhlaWdodD0iMjAw IiBpZD0ieHNzIj48c2NyaXB0IHR5cGU9InRleHQvZWNtYXNjcmlwdCI+YWxlcnQoIlh TUyIpOzwvc2NyaXB0Pjwvc3ZnPg==\" type=\"image/svg+xml\" AllowScriptAccess=\"always\"></EMBED>",
        "<SCRIPT a=\">\" SRC=\"httx://xss.example/xss.js\"></SCRIPT>", "<A HREF=\"http://66.102.7.147/\">XSS</A>",
        "<A HREF=\"//www.google.com/\">XSS</A>", "<a href=\"jav&#x09;ascript:alert(1)\">x</a>", "<a href=\"&#x6a;avascript&#x3a;alert(1)\">x</a>",
        "<a href=\"javascript&colon;alert(1)\">x</a>", "<a href=\"  java\u{0}script:alert(1)\">x</a>",
        "<svg><a xlink:href=\"javascript:alert(1)\"><text x=\"20\" y=\"20\">XSS</text></a></svg>",
        "<math><a xlink:href=\"javascript:alert(1)\">click</a></math>", "<math href=\"javascript:alert(1)\">click</math>",
        "<svg><animate onbegin=alert(1) attributeName=x dur=1s>", "<svg><set attributeName=\"onmouseover\" to=\"alert(1)\"/></svg>",
        "<form><button formaction=\"javascript:alert(1)\">X</button></form>", "<video><source onerror=\"alert(1)\">",
        "<video poster=javascript:alert(1)//></video>", "<details open ontoggle=alert(1)>", "<input autofocus onfocus=alert(1)>",
        "<select autofocus onfocus=alert(1)>", "<keygen autofocus onfocus=alert(1)>", "<marquee onstart=alert(1)>",
        "<x onclick=alert(1)>click</x>", "<div id=\"x\" data-bind=\"click: alert(1)\">", "<img src=\"x` `<script>alert(1)</script>\"` `>",
        "<img src onerror /\" '\"= alt=alert(1)//\">", "<title><img src=\"</title><img src=x onerror=alert(1)>\">",
        "<style><img src=\"</style><img src=x onerror=alert(1)//\">", "<noscript><img src=\"</noscript><img src=x onerror=alert(1)//\">",
        "<xmp><img src=\"</xmp><img src=x onerror=alert(1)//\">", "<iframe><img src=\"</iframe><img src=x onerror=alert(1)//\">",
        "<!--<img src=\"--><img src=x onerror=alert(1)//\">", "<![CDATA[><img src=x onerror=alert(1)//]]>", "<?xml-stylesheet href=\"javascript:alert(1)\"?>",
        "<a href=\"\u{2028}javascript:alert(1)\">x</a>", "<a href=\"\u{FEFF}javascript:alert(1)\">x</a>", "<a href=\"java\u{AD}script:alert(1)\">x</a>",
        "<a href=\"data:text/html,<script>alert(1)</script>\">x</a>", "<a href=\"vbscript:msgbox(1)\">x</a>",
        "<img src=\"x\" style=\"behavior:url(x.htc)\">", "<p style=\"-moz-binding:url('http://xss.example/xss.xml#xss')\">",
        "<table background=\"javascript:alert(1)\"><tr><td>x", "<p>unclosed <b>bold <a href=\"javascript:alert(1)\">link",
        "<a href='javascript:alert(1)'", "<img src=x onerror=alert(1)", "<scr<script>ipt>alert(1)</scr</script>ipt>",
        "<a href=\"https://example.org/\" target=\"_blank\" rel=\"opener\">x</a>", "<base target=\"_blank\">",
        "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>", "<iframe srcdoc=\"<script>alert(1)</script>\">",
        "<object data=\"javascript:alert(1)\"><embed src=\"javascript:alert(1)\"></object>", "<form><input type=image src=javascript:alert(1)>",
    ]

    /// Fails when `output`, read as a browser reads HTML, could run script: checked on the text itself, with
    /// none of the sanitizer's code. Every `<` must open an allowed tag written `<name attr="value">` or close
    /// one, every `&` start `&amp;`, `&lt;`, `&gt;` or `&quot;` (so values read as written here); no attribute
    /// may be a handler, no URL have a scheme but http, https or mailto, no style hold a function or escape.
    static func assertCannotRunScript(_ output: String, _ input: String, file: StaticString = #filePath, line: UInt = #line) {
        let tag = try! NSRegularExpression(pattern: #"^<(/?)([a-z][a-z0-9]*)((?: [a-z:-]+="[^"<>]*")*)>"#)
        let attribute = try! NSRegularExpression(pattern: #" ([a-z:-]+)="([^"]*)""#)
        let reference = try! NSRegularExpression(pattern: #"^&(amp|lt|gt|quot);"#)
        let scalars = Array(output.unicodeScalars)
        let text = output as NSString
        var index = 0, utf16 = 0
        func fail(_ why: String) { XCTFail("\(why) in \(output.debugDescription), from \(input.debugDescription)", file: file, line: line) }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == ">" { return fail("a bare '>'") }
            if scalar == "&", reference.firstMatch(in: output, range: NSRange(location: utf16, length: min(6, text.length - utf16))) == nil {
                return fail("an '&' that starts no escape")
            }
            guard scalar == "<" else { index += 1; utf16 += scalar.utf16.count; continue }
            guard let match = tag.firstMatch(in: output, range: NSRange(location: utf16, length: text.length - utf16)) else {
                return fail("a '<' that opens no well-formed tag")
            }
            let name = text.substring(with: match.range(at: 2))
            if !HTMLSanitizer.keptElements.contains(name) { return fail("the element <\(name)>") }
            let attributes = text.substring(with: match.range(at: 3))
            for found in attribute.matches(in: attributes, range: NSRange(location: 0, length: (attributes as NSString).length)) {
                let attributeName = (attributes as NSString).substring(with: found.range(at: 1))
                let value = (attributes as NSString).substring(with: found.range(at: 2))
                    .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&lt;", with: "<")
                    .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
                if attributeName.hasPrefix("on") || ["formaction", "action", "background", "dynsrc", "lowsrc", "data", "xlink:href"].contains(attributeName) {
                    return fail("the attribute \(attributeName)")
                }
                if ["href", "src", "cite", "poster", "srcset"].contains(attributeName) {
                    // What a browser takes for the scheme: controls and spaces dropped, up to the first ':'.
                    let squeezed = String(value.unicodeScalars.filter { $0.value > 0x20 }).lowercased()
                    if let colon = squeezed.firstIndex(of: ":"), !squeezed[..<colon].contains(where: { "/?#".contains($0) }),
                       !["http", "https", "mailto"].contains(String(squeezed[..<colon]))
                    {
                        return fail("the URL \(value.debugDescription)")
                    }
                }
                if attributeName == "style", value.contains("(") && !value.contains("rgb") || value.contains("\\") || value.lowercased().contains("url")
                    || value.lowercased().contains("expression") {
                    return fail("the style \(value.debugDescription)")
                }
            }
            let length = match.range.length
            utf16 += length
            index += String(text.substring(with: match.range)).unicodeScalars.count
        }
    }
}
