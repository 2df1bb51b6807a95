import SiteStore

extension ResultsController {
    /// Brings the results up to date with a committed changeset and reports what changed.
    ///
    /// Only the rows the changeset names (and the rows whose related rows it names) are re-queried, a few
    /// hundred ids per statement; each is removed from and placed back into the order by binary search.
    /// Cost: O(k log n) for k changed rows, never a full re-fetch. A request with a `limit` or `offset`
    /// re-fetches its window instead, since rows slide in and out of it.
    ///
    /// A changeset that does not start where the results are (`baseGeneration` is not the generation they
    /// reflect: a changeset was skipped, or this one was applied already) cannot be applied row by row: the
    /// results are fetched again and diffed against the old ones (O(n)), so that neither the delta nor the
    /// cache goes wrong; without a `versionColumn`, every row that stayed is then reported updated.
    ///
    /// Throws `cacheDamaged` when a chunk of a restored snapshot, read now for the first time, is damaged:
    /// the results are then fetched again, and there is no delta from what the cache held.
    @discardableResult
    public func apply(_ changeset: Changeset) throws -> Delta {
        do {
            return try applyRows(changeset)
        } catch is SnapshotDamage {
            try refetchAfterDamage()
            throw ResultsControllerError.cacheDamaged(name: cacheName ?? "")
        }
    }

