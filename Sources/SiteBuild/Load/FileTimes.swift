import Foundation

/// A file's times as `stat` gives them, named alike on every system: Glibc calls them `st_mtim` and `st_ctim`,
/// Darwin `st_mtimespec` and `st_ctimespec`.
extension stat {
    /// When the file's bytes last changed.
    public var modificationTime: timespec {
        #if os(Linux)
        st_mtim
        #else
        st_mtimespec
        #endif
    }

    /// When the file's bytes or its status (links, mode, name) last changed.
    public var changeTime: timespec {
        #if os(Linux)
        st_ctim
        #else
        st_ctimespec
        #endif
    }
}
