import Foundation
import SiteSources
import SiteStore

extension BuildRun {
    /// After publishing: deletes the files no page has now, and records the manifest (with `planInputs`),
    /// the template files and the folder's history in the store, for the next build.
    func record(plan: RenderPlan, output: OutputFiles, history: OutputHistory, planInputs: Int64) throws {
        let writer = output.writer
        summary.problems += plan.collisions.map { SourceError(file: "sitegen.yml", reason: $0) }
        let rendered = writer.renderedFiles
        let (changed, removed) = plan.takeManifestChanges(hashes: rendered)
        // After an interrupted build every page was rendered, so the writer knows every file there should be.
        let removedHere = Set(removed)
        let stale = removed + history.leftHere.filter { !rendered.contains($0) && !removedHere.contains($0) }
        let (deleted, undeletable) = writer.deleteStale(stale, afterInterruption: history.interrupted ? rendered : nil,
                                                        made: history.interrupted ? output.newFiles.files() : [])
        summary.deletedPaths = deleted.sorted()
        // A file that could not be deleted stays in the manifest, so that the next build tries again.
        summary.problems += undeletable.map { SourceError(file: builder.outputDirectory.appendingPathComponent($0.path).path,
                                                          reason: "cannot be deleted (\($0.reason)), though no page has it now; the next build tries again") }
        let keptPaths = Set(undeletable.map(\.path))
        if output.strangersPossible { summary.warnings += builder.strangers(in: writer) }
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
        if let pieceSink { try store.transaction { try ItemFragmentStore.keep(onlyKeys: pieceSink.keysUsed, in: store.database) } }
        try store.setState("template-files", templateFiles.sorted { $0.key < $1.key }.map { "\($0.key)\t\($0.value)" }.joined(separator: "\n"))
        try forgetFilesLeft(history, except: keptPaths)
        // A mark of the output's last change, whichever process made it: a `serve` whose own build finds
        // nothing to do (a `build` in another terminal got there first) still reloads its open pages.
        if !options.dryRun && (writer.written > 0 || !summary.deletedPaths.isEmpty) {
            try store.setState("published", UUID().uuidString)
        }
        summary.publication = try store.state("published")
        // The manifest names every file there now (in a dry run, the store's changes are taken back).
        if !options.dryRun { output.newFiles.clear() }
        writer.spares?.trim()
        session?.spareListing = writer.spares?.listing()
        summary.renderedPages = plan.rendered
        summary.pagesKept = plan.kept
        summary.pagesLookedAt = plan.pagesLookedAt
        summary.manifestQueries = plan.manifestQueries
        summary.oldFilesRead = writer.oldFilesRead
        summary.listItemsReused = pieceSink?.reused ?? 0
        summary.listItemsRendered = pieceSink?.rendered ?? 0
        summary.writtenFiles = writer.renderedFiles
        summary.pagesDeleted = summary.deletedPaths.count
        summary.pagesWritten = writer.written
        summary.pagesUnchanged = writer.unchanged
        // A new store's first load, synced while the pages were made, is on the disk before the build ends.
        store.waitUntilDurable()
    }

    /// Forgets the files earlier builds left in this folder, now deleted or claimed by a page; one that could
    /// not be deleted (in `kept`) is remembered still, for the next build to try again.
    private func forgetFilesLeft(_ history: OutputHistory, except kept: Set<String>) throws {
        guard !history.leftHere.isEmpty else { return }
        for name in Set([history.folder, history.absolute]) { try store.forgetFiles(ofFolder: name) }
        let stillHere = history.leftHere.filter(kept.contains)
        if !stillHere.isEmpty { try store.remember(stillHere, ofFolder: history.folder) }
    }
}