    /// `apply`, letting `SnapshotDamage` through to the caller, which fetches again.
    func applyRows(_ changeset: Changeset) throws -> Delta {
        guard hasFetched else { throw ResultsControllerError.notFetched }
        // Refused at the first changeset, not before: a table without a key can still be listed.
        if let trackingProblem { throw trackingProblem }
        if let base = changeset.baseGeneration, let current = generation, base != current { return try catchUp() }
        if request.limit != nil || request.offset > 0 { return try refetchAndReport(changeset) }
        let (affected, relatedOnly) = try affectedIDs(changeset)
        guard !affected.isEmpty else {
            // Nothing of these results changed, but they are now current at the changeset's generation.
            if let new = changeset.generation, generation != nil, generation != new {
                generation = new
                cacheGenerationIsStale = true
            }
            return Delta()
        }

        var fresh: [Int64: OrderedRows.Entry] = [:]
        let sortedIDs = affected.sorted()
        for start in stride(from: 0, to: sortedIDs.count, by: Self.idsPerQuery) {
            let ids = sortedIDs[start..<min(start + Self.idsPerQuery, sortedIDs.count)]
            let statement = try database.cachedStatement(compiled.keysQuery(forIDs: ids.count))
            try statement.forEachRow(request.arguments + ids.map { .integer($0) }) { row in
                let entry = compiled.entry(from: row)
                fresh[entry.id] = entry
            }
        }

        let oldSections = sections
        // A row whose prefetched related row changed shows other values: an update, as its own change is.
        let updatedIDs = (changeset.tables[request.table]?.updated ?? []).union(relatedOnly)
        let comparesVersions = request.versionColumn != nil
        var changes: [Int64: RowChangeRecord] = [:]
        var removals: [(offset: Int, entry: OrderedRows.Entry)] = []
        var insertions: [OrderedRows.Entry] = []
        // Rows whose sort key is unchanged keep their place among the others: they are anchors, never
        // moves, and an update when their content changed.
        var inPlace: [(id: Int64, oldOffset: Int)] = []
        // Where each changed row was: by its fresh key when only its content changed, else through the
        // index by id (O(log n) and one chunk decoded each, also just after a restore).
        let oldPlaces = try rows.places(ofIDs: affected, keyHints: fresh.mapValues(\.key))
        for id in affected {
            let old = oldPlaces[id]?.entry, oldOffset = oldPlaces[id]?.offset, new = fresh[id]
            if let old, let new, let oldOffset, old.key == new.key {
                if comparesVersions ? old.version != new.version || relatedOnly.contains(id) : updatedIDs.contains(id) {
                    inPlace.append((id, oldOffset))
                }
                if old.version != new.version {
                    try rows.replace(at: oldOffset, with: new)
                }
                continue
            }
            if let old, let oldOffset {
                changes[id] = RowChangeRecord(id: id, old: .init(offset: oldOffset, section: compiled.sectionName(of: old.key), version: old.version))
                removals.append((oldOffset, old))
            }
            if let new { insertions.append(new) }
        }
        batchCache.removeAll()
        generation = changeset.generation
        cacheIsStale = true
        guard !removals.isEmpty || !insertions.isEmpty || !inPlace.isEmpty else { return Delta() }

        let removedOffsets = removals.map(\.offset).sorted()
        try rows.remove(descendingOffsets: removedOffsets.reversed())
        for removal in removals { count(removal.entry, by: -1) }
        try rows.insert(contentsOf: insertions)
        for entry in insertions { count(entry, by: 1) }
        do {
            try rebuildSections()
        } catch {
            // Refused (two section values of one name): the results cannot be listed until the data changes.
            releaseResults()
            throw error
        }
        var insertedOffsets: [Int] = []
        insertedOffsets.reserveCapacity(insertions.count)
        for entry in insertions {
            guard let offset = try rows.offset(ofKey: entry.key, id: entry.id) else { throw SnapshotDamage() }
            insertedOffsets.append(offset)
            changes[entry.id, default: RowChangeRecord(id: entry.id)].new =
                .init(offset: offset, section: compiled.sectionName(of: entry.key), version: entry.version)
        }
        var delta = DeltaBuilder(oldSections: oldSections, newSections: sections, comparesVersions: comparesVersions,
                                 updatedIDs: updatedIDs).delta(for: Array(changes.values))
        // A row that stayed in place moved by the removals before it and the insertions before it: no search needed.
        insertedOffsets.sort()
        var removedBefore = 0, insertedBefore = 0
        for update in inPlace.sorted(by: { $0.oldOffset < $1.oldOffset }) {
            while removedBefore < removedOffsets.count, removedOffsets[removedBefore] < update.oldOffset { removedBefore += 1 }
            var newOffset = update.oldOffset - removedBefore + insertedBefore
            while insertedBefore < insertedOffsets.count, insertedOffsets[insertedBefore] <= newOffset {
                insertedBefore += 1
                newOffset += 1
            }
            let oldSection = sectionIndex(containing: update.oldOffset, in: oldSections)
            let newSection = sectionIndex(containing: newOffset, in: sections)
            delta.updatedRows.append(.init(
                id: update.id,
                oldIndexPath: IndexPath(item: update.oldOffset - oldSections[oldSection].range.lowerBound, section: oldSection),
                newIndexPath: IndexPath(item: newOffset - sections[newSection].range.lowerBound, section: newSection)))
        }
        delta.sortForApplication()
        checkInvariants()
        report(delta)
        return delta
    }

