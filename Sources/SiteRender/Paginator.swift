/// Splits a run of rows into numbered pages of a fixed size and names their URLs.
///
/// The rows come newest first. In newest-first numbering page 1 holds the newest rows and sits at the
/// listing's path, page N at `path + "page/N/"` (the convention Hugo and Jekyll sites use). In stable
/// archive numbering (RFC 5005) pages are counted from the oldest end: page 1 holds the oldest rows, every
/// page but the newest is full, and the newest (the highest number) sits at the listing's path, so adding
/// rows changes only the newest page and a full archive page never changes again.
public struct Paginator: Sendable, Hashable {
    /// How pages are numbered.
    public enum Numbering: String, Sendable, Hashable {
        case newestFirst = "newest-first"
        case stableArchive = "stable-archive"
    }

    /// How many rows the listing has.
    public var rowCount: Int
    /// Rows per page.
    public var pageSize: Int
    /// The path of the newest page, starting and ending with `/`.
    public var basePath: String
    /// How pages are numbered.
    public var numbering: Numbering

    /// Paginates `rowCount` rows, `pageSize` to a page, under `basePath`.
    public init(rowCount: Int, pageSize: Int, basePath: String, numbering: Numbering = .newestFirst) {
        precondition(pageSize > 0, "pageSize must be positive")
        self.rowCount = rowCount
        self.pageSize = pageSize
        self.basePath = basePath
        self.numbering = numbering
    }

    /// How many pages: at least one, so an empty listing still has its page saying so.
    public var pageCount: Int { max(1, (rowCount + pageSize - 1) / pageSize) }

    /// The number of the page with the newest rows (the one at the listing's path).
    public var newestPage: Int { numbering == .newestFirst ? 1 : pageCount }

    /// The number of the page with the oldest rows.
    public var oldestPage: Int { numbering == .newestFirst ? pageCount : 1 }

    /// The page after `number` going back in time, if any.
    public func olderPage(than number: Int) -> Int? {
        let older = numbering == .newestFirst ? number + 1 : number - 1
        return (1...pageCount).contains(older) ? older : nil
    }

    /// The page before `number` going back in time, if any.
    public func newerPage(than number: Int) -> Int? {
        let newer = numbering == .newestFirst ? number - 1 : number + 1
        return (1...pageCount).contains(newer) ? newer : nil
    }

    /// The row offsets (positions in newest-first order) on page `number` (1-based).
    public func rows(onPage number: Int) -> Range<Int> {
        switch numbering {
        case .newestFirst:
            let start = (number - 1) * pageSize
            return min(start, rowCount)..<min(start + pageSize, rowCount)
        case .stableArchive:
            let end = rowCount - (number - 1) * pageSize
            return max(0, end - pageSize)..<max(0, end)
        }
    }

    /// The page numbers a page's navigation shows: the first and last pages, and `radius` pages either
    /// side of `number`; `nil` stands for a gap of two or more pages left out (a gap of one shows the page).
    /// Listing every page on every page would make a listing of N pages cost N² to render.
    /// In stable archive numbering the window runs from the newest page down.
    public func window(around number: Int, radius: Int = 2) -> [Int?] {
        let ascending = ascendingWindow(around: number, radius: radius)
        return numbering == .newestFirst ? ascending : ascending.reversed()
    }

    private func ascendingWindow(around number: Int, radius: Int) -> [Int?] {
        let count = pageCount
        let shown = Set([1, count] + ((number - radius)...(number + radius)).filter { $0 >= 1 && $0 <= count })
        var window: [Int?] = []
        var previous = 0
        for page in shown.sorted() {
            if page - previous == 2 { window.append(page - 1) } else if page - previous > 2 { window.append(nil) }
            window.append(page)
            previous = page
        }
        return window
    }

    /// The site path of page `number`.
    public func path(ofPage number: Int) -> String {
        number == newestPage ? basePath : basePath + "page/\(number)/"
    }
}
