import ArgumentParser
import Foundation
import SiteBuild

/// `sitegen new FOLDER`: writes a new site that builds as it is, for a user starting from nothing.
struct NewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new",
        abstract: "Make a new site in a folder: sitegen.yml, two posts and a page under content/, and a theme in Templates/.",
        discussion: """
            The site is a blog of Markdown posts with tags, an About page, Atom and RSS feeds of the posts, and \
            a theme of its own; it builds as it is. The folder is made if it is missing; one that already has a \
            sitegen.yml, content/ or Templates/ is left as it is (status 1). A .gitignore there is kept; \
            otherwise one is written that leaves out output/ and .sitegen/.
            """
    )

    @Argument(help: ArgumentHelp("The folder of the new site.", valueName: "folder"))
    var folder: String

    func run() throws {
        let url = URL(fileURLWithPath: folder, isDirectory: true)
        let written: [String]
        do {
            written = try StarterSite.write(into: url)
        } catch let failure as StarterSite.Failure {
            printError("error: \(failure)")
            throw ExitCode.failure
        } catch {
            printError("error: \(folder): cannot write the new site: \(error.localizedDescription)")
            throw ExitCode.failure
        }
        print("Made a new site in \(folder): \(written.joined(separator: ", "))")
        if !written.contains(".gitignore") {
            print("Kept the .gitignore there: add output/ and .sitegen/ to it, which builds make.")
        }
        let here = url.standardizedFileURL.path == URL(fileURLWithPath: ".").standardizedFileURL.path
        print("Next:\n" + (here ? "" : "  cd \(folder)\n")
              + "  sitegen serve    # builds the site into output/, serves it at http://127.0.0.1:8000/ and rebuilds as you save")
    }
}
