import ResultsController

/// A test failure with a message, thrown from helpers.
struct Failure: Error, CustomStringConvertible {
    var description: String
}

/// Sections as a table view holds them: names and the ids in each.
typealias TableLayout = [(name: String, ids: [Int64])]

func tableLayout(_ controller: ResultsController) -> TableLayout {
    let ids = controller.fetchedIDs
    return controller.sections.map { ($0.name, Array(ids[$0.range])) }
}

/// Applies a delta the way UITableView's batch updates do, using nothing but the delta and the old layout.
func applyAsTableView(_ delta: Delta, to old: TableLayout) throws -> TableLayout {
    var sections = old
    let removals = (delta.deletedRows.map { ($0.indexPath, $0.id) } + delta.movedRows.map { ($0.from, $0.id) }).sorted { $0.0 > $1.0 }
    for (path, id) in removals {
        guard sections.indices.contains(path.section), sections[path.section].ids.indices.contains(path.item),
            sections[path.section].ids[path.item] == id
        else { throw Failure(description: "delta removes \(id) at \(path), which does not hold it") }
        sections[path.section].ids.remove(at: path.item)
    }
    for section in delta.deletedSections.sorted(by: { $0.index > $1.index }) {
        guard sections.indices.contains(section.index), sections[section.index].ids.isEmpty else {
            throw Failure(description: "section \(section.name) deleted while not empty or absent")
        }
        sections.remove(at: section.index)
    }
    for section in delta.insertedSections.sorted(by: { $0.index < $1.index }) {
        guard section.index <= sections.count else { throw Failure(description: "section \(section.name) inserted out of range") }
        sections.insert((section.name, []), at: section.index)
    }
    let insertions = (delta.insertedRows.map { ($0.indexPath, $0.id) } + delta.movedRows.map { ($0.to, $0.id) }).sorted { $0.0 < $1.0 }
    for (path, id) in insertions {
        guard sections.indices.contains(path.section), path.item <= sections[path.section].ids.count else {
            throw Failure(description: "delta inserts \(id) at \(path), out of range")
        }
        sections[path.section].ids.insert(id, at: path.item)
    }
    return sections
}
