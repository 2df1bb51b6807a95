/// The last good answer of a remote source (a feed, a record file, a subscription list), kept in the
/// store: the store is the cache, so a build with no network, or a server that fails, builds from it.
public struct StoredResponse: Sendable, Equatable {
    /// The source's URL as the site names it.
    public var url: String
    /// The HTTP status of the answer whose body this is.
    public var status: Int
    /// The validators the server gave with the body, sent back to ask whether it changed.
    public var etag: String?
    public var lastModified: String?
    /// When the server last answered well (a body, or 304), in seconds since 1970.
    public var fetchedAt: Double
    /// When the body last changed: a source's change time, as a file's.
    public var changedAt: Double
    /// When a fetch was last tried, whether it succeeded or not.
    public var checkedAt: Double
    /// The body, decompressed.
    public var body: [UInt8]
    /// `ContentHash` of the body, as the loader computes it.
    public var hash: Int64
    /// Why the last try failed; nil when it succeeded.
    public var failure: String?
    /// Where a permanent redirect sends the URL, as last seen.
    public var movedTo: String?

    /// A response with every field given.
    public init(url: String, status: Int, etag: String?, lastModified: String?, fetchedAt: Double, changedAt: Double,
                checkedAt: Double, body: [UInt8], hash: Int64, failure: String? = nil, movedTo: String? = nil) {
        self.url = url
        self.status = status
        self.etag = etag
        self.lastModified = lastModified
        self.fetchedAt = fetchedAt
        self.changedAt = changedAt
        self.checkedAt = checkedAt
        self.body = body
        self.hash = hash
        self.failure = failure
        self.movedTo = movedTo
    }
}

extension SiteStore {
    /// The kept responses for `urls`, by URL; a URL never fetched well has none.
    public func storedResponses(for urls: some Sequence<String>) throws -> [String: StoredResponse] {
        let statement = try database.cachedStatement(
            """
            SELECT url, status, etag, last_modified, fetched_at, changed_at, checked_at, body, hash, failure, moved_to
            FROM sitegen_responses WHERE url = ?
            """)
        var found: [String: StoredResponse] = [:]
        for url in urls where found[url] == nil {
            try statement.forEachRow([.text(url)]) { row in
                var body: [UInt8] = []
                if case .blob(let bytes) = row.value(at: 7) { body = bytes }
                found[url] = StoredResponse(
                    url: url, status: Int(row.int64(at: 1)), etag: row.string(at: 2), lastModified: row.string(at: 3),
                    fetchedAt: row.double(at: 4), changedAt: row.double(at: 5), checkedAt: row.double(at: 6), body: body,
                    hash: row.int64(at: 8), failure: row.string(at: 9), movedTo: row.string(at: 10))
            }
        }
        return found
    }

    /// Deletes the kept responses of every URL not in `urls`, in a transaction of its own when there are any.
    public func forgetResponses(except urls: Set<String>) throws {
        let stale = try database.fetchAll("SELECT url FROM sitegen_responses").compactMap { $0["url"]?.stringValue }.filter { !urls.contains($0) }
        guard !stale.isEmpty else { return }
        try transaction {
            for url in stale { try database.execute("DELETE FROM sitegen_responses WHERE url = ?", [.text(url)]) }
        }
    }

    /// Keeps `response` as the URL's, in place of the one before. Call it inside a transaction.
    public func keep(_ response: StoredResponse) throws {
        precondition(database.isInsideTransaction, "responses are kept inside a transaction")
        try database.cachedStatement(
            """
            INSERT OR REPLACE INTO sitegen_responses
                (url, status, etag, last_modified, fetched_at, changed_at, checked_at, body, hash, failure, moved_to)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).execute([
            .text(response.url), .integer(Int64(response.status)), response.etag.map { .text($0) } ?? .null,
            response.lastModified.map { .text($0) } ?? .null, .real(response.fetchedAt), .real(response.changedAt),
            .real(response.checkedAt), .blob(response.body), .integer(response.hash), response.failure.map { .text($0) } ?? .null,
            response.movedTo.map { .text($0) } ?? .null,
        ])
    }
}
