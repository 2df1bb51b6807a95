extension SiteBuilder {
    /// Whether, and which, URL sources a build fetches before it loads.
    public enum NetworkUse: Sendable, Equatable {
        /// Every URL source, conditionally (a 304 costs no parse): `sitegen build`.
        case fetch
        /// None: the copies kept in the store are loaded (`--offline`).
        case offline
        /// Only those whose collection's `refresh:` interval has passed since they were last tried: a
        /// `watch` or `serve`, which rebuilds when a fetch brings something new.
        case whenDue

        /// Whether a URL last tried at `lastChecked` (never: nil), refreshed every `interval` seconds, is fetched at `now`.
        func fetches(lastChecked: Double?, every interval: Double, now: Double) -> Bool {
            switch self {
            case .fetch: return true
            case .offline: return false
            case .whenDue: return lastChecked.map { now - $0 >= interval } ?? true
            }
        }
    }
}
