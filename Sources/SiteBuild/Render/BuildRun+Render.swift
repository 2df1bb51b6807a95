import Foundation
import ResultsController
import SiteRender
import SiteSources
import SiteStore

extension BuildRun {
    /// Renders the pages the plan names and publishes them; returns the fingerprint of the plan's inputs
    /// (settings, menu, declarations, templates), kept with the manifest for the next build.
    func renderAndPublish(_ site: Site, plan: RenderPlan, controllers: ControllerFetcher, related: [String: Set<Int64>],
                          output: OutputFiles, changes: Changes, history: OutputHistory, cacheWriter: CacheWriter?,
                          clock: inout StageClock) throws -> Int64
    {
        // Workers read list pages' rows on connections of their own, which see what the load committed: a
        // dry run's load is never committed, so its rows are read here.
        let queue = RenderQueue(templates: site.templates, knownNames: site.config.templateNames, recordNames: site.config.recordFieldNames,
                                site: site.config.templateSite, writer: output.writer,
                                storePath: options.dryRun ? nil : builder.storePath.path, keptConnections: session?.workerConnections)
        let templateFingerprints = try explainTemplateChanges(site.templates, to: plan)
        var renderer = PageRenderer(config: site.config, templates: site.templates, database: store.database, writer: output.writer,
                                    queue: queue, plan: plan, controllers: controllers, relatedChanges: related,
                                    templateFingerprints: templateFingerprints)
        renderer.progress = builder.onRenderProgress
        renderer.pagesPerSitemap = options.pagesPerSitemap
        renderer.pieceSink = pieceSink
        var publishing = false
        do {
            do {
                let planInputs = try render(with: &renderer, site: site, plan: plan, controllers: controllers,
                                            templateFingerprints: templateFingerprints, changes: changes)
                try queue.finish()
                pieceSink?.finish()
                clock.lap("render", into: &summary)
                summary.controllersFetchedAhead = controllers.takenAhead
                publishing = true
                try output.writer.publish()
                clock.lap("publish", into: &summary)
                return planInputs
            } catch {
                // The workers stop before the error goes up (`watch` and `serve` go on running, so threads
                // left waiting would add up); the pages they wrote never take their places, and the
                // manifest is not saved.
                try? queue.finish()
                pieceSink?.finish()
                output.writer.discardUnpublished()
                // Stopped before publishing, the output folder is the last complete build's: the next build
                // needs only this one's changes to make what it did not.
                if !publishing && !options.dryRun && history.keepsUnpublishedChanges {
                    cacheWriter?.finish()
                    _ = try? store.keepPendingChanges(changes.changeset)
                }
                throw error
            }
        } catch let error as TemplateError {
            throw BuildError.templates(error)
        } catch let error as CocoaError where error.code == .fileReadUnknown {
            throw BuildError.input(path: error.userInfo[NSFilePathErrorKey] as? String ?? builder.root.path, reason: error.localizedDescription)
        } catch let error as CocoaError {
            throw BuildError.output(path: error.userInfo[NSFilePathErrorKey] as? String ?? builder.outputDirectory.path,
                                    reason: error.localizedDescription)
        }
    }

    /// Queues every page the plan looks at: the listings', the detail pages, aliases, bundles' and static
    /// files, then the site files (the sitemap lists every page, so it waits until all are planned).
    private func render(with renderer: inout PageRenderer, site: Site, plan: RenderPlan, controllers: ControllerFetcher,
                        templateFingerprints: [String: Int64], changes: Changes) throws -> Int64
    {
        try controllers.checkListingQueries()
        let navigation = try renderer.navigation()
        var menu = Fingerprint()
        menu.combine(site.config.settingsFingerprint)
        for item in navigation {
            menu.combine(item["title"] as? String ?? "")
            menu.combine(item["url"] as? String ?? "")
        }
        renderer.siteFingerprint = menu.signed
        let planInputs = builder.planInputsFingerprint(config: site.config, site: menu.signed, templates: templateFingerprints,
                                                       pagesPerSitemap: options.pagesPerSitemap)
        session?.check(inputs: planInputs)
        // Only the pages the deltas name are looked at when the pages the last build left were made with these
        // settings and templates, and its changes are all in the deltas.
        if try options.dryRun || changes.includesPending || store.state("plan-inputs") != String(planInputs) { plan.visitEverything() }
        // A build of every page reads every row once: mapped, the store would count as its memory.
        if plan.visitsEverything { try store.readWithoutMapping() }
        for listing in site.config.listings {
            summary.deltas.append(try renderer.renderListing(listing, navigation: navigation, warnings: &summary.warnings))
        }
        for collection in site.config.collections where collection.detail != nil {
            let (problems, delta) = try renderer.renderDetails(of: collection, navigation: navigation)
            summary.problems += problems
            if let delta { summary.deltas.append(delta) }
        }
        // After the pages: an alias or a static file at a page's address is the one left out, and said so.
        summary.problems += try renderer.renderAliases()
        summary.warnings += try renderer.renderBundleResources(root: builder.root)
        summary.warnings += try renderer.renderStaticFiles(root: builder.root)
        // Made while the workers render the last pages (100,000 records: a twentieth of this thread's work).
        try renderer.renderSiteFiles(navigation: navigation)
        return planInputs
    }

    /// Each template's fingerprint (its file and every partial and layout it uses); tells `plan` which
    /// template files changed since the last build, so that a page rendered for it says which (`--plan`):
    /// a partial's or a layout's, or one a dynamic partial may include.
    private func explainTemplateChanges(_ templates: TemplateSet, to plan: RenderPlan) throws -> [String: Int64] {
        let sourcesUsed = Dictionary(uniqueKeysWithValues: templates.names.map { ($0, templates.sources(usedBy: $0)) })
        let fingerprints = sourcesUsed.mapValues { Fingerprint.of($0.flatMap { [$0.name, $0.text] }) }
        var files: [String: Int64] = [:]
        for source in sourcesUsed.values.joined() { files[source.name] = Fingerprint.of([source.name, source.text]) }
        templateFiles = files
        guard let last = SiteBuilder.templateFiles(from: try store.state("template-files")) else { return fingerprints }
        let edited = Set(files.filter { last[$0.key] != $0.value }.keys), gone = Set(last.keys).subtracting(files.keys)
        for name in templates.names {
            let used = sourcesUsed[name, default: []].map(\.name)
            let dynamic = templates.usesChosenTemplates(name)
            let changed = used.filter(edited.contains).map { "\($0).mustache" + (last[$0] == nil ? " (new)" : "") }
                + (dynamic ? gone.sorted().map { "\($0).mustache (deleted)" } : [])
            guard !changed.isEmpty, let fingerprint = fingerprints[name] else { continue }
            plan.templateReasons[fingerprint] = "template changed: " + changed.sorted().joined(separator: ", ")
                + (dynamic && changed != ["\(name).mustache"] ? " (\(name).mustache includes a template its data names, which may be any)" : "")
        }
        return fingerprints
    }
}
