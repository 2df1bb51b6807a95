import SiteStore

/// The files a walk of a source pattern found, their paths kept as bytes until one is asked for.
///
/// A build's status pass compares a hundred thousand files with their fingerprints and reads a few: a
/// Swift string per file (its name, its path, a copy in each plan) was most of the pass's time beside
/// the kernel's (decisions.md 39b). Here a file is a few numbers, and its path a range of `names` under
/// its folder's prefix; the key it is looked up by is hashed from those bytes.
struct SourceScan {
    /// A regular file (or a link to one) the pattern matches.
    struct File {
        /// `SiteStore.pathKey` of its path.
        let key: Int64
        let size: Int64
        /// Its change time, as `SourceGlob.Entry.modified`.
        let modified: Double
        /// Where its name is in `names`, and which of `prefixes` comes before it.
        let nameStart: UInt32
        let nameCount: UInt32
        let folder: UInt32
    }

    /// Each folder's paths' beginning, as the walk writes paths: "" for the site's folder, "/" for the
    /// root of an absolute pattern, else the folder's path and a slash.
    private(set) var prefixes: [String] = []
    /// The hash state of each prefix, which a file's name continues.
    private var prefixKeys: [UInt64] = []
    /// Every file's name, one after another.
    private(set) var names: [UInt8] = []
    private(set) var files: [File] = []

    /// Adds a folder whose paths begin with `prefix`; returns its number for `add`.
    mutating func addFolder(prefix: String) -> UInt32 {
        var prefix = prefix
        let key = prefix.withUTF8 { Self.continueKey(SiteStore.pathKeyStart, with: UnsafeRawBufferPointer($0)) }
        prefixes.append(prefix)
        prefixKeys.append(key)
        return UInt32(prefixes.count - 1)
    }

    /// Adds the file called `name` in `folder`, with its status.
    mutating func add(name: UnsafeRawBufferPointer, folder: UInt32, size: Int64, modified: Double) {
        let key = Int64(bitPattern: Self.continueKey(prefixKeys[Int(folder)], with: name))
        files.append(File(key: key, size: size, modified: modified, nameStart: UInt32(names.count), nameCount: UInt32(name.count),
                          folder: folder))
        names.append(contentsOf: name)
    }

    /// Adds another scan's files (of folders added to it, not to this one).
    mutating func append(_ other: SourceScan) {
        let folderBase = UInt32(prefixes.count), nameBase = UInt32(names.count)
        prefixes += other.prefixes
        prefixKeys += other.prefixKeys
        names += other.names
        files += other.files.map {
            File(key: $0.key, size: $0.size, modified: $0.modified, nameStart: $0.nameStart + nameBase, nameCount: $0.nameCount,
                 folder: $0.folder + folderBase)
        }
    }

    /// Keeps only the files `isIncluded` accepts.
    mutating func filter(_ isIncluded: (File) -> Bool) {
        files = files.filter(isIncluded)
    }

    /// The path of `file`, as the walk writes paths.
    func path(of file: File) -> String {
        let start = Int(file.nameStart)
        return prefixes[Int(file.folder)] + names[start..<start + Int(file.nameCount)].withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    }

    /// Every file as an entry, in the order found.
    var entries: [SourceGlob.Entry] {
        files.map { SourceGlob.Entry(path: path(of: $0), size: $0.size, modified: $0.modified) }
    }

    /// FNV-1a, as `SiteStore.pathKey`, from `state` on over `bytes`.
    private static func continueKey(_ state: UInt64, with bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash = state
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}
