import ArgumentParser
import Foundation
import SiteBuild

/// `sitegen new FOLDER`: writes a new site that builds as it is, for a user starting from nothing;
/// `sitegen new KIND "A title"`: writes a new content file in the site of the current folder.
struct NewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new",
        abstract: "Make a new site in a folder, or a new post in this site: sitegen new post \"A title\".",
        discussion: """
            The site is a blog of Markdown posts with tags, an About page, Atom and RSS feeds of the posts, and \
            a theme of its own; it builds as it is. The folder is made if it is missing; one that already has a \
            sitegen.yml, content/ or Templates/ is left as it is (status 1). A .gitignore there is kept; \
            otherwise one is written that leaves out output/ and .sitegen/.

            With a kind and a title (sitegen new post "A title"), it writes content/posts/a-title.md in the site \
            of the current folder (or --site), from archetypes/post.md when the site has one, else with front \
            matter of the title and today's date. A file that is there already is left as it is (status 1).
            """
    )

    @Argument(help: ArgumentHelp("The folder of the new site; or a kind of content (post) followed by its title.",
                                 valueName: "folder | kind title"))
    var arguments: [String]

    @Option(name: .customLong("site"), help: ArgumentHelp("The site folder a new post goes into.", valueName: "folder"))
    var site: String = "."

    func validate() throws {
        guard (1...2).contains(arguments.count) else {
            throw ValidationError("give a folder for a new site (sitegen new mysite), or a kind and a title (sitegen new post \"A title\")")
        }
    }

    func run() throws {
        if arguments.count == 2 { return try writeContent(kind: arguments[0], title: arguments[1]) }
        let folder = arguments[0]
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

    /// Writes a new content file into the site at `site`.
    private func writeContent(kind: String, title: String) throws {
        let url = URL(fileURLWithPath: site, isDirectory: true)
        guard FileManager.default.fileExists(atPath: url.appendingPathComponent("sitegen.yml").path) else {
            printError("error: no sitegen.yml in \(site): run sitegen new post in a site's folder, or pass it with --site")
            throw ExitCode.failure
        }
        do {
            let path = try NewContent.write(kind: kind, title: title, site: url)
            print("Wrote \(path)")
        } catch {
            printError("error: \(error)")
            throw ExitCode.failure
        }
    }
}
