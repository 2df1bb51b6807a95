#if canImport(Glibc)
import Glibc
#endif

/// Why a folder cannot be watched: the system call that failed, the path it was given, and the system's reason.
public enum WatchError: Error, CustomStringConvertible, Equatable {
    /// A system call failed: which, on what path (if any), and its errno.
    case system(call: String, path: String?, code: Int32)
    /// inotify is Linux's; other systems have no watcher yet.
    case unsupportedPlatform

    public var description: String {
        switch self {
        case .system(let call, let path, let code):
            var reason = String(cString: strerror(code))
            if code == ENOSPC && call == "inotify_add_watch" {
                reason += " (too many watched folders: raise fs.inotify.max_user_watches)"
            }
            return "\(path.map { "\($0): " } ?? "")\(call): \(reason)"
        case .unsupportedPlatform:
            return "watching for changes needs inotify, which only Linux has"
        }
    }
}
