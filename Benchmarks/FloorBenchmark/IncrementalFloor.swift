// The floor of an incremental build: what a process that rebuilds a site after a change cannot avoid,
// finding which sources changed and replacing the pages that did, with nothing of sitegen's in it.
#if os(Linux)
import CLinux
#endif
import Foundation

/// What an incremental build wrote and deleted, from `sitegen build --report`'s file.
struct IncrementalChanges: Decodable {
    /// Output files the build wrote, relative to the output folder.
    var written: [String]
    /// Output files the build deleted, relative to the output folder.
    var deleted: [String]
}

/// The figures of one incremental floor run, as `--json` writes them.
struct IncrementalFloorReport: Codable {
    var threads: Int
    /// Source files whose status was read.
    var sources: Int
    var scan: Timing
    /// Files replaced (or made, for pages new in the round) and files deleted.
    var files: Int
    var bytes: Int
    var deleted: Int
    var write: Timing
    var sumSeconds: Double
}

/// Reads the status (`fstatat`, as a build's change check does) of every file under `folder`: the names
/// are listed by one thread, folder by folder, and their status read by `threads` at once.
func scanFloor(_ folder: String, threads: Int) throws -> (Int, Timing) {
    let counted = PerWorker(threads, 0)
    let (listed, timing) = try timed { () throws -> Int in
        var pending = [folder]
        var names: [(folder: Int32, name: String)] = []
        var descriptors: [Int32] = []
        defer { for descriptor in descriptors { close(descriptor) } }
        while let current = pending.popLast() {
            let descriptor = open(current, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0, let directory = opendir(current) else {
                if descriptor >= 0 { close(descriptor) }
                throw FloorError(description: "\(current): cannot be listed")
            }
            descriptors.append(descriptor)
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name == "." || name == ".." { continue }
                if Int32(entry.pointee.d_type) == Int32(DT_DIR) {
                    pending.append(current + "/" + name)
                } else {
                    names.append((descriptor, name))
                }
            }
            closedir(directory)
        }
        let files = names
        onThreads(threads) { worker in
            var status = stat()
            for index in stride(from: worker, to: files.count, by: threads)
            where fstatat(files[index].folder, files[index].name, &status, AT_SYMLINK_NOFOLLOW) == 0 {
                counted[worker] += 1
            }
        }
        return files.count
    }
    guard counted.all.reduce(0, +) == listed else { throw FloorError(description: "\(folder): some files could not be read") }
    return (listed, timing)
}

/// Replaces the files `changes` names under `work`/output with `output`'s bytes of them, as sitegen's
/// spare files do: each written into an earlier file whose blocks are allocated (made and synced before the
/// timing), then swapped with the page in one `renameat2` exchange; a page new in the round takes the
/// spare's place by a rename, and a deleted page is renamed into the spare folder.
func incrementalWriteFloor(_ changes: IncrementalChanges, output: String, work: String,
                           threads: Int) throws -> (files: Int, bytes: Int, Timing) {
    let pages = work + "/output"
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: pages, isDirectory: &isFolder), isFolder.boolValue else {
        throw FloorError(description: "\(pages): no site to replace files in (run the full floor into \(work) first)")
    }
    let contents = try changes.written.map { path -> [UInt8] in
        guard let data = FileManager.default.contents(atPath: output + "/" + path) else {
            throw FloorError(description: "\(output)/\(path): cannot be read")
        }
        return [UInt8](data)
    }
    let spares = work + "/spare"
    try? FileManager.default.removeItem(atPath: spares)
    try FileManager.default.createDirectory(atPath: spares, withIntermediateDirectories: true)
    // Spares as a build finds them: files of an earlier build, their blocks allocated and on the disk.
    for (index, bytes) in contents.enumerated() {
        guard FileManager.default.createFile(atPath: "\(spares)/\(index)", contents: Data(bytes)) else {
            throw FloorError(description: "\(spares)/\(index): cannot be made")
        }
    }
    sync()
    let failures = PerWorker<String?>(threads, nil)
    let (_, timing) = timed {
        onThreads(threads) { worker in
            for index in stride(from: worker, to: contents.count, by: threads) {
                let spare = "\(spares)/\(index)", page = pages + "/" + changes.written[index]
                let descriptor = open(spare, O_WRONLY | O_CLOEXEC)
                let written = descriptor >= 0 && contents[index].withUnsafeBytes { buffer in
                    pwrite(descriptor, buffer.baseAddress, buffer.count, 0) == buffer.count
                } && ftruncate(descriptor, off_t(contents[index].count)) == 0
                if descriptor >= 0 { close(descriptor) }
                guard written, exchange(spare, page) || placeNew(spare, at: page) else {
                    failures[worker] = "\(page): cannot be replaced: \(String(cString: strerror(errno)))"
                    return
                }
            }
            for index in stride(from: worker, to: changes.deleted.count, by: threads)
            where rename(pages + "/" + changes.deleted[index], "\(spares)/deleted-\(index)") != 0 && errno != ENOENT {
                failures[worker] = "\(pages)/\(changes.deleted[index]): cannot be deleted: \(String(cString: strerror(errno)))"
                return
            }
        }
    }
    if let failure = failures.all.compactMap({ $0 }).first { throw FloorError(description: failure) }
    return (contents.count, contents.reduce(0) { $0 + $1.count }, timing)
}

/// Swaps `spare` and `page` as sitegen does on Linux (renameat2); elsewhere renames `spare` over `page`, as
/// sitegen's portable exchange does in its middle step.
func exchange(_ spare: String, _ page: String) -> Bool {
    #if os(Linux)
    sitegen_exchange(spare, page) == 0
    #else
    rename(spare, page) == 0
    #endif
}

/// Renames `spare` to `page`, a page the site did not have, making its folders first.
func placeNew(_ spare: String, at page: String) -> Bool {
    guard errno == ENOENT else { return false }
    let folder = (page as NSString).deletingLastPathComponent
    return (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil
        && rename(spare, page) == 0
}

/// `FloorBenchmark --incremental REPORT SOURCES OUTPUT WORK`: the status of every source, then the files
/// the build of REPORT wrote and deleted, replaced under WORK/output (a full floor run's tree).
func runIncremental(report: String, sources: String, output: String, work: String, threads: Int, jsonPath: String?) throws {
    guard let data = FileManager.default.contents(atPath: report) else {
        throw FloorError(description: "\(report): cannot be read")
    }
    let changes: IncrementalChanges
    do {
        changes = try JSONDecoder().decode(IncrementalChanges.self, from: data)
    } catch {
        throw FloorError(description: "\(report): not a `sitegen build --report` file: \(error)")
    }
    print("incremental floor: \(changes.written.count) files written and \(changes.deleted.count) deleted by \(report), "
          + "\(threads) threads")
    let (sourceCount, scanTiming) = try scanFloor(sources, threads: threads)
    line("scan sources", scanTiming, "\(sourceCount) files' status")
    let (files, bytes, writeTiming) = try incrementalWriteFloor(changes, output: output, work: work, threads: threads)
    line("replace files", writeTiming, "\(files) files, \(megabytes(bytes)), \(changes.deleted.count) deleted")
    let sum = scanTiming + writeTiming
    line("floor sum", sum, "scan + replace")
    if let jsonPath {
        let figures = IncrementalFloorReport(threads: threads, sources: sourceCount, scan: scanTiming, files: files,
                                             bytes: bytes, deleted: changes.deleted.count, write: writeTiming,
                                             sumSeconds: sum.wallSeconds)
        try JSONEncoder().encode(figures).write(to: URL(fileURLWithPath: jsonPath))
    }
}