    /// The fetched table's changed ids and the ids of its rows whose related rows changed (`affected`);
    /// of the latter, those whose changed related rows are prefetched, less the rows the table's own change
    /// inserted or deleted (`relatedOnly`: rows that may show new values without a change of their own).
    private func affectedIDs(_ changeset: Changeset) throws -> (affected: Set<Int64>, relatedOnly: Set<Int64>) {
        var affected = Set<Int64>()
        var shown = Set<Int64>()
        if let changes = changeset.tables[request.table] {
            affected.formUnion(changes.inserted)
            affected.formUnion(changes.updated)
            affected.formUnion(changes.deleted)
        }
        for relationship in request.relationships {
            guard let changes = changeset.tables[relationship.table] else { continue }
            let prefetched = request.prefetchedRelationships.contains(relationship.name)
            func found(_ id: Int64) {
                affected.insert(id)
                if prefetched { shown.insert(id) }
            }
            let related = Array(changes.inserted.union(changes.updated).union(changes.deleted)).sorted()
            for start in stride(from: 0, to: related.count, by: Self.idsPerQuery) {
                let ids = related[start..<min(start + Self.idsPerQuery, related.count)]
                let statement = try database.cachedStatement(compiled.referencingIDsQuery(relationship, count: ids.count))
                try statement.forEachRow(ids.map { .integer($0) }) { found($0.int64(at: 0)) }
            }
            if !(changes.deleted.isEmpty && changes.updated.isEmpty) && relationship.targetKey.lowercased() != "rowid" {
                // A deleted row's key went with it, and an updated row's key may have changed (a row deleted and
                // its id taken by a new row): the rows that named the old key are found by the key the changeset
                // recorded (through an index on the foreign key, O(log n) each). A changeset without the
                // old values (read back from text) leaves the rows that name a missing key, a scan.
                // (A rowid is the changeset's own name for the row, which the query above already used.)
                if let keys = try oldKeys(of: relationship, in: changes) {
                    for start in stride(from: 0, to: keys.count, by: Self.idsPerQuery) {
                        let slice = Array(keys[start..<min(start + Self.idsPerQuery, keys.count)])
                        let statement = try database.cachedStatement(compiled.referencingIDsQuery(relationship, keyCount: slice.count))
                        try statement.forEachRow(slice) { found($0.int64(at: 0)) }
                    }
                } else {
                    let statement = try database.cachedStatement(compiled.danglingIDsQuery(relationship))
                    try statement.forEachRow([]) { found($0.int64(at: 0)) }
                }
            }
        }
        if let own = changeset.tables[request.table] { shown.subtract(own.inserted.union(own.deleted)) }
        return (affected, shown)
    }

    /// The target keys that the deleted rows of `relationship`'s table had, and the updated rows had before
    /// their key changed, from the changeset's recorded values; `nil` when it lacks a deleted row's values or
    /// the key column is not found. An updated row without recorded values (changes gathered by hand, whose
    /// rows keep their keys: sitegen never gives a row's id to another key) is taken to keep its key.
    private func oldKeys(of relationship: Relationship, in changes: Changeset.TableChanges) throws -> [DatabaseValue]? {
        guard changes.deleted.allSatisfy({ changes.deletedValues[$0] != nil }) else { return nil }
        let changed = changes.deleted.union(changes.updated.filter { changes.deletedValues[$0] != nil })
        guard !changed.isEmpty else { return [] }
        let columns = try database.cachedStatement("SELECT name FROM pragma_table_info(?) ORDER BY cid")
            .fetchAll([.text(relationship.table)]).compactMap { $0["name"]?.stringValue?.lowercased() }
        guard let column = columns.firstIndex(of: relationship.targetKey.lowercased()) else { return nil }
        var keys = Set<DatabaseValue>()
        for id in changed {
            guard let values = changes.deletedValues[id], values.indices.contains(column) else { return nil }
            if values[column] != .null { keys.insert(values[column]) }
        }
        return keys.sorted { $0.description < $1.description }
    }

    /// Results that missed a changeset, or were given one twice: fetched again and diffed, and current at
    /// the database's generation.
    private func catchUp() throws -> Delta {
        let current = database.generation
        // What was missed may have changed any row: without a version column (or with prefetched related
        // rows, which versions do not cover) each one that stayed is reported updated, as a table view's
        // full reload would show it.
        let unknown = request.versionColumn == nil || !request.prefetchedRelationships.isEmpty
        let delta = try refetchAndDiff(updatedIDs: [], keysComparable: true, everyRowMayHaveChanged: unknown)
        generation = current
        cacheIsStale = true
        report(delta)
        return delta
    }

    /// For windowed requests: fetch the window again and diff it against the old one (O(limit)).
    private func refetchAndReport(_ changeset: Changeset) throws -> Delta {
        let delta = try refetchAndDiff(updatedIDs: changeset.tables[request.table]?.updated ?? [], keysComparable: true,
                                       alsoUpdated: try affectedIDs(changeset).relatedOnly)
        generation = changeset.generation
        cacheIsStale = true
        report(delta)
        return delta
    }
}
