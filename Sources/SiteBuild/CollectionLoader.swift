import Foundation
import SiteSources
import SiteStore

/// The load stage: reads every collection's sources and makes the store match them, in one transaction.
///
/// A source that fails keeps its previous rows; its problem is reported and the others still load.
struct CollectionLoader {
    let root: URL
    let config: SiteConfig
    let store: SiteStore

    struct Outcome {
        var changeset = Changeset()
        var problems: [SourceError] = []
        var warnings: [SourceError] = []
        var sourcesRead = 0
        /// Sources skipped because their size and modification time (or bytes) were unchanged.
        var sourcesUnchanged = 0
    }

    func load() throws -> Outcome {
        try store.transaction {
            var outcome = Outcome()
            for collection in config.collections {
                let schema = Self.schema(for: collection, listings: config.listings)
                try store.prepareTable(schema)
                var changes = Changeset()
                var present = Set<String>()
                for pattern in collection.sources {
                    for file in SourceGlob(pattern: pattern).files(under: root) where present.insert(file).inserted {
                        let url = root.appendingPathComponent(file)
                        let previous = try store.fingerprint(of: file)
                        guard var fingerprint = Self.statFingerprint(url) else { continue }
                        // Same size and modification time as a good load: not even read.
                        if let previous, previous.succeeded, previous.size == fingerprint.size, previous.modified == fingerprint.modified {
                            outcome.sourcesUnchanged += 1
                            continue
                        }
                        outcome.sourcesRead += 1
                        // Read once: the bytes are hashed, then parsed.
                        let data = try? Data(contentsOf: url)
                        if let data {
                            var hash = ContentHash()
                            hash.combine(bytes: data)
                            fingerprint.hash = hash.signed
                            // Touched but identical bytes: nothing to parse; remember the new time.
                            if let previous, previous.succeeded, previous.hash == fingerprint.hash {
                                try store.recordSourceStatus(file, collection: collection.name, failure: nil, fingerprint: fingerprint)
                                outcome.sourcesUnchanged += 1
                                continue
                            }
                        }
                        do {
                            let source = source(for: collection, file: file)
                            let result = try data.map { data throws(SourceError) in try source.read(data) } ?? source.read()
                            outcome.warnings += result.warnings
                            let rows = result.records.map { Self.storedRow($0, schema: schema) }
                            changes.merge(try store.replaceRows(of: file, in: schema, with: rows))
                            try store.recordSourceStatus(file, collection: collection.name, failure: nil, fingerprint: fingerprint)
                        } catch let error as SourceError {
                            outcome.problems.append(error)
                            fingerprint.succeeded = false
                            try store.recordSourceStatus(file, collection: collection.name, failure: error.description, fingerprint: fingerprint)
                        } catch let error as StoreError {
                            let problem = SourceError(file: file, reason: error.description)
                            outcome.problems.append(problem)
                            fingerprint.succeeded = false
                            try store.recordSourceStatus(file, collection: collection.name, failure: problem.description, fingerprint: fingerprint)
                        }
                    }
                }
                if present.isEmpty {
                    outcome.warnings.append(SourceError(file: "sitegen.yml",
                        reason: "collection '\(collection.name)': no file matches \(collection.sources.joined(separator: ", "))"))
                }
                changes.merge(try store.deleteRows(ofSourcesOtherThan: present, in: schema))
                outcome.changeset.merge(changes)
            }
            return outcome
        }
    }

    /// Size and modification time of `url` (the hash is filled in once the file is read).
    static func statFingerprint(_ url: URL) -> SiteStore.SourceFingerprint? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            let size = (attributes[.size] as? NSNumber)?.int64Value,
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970
        else { return nil }
        return SiteStore.SourceFingerprint(size: size, modified: modified, hash: 0, succeeded: true)
    }

    private func source(for collection: CollectionConfig, file: String) -> any Source {
        let url = root.appendingPathComponent(file)
        switch collection.kind {
        case .csv: return CSVSource(url: url, displayName: file, key: collection.key!, fields: collection.fields)
        case .json: return JSONRecordSource(url: url, displayName: file, layout: .array, key: collection.key!, fields: collection.fields)
        case .ndjson: return JSONRecordSource(url: url, displayName: file, layout: .lines, key: collection.key!, fields: collection.fields)
        case .feed: return FeedSource(url: url, displayName: file)
        case .markdown: return MarkdownSource(url: url, displayName: file, fields: collection.fields)
        }
    }

    /// The table for a collection: a column per field, indexes for the fields its listings sort on first.
    static func schema(for collection: CollectionConfig, listings: [ListingConfig]) -> CollectionSchema {
        let columns = collection.fields.map { field -> (String, CollectionSchema.ColumnType) in
            switch field.type {
            case .integer, .bool: return (field.name, .integer)
            case .real: return (field.name, .real)
            case .list: return (field.name, .list)
            case .text, .date, .datetime: return (field.name, .text)
            }
        }
        var indexed: [String] = []
        for listing in listings where listing.from == collection.name {
            if let first = listing.sort.first?.field, first != "_key", !indexed.contains(first) { indexed.append(first) }
        }
        return CollectionSchema(table: collection.name, columns: columns, indexedColumns: indexed,
                                origin: "\(collection.kind.rawValue) key=\(collection.key ?? "")")
    }

    static func storedRow(_ record: Record, schema: CollectionSchema) -> StoredRow {
        var hash = ContentHash()
        var lists: [String: [String]] = [:]
        let values = schema.columns.map { column -> DatabaseValue in
            let value = record.fields[column.name] ?? .null
            hash.combine(column.name)
            switch value {
            case .null: hash.combine("\u{0}"); return .null
            case .text(let text): hash.combine("t" + text); return .text(text)
            case .integer(let number): hash.combine("i\(number)"); return .integer(number)
            case .real(let number): hash.combine("r\(number)"); return .real(number)
            case .bool(let flag): hash.combine(flag ? "b1" : "b0"); return .integer(flag ? 1 : 0)
            case .list(let items):
                hash.combine("l\(items.count)")
                items.forEach { hash.combine($0) }
                lists[column.name] = items
                return .text(StoredList.encode(items))
            }
        }
        return StoredRow(key: record.key, line: record.line, contentHash: hash.signed, values: values, lists: lists)
    }
}
