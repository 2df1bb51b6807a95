import Foundation
import ResultsController
import SiteRender
import SiteSources
import SiteStore

/// One build's way through the pipeline — configure, load, plan, render, publish, record — and what its
/// stages hand each other. `SiteBuilder.build` makes one per build; `run()` reads as the pipeline.
final class BuildRun {
    let builder: SiteBuilder
    let store: SiteStore
    let options: SiteBuilder.Options
    /// The watch's or server's state kept between builds; nil for a build on its own (and for a plan).
    let session: BuildSession?
    /// What the build found and did; the caller reads it when the build stops with an error too.
    var summary = BuildSummary()
    /// Whether the load has run: a build stopped after it reports what it loaded.
    private(set) var loaded = false
    /// Each template file's own fingerprint, kept for the next build to say which one changed.
    var templateFiles: [String: Int64] = [:]
    /// Keeps the list items' pieces this build renders (none in a plan, which writes nothing).
    private(set) lazy var pieceSink: ItemPieceSink? = options.dryRun ? nil : ItemPieceSink(storePath: builder.storePath.path)

    /// A run of `builder`'s pipeline on `store`.
    init(builder: SiteBuilder, store: SiteStore, options: SiteBuilder.Options, session: BuildSession?) {
        self.builder = builder
        self.store = store
        self.options = options
        self.session = session
    }

    /// The settings and templates the pages are made with.
    struct Site {
        let config: SiteConfig
        let templates: TemplateSet
    }

    /// Runs every stage; returns what the build did.
    func run() throws -> BuildSummary {
        summary.dryRun = options.dryRun
        var clock = StageClock()
        let site = try configure()
        clock.lap("config", into: &summary)
        let history = try OutputHistory(beginningIn: store, for: builder)
        // Tests may hold the plan's reading until the controllers are fetched ahead.
        let fetchedAhead = options.plansAfterFetchingAhead ? DispatchSemaphore(value: 0) : nil
        let planning = readPlan(history: history, after: fetchedAhead)
        defer {
            // A load that fails must not leave the plan's thread waiting.
            fetchedAhead?.signal()
            closeManifestReader(of: planning)
        }
        let changes = try load(site.config)
        loaded = true
        let related = try RelatedChanges(database: store.database, config: site.config).records(changedBy: changes.changeset)
        clock.lap("load", into: &summary)

        // A full build trusts nothing the last builds left, the listings' cached results included.
        if options.full {
            try store.transaction {
                try ResultsController.deleteAllCaches(in: store.database)
                try ItemFragmentStore.dropAll(in: store.database)
            }
        }
        // A dry run's connection holds its transaction open to the end: another writer would wait on it. A
        // session's controllers save their caches on its connection (a thread and a connection of their own
        // each build cost more).
        let cacheWriter = options.dryRun || session != nil ? nil : CacheWriter(storePath: builder.storePath.path)
        defer { cacheWriter?.finish() }
        var controllers = ControllerFetcher(config: site.config, templates: site.templates, database: store.database,
                                            changes: changes.changeset, cacheWriter: cacheWriter)
        controllers.progress = builder.onRenderProgress
        controllers.session = session
        controllers.fetchAhead { !planning.isFinished }
        fetchedAhead?.signal()
        let (previousCount, plan) = try planning.value()
        let output = OutputFiles(for: builder, plan: plan, history: history, previousCount: previousCount, dryRun: options.dryRun,
                                 session: session)
        clock.lap("plan", into: &summary)
        let planInputs = try renderAndPublish(site, plan: plan, controllers: controllers, related: related, output: output,
                                              changes: changes, history: history, cacheWriter: cacheWriter, clock: &clock)
        // The snapshots are saved before this connection writes the manifest: one writer at a time.
        cacheWriter?.finish()
        try record(plan: plan, output: output, history: history, planInputs: planInputs)
        clock.lap("write", into: &summary)
        return summary
    }

