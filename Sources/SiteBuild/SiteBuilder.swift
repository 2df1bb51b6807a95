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
    public private(set) var storePath: URL
    /// A plan working on a copy of the store (`planningCopy()`).
    private var plansOnACopy = false
    /// Told, about twice a second, how the load of each source too large to read whole is going.
    public var onLoadProgress: ((LoadProgress) -> Void)?
    /// Told, about twice a second, how the pages of each listing and collection are coming along (only
    /// for steps that take longer than half a second).
    public var onRenderProgress: ((RenderProgress) -> Void)?
    /// Told when another sitegen process is building this site: this build waits for it to finish.
    public var onWaitingForAnotherBuild: (() -> Void)?
    /// What a `watch` or `serve` keeps between its builds (controllers, the manifest's index, the store's
    /// connection); nil for a build that reads them from the store.
    public var session: BuildSession?

    /// Prepares a build of the site at `root`; the output and store locations default to `output/` and `.sitegen/`.
    public init(root: URL, outputDirectory: URL? = nil, storePath: URL? = nil) {
        self.root = root.standardizedFileURL
        self.outputDirectory = outputDirectory ?? root.appendingPathComponent("output")
        self.storePath = storePath ?? root.appendingPathComponent(".sitegen/store.sqlite")
    }

    /// The output folder as the store names it: its path from the site's folder when it is inside it, so
    /// that a site moved or copied whole with its `output/` and `.sitegen/` (a CI cache restored at
    /// another path, a renamed checkout) still builds only what changed; its absolute path otherwise.
    var outputFolderName: String {
        for (output, site) in [(outputDirectory.standardizedFileURL.path, root.path),
                               (outputDirectory.standardizedFileURL.resolvingSymlinksInPath().path, root.resolvingSymlinksInPath().path)] {
            let prefix = site.hasSuffix("/") ? site : site + "/"
            if output.hasPrefix(prefix) { return String(output.dropFirst(prefix.count)) }
        }
        return outputDirectory.standardizedFileURL.path
    }

    /// How a build runs.
    public struct Options: Sendable {
        /// Plan only: load and render as usual, inside a transaction that is rolled back, and write nothing.
        public var dryRun = false
        /// Render every page, whatever the last build left (the output folder may have been edited by hand),
        /// from listings read afresh rather than caught up from their cached results.
        public var full = false
        /// The most pages one sitemap file lists, the sitemaps protocol's limit; past it, `sitemap.xml` is
        /// an index of files of this many (tests make it small).
        var pagesPerSitemap = 50_000
        /// Whether the render plan waits to be read until the controllers are fetched (tests ask, so that
        /// every controller is fetched ahead, as at 100,000 records).
        var plansAfterFetchingAhead = false
        /// The files and folders (relative to the site, or absolute) changed since the last build whose load
        /// was committed, when the caller knows them all (a watch, from inotify): the load then looks only
        /// at sources there and at those that failed, not at every source's status. nil: it looks at all.
        public var changedSources: Set<String>?
        /// Look for every page the last build left in the output folder, and make again those not there: a
        /// watch asks at its first build (pages deleted by hand since the last build) and after the output or
        /// store folder was deleted under it (`git clean -fdx`), whose files may have gone after a build had
        /// found them in place. A status read per page (on one thread, 0.33-0.44 s for 120,000).
        public var verifiesOutput = false

        /// Options for a build; the defaults write, rendering only the pages whose inputs changed.
        public init(dryRun: Bool = false, full: Bool = false, changedSources: Set<String>? = nil, verifiesOutput: Bool = false) {
            self.dryRun = dryRun
            self.full = full
            self.changedSources = changedSources
            self.verifiesOutput = verifiesOutput
        }
    }

    /// The entries of `manifest` whose files are in the folder `output`, read on two threads.
    private static func present(_ manifest: (paths: [String], records: [PageRecord]), in output: URL)
        -> (paths: [String], records: [PageRecord])
    {
        let folder = open(output.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return ([], []) }
        defer { close(folder) }
        let count = manifest.paths.count, parts = count >= 4_096 ? 2 : 1
        // Each thread writes its own half.
        nonisolated(unsafe) let missing = UnsafeMutableBufferPointer<Bool>.allocate(capacity: count)
        missing.initialize(repeating: false)
        defer { missing.deallocate() }
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            var status = stat()
            for index in count * part / parts..<count * (part + 1) / parts {
                missing[index] = fstatat(folder, manifest.paths[index], &status, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT
            }
        }
        guard missing.contains(true) else { return manifest }
        let kept = manifest.paths.indices.filter { !missing[$0] }
        return (kept.map { manifest.paths[$0] }, kept.map { manifest.records[$0] })
    }

    /// Why the output folder cannot hold this site's pages: it is (or holds) the site folder, where pages would
    /// lie among the sources, or is in the store's folder, `Templates/` or a folder a collection reads sources
    /// from (whose patterns could read the pages back as sources); nil when it can.
    func outputFolderProblem(_ config: SiteConfig) -> String? {
        let resolved = Self.realPath
        let output = resolved(outputDirectory), site = resolved(root)
        func isIn(_ folder: String) -> Bool { output == folder || output.hasPrefix(folder == "/" ? "/" : folder + "/") }
        if output == site || site.hasPrefix(output == "/" ? "/" : output + "/") {
            return (output == site ? "it is the site folder" : "it holds the site folder")
                + ": the pages would lie among its sources; write them to a folder of their own, such as output/ or docs/"
        }
        var places = [(resolved(storePath.deletingLastPathComponent()), "the store's folder"), (resolved(root.appendingPathComponent("Templates")), "Templates/")]
        for collection in config.collections {
            for pattern in collection.sources {
                let folder = SourceGlob(pattern: pattern).folder
                places.append((resolved(URL(fileURLWithPath: SourceGlob.location(of: folder, under: root.path))),
                               "'\(folder)', where collection '\(collection.name)' reads its sources"))
            }
        }
        // A folder that is the site's or holds it (a store beside `sitegen.yml`, `../*.csv`) holds every output
        // folder inside the site too: its patterns do not walk into the output.
        let below = places.filter { $0.0 != site && !site.hasPrefix($0.0 == "/" ? "/" : $0.0 + "/") }
        guard let (_, name) = below.first(where: { isIn($0.0) }) else { return nil }
        return "it is in \(name); write the pages to a folder of their own, such as output/ or docs/"
    }

    /// The path of `url` with its links resolved in the longest part of it that exists: Foundation leaves a
    /// path that does not exist (an output folder a first build makes) as it is, links in its parents included.
    static func realPath(_ url: URL) -> String {
        var existing = url.standardizedFileURL, rest: [String] = []
        while !FileManager.default.fileExists(atPath: existing.path), existing.path != "/" {
            rest.insert(existing.lastPathComponent, at: 0)
            existing = existing.deletingLastPathComponent()
        }
        guard let real = realpath(existing.path, nil) else { return url.standardizedFileURL.path }
        defer { free(real) }
        return ([String(cString: real)] + rest).joined(separator: "/").replacingOccurrences(of: "//", with: "/")
    }

    /// Whether a build of this process is waiting for another process's build of its site to finish: it
    /// has read and changed nothing yet, so the process may stop without waiting for it.
    public static var isWaitingForAnotherBuild: Bool { BuildLock.waiting.load(ordering: .sequentiallyConsistent) > 0 }

    /// Throws when the output folder cannot hold the site's pages (`outputFolderProblem`): what `watch` and
    /// `serve` ask before their first build, since no save would fix it. Says nothing while `sitegen.yml`
    /// does not load (the first build says why).
    public func checkOutputFolder() throws {
        guard let config = try? readConfig() else { return }
        try checkOutputFolder(for: config)
    }

    /// Throws when the output folder cannot hold the site's pages (`outputFolderProblem`), or is in a static
    /// folder, which would publish the last build's pages again as static files: before anything is written.
    func checkOutputFolder(for config: SiteConfig) throws {
        if let problem = outputFolderProblem(config) { throw BuildError.output(path: outputDirectory.path, reason: problem) }
        let output = Self.realPath(outputDirectory)
        for folder in config.staticFolders {
            let path = Self.realPath(root.appendingPathComponent(folder, isDirectory: true))
            guard output == path || output.hasPrefix(path + "/") else { continue }
            throw BuildError.config(ConfigError(file: config.file, at: config.staticMark, reason: "static folder '\(folder)' holds the output folder; "
                                                    + "write the site elsewhere, or name another static folder"))
        }
    }

    /// Runs the whole pipeline. Throws when the site cannot be built at all (configuration, templates);
    /// bad sources are reported in the summary and the rest still builds.
    ///
    /// Only the pages whose inputs changed since the last complete build are rendered (see `RenderPlan`);
    /// the result is the same, file for file, as a build from nothing.
    public func build(options: Options = Options()) throws -> BuildSummary {
        // A folder that is no site is said so before `.sitegen/` is made in it.
        if !FileManager.default.fileExists(atPath: root.appendingPathComponent("sitegen.yml").path) { _ = try readConfig() }
        if options.dryRun, !plansOnACopy, let scratch = try planningCopy() {
            // A plan changes nothing, not even by making a store: on a new site, or one whose `.sitegen/`
            // this user may not write (a read-only checkout), it plans on a copy of the store.
            defer { try? FileManager.default.removeItem(at: scratch) }
            var copy = self
            copy.storePath = scratch.appendingPathComponent("store.sqlite")
            copy.plansOnACopy = true
            copy.session = nil
            return try copy.build(options: options)
        }
        let lock = try BuildLock(beside: storePath, onWait: onWaitingForAnotherBuild)
        defer { withExtendedLifetime(lock) {} }
        // A plan's changes are taken back: the session's controllers would be ahead of the store.
        let session = options.dryRun ? nil : session
        let store = try session?.store(at: storePath.path) ?? SiteStore(path: storePath.path)
        var summary = BuildSummary(), loaded = false
        do {
            guard options.dryRun else { return try build(store: store, options: options, into: &summary, loaded: &loaded) }
            // A dry run changes the store as a build would, so that it plans exactly what a build would do,
            // then takes it all back.
            try store.database.execute("BEGIN IMMEDIATE")
            defer { try? store.database.execute("ROLLBACK") }
            return try build(store: store, options: options, into: &summary, loaded: &loaded)
        } catch let error as BuildError where loaded {
            session?.reset()
            // What the load found is said too: the next build sees those sources unchanged and would not.
            throw BuildError.stopped(error, summary: summary)
        } catch {
            session?.reset()
            throw error
        }
    }

    private func build(store: SiteStore, options: Options, into summary: inout BuildSummary, loaded: inout Bool) throws -> BuildSummary {
        summary.dryRun = options.dryRun
        var clock = StageClock()
        // A session's last settings and templates, when no change since was to sitegen.yml or Templates/.
        let kept = session?.settings(unlessChanged: options.changedSources)
        let config = try kept?.config ?? readConfig()
        try checkOutputFolder(for: config)
        let templates: TemplateSet
        do {
            if let kept { templates = kept.templates } else {
                templates = try TemplateSet(directory: root.appendingPathComponent("Templates"), displayFolder: "Templates")
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
        clock.lap("config", into: &summary)
        // Marked before the load commits: a build killed between the load and the manifest leaves the next
        // one a changeset it never sees, so that one renders every page. (One that stops at an error before
        // publishing keeps its changes for the next and takes the mark away: `keepPendingChanges`.)
        let folder = outputFolderName
        let (interrupted, recordedFolder) = try store.beginWritingOutput(to: folder)
        // Stores written before 2026-11-25 name every folder by its absolute path.
        let absolute = outputDirectory.standardizedFileURL.path
        let lastFolder = recordedFolder == absolute ? folder : recordedFolder
        // Building into another folder than the last build's: the manifest's files are that folder's, kept
        // under its name; those an earlier build left in this folder are deleted unless a page claims them.
        if let lastFolder, lastFolder != folder { try store.rememberFiles(ofFolder: lastFolder) }
        let leftHere = try store.rememberedFiles(ofFolder: folder) + (absolute == folder ? [] : try store.rememberedFiles(ofFolder: absolute))
        // The last manifest, and the plan indexed on it, are read on a connection of their own while this
        // one loads the sources (which never change the manifest): at 100,000 records, a tenth of what a
        // build with few changes spends on this thread. A dry run's load is an open transaction here, and
        // that connection still sees the manifest as committed, which is what it is.
        let output = outputDirectory
        let fetchedAhead = options.plansAfterFetchingAhead ? DispatchSemaphore(value: 0) : nil
        // A load that fails must not leave the plan's thread waiting.
        defer { fetchedAhead?.signal() }
        let planning = BackgroundWork { [storeFile = storePath.path, full = options.full, verifies = options.verifiesOutput,
                                      fetchedAhead, session] () throws -> (Int, RenderPlan) in
            fetchedAhead?.wait()
            let database = try Database(path: storeFile, readOnly: true)
            // A watch's index of the manifest its last build left, when no other build changed it since.
            let kept = verifies ? nil : session?.manifest(stamped: try SiteStore.manifestStamp(in: database))
            // Read in part, a row per page the plan asks about, unless it is to look at every page.
            let partial = kept != nil || verifies || full || interrupted ? nil : try ManifestIndex(reading: SiteStore.ManifestReader(database: database))
            let known = kept ?? partial
            var previous = known == nil ? try SiteStore.pageManifest(in: database) : (paths: [], records: [])
            let fileCount = known?.fileCount ?? previous.paths.count
            // The manifest describes the files of one folder as the last build left them: a build into another
            // folder, or into one emptied by hand (robots.txt is in every build), starts over.
            let renderAll: String? = full ? "full build requested" : interrupted ? "the last build did not finish"
                : fileCount == 0 ? "first build"
                : lastFolder.map { $0 != folder } ?? false ? "another output folder than the last build's"
                : !FileManager.default.fileExists(atPath: output.appendingPathComponent("robots.txt").path) ? "the output folder was emptied"
                : nil
            // A page that is not there is one the last build never made: rendered again as a new page, so
            // every page is looked at.
            if verifies && renderAll == nil { previous = Self.present(previous, in: output) }
            let manifest = known ?? ManifestIndex(paths: previous.paths, entries: previous.records)
            return (fileCount, RenderPlan(manifest: manifest, renderAllReason: renderAll, visitsEverything: verifies))
        }
        // The manifest's reader is closed before the build returns, whatever stops it, unless a session keeps
        // the index: the plan may be freed later, on the thread that read it.
        defer {
            fetchedAhead?.signal()
            if session == nil, let (_, plan) = try? planning.value() { plan.manifest.closeReader() }
        }
        var changes = try load(config: config, store: store, changedSources: options.full ? nil : options.changedSources,
                               readingEverySource: options.full, into: &summary)
        loaded = true
        // A build that stopped before publishing kept its load's changes: its pages are still to make, and
        // the controllers' caches may be past them, so every page is looked at.
        var changesPending = false
        if var pending = try store.pendingChanges() {
            pending.merge(changes)
            changes = pending
            changesPending = true
        }
        let related = try RelatedChanges(database: store.database, config: config).records(changedBy: changes)
        clock.lap("load", into: &summary)

        // A full build trusts nothing the last builds left, the listings' cached results included.
        if options.full { try store.transaction { try ResultsController.deleteAllCaches(in: store.database) } }
        // A dry run's connection holds its transaction open to the end: another writer would wait on it.
        // A session's controllers save their caches on its connection: a thread and a connection of their own each build cost more.
        let cacheWriter = options.dryRun || session != nil ? nil : CacheWriter(storePath: storePath.path)
        defer { cacheWriter?.finish() }
        var controllers = ControllerFetcher(config: config, templates: templates, database: store.database, changes: changes,
                                            cacheWriter: cacheWriter)
        controllers.progress = onRenderProgress
        controllers.session = session
        controllers.fetchAhead { !planning.isFinished }
        fetchedAhead?.signal()
        let (previousCount, plan) = try planning.value()
        // A first build into a folder with files in it looks for those it did not make, at the end; into an
        // empty one (a benchmark's, a CI's), it walks nothing.
        let strangersPossible = plan.renderAllReason == "first build" && !options.dryRun
            && (try? FileManager.default.contentsOfDirectory(atPath: outputDirectory.path))?.contains { !$0.hasPrefix(".") } == true
        let writer = OutputWriter(root: outputDirectory, dryRun: options.dryRun)
        writer.onWithdraw = { plan.withdraw($0, folderOf: $1) }
        if options.dryRun { writer.plannedPaths = { plan.currentPaths() } }
        let newFiles = NewFileLog(path: storePath.deletingLastPathComponent().appendingPathComponent("new-files").path)
        if !options.dryRun {
            writer.newFiles = newFiles
            let madeHere = Set(leftHere).union(interrupted ? newFiles.files() : [])
            writer.madeByLastBuilds = { plan.previous($0) != nil || madeHere.contains($0) }
            writer.claimedByThisBuild = { plan.claimant(of: [$0]) != nil }
            try? FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
            writer.spares = SpareFiles(folder: storePath.deletingLastPathComponent().appendingPathComponent("spare").path,
                                       outputRoot: outputDirectory.path, capacity: max(64, previousCount / 10))
        }
        // Workers read list pages' rows on connections of their own, which see what the load committed: a
        // dry run's load is never committed, so its rows are read here.
        let queue = RenderQueue(templates: templates, knownNames: config.templateNames, recordNames: config.recordFieldNames,
                                site: config.templateSite, writer: writer,
                                storePath: options.dryRun ? nil : storePath.path)
        let sourcesUsed = Dictionary(uniqueKeysWithValues: templates.names.map { ($0, templates.sources(usedBy: $0)) })
        let templateFingerprints = sourcesUsed.mapValues { Fingerprint.of($0.flatMap { [$0.name, $0.text] }) }
        // Each template file's own fingerprint, kept for the next build: a page rendered for a template edit
        // says which file it was (`--plan`), a partial's or a layout's, or one a dynamic partial may include.
        var templateFiles: [String: Int64] = [:]
        for source in sourcesUsed.values.joined() { templateFiles[source.name] = Fingerprint.of([source.name, source.text]) }
        let lastTemplateFiles = Self.templateFiles(from: try store.state("template-files"))
        if let lastTemplateFiles {
            let edited = Set(templateFiles.filter { lastTemplateFiles[$0.key] != $0.value }.keys), gone = Set(lastTemplateFiles.keys).subtracting(templateFiles.keys)
            for name in templates.names {
                let used = sourcesUsed[name, default: []].map(\.name)
                let dynamic = templates.usesChosenTemplates(name)
                let changed = used.filter(edited.contains).map { "\($0).mustache" + (lastTemplateFiles[$0] == nil ? " (new)" : "") }
                    + (dynamic ? gone.sorted().map { "\($0).mustache (deleted)" } : [])
                guard !changed.isEmpty, let fingerprint = templateFingerprints[name] else { continue }
                plan.templateReasons[fingerprint] = "template changed: " + changed.sorted().joined(separator: ", ")
                    + (dynamic && changed != ["\(name).mustache"] ? " (\(name).mustache includes a template its data names, which may be any)" : "")
            }
        }
        var renderer = PageRenderer(config: config, templates: templates, database: store.database, writer: writer, queue: queue,
                                    plan: plan, controllers: controllers, relatedChanges: related,
                                    templateFingerprints: templateFingerprints)
        renderer.progress = onRenderProgress
        renderer.pagesPerSitemap = options.pagesPerSitemap
        var publishing = false
        var planInputs: Int64 = 0
        do {
            do {
                try controllers.checkListingQueries()
                let navigation = try renderer.navigation()
                var site = Fingerprint()
                site.combine(config.settingsFingerprint)
                for item in navigation {
                    site.combine(item["title"] as? String ?? "")
                    site.combine(item["url"] as? String ?? "")
                }
                renderer.siteFingerprint = site.signed
                planInputs = planInputsFingerprint(config: config, site: site.signed, templates: templateFingerprints,
                                                   pagesPerSitemap: options.pagesPerSitemap)
                session?.check(inputs: planInputs)
                // Only the pages the deltas name are looked at when the pages the last build left were made
                // with these settings and templates, and its changes are all in the deltas.
                if try options.dryRun || changesPending || store.state("plan-inputs") != String(planInputs) { plan.visitEverything() }
                // A build of every page reads every row once: mapped, the store would count as its memory.
                if plan.visitsEverything { try store.readWithoutMapping() }
                for listing in config.listings {
                    summary.deltas.append(try renderer.renderListing(listing, navigation: navigation, warnings: &summary.warnings))
                }
                for collection in config.collections where collection.detail != nil {
                    let (problems, delta) = try renderer.renderDetails(of: collection, navigation: navigation)
                    summary.problems += problems
                    if let delta { summary.deltas.append(delta) }
                }
                // After the pages: an alias or a static file at a page's address is the one left out, and said so.
                summary.problems += try renderer.renderAliases()
                summary.warnings += try renderer.renderBundleResources(root: root)
                summary.warnings += try renderer.renderStaticFiles(root: root)
                // The sitemap lists every page, so it waits until all are planned; it is made while the
                // workers render the last of them (100,000 records: a twentieth of this thread's work).
                try renderer.renderSiteFiles(navigation: navigation)
                try queue.finish()
                clock.lap("render", into: &summary)
                summary.controllersFetchedAhead = controllers.takenAhead
                publishing = true
                try writer.publish()
                clock.lap("publish", into: &summary)
            } catch {
                // The workers stop before the error goes up (`watch` and `serve` go on running, so threads
                // left waiting would add up); the pages they wrote never take their places, and the
                // manifest is not saved.
                try? queue.finish()
                writer.discardUnpublished()
                // Stopped before publishing, the output folder is the last complete build's: the next build
                // needs only this one's changes to make what it did not (not every page, as after a kill).
                // Not after a killed build (its mark says what only a build of every page finishes), nor
                // into another folder than the last build's (the manifest is still that folder's).
                if !publishing && !options.dryRun && !interrupted && (lastFolder == nil || lastFolder == folder) {
                    cacheWriter?.finish()
                    _ = try? store.keepPendingChanges(changes)
                }
                throw error
            }
        } catch let error as TemplateError {
            throw BuildError.templates(error)
        } catch let error as CocoaError where error.code == .fileReadUnknown {
            throw BuildError.input(path: error.userInfo[NSFilePathErrorKey] as? String ?? root.path, reason: error.localizedDescription)
        } catch let error as CocoaError {
            throw BuildError.output(path: error.userInfo[NSFilePathErrorKey] as? String ?? outputDirectory.path,
                                    reason: error.localizedDescription)
        }
        summary.problems += plan.collisions.map { SourceError(file: "sitegen.yml", reason: $0) }

        // The snapshots are saved before this connection writes the manifest: one writer at a time.
        cacheWriter?.finish()
        let (changed, removed) = plan.takeManifestChanges(hashes: writer.manifest)
        // After an interrupted build every page was rendered, so the writer knows every file there should be.
        let removedHere = Set(removed)
        let stale = removed + leftHere.filter { writer.manifest[$0] == nil && !removedHere.contains($0) }
        let (deleted, undeletable) = writer.deleteStale(stale, afterInterruption: interrupted ? Set(writer.manifest.keys) : nil,
                                                        made: interrupted ? newFiles.files() : [])
        summary.deletedPaths = deleted.sorted()
        // A file that could not be deleted stays in the manifest, so that the next build tries again.
        summary.problems += undeletable.map { SourceError(file: outputDirectory.appendingPathComponent($0.path).path,
                                                          reason: "cannot be deleted (\($0.reason)), though no page has it now; the next build tries again") }
        let keptPaths = Set(undeletable.map(\.path))
        if strangersPossible {
            summary.warnings += strangers(in: writer)
        }
        let removedFromManifest = keptPaths.isEmpty ? removed : removed.filter { !keptPaths.contains($0) }
        let stamp = UUID().uuidString
        // The index is brought up to date for a session to keep, or where the plan's count of kept pages reads it;
        // a build of every page without a session only counts (decisions.md 39c).
        let counts: SiteStore.ManifestCounts
        if session == nil && plan.visitsEverything {
            counts = plan.manifest.counts(afterApplying: changed, removed: removedFromManifest)
        } else {
            plan.manifest.apply(changed: changed, removed: removedFromManifest)
            counts = plan.manifest.currentCounts
        }
        // Pages left out for an address another page has, and files that could not be deleted, are looked for
        // again by the next build, which then looks at every page: until the clash is fixed, or the file goes.
        try store.updatePageManifest(changed: changed, removed: removedFromManifest, stamp: stamp,
                                     planInputs: plan.collisionCount == 0 && undeletable.isEmpty ? String(planInputs) : "",
                                     counts: counts)
        session?.keep(plan.manifest, stamp: stamp)
        try store.setState("template-files", templateFiles.sorted { $0.key < $1.key }.map { "\($0.key)\t\($0.value)" }.joined(separator: "\n"))
        if !leftHere.isEmpty {
            for name in Set([folder, absolute]) { try store.forgetFiles(ofFolder: name) }
            // One that could not be deleted is remembered still, for the next build to try again.
            let stillHere = leftHere.filter(keptPaths.contains)
            if !stillHere.isEmpty { try store.remember(stillHere, ofFolder: folder) }
        }
        // A mark of the output's last change, whichever process made it: a `serve` whose own build finds
        // nothing to do (a `build` in another terminal got there first) still reloads its open pages.
        if !options.dryRun && (writer.written > 0 || !summary.deletedPaths.isEmpty) {
            try store.setState("published", UUID().uuidString)
        }
        summary.publication = try store.state("published")
        // The manifest names every file there now (in a dry run, the store's changes are taken back).
        if !options.dryRun { newFiles.clear() }
        writer.spares?.trim()
        summary.rendered = plan.rendered
        summary.pagesKept = plan.kept
        summary.pagesLookedAt = plan.pagesLookedAt
        summary.writtenPaths = writer.changed
        summary.pagesDeleted = summary.deletedPaths.count
        summary.pagesWritten = writer.written
        summary.pagesUnchanged = writer.unchanged
        // A new store's first load, synced while the pages were made, is on the disk before the build ends.
        store.waitUntilDurable()
        clock.lap("write", into: &summary)
        return summary
    }
}

extension SiteBuilder {
    /// The template files' fingerprints as the last build kept them (`name<TAB>fingerprint` lines).
    static func templateFiles(from text: String?) -> [String: Int64]? {
        guard let text else { return nil }
        var files: [String: Int64] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t")
            if parts.count == 2, let fingerprint = Int64(parts[1]) { files[String(parts[0])] = fingerprint }
        }
        return files
    }

    /// A first build into a folder that has files it did not make (an `output/` kept while `.sitegen/`
    /// was not, as a CI cache may): the pages of records deleted since are among them, and no build
    /// will delete them, as it deletes only what a build made. Said once, with a few of them.
    private func strangers(in writer: OutputWriter) -> [SourceError] {
        let made = writer.manifest
        guard let walker = FileManager.default.enumerator(at: outputDirectory, includingPropertiesForKeys: [.isRegularFileKey],
                                                          options: [.skipsHiddenFiles]) else { return [] }
        let prefix = outputDirectory.standardizedFileURL.path + "/"
        var found: [String] = []
        // Files of the names sitegen writes: a CNAME or notes of your own are no sign of an old build.
        let names: Set<String> = ["index.html", "index.md", "atom.xml", "rss.xml", "feed.json", "404.html", "robots.txt"]
        for case let url as URL in walker where names.contains(url.lastPathComponent) || url.lastPathComponent.hasPrefix("sitemap") {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            let path = String(url.standardizedFileURL.path.dropFirst(prefix.count))
            if made[path] == nil { found.append(path) }
        }
        guard !found.isEmpty else { return [] }
        let shown = found.sorted().prefix(3).joined(separator: ", ") + (found.count > 3 ? ", …" : "")
        return [SourceError(file: outputDirectory.lastPathComponent, reason: "\(found.count) file\(found.count == 1 ? "" : "s") here this build did not "
            + "make (\(shown)), and its store is new: pages of records deleted since the folder was built stay, as builds delete only "
            + "pages they made; empty the folder for a clean build")]
    }

    /// Loads the site's sources into the store and renders nothing: the first stage of `build()`, for
    /// tools and benchmarks that want the store alone.
    public func loadSources() throws -> BuildSummary {
        var summary = BuildSummary()
        var clock = StageClock()
        let config = try readConfig()
        let lock = try BuildLock(beside: storePath, onWait: onWaitingForAnotherBuild)
        defer { withExtendedLifetime(lock) {} }
        let store = try SiteStore(path: storePath.path)
        clock.lap("config", into: &summary)
        // The next build will not see this load's changes: it must render every page.
        try store.beginWritingOutput()
        try load(config: config, store: store, into: &summary)
        clock.lap("load", into: &summary)
        return summary
    }

    /// A new temporary folder holding a copy of the store (none, when there is none) for a plan to work in,
    /// when the store is not there or its folder may not be written; nil when the plan can use the store.
    private func planningCopy() throws -> URL? {
        let folder = storePath.deletingLastPathComponent().path
        let exists = FileManager.default.fileExists(atPath: storePath.path)
        guard !exists || access(folder, W_OK) != 0 || access(storePath.path, W_OK) != 0 else { return nil }
        // Copied while no build writes it: a shared lock on the lock file a build holds alone.
        let lockFile = open(storePath.deletingLastPathComponent().appendingPathComponent("lock").path, O_RDONLY | O_CLOEXEC)
        defer { if lockFile >= 0 { close(lockFile) } }
        if lockFile >= 0 { while flock(lockFile, LOCK_SH) != 0 && errno == EINTR {} }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("sitegen-plan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        if exists {
            // The file as it is, with a write-ahead log a killed build left: SQLite cannot open a store in
            // a folder it may not write in.
            do {
                for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: storePath.path + suffix) {
                    let copy = scratch.appendingPathComponent("store.sqlite" + suffix).path
                    try FileManager.default.copyItem(atPath: storePath.path + suffix, toPath: copy)
                    // The copy keeps the store's mode, which may forbid writing it.
                    chmod(copy, 0o600)
                }
            } catch {
                try? FileManager.default.removeItem(at: scratch)
                throw BuildError.input(path: storePath.path, reason: "cannot be copied for a plan: \(error.localizedDescription)")
            }
        }
        return scratch
    }

    func readConfig() throws -> SiteConfig {
        do {
            return try SiteConfig(contentsOf: root.appendingPathComponent("sitegen.yml"), displayName: "sitegen.yml")
        } catch {
            throw BuildError.config(error)
        }
    }

    /// Loads the sources and returns what changed in the store.
    @discardableResult
    func load(config: SiteConfig, store: SiteStore, changedSources: Set<String>? = nil, readingEverySource: Bool = false,
              into summary: inout BuildSummary) throws -> Changeset {
        var loader = CollectionLoader(root: root, config: config, store: store)
        loader.changedPaths = changedSources
        loader.readsEverySource = readingEverySource
        loader.outputFolder = outputDirectory.standardizedFileURL.path
        loader.progress = onLoadProgress
        let loaded: CollectionLoader.Outcome
        do {
            loaded = try loader.load()
        } catch let failure as CollectionLoader.RebuildFailed {
            throw BuildError.newFieldsFailed(collection: failure.collection, problems: failure.problems)
        }
        summary.problems += loaded.problems
        summary.warnings += config.collections.flatMap { $0.hiddenFields(file: config.file) }
            + config.collections.compactMap { $0.htmlBodyAsMarkdown(file: config.file, allowsRawHTML: config.allowsRawHTML) }
            + untitledFeeds(config) + loaded.warnings
        summary.sourcesRead = loaded.sourcesRead
        summary.sourcesUnchanged = loaded.sourcesUnchanged
        summary.sourcesSameBytes = loaded.sourcesSameBytes
        // Records only: the rows of list join tables are not records.
        for (table, changes) in loaded.changeset.tables where config.collection(named: table) != nil {
            summary.rowsInserted += changes.inserted.count
            summary.rowsUpdated += changes.updated.count
            summary.rowsDeleted += changes.deleted.count
        }
        summary.warnings += try danglingReferences(config: config, store: store, changed: Set(loaded.changeset.tables.keys))
        return loaded.changeset
    }

    /// Warns about listings whose feeds would title every entry by its record's key: the collection has
    /// no `title` field and no detail page naming one.
    private func untitledFeeds(_ config: SiteConfig) -> [SourceError] {
        config.listings.compactMap { listing in
            guard !listing.feeds.isEmpty, let collection = config.collection(named: listing.from), !collection.hasTitles else { return nil }
            let mark = listing.marks["feeds"] ?? listing.marks[""]
            return SourceError(file: config.file, line: mark?.line, column: mark?.column, reason:
                "listing '\(listing.name)': its feeds title each entry by its key, since collection '\(collection.name)' has no "
                    + "'title' field; name one in its detail (detail: {path: ..., title: FIELD}) or call a field 'title'")
        }
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

/// Work started on a thread of its own, whose result the caller waits for when it needs it.
final class BackgroundWork<Value>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    // Written by the worker before it signals, read by the caller after waiting: the semaphore orders them.
    private var result: Result<Value, any Error>?

    /// Starts `work` at once.
    init(_ work: @escaping @Sendable () throws -> Value) {
        let thread = Thread { [self] in
            result = Result { try work() }
            done.signal()
        }
        thread.start()
    }

    /// Whether the work has ended, so that `value()` would not wait.
    var isFinished: Bool {
        guard done.wait(timeout: .now()) == .success else { return false }
        done.signal()
        return true
    }

    /// Waits for the work to end; its value, or the error it threw.
    func value() throws -> Value {
        done.wait()
        done.signal()
        return try result!.get()
    }
}

extension SiteBuilder {
    /// The fingerprint of everything besides the records that the pages are made of: the settings and the
    /// menu (`site`), each listing's and collection's declaration, the templates, the sitemap's size. A build
    /// whose fingerprint is the last build's looks only at the pages its deltas name.
    func planInputsFingerprint(config: SiteConfig, site: Int64, templates: [String: Int64], pagesPerSitemap: Int) -> Int64 {
        var fingerprint = Fingerprint()
        fingerprint.combine(site)
        fingerprint.combine(pagesPerSitemap)
        for listing in config.listings { fingerprint.combine(listing.fingerprint) }
        for collection in config.collections { fingerprint.combine(collection.fingerprint) }
        for (name, template) in templates.sorted(by: { $0.key < $1.key }) {
            fingerprint.combine(name)
            fingerprint.combine(template)
        }
        return fingerprint.signed
    }
}
