import Foundation
import SiteFetch
import SiteSources
import SiteStore

/// The fetch stage before the load: expands OPML subscription lists into the feeds they name, fetches
/// the collections' URL sources (conditionally, with the validators kept), and keeps each answer in the
/// store, in one transaction. The loader then reads every URL source from the store: the store is the
/// cache, so a source whose server fails, or a build with no network, loads the last good copy.
struct RemoteRefresh {
    let root: URL
    let store: SiteStore
    var settings = FetchSettings()
    /// Whether the network is used: `.offline` reads the kept copies only.
    var network: SiteBuilder.NetworkUse = .fetch
    /// Told how the fetches are going.
    var progress: (@Sendable (FetchProgress) -> Void)?
    /// Now, in seconds since 1970 (tests set it).
    var now: Double = Date().timeIntervalSince1970

    /// What the stage found: the configuration with subscription lists expanded, every URL's kept body,
    /// and what to tell the user.
    struct Outcome {
        var config: SiteConfig
        var bodies: [String: RemoteBody] = [:]
        var warnings: [SourceError] = []
        /// Subscription lists that could not be read: the feeds of their last good load are fetched instead.
        var problems: [SourceError] = []
        var fetched = 0
        var notModified = 0
        var failed = 0
        /// URLs whose kept body changed in this stage.
        var changed: [String] = []
        /// The answers that new bodies replaced, by URL: put back when the new body cannot be loaded.
        var replaced: [String: StoredResponse] = [:]
        /// When the next URL source is due for a fetch (its last try plus its collection's `refresh:`).
        var nextDue: Double?
    }

    /// Runs the stage for `config`.
    func run(_ config: SiteConfig) throws -> Outcome {
        var outcome = Outcome(config: config)
        try expandSubscriptionLists(in: &outcome)
        let urls = Self.urls(of: outcome.config)
        // A URL no collection names any more has no rows left (its source is removed): its answer goes too.
        // Not when a list failed to read, whose feeds are then only those the store remembers.
        if outcome.problems.isEmpty { try store.forgetResponses(except: Set(urls.map(\.url))) }
        guard !urls.isEmpty else { return outcome }
        var stored = try store.storedResponses(for: urls.map(\.url))
        let due = urls.filter { network.fetches(lastChecked: stored[$0.url]?.checkedAt, every: $0.refresh, now: now) }.map(\.url)
        if !due.isEmpty {
            let requests = due.map { RemoteRequest(url: $0, etag: stored[$0]?.etag, lastModified: stored[$0]?.lastModified) }
            let responses = RemoteFetcher(settings: settings).fetchWaiting(requests, progress: progress)
            try store.transaction {
                for response in responses { try keep(response, in: &stored, into: &outcome) }
            }
        }
        outcome.nextDue = urls.map { (stored[$0.url]?.checkedAt ?? now) + $0.refresh }.min()
        for (url, _) in urls {
            guard let response = stored[url] else {
                if network == .offline {
                    outcome.warnings.append(SourceError(file: url, reason: "never fetched, and the build is offline: left out"))
                }
                continue
            }
            outcome.bodies[url] = RemoteBody(data: Data(response.body), changedAt: response.changedAt, hash: response.hash)
        }
        return outcome
    }

    /// Keeps what one fetch brought in the store, and says what the user should know of it.
    private func keep(_ response: RemoteResponse, in stored: inout [String: StoredResponse], into outcome: inout Outcome) throws {
        let url = response.url, previous = stored[url]
        if let moved = response.movedPermanentlyTo {
            outcome.warnings.append(SourceError(file: url, reason: "moved permanently to \(moved); update the URL where it is named"))
        }
        var kept: StoredResponse
        switch response.outcome {
        case .fetched(let body, let etag, let lastModified):
            var hash = ContentHash()
            body.withUnsafeBytes { hash.combine(bytes: $0) }
            let same = previous?.hash == hash.signed && previous?.body == body
            kept = StoredResponse(url: url, status: response.status ?? 200, etag: etag, lastModified: lastModified, fetchedAt: now,
                                  changedAt: same ? previous!.changedAt : now, checkedAt: now, body: body, hash: hash.signed,
                                  movedTo: response.movedPermanentlyTo)
            outcome.fetched += 1
            if !same { outcome.changed.append(url) }
            if !same, let previous { outcome.replaced[url] = previous }
        case .notModified:
            guard var previous else {
                return fail(url, "the server answered 304 Not Modified to a request for a copy sitegen does not have", previous: nil, into: &outcome)
            }
            previous.fetchedAt = now
            previous.checkedAt = now
            previous.failure = nil
            previous.movedTo = response.movedPermanentlyTo
            kept = previous
            outcome.notModified += 1
        case .failed(let reason):
            fail(url, reason, previous: previous, into: &outcome)
            guard var previous else { return }
            previous.checkedAt = now
            previous.failure = reason
            kept = previous
        }
        try store.keep(kept)
        stored[url] = kept
    }

