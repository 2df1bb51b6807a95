import SiteRender

/// Why a build could not run at all (as opposed to a bad source, which is reported and skipped).
public enum BuildError: Error, CustomStringConvertible {
    case config(ConfigError)
    case templates(TemplateError)
    case output(path: String, reason: String)

    public var description: String {
        switch self {
        case .config(let error): return error.description
        case .templates(let error): return error.description
        case .output(let path, let reason): return "\(path): cannot write: \(reason)"
        }
    }
}
