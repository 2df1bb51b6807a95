/// One section of fetched results: its name, the titles shown for it, and where its rows are.
public struct SectionInfo: Sendable, Hashable {
    /// The section key's value for the rows in it (text form); empty for the single unnamed section.
    public var name: String
    /// The title a page shows for it.
    public var displayTitle: String
    /// The short title a section index shows (the first letter of the display title, upper-cased).
    public var indexTitle: String?
    /// The positions of its rows among all fetched ids.
    public var range: Range<Int>

    /// How many rows the section holds.
    public var numberOfObjects: Int { range.count }

    /// Makes a section; titles default to the name and to the display title's first letter.
    public init(name: String, displayTitle: String? = nil, indexTitle: String? = nil, range: Range<Int>) {
        self.name = name
        self.displayTitle = displayTitle ?? name
        self.indexTitle = indexTitle ?? self.displayTitle.first.map { String($0).uppercased() }
        self.range = range
    }
}
