/// The files editors write beside the one being edited: swap, backup and lock files. A build leaves them out
/// of what it publishes (a static folder, a page bundle) and a watch does not build for them, so that what is
/// published never depends on whether an editor was open.
///
/// Vim writes `.name.swp` and probes with `4913`, Emacs `#name#` (unsaved text) and `.#name`, many editors
/// `name~` backups, JetBrains `name___jb_tmp___`, Microsoft Office `~$name` (its lock file); Windows leaves
/// `Thumbs.db` and `desktop.ini` in folders it shows.
public enum EditorScratch {
    /// Whether a file or folder called `name` is an editor's scratch file.
    public static func isScratch(_ name: String) -> Bool {
        if name.hasSuffix("~") || name == "4913" || name.hasPrefix("~$") { return true }
        if name.caseInsensitiveCompare("Thumbs.db") == .orderedSame || name.caseInsensitiveCompare("desktop.ini") == .orderedSame { return true }
        if name.count > 1 && name.hasPrefix("#") && name.hasSuffix("#") { return true }
        if name.hasSuffix("___jb_tmp___") || name.hasSuffix("___jb_old___") { return true }
        for suffix in [".swp", ".swo", ".swx", ".swpx", ".kate-swp", ".crswap"] where name.hasSuffix(suffix) { return true }
        return false
    }
}
