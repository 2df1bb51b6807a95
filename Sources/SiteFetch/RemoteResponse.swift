/// What one fetch of a remote source asks: its URL and the validators of the copy kept from before.
public struct RemoteRequest: Sendable, Hashable {
    /// The source's URL as the site names it.
    public var url: String
    /// The kept copy's `ETag`, sent as `If-None-Match`.
    public var etag: String?
    /// The kept copy's `Last-Modified`, sent as `If-Modified-Since`.
    public var lastModified: String?

    /// A request for `url`, conditional when a validator is given.
    public init(url: String, etag: String? = nil, lastModified: String? = nil) {
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// What one fetch of a remote source came to.
public struct RemoteResponse: Sendable {
    /// How the fetch ended.
    public enum Outcome: Sendable {
        /// A body (decompressed), with the validators to send next time.
        case fetched(body: [UInt8], etag: String?, lastModified: String?)
        /// 304: the kept copy is still the server's; nothing to read.
        case notModified
        /// No usable answer: why, for the user (a status, a timeout, a refused connection, a cap).
        case failed(String)
    }

    /// The URL asked for (before any redirect).
    public var url: String
    public var outcome: Outcome
    /// The final answer's HTTP status, when there was one.
    public var status: Int?
    /// Where a permanent redirect (301, 308, and only such ones from the start) sent the request: the
    /// user should update the URL.
    public var movedPermanentlyTo: String?

    /// A response for `url`.
    public init(url: String, outcome: Outcome, status: Int? = nil, movedPermanentlyTo: String? = nil) {
        self.url = url
        self.outcome = outcome
        self.status = status
        self.movedPermanentlyTo = movedPermanentlyTo
    }

    /// The failure's reason, if it failed.
    public var failure: String? {
        if case .failed(let reason) = outcome { return reason }
        return nil
    }
}

/// How a run of fetches is going, for a progress line.
public struct FetchProgress: Sendable {
    /// Fetches finished so far, and in all.
    public var finished: Int
    public var total: Int
    /// The URL that just finished.
    public var url: String
}
