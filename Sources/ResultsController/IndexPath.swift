/// The position of a row: its section and its item within the section.
public struct IndexPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var section: Int
    public var item: Int

    public init(item: Int, section: Int) {
        self.section = section
        self.item = item
    }

    public static func < (lhs: IndexPath, rhs: IndexPath) -> Bool {
        (lhs.section, lhs.item) < (rhs.section, rhs.item)
    }

    public var description: String { "[\(section), \(item)]" }
}
