import Foundation
import ResultsController
import SiteRender
import SiteSources
import SiteStore

/// Builds a site: loads its sources into the store, runs each listing through a results controller,
/// renders listing and detail pages through the templates, and writes them under the output folder.
///
/// ```swift
/// let summary = try SiteBuilder(root: URL(fileURLWithPath: "."), outputDirectory: nil).build()
/// print(summary.report)
/// ```
public struct SiteBuilder {
    /// The site root: where `sitegen.yml`, `content/` and `Templates/` are.
    public let root: URL
    /// Where pages go; `output/` under the root by default.
    public let outputDirectory: URL
    /// Where the store lives; `.sitegen/store.sqlite` under the root by default.
    public let storePath: URL
    /// Told, about twice a second, how the load of each source too large to read whole is going.
    public var onLoadProgress: ((LoadProgress) -> Void)?
    /// Told, about twice a second, how the pages of each listing and collection are coming along (only
    /// for steps that take longer than half a second).
    public var onRenderProgress: ((RenderProgress) -> Void)?

    /// Prepares a build of the site at `root`; the output and store locations default to `output/` and `.sitegen/`.
    public init(root: URL, outputDirectory: URL? = nil, storePath: URL? = nil) {
        self.root = root.standardizedFileURL
        self.outputDirectory = outputDirectory ?? root.appendingPathComponent("output")
        self.storePath = storePath ?? root.appendingPathComponent(".sitegen/store.sqlite")
    }

    /// Runs the whole pipeline. Throws when the site cannot be built at all (configuration, templates);
    /// bad sources are reported in the summary and the rest still builds.
    public func build() throws -> BuildSummary {
        var summary = BuildSummary()
        var clock = StageClock()
        let config = try readConfig()
        let templates: TemplateSet
        do {
            templates = try TemplateSet(directory: root.appendingPathComponent("Templates"))
        } catch {
            throw BuildError.templates(error)
        }
        let store = try SiteStore(path: storePath.path)
        clock.lap("config", into: &summary)
        try load(config: config, store: store, into: &summary)
        clock.lap("load", into: &summary)

        let interrupted = try store.beginWritingOutput()
        let writer = OutputWriter(root: outputDirectory)
        let queue = RenderQueue(templates: templates, knownNames: config.templateNames, writer: writer)
        var renderer = PageRenderer(config: config, templates: templates, database: store.database, writer: writer, queue: queue)
        renderer.progress = onRenderProgress
        do {
            let navigation = try renderer.navigation()
            do {
                for listing in config.listings { try renderer.renderListing(listing, navigation: navigation) }
                for collection in config.collections where collection.detail != nil {
                    summary.problems += try renderer.renderDetails(of: collection, navigation: navigation)
                }
                try queue.finish()
            } catch {
                // The workers stop before the error goes up; what they wrote stays, the manifest is not saved.
                try? queue.finish()
                throw error
            }
            // The sitemap lists every page, so it waits for all of them.
            try renderer.renderSiteFiles(navigation: navigation)
        } catch let error as TemplateError {
            throw BuildError.templates(error)
        } catch let error as CocoaError {
            throw BuildError.output(path: error.userInfo[NSFilePathErrorKey] as? String ?? outputDirectory.path,
                                    reason: error.localizedDescription)
        }
        clock.lap("render", into: &summary)

        summary.pagesDeleted = writer.deleteStale(previous: try store.outputManifest(), everyFile: interrupted)
        try store.transaction { try store.replaceOutputManifest(writer.manifest) }
        summary.pagesWritten = writer.written
        summary.pagesUnchanged = writer.unchanged
        clock.lap("write", into: &summary)
        return summary
    }
}

extension SiteBuilder {
    /// Loads the site's sources into the store and renders nothing: the first stage of `build()`, for
    /// tools and benchmarks that want the store alone.
    public func loadSources() throws -> BuildSummary {
        var summary = BuildSummary()
        var clock = StageClock()
        let config = try readConfig()
        let store = try SiteStore(path: storePath.path)
        clock.lap("config", into: &summary)
        try load(config: config, store: store, into: &summary)
        clock.lap("load", into: &summary)
        return summary
    }

    func readConfig() throws -> SiteConfig {
        do {
            return try SiteConfig(contentsOf: root.appendingPathComponent("sitegen.yml"), displayName: "sitegen.yml")
        } catch {
            throw BuildError.config(error)
        }
    }

    func load(config: SiteConfig, store: SiteStore, into summary: inout BuildSummary) throws {
        var loader = CollectionLoader(root: root, config: config, store: store)
        loader.progress = onLoadProgress
        let loaded = try loader.load()
        summary.problems += loaded.problems
        summary.warnings += loaded.warnings
        summary.sourcesRead = loaded.sourcesRead
        summary.sourcesUnchanged = loaded.sourcesUnchanged
        // Records only: the rows of list join tables are not records.
        for (table, changes) in loaded.changeset.tables where config.collection(named: table) != nil {
            summary.rowsInserted += changes.inserted.count
            summary.rowsUpdated += changes.updated.count
            summary.rowsDeleted += changes.deleted.count
        }
        summary.warnings += try danglingReferences(config: config, store: store, changed: Set(loaded.changeset.tables.keys))
    }

    /// Warns about keys in relationship fields that name no record, for the collections whose rows, or
    /// whose related collections' rows, this load changed (a reference breaks from either side).
    private func danglingReferences(config: SiteConfig, store: SiteStore, changed: Set<String>) throws -> [SourceError] {
        let limit = 10
        var warnings: [SourceError] = []
        for collection in config.collections where !collection.relationships.isEmpty {
            let touched = changed.contains(collection.name) || collection.relationships.contains {
                changed.contains($0.target) || changed.contains(CollectionSchema.listTable(collection.name, $0.field))
            }
            guard touched else { continue }
            let found = try RelatedRecords(database: store.database, collection: collection).danglingKeys(limit: limit + 1)
            for reference in found.prefix(limit) {
                let target = collection.relationships.first { $0.field == reference.field }?.target ?? ""
                warnings.append(SourceError(file: reference.source, line: reference.line, reason:
                    "record '\(reference.key)': \(reference.field) '\(reference.missing)' is not a key of '\(target)'; templates see no record for it"))
            }
            if found.count > limit {
                warnings.append(SourceError(file: "sitegen.yml", reason:
                    "collection '\(collection.name)': more records refer to missing keys; only the first \(limit) are listed"))
            }
        }
        return warnings
    }
}

/// Measures the time each stage takes.
private struct StageClock {
    private var start = DispatchTime.now()

    mutating func lap(_ stage: String, into summary: inout BuildSummary) {
        let now = DispatchTime.now()
        summary.stageSeconds.append((stage, Double(now.uptimeNanoseconds - start.uptimeNanoseconds) / 1e9))
        start = now
    }
}
