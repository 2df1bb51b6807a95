/// How remote sources are fetched: limits of time, size, redirects and connections.
///
/// The defaults suit a planet of a few hundred feeds on ordinary servers; tests shorten the times.
public struct FetchSettings: Sendable {
    /// Sent with every request: servers see who asks (and whom to tell when it misbehaves).
    public var userAgent = "sitegen/0.1.0 (static site generator; feed aggregator)"
    /// The longest wait for a connection to a server.
    public var connectTimeout: Duration = .seconds(10)
    /// The longest a whole fetch may take, redirects and body included.
    public var wholeTimeout: Duration = .seconds(60)
    /// The largest body kept, after decompression: a larger one fails and the last good copy stays.
    public var maximumBytes = 16 << 20
    /// The most redirects followed before a fetch fails.
    public var maximumRedirects = 5
    /// The most requests in flight to one host (host and port) at a time.
    public var requestsPerHost = 2
    /// The most hosts fetched from at a time.
    public var hostsAtOnce = 8

    /// The defaults.
    public init() {}
}
