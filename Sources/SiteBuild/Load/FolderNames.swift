import Dispatch
import Foundation

/// The names a walk found in one folder, as bytes one after another, whose status it then reads.
struct FolderNames {
    /// Each name's start in `bytes` (each is followed by a NUL byte, for `fstatat`) and whether its type was unknown.
    private var starts: [Int] = []
    private var unknown: [Bool] = []
    private var bytes: [CChar] = []
    /// The folder's prefix followed by the last name asked about, for `fnmatch`.
    private var path: [CChar]
    private let prefixCount: Int
    /// What `matches` asks `fnmatch` about, as a C string made once (not once per name).
    private let glob: [CChar]
    private let flags: Int32

    /// The names of the folder whose paths begin with `prefix` (as `SourceScan.addFolder` has it), matched
    /// against `glob` with `flags`.
    init(prefix: String, glob: String, flags: Int32) {
        path = prefix.utf8.map { CChar(bitPattern: $0) }
        prefixCount = path.count
        self.glob = Array(glob.utf8CString)
        self.flags = flags
    }

    var count: Int { starts.count }

    func isUnknown(_ index: Int) -> Bool { unknown[index] }

    mutating func append(_ name: UnsafeRawBufferPointer, unknown isUnknown: Bool) {
        // A folder of records holds thousands: grown by doubling from nothing, its arrays page-faulted and copied.
        if starts.isEmpty {
            starts.reserveCapacity(1_024)
            unknown.reserveCapacity(1_024)
            bytes.reserveCapacity(32_768)
        }
        starts.append(bytes.count)
        unknown.append(isUnknown)
        bytes.append(contentsOf: name.bindMemory(to: CChar.self))
        bytes.append(0)
    }

    /// Calls `body` with the bytes of the name at `index`, without its NUL.
    func withName<T>(_ index: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let end = index + 1 < starts.count ? starts[index + 1] - 1 : bytes.count - 1
        return try bytes[starts[index]..<end].withUnsafeBytes(body)
    }

    /// Whether the path of the name `name` in this folder matches the glob, as `fnmatch` says.
    mutating func matches(_ name: UnsafeRawBufferPointer) -> Bool {
        path.removeSubrange(prefixCount...)
        path.append(contentsOf: name.bindMemory(to: CChar.self))
        path.append(0)
        return fnmatch(glob, path, flags) == 0
    }

    /// What a name's status says: a regular file (through a link), a folder, anything else, or why it could not be read.
    enum Status {
        case file(size: Int64, modified: Double)
        case folder
        case other
        case failed(Int32)
    }

    /// Each name's status, through links, read with `fstatat` from the folder open as `descriptor`. A folder of a
    /// hundred thousand records is most of an incremental build's first half second, and its `fstatat` calls are
    /// the kernel's path lookups: two threads take half the time.
    func statuses(in descriptor: Int32) -> [Status] {
        let count = starts.count
        guard count > 0 else { return [] }
        let parts = count >= 4_096 ? 2 : 1
        let results = Results(count: count)
        defer { results.buffer.deallocate() }
        bytes.withUnsafeBufferPointer { names in
            let names = SendableNames(base: names.baseAddress!)
            DispatchQueue.concurrentPerform(iterations: parts) { part in
                var status = stat()
                for index in count * part / parts..<count * (part + 1) / parts {
                    // Through links: a symbolic link to a file counts as the file (data is often linked in from elsewhere).
                    guard fstatat(descriptor, names.base + starts[index], &status, 0) == 0 else {
                        results.buffer[index] = .failed(errno)
                        continue
                    }
                    switch status.st_mode & S_IFMT {
                    case S_IFREG: results.buffer[index] = .file(size: Int64(status.st_size), modified: SourceGlob.modified(status))
                    case S_IFDIR: results.buffer[index] = .folder
                    default: results.buffer[index] = .other
                    }
                }
            }
        }
        return Array(results.buffer)
    }

    /// The statuses, written by each thread at its own indexes, read once all have finished.
    private final class Results: @unchecked Sendable {
        let buffer: UnsafeMutableBufferPointer<Status>

        init(count: Int) {
            buffer = .allocate(capacity: count)
            buffer.initialize(repeating: .other)
        }
    }

    /// The names' bytes, only read while the threads run.
    private struct SendableNames: @unchecked Sendable {
        let base: UnsafePointer<CChar>
    }
}
