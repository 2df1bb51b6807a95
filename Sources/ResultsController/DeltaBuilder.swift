/// One row's position and section before and after a change (either side absent when it was not listed).
struct RowChangeRecord {
    struct Place {
        var offset: Int
        var section: String
        var version: Int64
    }

    var id: Int64
    var old: Place?
    var new: Place?
}

/// Turns the before and after places of the changed rows into a `Delta`.
///
/// Rows not in `changes` kept their relative order. A changed row listed before and after is a move when
/// its section changed, when the number of unchanged rows before it changed (its "slot"), or when it left
/// the longest run of changed rows in the same slot that kept their order; otherwise it is in place, and an
/// update if its content changed. This reports the fewest moves that turn the old order into the new.
struct DeltaBuilder {
    let oldSections: [SectionInfo]
    let newSections: [SectionInfo]
    /// Content changed iff the version changed (the request has a version column); else iff listed in `updatedIDs`.
    let comparesVersions: Bool
    let updatedIDs: Set<Int64>

    func delta(for changes: [RowChangeRecord]) -> Delta {
        var delta = Delta()
        let oldSectionIndex = Dictionary(uniqueKeysWithValues: oldSections.enumerated().map { ($1.name, $0) })
        let newSectionIndex = Dictionary(uniqueKeysWithValues: newSections.enumerated().map { ($1.name, $0) })

        // Sections: gone, new, and common ones whose relative order changed (re-inserted).
        for (index, section) in oldSections.enumerated() where newSectionIndex[section.name] == nil {
            delta.deletedSections.append(.init(index: index, name: section.name))
        }
        let common = oldSections.map(\.name).filter { newSectionIndex[$0] != nil }
        let keptInOrder = Set(longestIncreasingRun(common.map { newSectionIndex[$0]! }).map { common[$0] })
        let reinserted = Set(common.filter { !keptInOrder.contains($0) })
        for name in reinserted {
            delta.deletedSections.append(.init(index: oldSectionIndex[name]!, name: name))
        }
        for (index, section) in newSections.enumerated() where oldSectionIndex[section.name] == nil || reinserted.contains(section.name) {
            delta.insertedSections.append(.init(index: index, name: section.name))
        }

        func oldPath(_ place: RowChangeRecord.Place) -> IndexPath {
            let section = oldSectionIndex[place.section]!
            return IndexPath(item: place.offset - oldSections[section].range.lowerBound, section: section)
        }
        func newPath(_ place: RowChangeRecord.Place) -> IndexPath {
            let section = newSectionIndex[place.section]!
            return IndexPath(item: place.offset - newSections[section].range.lowerBound, section: section)
        }

        let oldSlots = slots(changes.compactMap { change in change.old.map { (change.id, $0.offset) } })
        let newSlots = slots(changes.compactMap { change in change.new.map { (change.id, $0.offset) } })
        var groups: [Int: [RowChangeRecord]] = [:]
        for change in changes {
            switch (change.old, change.new) {
            case (let old?, nil):
                delta.deletedRows.append(.init(id: change.id, indexPath: oldPath(old)))
            case (nil, let new?):
                delta.insertedRows.append(.init(id: change.id, indexPath: newPath(new)))
            case (let old?, let new?):
                if old.section != new.section || reinserted.contains(old.section) || oldSlots[change.id] != newSlots[change.id] {
                    delta.movedRows.append(.init(id: change.id, from: oldPath(old), to: newPath(new)))
                } else {
                    groups[oldSlots[change.id]!, default: []].append(change)
                }
            case (nil, nil):
                break
            }
        }
        for (_, group) in groups {
            let inOldOrder = group.sorted { $0.old!.offset < $1.old!.offset }
            let stable = Set(longestIncreasingRun(inOldOrder.map { $0.new!.offset }))
            for (index, change) in inOldOrder.enumerated() {
                let old = change.old!, new = change.new!
                if !stable.contains(index) {
                    delta.movedRows.append(.init(id: change.id, from: oldPath(old), to: newPath(new)))
                } else if comparesVersions ? old.version != new.version : updatedIDs.contains(change.id) {
                    delta.updatedRows.append(.init(id: change.id, oldIndexPath: oldPath(old), newIndexPath: newPath(new)))
                }
            }
        }
        delta.sortForApplication()
        return delta
    }

    /// For each row, its offset minus the number of changed rows before it: the count of unchanged rows before it.
    private func slots(_ places: [(id: Int64, offset: Int)]) -> [Int64: Int] {
        var slots: [Int64: Int] = [:]
        for (rank, place) in places.sorted(by: { $0.offset < $1.offset }).enumerated() {
            slots[place.id] = place.offset - rank
        }
        return slots
    }
}

/// The indexes of a longest strictly increasing subsequence of `values` (patience sorting, O(n log n)).
func longestIncreasingRun(_ values: [Int]) -> [Int] {
    var tails: [Int] = []  // indexes into values: tails[k] ends the best run of length k + 1
    var previous = Array(repeating: -1, count: values.count)
    for (index, value) in values.enumerated() {
        var low = 0, high = tails.count
        while low < high {
            let middle = (low + high) / 2
            if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
        }
        if low > 0 { previous[index] = tails[low - 1] }
        if low == tails.count { tails.append(index) } else { tails[low] = index }
    }
    var run: [Int] = []
    var index = tails.last ?? -1
    while index >= 0 {
        run.append(index)
        index = previous[index]
    }
    return run.reversed()
}
