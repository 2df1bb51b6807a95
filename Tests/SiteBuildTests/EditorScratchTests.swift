import SiteBuild
import XCTest

/// The names editors and systems leave beside a file being edited, which no build publishes or reads and no
/// watch builds for; and names like them that are real files.
final class EditorScratchTests: XCTestCase {
    func testEditorsLocksBackupsAndSwapFilesAreScratchAndTheirLookalikesAreNot() {
        let scratch = ["a.md~", "~", "#a.md#", "##", "4913", "~$report.docx", "~$two.md", ".a.md.swp", "a.swo", "a.swx", "a.swpx",
                       "a.md.kate-swp", "a.crswap", "a.md___jb_tmp___", "a.md___jb_old___", "Thumbs.db", "THUMBS.DB", "desktop.ini",
                       "Desktop.INI", "~$notes#", "~$draft_", "~$a.swp"]
        let files = ["a.md", "#", "#a.md", "a.md#", "~a.md", "$~a", "49130", "a.swp.md", "swp", "Thumbs.dbx", "xThumbs.db",
                     "desktop.ini.md", "a_jb_tmp_", "index.html", "", "ñ.md"]
        for name in scratch { XCTAssertTrue(EditorScratch.isScratch(name), name) }
        for name in files { XCTAssertFalse(EditorScratch.isScratch(name), name) }
    }
}
