import SiteBuild

/// Which file names never count as a change of the site: editors' swap, backup and lock files
/// (`EditorScratch`), and hidden files.
///
/// Editors write these next to the file being edited, often several times a second; building on each would
/// build for nothing. Hidden names (a leading dot) cover the temporary files of editors that save by writing
/// `.name.tmp` and renaming it over `name` — the rename itself is seen under the real name.
public enum ChangeFilter {
    /// Whether a change of a file or folder called `name` is not a change of the site.
    public static func ignores(name: String) -> Bool {
        name.isEmpty || name.hasPrefix(".") || EditorScratch.isScratch(name)
    }
}
