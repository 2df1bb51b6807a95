import ResultsController
import SiteRender

/// The rows of a listing's sections that a controller's delta changed, and from them the pages a build
/// looks at: a section whose row count changed shows it on every page (its pagination), so all its pages;
/// otherwise the pages holding rows that changed or moved, and the rows a move shifted between.
///
/// Made only for a delta that kept the sections in place (none inserted or deleted): section indexes are
/// then the same before and after, and a section's pages keep their addresses.
struct DeltaPages {
    /// What changed in one section.
    struct SectionChange {
        /// Rows came or went: every page shows the new count.
        var countChanged = false
        /// How many rows the section gained (negative: lost).
        var countChange = 0
        /// Positions (new) whose rows changed, or that a move shifted, as closed ranges.
        var items: [ClosedRange<Int>] = []
    }

    /// By section index.
    private(set) var sections: [Int: SectionChange] = [:]

    /// The changes of `delta`, with the rows at `dirty` (related records changed), or nil when the delta
    /// inserted or deleted sections (their pages' addresses may shift: the listing is looked at whole).
    init?(delta: Delta, dirty: [IndexPath] = []) {
        guard delta.insertedSections.isEmpty, delta.deletedSections.isEmpty else { return nil }
        for row in delta.insertedRows { sections[row.indexPath.section, default: .init()].grow(by: 1) }
        for row in delta.deletedRows { sections[row.indexPath.section, default: .init()].grow(by: -1) }
        for move in delta.movedRows {
            if move.from.section == move.to.section {
                let (low, high) = (min(move.from.item, move.to.item), max(move.from.item, move.to.item))
                sections[move.to.section, default: .init()].items.append(low...high)
            } else {
                sections[move.from.section, default: .init()].grow(by: -1)
                sections[move.to.section, default: .init()].grow(by: 1)
            }
        }
        for update in delta.updatedRows {
            sections[update.newIndexPath.section, default: .init()].items.append(update.newIndexPath.item...update.newIndexPath.item)
        }
        for place in dirty { sections[place.section, default: .init()].items.append(place.item...place.item) }
    }

    /// Whether nothing in the listing changed.
    var isEmpty: Bool { sections.isEmpty }

    /// Whether some section's row count changed.
    var changesCounts: Bool { sections.values.contains { $0.countChanged } }

    /// The pages of section `section`, paginated by `paginator` (its rows now), to look at: all of them
    /// when its row count changed, else those holding a changed position. Ascending.
    func pages(ofSection section: Int, _ paginator: Paginator) -> [Int] {
        guard let change = sections[section] else { return [] }
        if change.countChanged { return Array(1...paginator.pageCount) }
        var pages = Set<Int>()
        for range in change.items {
            let first = Self.page(ofItem: range.lowerBound, paginator), last = Self.page(ofItem: range.upperBound, paginator)
            pages.formUnion(min(first, last)...max(first, last))
        }
        return pages.filter { (1...paginator.pageCount).contains($0) }.sorted()
    }

    /// How many rows section `section` had before the delta, given how many it has now.
    func oldRowCount(ofSection section: Int, now count: Int) -> Int {
        count - (sections[section]?.countChange ?? 0)
    }

    /// The page holding the row at `item` (its position in the section).
    static func page(ofItem item: Int, _ paginator: Paginator) -> Int {
        switch paginator.numbering {
        case .newestFirst: item / paginator.pageSize + 1
        case .stableArchive: max(0, paginator.rowCount - 1 - item) / paginator.pageSize + 1
        }
    }
}

extension DeltaPages.SectionChange {
    mutating func grow(by rows: Int) {
        countChanged = true
        countChange += rows
    }
}

extension DeltaPages {
    /// The positions (new) of the detail pages a delta of a collection's records touches: each changed or
    /// added row and its neighbours (a page shows its neighbours' titles and links), and the rows that
    /// became neighbours where rows went; `dirty` rows (related records changed) alone. Ascending.
    static func detailOffsets(_ delta: Delta, dirty: [Int], count: Int) -> [Int] {
        var offsets = Set(dirty)
        func around(_ offset: Int) { offsets.formUnion(offset - 1...offset + 1) }
        let inserted = (delta.insertedRows.map(\.indexPath.item) + delta.movedRows.map(\.to.item)).sorted()
        let removed = (delta.deletedRows.map(\.indexPath.item) + delta.movedRows.map(\.from.item)).sorted()
        inserted.forEach(around)
        delta.updatedRows.forEach { around($0.newIndexPath.item) }
        // Where a row went, the rows before and after it meet: with the removed rows taken out, the gap of the
        // row at old position `a` is before position `a - (rows removed before it)`; the inserted rows then
        // push that position on by those that land at or before it.
        var gaps = removed.enumerated().map { $1 - $0 }
        gaps.sort()
        var pushed = 0
        for gap in gaps {
            var position = gap + pushed
            while pushed < inserted.count, inserted[pushed] <= position {
                pushed += 1
                position += 1
            }
            offsets.insert(position - 1)
            offsets.insert(position)
        }
        return offsets.filter { $0 >= 0 && $0 < count }.sorted()
    }
}