    /// Puts back the answers whose new bodies the load could not read (cut short with no length, not
    /// well-formed), in a transaction: the store keeps the last good copy, which an offline build, or a
    /// table made again for new fields, loads. The failure is kept with it, and the next fetch asks again.
    func restoreLastGoodCopies(of urls: [String], replaced: [String: StoredResponse], reasons: [String: String]) throws {
        let restored = urls.compactMap { url in replaced[url].map { (url, $0) } }
        guard !restored.isEmpty else { return }
        try store.transaction {
            for (url, var previous) in restored {
                previous.checkedAt = now
                previous.failure = "the fetched body could not be read: " + (reasons[url] ?? "?")
                try store.keep(previous)
            }
        }
    }

    /// Counts a failed fetch and warns, naming what the build uses instead.
    private func fail(_ url: String, _ reason: String, previous: StoredResponse?, into outcome: inout Outcome) {
        outcome.failed += 1
        let fallback = previous.map { "; building from the copy kept from \(Self.timestamp($0.fetchedAt))" }
            ?? "; no copy is kept yet, so it is left out of this build"
        outcome.warnings.append(SourceError(file: url, reason: "could not be fetched: " + reason + fallback))
    }

    /// Replaces each collection's OPML subscription lists by the feeds they name.
    private func expandSubscriptionLists(in outcome: inout Outcome) throws {
        // Only a feed collection fetches the feeds of a list; an `opml` collection reads the list itself.
        for (index, collection) in outcome.config.collections.enumerated()
        where collection.kind == .feed && collection.sources.contains(where: RemoteSource.isSubscriptionList) {
            var sources: [String] = []
            for source in collection.sources {
                guard RemoteSource.isSubscriptionList(source) else {
                    sources.append(source)
                    continue
                }
                do {
                    let location = SourceGlob.location(of: source, under: root.path)
                    let data: Data
                    do { data = try Data(contentsOf: URL(fileURLWithPath: location)) } catch {
                        throw SourceError(file: source, reason: "cannot be read: \(error.localizedDescription)")
                    }
                    sources += try SubscriptionList(data: data, file: source).feeds.map(\.url).filter(RemoteSource.isURL)
                } catch let error as SourceError {
                    // The feeds this collection loaded last time stay its sources: a list that fails to read
                    // must not delete every item of the planet.
                    outcome.problems.append(SourceError(file: error.file, line: error.line, column: error.column,
                                                        reason: error.reason + "; the feeds it named at the last build are kept"))
                    sources += try store.sourceStatuses().filter { $0.collection == collection.name && RemoteSource.isURL($0.path) }.map(\.path)
                }
            }
            var seen = Set<String>()
            outcome.config.collections[index].sources = sources.filter { seen.insert($0).inserted }
        }
    }

    /// Every URL source of the configuration, once, with the shortest refresh interval of the collections naming it.
    static func urls(of config: SiteConfig) -> [(url: String, refresh: Double)] {
        var order: [String] = [], refresh: [String: Double] = [:]
        for collection in config.collections {
            for source in collection.sources where RemoteSource.isURL(source) {
                if refresh[source] == nil { order.append(source) }
                refresh[source] = min(refresh[source] ?? .infinity, collection.refresh)
            }
        }
        return order.map { ($0, refresh[$0]!) }
    }

    /// A moment as the user reads it, in UTC.
    static func timestamp(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }
}

/// A URL source's kept body, as the loader reads it in place of a file.
struct RemoteBody: Sendable {
    let data: Data
    /// When the body last changed: the source's change time.
    let changedAt: Double
    /// `ContentHash` of the body.
    let hash: Int64

    /// The fingerprint the loader compares with the source's last load.
    var fingerprint: SiteStore.SourceFingerprint {
        SiteStore.SourceFingerprint(size: Int64(data.count), modified: changedAt, hash: 0, succeeded: true)
    }
}
