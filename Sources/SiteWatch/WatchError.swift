import Foundation

/// Why a folder cannot be watched: the system call that failed, the path it was given, and the system's reason.
public enum WatchError: Error, CustomStringConvertible, Equatable {
    /// A system call failed: which, on what path (if any), and its errno.
    case system(call: String, path: String?, code: Int32)
    /// `SITEGEN_WATCHER` names no watcher sitegen has.
    case unknownWatcher(String)

    public var description: String {
        switch self {
        case .system(let call, let path, let code):
            var reason = String(cString: strerror(code))
            if code == ENOSPC && call == "inotify_add_watch" {
                reason += " (too many watched folders: raise fs.inotify.max_user_watches)"
            }
            return "\(path.map { "\($0): " } ?? "")\(call): \(reason)"
        case .unknownWatcher(let name):
            let kinds = FileWatcher.Kind.allCases.map(\.rawValue).joined(separator: " or ")
            return "\(FileWatcher.kindVariable)=\(name) names no watcher: set it to \(kinds), or unset it"
        }
    }
}
