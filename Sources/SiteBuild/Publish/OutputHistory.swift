import Foundation
import SiteStore

/// What the store remembers of the output folder: whether the last build was stopped while it wrote, the
/// folder it wrote to, and the files earlier builds left in this one.
struct OutputHistory: Sendable {
    /// The last build was killed between its load and its manifest: only a build of every page finishes it.
    let interrupted: Bool
    /// The output folder as the store names it (`SiteBuilder.outputFolderName`).
    let folder: String
    /// The output folder's absolute path, as stores written before 2026-11-25 name every folder.
    let absolute: String
    /// The folder the last build wrote to; nil before the first.
    let lastFolder: String?
    /// Files earlier builds made in this folder while building into another: deleted unless a page claims them.
    let leftHere: [String]

    /// Marks `store` as writing `builder`'s output folder, and reads what it remembers of it. Marked before
    /// the load commits: a build killed between the load and the manifest leaves the next one a changeset it
    /// never sees, so that one renders every page.
    init(beginningIn store: SiteStore, for builder: SiteBuilder) throws {
        folder = builder.outputFolderName
        let (interrupted, recordedFolder) = try store.beginWritingOutput(to: folder)
        self.interrupted = interrupted
        absolute = builder.outputDirectory.standardizedFileURL.path
        lastFolder = recordedFolder == absolute ? folder : recordedFolder
        // Building into another folder than the last build's: the manifest's files are that folder's, kept
        // under its name; those an earlier build left in this folder are deleted unless a page claims them.
        if let lastFolder, lastFolder != folder { try store.rememberFiles(ofFolder: lastFolder) }
        leftHere = try store.rememberedFiles(ofFolder: folder) + (absolute == folder ? [] : try store.rememberedFiles(ofFolder: absolute))
    }

    /// Why this build renders every page, whatever the manifest of `fileCount` files says; nil when the
    /// manifest describes the files of `output` as the last build left them.
    func reasonToStartOver(fileCount: Int, output: URL) -> String? {
        if interrupted { return "the last build did not finish" }
        if fileCount == 0 { return "first build" }
        if let lastFolder, lastFolder != folder { return "another output folder than the last build's" }
        // robots.txt is in every build: without it, the folder was emptied by hand.
        if !FileManager.default.fileExists(atPath: output.appendingPathComponent("robots.txt").path) { return "the output folder was emptied" }
        return nil
    }

    /// Whether a build that stops before publishing leaves its changes to the next, which then needs only
    /// those to make what it did not: not after a killed build (its mark says what only a build of every
    /// page finishes), nor into another folder than the last build's (the manifest is still that folder's).
    var keepsUnpublishedChanges: Bool {
        !interrupted && (lastFolder == nil || lastFolder == folder)
    }
}
