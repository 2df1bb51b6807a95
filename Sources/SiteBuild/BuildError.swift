import SiteRender
import SiteSources

/// Why a build could not run at all (as opposed to a bad source, which is reported and skipped).
public enum BuildError: Error, CustomStringConvertible {
    case config(ConfigError)
    case templates(TemplateError)
    case output(path: String, reason: String)
    /// A file or folder the build publishes as it is (a static file, a bundle's image) could not be read.
    case input(path: String, reason: String)
    /// A collection's fields changed in `sitegen.yml`, and some of its sources do not load with the new ones:
    /// the store and the pages are kept as the last build left them, rather than losing those sources' rows.
    case newFieldsFailed(collection: String, problems: [SourceError])
    /// The build loaded its sources, then stopped at the error: `summary` has what the load reported
    /// (the bad sources, the warnings), which the next build, finding those files unchanged, does not.
    indirect case stopped(BuildError, summary: BuildSummary)

    /// What the build did before it stopped, when it loaded its sources.
    public var summary: BuildSummary? {
        if case .stopped(_, let summary) = self { return summary }
        return nil
    }

    public var description: String {
        switch self {
        case .stopped(let error, _): return error.description
        case .config(let error): return error.description
        case .templates(let error): return error.description
        case .output(let path, let reason): return "\(path): cannot write: \(reason)"
        case .input(let path, let reason): return "\(path): \(reason)"
        case .newFieldsFailed(let collection, let problems):
            return problems.map(\.description).joined(separator: "\nerror: ")
                + "\nerror: sitegen.yml: collection '\(collection)' has new fields, and the sources above do not load with them; "
                + "nothing was changed (the store and the pages are as the last build left them)"
        }
    }
}
