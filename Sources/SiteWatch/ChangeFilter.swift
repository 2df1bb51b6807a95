/// Which file names never count as a change of the site: editors' swap, backup and lock files, and hidden files.
///
/// Editors write these next to the file being edited, often several times a second (Vim's `.name.swp` and its
/// `4913` probe, Emacs's `#name#` and `.#name` lock, `name~` backups, JetBrains' `name___jb_tmp___`); building on
/// each would build for nothing. Hidden names (a leading dot) cover the temporary files of editors that save by
/// writing `.name.tmp` and renaming it over `name` — the rename itself is seen under the real name.
public enum ChangeFilter {
    /// Whether a change of a file or folder called `name` is not a change of the site.
    public static func ignores(name: String) -> Bool {
        if name.isEmpty || name.hasPrefix(".") || name.hasSuffix("~") || name == "4913" { return true }
        if name.hasPrefix("#") && name.hasSuffix("#") { return true }
        if name.hasSuffix("___jb_tmp___") || name.hasSuffix("___jb_old___") { return true }
        for suffix in [".swp", ".swo", ".swx", ".swpx", ".kate-swp", ".crswap"] where name.hasSuffix(suffix) { return true }
        return false
    }
}
