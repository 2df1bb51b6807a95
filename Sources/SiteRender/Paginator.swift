/// Splits a run of rows into numbered pages of a fixed size and names their URLs.
///
/// Page 1 is at the listing's path; page N at `path + "page/N/"`, the convention Hugo and Jekyll sites use.
public struct Paginator: Sendable, Hashable {
    /// How many rows the listing has.
    public var rowCount: Int
    /// Rows per page.
    public var pageSize: Int
    /// The path of page 1, starting and ending with `/`.
    public var basePath: String

    /// Paginates `rowCount` rows, `pageSize` to a page, under `basePath`.
    public init(rowCount: Int, pageSize: Int, basePath: String) {
        precondition(pageSize > 0, "pageSize must be positive")
        self.rowCount = rowCount
        self.pageSize = pageSize
        self.basePath = basePath
    }

    /// How many pages: at least one, so an empty listing still has its page saying so.
    public var pageCount: Int { max(1, (rowCount + pageSize - 1) / pageSize) }

    /// The row offsets on page `number` (1-based).
    public func rows(onPage number: Int) -> Range<Int> {
        let start = (number - 1) * pageSize
        return min(start, rowCount)..<min(start + pageSize, rowCount)
    }

    /// The page numbers a page's navigation shows: the first and last pages, and `radius` pages either
    /// side of `number`; `nil` stands for a gap of two or more pages left out (a gap of one shows the page).
    /// Listing every page on every page would make a listing of N pages cost N² to render.
    public func window(around number: Int, radius: Int = 2) -> [Int?] {
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
        number == 1 ? basePath : basePath + "page/\(number)/"
    }
}
