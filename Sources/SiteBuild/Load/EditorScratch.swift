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
        // Every source file's name is asked, at every build: the first and last bytes rule most names out.
        let bytes = name.utf8
        guard let first = bytes.first, let last = bytes.last else { return false }
        if first == UInt8(ascii: "~") && name.hasPrefix("~$") || name == "4913" { return true }
        switch last {
        case UInt8(ascii: "~"): return true
        case UInt8(ascii: "#"): if first == UInt8(ascii: "#") && bytes.count > 1 { return true }
        case UInt8(ascii: "_"): if name.hasSuffix("___jb_tmp___") || name.hasSuffix("___jb_old___") { return true }
        case UInt8(ascii: "p"), UInt8(ascii: "o"), UInt8(ascii: "x"):
            for suffix in [".swp", ".swo", ".swx", ".swpx", ".kate-swp", ".crswap"] where name.hasSuffix(suffix) { return true }
        default: break
        }
        if bytes.count == 9 || bytes.count == 11 {
            return name.caseInsensitiveCompare("Thumbs.db") == .orderedSame || name.caseInsensitiveCompare("desktop.ini") == .orderedSame
        }
        return false
    }

    /// `isScratch` of a name given as its UTF-8 bytes, making a string only of a name that may be one.
    static func isScratch(bytes: UnsafeRawBufferPointer) -> Bool {
        guard let first = bytes.first, let last = bytes.last else { return false }
        // What `isScratch` can say yes to: a name beginning with "~", ending with one of "~#_pox", or of 4, 9 or 11 bytes.
        let mayBe: Bool
        switch last {
        case UInt8(ascii: "~"), UInt8(ascii: "#"), UInt8(ascii: "_"), UInt8(ascii: "p"), UInt8(ascii: "o"), UInt8(ascii: "x"): mayBe = true
        default: mayBe = first == UInt8(ascii: "~") || bytes.count == 4 || bytes.count == 9 || bytes.count == 11
        }
        return mayBe && isScratch(String(decoding: bytes, as: UTF8.self))
    }
}
