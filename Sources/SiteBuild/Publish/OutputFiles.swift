import Foundation
import SiteStore

/// The output writer of one build, told what the plan and the store's history know of the folder's files.
struct OutputFiles {
    /// Writes the pages beside their places and publishes them at the end.
    let writer: OutputWriter
    /// The files this build makes, logged before they appear: a killed build's are found by the next.
    let newFiles: NewFileLog
    /// A first build into a folder with files in it looks for those it did not make, at the end; into an
    /// empty one (a benchmark's, a CI's), it walks nothing.
    let strangersPossible: Bool

    /// The writer of `builder`'s output folder for a build planned by `plan`.
    init(for builder: SiteBuilder, plan: RenderPlan, history: OutputHistory, previousCount: Int, dryRun: Bool, session: BuildSession?) {
        let folder = builder.outputDirectory
        strangersPossible = plan.renderAllReason == "first build" && !dryRun
            && (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.contains { !$0.hasPrefix(".") } == true
        let storeFolder = builder.storePath.deletingLastPathComponent()
        writer = OutputWriter(root: folder, dryRun: dryRun)
        writer.progress = builder.onPublishProgress
        writer.progressInterval = builder.progressInterval
        newFiles = NewFileLog(path: storeFolder.appendingPathComponent("new-files").path)
        writer.onWithdraw = { plan.withdraw($0, folderOf: $1) }
        guard !dryRun else {
            writer.plannedPaths = { plan.currentPaths() }
            return
        }
        writer.newFiles = newFiles
        // A build of every page (`--full`, a first build, after a killed one) trusts nothing earlier builds
        // left: temporary files of any of them are looked for too.
        writer.sweepsTemporaries = plan.renderAllReason != nil
        let madeHere = Set(history.leftHere).union(history.interrupted ? newFiles.files() : [])
        writer.madeByLastBuilds = { plan.previous($0) != nil || madeHere.contains($0) }
        writer.claimedByThisBuild = { plan.claimant(of: [$0]) != nil }
        writer.lastHash = { plan.lastHash(of: $0) }
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        writer.spares = SpareFiles(folder: storeFolder.appendingPathComponent("spare").path,
                                   outputRoot: folder.path, capacity: max(64, previousCount / 10), remembered: session?.spareListing)
        session?.spareListing = nil
    }
}
