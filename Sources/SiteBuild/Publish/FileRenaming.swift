import Foundation
import Synchronization
#if os(Linux)
import CLinux
#endif

/// The two renames publishing needs beyond POSIX's `rename`: swapping two files (a page and the file holding
/// its new bytes, so that the old one can be taken back or kept as a spare) and renaming only to a free name.
/// Each returns whether it worked, leaving `errno` set when not, as the system calls do: ENOENT when a file is
/// missing, EEXIST when a name is taken, EINVAL or ENOTSUP when the file system cannot do it.
///
/// Two implementations: `ExchangeRenaming`, Linux's `renameat2`, each one atomic system call; and
/// `PortableRenaming`, hard links and `rename` (any POSIX system), whose crash safety decisions.md 41d argues.
/// `FileRenamingKind.current` picks one for the process.
protocol FileRenaming: Sendable {
    /// Swaps the files named `first` and `second`, which are in one file system: each name then holds the
    /// other's file. At no moment does `second` (the page) name anything but a whole file, old or new.
    func exchange(_ first: String, _ second: String) -> Bool

    /// Renames `from` to `to` unless something has the name `to`.
    func renameToFreeName(_ from: String, _ to: String) -> Bool
}

/// Which `FileRenaming` publishing uses.
public enum FileRenamingKind: String, Sendable, CaseIterable {
    /// `renameat2` with RENAME_EXCHANGE and RENAME_NOREPLACE: Linux only.
    case exchange
    /// Hard links and `rename`: any POSIX system.
    case portable

    /// The environment variable that picks one: `portable`, or `exchange` (the default where there is one:
    /// Linux). Tests set it to run the publish tests on both; any other value is the default.
    public static let variable = "SITEGEN_RENAME"

    /// The kind this process uses: the one `SITEGEN_RENAME` names, else `exchange` on Linux and `portable` elsewhere.
    public static let current: FileRenamingKind = {
        #if os(Linux)
        ProcessInfo.processInfo.environment[variable] == portable.rawValue ? .portable : .exchange
        #else
        .portable
        #endif
    }()

    /// The renames of this kind.
    var renaming: any FileRenaming {
        #if os(Linux)
        if self == .exchange { return ExchangeRenaming() }
        #endif
        return PortableRenaming()
    }
}

#if os(Linux)
/// Linux's renames: `renameat2` with RENAME_EXCHANGE, and with RENAME_NOREPLACE (Sources/CLinux/shim.h).
struct ExchangeRenaming: FileRenaming {
    func exchange(_ first: String, _ second: String) -> Bool {
        sitegen_exchange(first, second) == 0
    }

    func renameToFreeName(_ from: String, _ to: String) -> Bool {
        sitegen_rename_noreplace(from, to) == 0
    }
}
#endif

/// The renames of any POSIX system, from `link`, `rename` and `unlink`; see decisions.md 41d for why a
/// build killed between two of their calls leaves every page whole.
struct PortableRenaming: FileRenaming {
    /// Numbers the names of files set aside during an exchange, so that two at once never share one.
    private static let asideNumber = Atomic<Int>(0)

    /// The old file is linked to a name beside `first` (the only new name: `.sitegen-exchange-…tmp`, which
    /// the next build's sweep of temporary files, or of spares, removes if a crash leaves it), the new file
    /// is renamed over `second` (readers see the old page or the new one, whole), and the old file takes
    /// `first`'s name.
    func exchange(_ first: String, _ second: String) -> Bool {
        guard let aside = linkAside(second, besides: first) else { return false }
        guard rename(first, second) == 0 else {
            let failure = errno
            unlink(aside)
            errno = failure
            return false
        }
        // The new file is in place; the old one keeps its extra name if this fails, for the sweep to find.
        return rename(aside, first) == 0
    }

    /// `link` fails where the name is taken; the old name then goes. A crash between the two leaves the file
    /// with two links, which no spare is written into (`SpareFiles` reuses a file with one link only).
    func renameToFreeName(_ from: String, _ to: String) -> Bool {
        guard link(from, to) == 0 else {
            if errno != EEXIST && errno != ENOENT && errno != EXDEV { errno = EINVAL }
            return false
        }
        return unlink(from) == 0
    }

    /// A new name for the file at `path`, in the folder of `neighbour`; nil with `errno` set when none can be
    /// made (ENOENT: `path` is gone; ENOTSUP: the file system has no hard links, so no exchange either).
    private func linkAside(_ path: String, besides neighbour: String) -> String? {
        let folder = neighbour.lastIndex(of: "/").map { String(neighbour[..<$0]) } ?? "."
        for _ in 0..<3 {
            let number = Self.asideNumber.add(1, ordering: .relaxed).newValue
            let aside = folder + "/" + Self.asidePrefix + "\(getpid())-\(number).tmp"
            if link(path, aside) == 0 { return aside }
            if errno == EEXIST { continue }
            if errno != ENOENT && errno != EXDEV { errno = ENOTSUP }
            return nil
        }
        return nil
    }

    /// How the names of files set aside by an exchange start; `OutputWriter.isTemporary` knows them.
    static let asidePrefix = ".sitegen-exchange-"
}