    /// The settings and templates: a session's, when nothing since its last build changed them, else read
    /// afresh; checked against each other.
    private func configure() throws -> Site {
        let kept = session?.settings(unlessChanged: options.changedSources)
        let config = try kept?.config ?? builder.readConfig()
        try builder.checkOutputFolder(for: config)
        let templates: TemplateSet
        do {
            if let kept { templates = kept.templates } else {
                templates = try TemplateSet(directory: builder.root.appendingPathComponent("Templates"), displayFolder: "Templates")
            }
            try templates.checkTransforms()
        } catch {
            throw BuildError.templates(error)
        }
        session?.keep(config, templates)
        do {
            try config.checkTemplates(in: templates)
        } catch {
            throw BuildError.config(error)
        }
        return Site(config: config, templates: templates)
    }

    /// The changes the pages are made from: this load's, and those a build that stopped before publishing
    /// left for the next (then every page is looked at).
    struct Changes {
        let changeset: Changeset
        /// Whether the changeset holds an earlier build's changes besides this load's.
        let includesPending: Bool
    }

    /// Loads the sources into the store (only those changed, when a watch knows which).
    private func load(_ config: SiteConfig) throws -> Changes {
        let loaded = try builder.load(config: config, store: store, changedSources: options.full ? nil : options.changedSources,
                                      readingEverySource: options.full, network: options.network, into: &summary)
        guard var pending = try store.pendingChanges() else { return Changes(changeset: loaded, includesPending: false) }
        pending.merge(loaded)
        return Changes(changeset: pending, includesPending: true)
    }

    /// Starts reading the last build's manifest, and the plan indexed on it, on a connection of its own
    /// while this one loads the sources (which never change the manifest): at 100,000 records, a tenth of
    /// what a build with few changes spends on this thread. A dry run's load is an open transaction here,
    /// and that connection still sees the manifest as committed, which is what it is.
    private func readPlan(history: OutputHistory, after fetchedAhead: DispatchSemaphore?) -> BackgroundWork<(Int, RenderPlan)> {
        let output = builder.outputDirectory
        return BackgroundWork { [storeFile = builder.storePath.path, full = options.full, verifies = options.verifiesOutput,
                                 fetchedAhead, session] () throws -> (Int, RenderPlan) in
            fetchedAhead?.wait()
            let database = try Database(path: storeFile, readOnly: true)
            // A watch's index of the manifest its last build left, when no other build changed it since.
            let kept = verifies ? nil : session?.manifest(stamped: try SiteStore.manifestStamp(in: database))
            // Read in part, a row per page the plan asks about, unless it is to look at every page.
            let partial = kept != nil || verifies || full || history.interrupted
                ? nil : try ManifestIndex(reading: SiteStore.ManifestReader(database: database, storePath: storeFile))
            let known = kept ?? partial
            var previous = known == nil ? try SiteStore.pageManifest(in: database) : (paths: [], records: [])
            let fileCount = known?.fileCount ?? previous.paths.count
            let renderAll = full ? "full build requested" : history.reasonToStartOver(fileCount: fileCount, output: output)
            // A page that is not there is one the last build never made: rendered again as a new page, so
            // every page is looked at.
            if verifies && renderAll == nil { previous = SiteBuilder.present(previous, in: output) }
            let manifest = known ?? ManifestIndex(paths: previous.paths, entries: previous.records)
            return (fileCount, RenderPlan(manifest: manifest, renderAllReason: renderAll, visitsEverything: verifies))
        }
    }

    /// Lets go of the manifest reader's connection before the build returns, whatever stops it, unless a
    /// session keeps the index: then only the read its lookups shared ends. The plan may be freed later, on
    /// the thread that read it.
    private func closeManifestReader(of planning: BackgroundWork<(Int, RenderPlan)>) {
        guard let (_, plan) = try? planning.value() else { return }
        if session == nil { plan.manifest.closeReader() } else { plan.manifest.endRead() }
    }
}

/// Measures the time each stage takes.
struct StageClock {
    private var start = DispatchTime.now()

    /// Records the time since the last lap as `stage`'s.
    mutating func lap(_ stage: String, into summary: inout BuildSummary) {
        let now = DispatchTime.now()
        summary.stageSeconds.append((stage, Double(now.uptimeNanoseconds - start.uptimeNanoseconds) / 1e9))
        start = now
    }
}
