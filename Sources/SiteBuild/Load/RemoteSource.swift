import Foundation

/// How a collection's `sources:` entry names something other than local files.
public enum RemoteSource {
    /// Whether `source` is an http(s) URL rather than a file pattern.
    public static func isURL(_ source: String) -> Bool {
        let lowered = source.prefix(8).lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    /// Whether `source` is a local OPML subscription list, whose feeds are the collection's sources.
    public static func isSubscriptionList(_ source: String) -> Bool {
        !isURL(source) && source.lowercased().hasSuffix(".opml")
    }
}
