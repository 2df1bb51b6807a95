import Foundation
import ResultsController
import SiteRender
import SiteStore

/// What `watch` and `serve` keep in memory from one build to the next, so that a save costs what it
/// changes: the store's connection, the listings' results controllers (caught up with each load's
/// changeset instead of restored from their caches) and the page manifest's index (brought up to date
/// with each build's changes instead of read again).
///
/// A build that fails lets go of all of it: the next one starts from the store, as a new process would.
/// Every piece is checked before it is trusted: a controller against its request and the store's
/// generation, the manifest against the stamp the store's manifest carries (another process may have
/// built the site in between).
public final class BuildSession: @unchecked Sendable {
    private let lock = NSLock()
    private var store: SiteStore?
    /// The device and inode of the file `store` opened.
    private var storeFile: (UInt64, UInt64)?
    private var controllers: [String: ResultsController] = [:]
    private var manifest: (index: ManifestIndex, stamp: String)?
    /// The render workers' connections to `store`'s file, kept between builds.
    private var workers = WorkerConnections()
    /// The settings and templates the controllers were made for: any change lets go of them.
    private var inputs: Int64?
    /// `sitegen.yml` and the templates as the last build read them.
    private var settings: (config: SiteConfig, templates: TemplateSet)?

    /// An empty session: its first build reads everything from the store.
    public init() {}

    /// The store connection kept for the session at `path`, opened now if there is none, or if the file
    /// the kept one reads is no longer the one at `path` (the store folder deleted, a `git clean`) or may
    /// no longer be written: then the controllers and the manifest go with it, and the build opens the
    /// store as a new process would (and fails as it would).
    func store(at path: String) throws -> SiteStore {
        try lock.withLock {
            var status = stat()
            let file = stat(path, &status) == 0 && access(path, W_OK) == 0 ? (UInt64(status.st_dev), UInt64(status.st_ino)) : nil
            if let store, let file, let storeFile, file == storeFile { return store }
            controllers = [:]
            manifest = nil
            inputs = nil
            store = nil
            workers = WorkerConnections()
            let opened = try SiteStore(path: path)
            // Read, not mapped: a mapping is remapped whole whenever the store grows, and a session's
            // connection touches more of it with every build (at 100,000 records a seventh of a watch's
            // build was unmapping). Its pages stay in a larger cache instead.
            try opened.database.execute("PRAGMA mmap_size = 0")
            try opened.database.execute("PRAGMA cache_size = -65536")
            store = opened
            storeFile = stat(path, &status) == 0 ? (UInt64(status.st_dev), UInt64(status.st_ino)) : nil
            return opened
        }
    }

    /// The render workers' connections kept for the store the session's connection reads.
    var workerConnections: WorkerConnections { lock.withLock { workers } }

    /// The settings and templates the last build read, when none of the `changed` paths (relative to the
    /// site) is `sitegen.yml` or under `Templates/`; nil when the changes are not known.
    func settings(unlessChanged changed: Set<String>?) -> (config: SiteConfig, templates: TemplateSet)? {
        guard let changed, !changed.contains(where: { $0 == "sitegen.yml" || $0 == "Templates" || $0.hasPrefix("Templates/") })
        else { return nil }
        return lock.withLock { settings }
    }

    /// Keeps the settings and templates a build read.
    func keep(_ config: SiteConfig, _ templates: TemplateSet) {
        lock.withLock { settings = (config, templates) }
    }

    /// Lets go of the controllers when `fingerprint` (the build's settings and templates) is not the one
    /// they were made under.
    func check(inputs fingerprint: Int64) {
        lock.withLock {
            if inputs != fingerprint { controllers = [:] }
            inputs = fingerprint
        }
    }

    /// The kept controller cached as `name`, taken out of the session, when it serves `request` and its
    /// results are those of `generation` (the generation the load's changes start from).
    func takeController(named name: String, serving request: FetchRequest, at generation: Int64?) -> ResultsController? {
        lock.withLock {
            guard let controller = controllers.removeValue(forKey: name), controller.request == request,
                  generation == nil || controller.resultsGeneration == generation else { return nil }
            return controller
        }
    }

    /// Keeps `controller` (which holds its results) for the next build; its cache is saved later, by
    /// `saveCaches()`, off the build's way.
    func keep(_ controller: ResultsController) {
        guard let name = controller.cacheName else { return }
        lock.withLock { controllers[name] = controller }
    }

    /// Saves the kept controllers' caches that changed, for the next `sitegen build` process (a session's own
    /// builds use the controllers themselves): called by a watch when it has been quiet a moment, and when it
    /// stops, not by the builds, whose time a save would lengthen. Only while no other process builds
    /// (`BuildLock`), and only a controller whose results are of the store's present generation: a cache
    /// saved after another process's build would go back on that build's. A controller left behind by such
    /// a build is let go of (the next build would not take it).
    public func saveCaches(storePath: URL) {
        guard let lock = BuildLock(ifFreeBeside: storePath) else { return }
        defer { withExtendedLifetime(lock) {} }
        self.lock.withLock {
            guard let store, !controllers.isEmpty else { return }
            let generation = store.database.generation
            for (name, controller) in controllers {
                guard controller.resultsGeneration == generation else {
                    controllers[name] = nil
                    continue
                }
                // A cache that fails to save costs the next process a fresh fetch, nothing else.
                try? controller.persistCache()
            }
        }
    }

    /// The kept manifest index, when the store's manifest still carries `stamp`.
    func manifest(stamped stamp: String?) -> ManifestIndex? {
        lock.withLock {
            guard let manifest, let stamp, manifest.stamp == stamp else { return nil }
            return manifest.index
        }
    }

    /// The spare folder's files as the last build left them (`SpareFiles.Listing`).
    var spareListing: SpareFiles.Listing? {
        get { lock.withLock { spares } }
        set { lock.withLock { spares = newValue } }
    }
    private var spares: SpareFiles.Listing?

    /// Keeps `index` as the manifest the store now holds, under `stamp`.
    func keep(_ index: ManifestIndex, stamp: String) {
        lock.withLock { manifest = (index, stamp) }
    }

    /// Lets go of everything: after a failed build, whose controllers may be ahead of the manifest, and whose
    /// connection may be what failed.
    func reset() {
        lock.withLock {
            controllers = [:]
            manifest = nil
            inputs = nil
            settings = nil
            store = nil
            storeFile = nil
            spares = nil
            workers = WorkerConnections()
        }
    }

    /// How many controllers the session holds (for tests).
    var controllerCount: Int { lock.withLock { controllers.count } }
}
