import Foundation

/// A new site as `sitegen new` writes it: a blog of Markdown posts with tags, a page, feeds and a theme of
/// its own, which builds as it is and shows where everything goes. The theme bends to collections added
/// later: it shows any record's declared fields (`fields`), formatted by type, and links what has a page only.
///
/// ```swift
/// let written = try StarterSite.write(into: URL(fileURLWithPath: "mysite"))
/// // ["sitegen.yml", ".gitignore", "content/posts/welcome.md", …, "Templates/404.mustache"]
/// ```
public enum StarterSite {
    /// Why a new site was not written.
    public enum Failure: Error, CustomStringConvertible, Equatable {
        /// The folder already holds a site's files (`names`): a new site would mix with, or overwrite, them.
        case occupied(folder: String, names: [String])
        /// Something that is not a folder stands at the folder's path.
        case notAFolder(String)

        public var description: String {
            switch self {
            case let .occupied(folder, names):
                let listed = names.map { $0 == "sitegen.yml" ? $0 : $0 + "/" }.joined(separator: ", ")
                return "\(folder) already has \(listed); `sitegen new` makes a site only in a new folder or one without these"
            case let .notAFolder(path):
                return "\(path) is a file, not a folder"
            }
        }
    }

    /// The files of a new site, by path relative to its folder.
    public static let files: [StarterFile] = [
        StarterFile(path: "sitegen.yml", text: #"""
# A site made by `sitegen new`: posts in content/posts/, pages in content/pages/, the theme in Templates/.
# sitegen's manual, docs/reference/configuration.md, describes every setting.
title: My Site
# Where the site will be published: feeds, the sitemap and canonical links start with it.
baseURL: https://example.org/

collections:
  posts:
    kind: markdown
    sources: content/posts/*.md
    fields:
      date: datetime
      description: text
      tags: list
    detail:
      path: /posts/{key}/      # a post's file name, without .md
      body: body
  pages:
    kind: markdown
    sources: content/pages/*.md
    fields:
      description: text
    detail:
      path: /{key}/
      template: page
      body: body

listings:
  home:
    from: posts
    sort: -date
    pageSize: 10
    path: /
    title: Posts
    feeds: [atom, rss]
  tags:
    from: posts
    taxonomy: tags
    sort: -date
    pageSize: 10
    path: /tags/{section}/
    title: Tags

"""#),
        StarterFile(path: ".gitignore", text: #"""
output/
.sitegen/

"""#),
        StarterFile(path: "content/posts/welcome.md", text: #"""
---
title: Welcome
date: 2026-01-02T09:00:00Z
description: The first post of a new sitegen site.
tags: [news, sitegen]
---
This site was made by `sitegen new`. Each Markdown file in `content/posts/` is a post: its front
matter (between the `---` lines) gives its title, date, description and tags, and the rest is its
text, in [GitHub Flavored Markdown](https://github.github.com/gfm/).

## What to do next

- Set `title` and `baseURL` in `sitegen.yml`.
- Write a post: copy this file, change its name and front matter.
- Run `sitegen serve` and open <http://127.0.0.1:8000/>: pages are built again, and reloaded in the
  browser, every time a file is saved.
- Change the look in `Templates/` (Mustache).

"""#),
        StarterFile(path: "content/posts/tables-and-code.md", text: #"""
---
title: Tables, code and footnotes
date: 2026-01-09T18:30:00Z
description: What a post's Markdown can hold.
tags: [sitegen]
---
A table:

| Format | Read as |
|---|---|
| Markdown | one record a file, with YAML front matter |
| CSV, JSON, NDJSON | one record a row |
| RSS, Atom, JSON Feed | one record an item |

Some code, coloured when the site is built (`highlight:` in `sitegen.yml`):

```python
def greet(name):
    return f"Hello from {name}"  # sitegen
```

```sh
sitegen build --output "$HOME/public"
```

A footnote.[^1]

[^1]: Footnotes are numbered and linked back.

"""#),
        StarterFile(path: "content/pages/about.md", text: #"""
---
title: About
description: What this site is about.
---
A page of its own, at `/about/`, linked from the menu. Every Markdown file in `content/pages/` is such
a page.

"""#),
        StarterFile(path: "Templates/base.mustache", text: #"""
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{$title}}{{pageTitle}}{{/title}} · {{site.title}}</title>
{{#pageURL}}<link rel="canonical" href="{{absolute(pageURL)}}">
{{/pageURL}}{{#record}}{{#description}}<meta name="description" content="{{description}}">
{{/description}}{{/record}}{{$head}}{{/head}}{{#feeds}}<link rel="alternate" type="{{type}}" title="{{listing.title}} ({{format}})" href="{{url}}">
{{/feeds}}<link rel="icon" href="{{site.basePath}}favicon.svg" type="image/svg+xml">
<style>
body{font:17px/1.6 system-ui,sans-serif;max-width:42rem;margin:0 auto;padding:0 1rem;color:#1d2330}
header{display:flex;flex-wrap:wrap;align-items:baseline;gap:1rem;border-bottom:2px solid #1d2330;padding:.75rem 0}
header .brand{font-weight:700;font-size:1.25rem;color:inherit;text-decoration:none}
nav{display:flex;flex-wrap:wrap;gap:.25rem .9rem}
a{color:#0b5cad}
.meta{color:#5b6270;font-size:.9rem}
.posts{list-style:none;padding:0}
.posts li{margin:1.25rem 0}
.posts h2{font-size:1.2rem;margin:0}
.posts p{margin:.25rem 0}
.fields{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:1rem 0}
.fields dt{color:#5b6270}
.fields dd{margin:0;min-width:0;overflow-wrap:anywhere}
.meta .field+.field::before{content:" · "}
.meta .label{font-weight:600}
pre{overflow-x:auto;background:#f3f4f6;padding:.75rem;border-radius:4px}
.sg-keyword{color:#8b1fa9;font-weight:600}.sg-type{color:#0b6b6b}.sg-string{color:#a12a0b}.sg-comment{color:#5b6270;font-style:italic}
.sg-number{color:#0b5cad}.sg-function{color:#2743a6}.sg-variable{color:#8a4b00}.sg-meta{color:#9c2f6b}
.sg-inserted{color:#116329}.sg-deleted{color:#a40e26}
@media (prefers-color-scheme:dark){pre{background:#1e2230;color:#e6e8ee}
.sg-keyword{color:#d9a6ff}.sg-type{color:#6fd3d3}.sg-string{color:#f5a97f}.sg-comment{color:#9aa3b2}.sg-number{color:#7cb7ff}
.sg-function{color:#8fb4ff}.sg-variable{color:#f2c57c}.sg-meta{color:#f39ac7}.sg-inserted{color:#7ee2a0}.sg-deleted{color:#ff9aa8}}
table{border-collapse:collapse;display:block;max-width:100%;overflow-x:auto}
th,td{text-align:left;padding:.3rem .6rem;border-bottom:1px solid #d7dbe2}
.sections{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1.5rem}
.sections .count{color:#5b6270;font-size:.875rem}
.pagination{display:flex;flex-wrap:wrap;gap:.35rem;margin:1.5rem 0}
.pagination>a,.pagination>span{padding:.15rem .5rem;border:1px solid #d7dbe2;border-radius:4px;text-decoration:none}
.pagination .current{background:#1d2330;color:#fff}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.neighbours{display:flex;justify-content:space-between;gap:1rem;margin:2rem 0;border-top:1px solid #d7dbe2;padding-top:1rem}
.draft{display:inline-block;margin-left:.5rem;padding:0 .4rem;border:1px solid #b45309;border-radius:4px;background:#fff7ed;color:#9a3412;font-size:.75rem;font-weight:600;letter-spacing:.05em;text-transform:uppercase;vertical-align:middle}
footer{margin:3rem 0 1rem;color:#5b6270;font-size:.875rem}
</style>
</head>
<body>
<header>
<a class="brand" href="{{site.basePath}}">{{site.title}}</a>
<nav aria-label="Site">{{#nav}}<a href="{{url}}"{{#current}} aria-current="page"{{/current}}>{{title}}</a>{{/nav}}</nav>
</header>
<main>
{{$content}}{{/content}}
</main>
<footer>{{site.title}} · built with sitegen</footer>
</body>
</html>

"""#),
        StarterFile(path: "Templates/list.mustache", text: #"""
{{<base}}
{{$content}}
{{#section}}<p class="meta"><a href="{{index}}">{{listing.title}}</a> › {{title}}</p>
<h1>{{title}}</h1>{{/section}}
{{^section}}<h1>{{listing.title}}</h1>{{/section}}
{{#empty}}<p>Nothing here yet.</p>{{/empty}}
<ul class="posts">
{{#items}}
<li>
<h2>{{#url}}<a href="{{url}}">{{title}}</a>{{/url}}{{^url}}{{title}}{{/url}}{{#draft}}<span class="draft">Draft</span>{{/draft}}</h2>
{{#fields}}{{#first()}}<p class="meta">{{/first()}}<span class="field"><span class="label">{{label}}</span> {{>field}}</span>{{#last()}}</p>{{/last()}}
{{/fields}}
{{#description}}<p>{{description}}</p>{{/description}}
</li>
{{/items}}
</ul>
{{>pagination}}
{{/content}}
{{/base}}
"""#),
        StarterFile(path: "Templates/detail.mustache", text: #"""
{{<base}}
{{$content}}
<article>
<h1>{{title}}{{#record}}{{#draft}}<span class="draft">Draft</span>{{/draft}}{{/record}}</h1>
{{#record}}{{#fields}}{{#first()}}<dl class="fields">
{{/first()}}<dt>{{label}}</dt><dd>{{>field}}</dd>
{{#last()}}</dl>
{{/last()}}{{/fields}}{{/record}}
{{{body}}}
</article>
<nav class="neighbours" aria-label="Neighbouring pages">
<span>{{#prev}}<a rel="prev" href="{{url}}"><span aria-hidden="true">←</span> {{title}}</a>{{/prev}}</span>
<span>{{#next}}<a rel="next" href="{{url}}">{{title}} <span aria-hidden="true">→</span></a>{{/next}}</span>
</nav>
{{/content}}
{{/base}}
"""#),
        StarterFile(path: "Templates/page.mustache", text: #"""
{{<base}}
{{$content}}
<article>
<h1>{{title}}{{#record}}{{#draft}}<span class="draft">Draft</span>{{/draft}}{{/record}}</h1>
{{{body}}}
</article>
{{/content}}
{{/base}}

"""#),
        StarterFile(path: "Templates/pagination.mustache", text: #"""
{{#pagination.multiple}}
<nav class="pagination" aria-label="Pages">
{{#pagination.prev}}<a rel="prev" href="{{.}}"><span aria-hidden="true">←</span> Newer</a>{{/pagination.prev}}
{{#pagination.pages}}{{#gap}}<span class="gap">…</span>{{/gap}}{{^gap}}{{#current}}<span class="current" aria-current="page"><span class="visually-hidden">Page </span>{{number}}</span>{{/current}}{{^current}}<a href="{{url}}" aria-label="Page {{number}}">{{number}}</a>{{/current}}{{/gap}}
{{/pagination.pages}}
{{#pagination.next}}<a rel="next" href="{{.}}">Older <span aria-hidden="true">→</span></a>{{/pagination.next}}
</nav>
{{/pagination.multiple}}

"""#),
        StarterFile(path: "Templates/field.mustache", text: #"""
{{#isDate}}<time datetime="{{value}}">{{date(value)}}</time>{{/isDate}}{{#isNumber}}{{number(value)}}{{/isNumber}}{{#isText}}{{value}}{{/isText}}{{#isLink}}<a href="{{value}}">{{value}}</a>{{/isLink}}{{#isBool}}{{#value}}yes{{/value}}{{^value}}no{{/value}}{{/isBool}}{{#isList}}{{#items}}{{#linked}}<a href="{{url}}">{{name}}</a>{{/linked}}{{^linked}}{{name}}{{/linked}} {{/items}}{{/isList}}
"""#),
        StarterFile(path: "Templates/sections.mustache", text: #"""
{{<base}}
{{$content}}
<h1>{{listing.title}}</h1>
<ul class="sections">
{{#groups}}{{#sections}}<li><a href="{{url}}">{{title}}</a> <span class="count">{{count}}</span></li>
{{/sections}}{{/groups}}
</ul>
{{/content}}
{{/base}}

"""#),
        StarterFile(path: "Templates/404.mustache", text: #"""
{{<base}}
{{$content}}
<h1>Page not found</h1>
<p>Nothing is published at this address. It may have moved when the records were updated.</p>
<p><a href="{{site.basePath}}">Go to the home page</a>{{^empty(nav)}} or pick a listing above{{/empty(nav)}}.</p>
{{/content}}
{{/base}}

"""#),
        StarterFile(path: "static/favicon.svg", text: #"""
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1d2330"/><path d="M9 22l7-12 7 12z" fill="#fff"/></svg>

"""#),
    ]

    /// The names at a site's root that `write(into:)` will not write over (a `.gitignore` that is there is
    /// kept instead: it is the user's, and likely lists more).
    static let reserved = ["sitegen.yml", "content", "Templates"]

    /// Writes the new site into `folder` (made if missing) and returns the paths written. Nothing is written
    /// when the folder holds a site's files already; a write that fails takes back what this one made.
    @discardableResult
    public static func write(into folder: URL) throws -> [String] {
        try write(files, into: folder)
    }

    /// Writes `files` as `write(into:)` writes the new site's.
    static func write(_ files: [StarterFile], into folder: URL) throws -> [String] {
        let manager = FileManager.default
        var isFolder: ObjCBool = false
        if manager.fileExists(atPath: folder.path, isDirectory: &isFolder), !isFolder.boolValue {
            throw Failure.notAFolder(folder.path)
        }
        let occupied = reserved.filter { manager.fileExists(atPath: folder.appendingPathComponent($0).path) }
        guard occupied.isEmpty else { throw Failure.occupied(folder: folder.path, names: occupied) }
        // What this call made, folders included, so that a failure (a full disk) leaves the folder as it was.
        var made: [URL] = []
        do {
            var written: [String] = []
            for file in files {
                let url = folder.appendingPathComponent(file.path)
                // The user's own .gitignore and static files are kept: they are likely more than ours.
                if file.path == ".gitignore" || file.path.hasPrefix("static/"), manager.fileExists(atPath: url.path) { continue }
                made += try makeFolders(url.deletingLastPathComponent())
                try Data(file.text.utf8).write(to: url, options: .atomic)
                made.append(url)
                written.append(file.path)
            }
            return written
        } catch {
            for url in made.reversed() { try? manager.removeItem(at: url) }
            throw error
        }
    }

    /// Makes `folder` and the folders it is in that are missing; returns those it made, outermost first.
    private static func makeFolders(_ folder: URL) throws -> [URL] {
        var missing: [URL] = []
        var current = folder.standardizedFileURL
        while !FileManager.default.fileExists(atPath: current.path) {
            missing.insert(current, at: 0)
            current = current.deletingLastPathComponent()
        }
        for url in missing { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false) }
        return missing
    }
}

/// One file of the new site `StarterSite` writes.
public struct StarterFile: Sendable {
    /// Its path in the site's folder.
    public let path: String
    /// Its text.
    public let text: String
}
