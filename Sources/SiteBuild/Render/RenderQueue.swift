import Foundation
import SiteRender
import SiteStore

/// Renders pages through their templates (and makes the feeds beside them) and writes them on worker
/// threads, while the caller's thread plans the next pages: template rendering is most of a page's cost.
/// The build's store connection stays on the caller's thread; a worker that reads rows does so on a
/// read-only connection of its own.
///
/// At most `capacity` jobs (a page, or a page's feeds) wait, so memory stays bounded by pages, not by the
/// site. The bound is wide (8,192): a list page waits as a few ids, and a caller that gets far ahead plans
/// the next listing's pages while the workers render this one's (the 100,000-record mutation round: 2.83 s
/// with 1,024, 2.43 s with 8,192, medians of six; a record page waits with its row, about 10 MB more at
/// 10,000 records). A full queue lets its caller go on only once half of it is taken, and a worker is woken
/// only when one is idle: a wake-up for every page was a million `futex` calls in a 100,000-record build.
/// The first error a worker meets (a template error, a file that cannot be written) is thrown by the next
/// `submit` or by `finish`, and no page is submitted after it.
final class RenderQueue: @unchecked Sendable {
    private struct Job {
        /// Makes the files' texts on the worker, one for each of `paths`: reading and presenting rows,
        /// rendering Markdown bodies and making links is much of a page's cost, and the caller's thread is
        /// the one that cannot be shared.
        let make: (Worker) throws -> [String]
        /// Where the texts go, relative to the output folder; the first names the job in errors.
        let paths: [String]
    }

    /// What a page's context may use on the worker that makes it.
    final class Worker {
        private let storePath: String?
        private let kept: WorkerConnections?
        private var connection: Database?

        init(storePath: String?, kept: WorkerConnections?) {
            self.storePath = storePath
            self.kept = kept
        }

        /// Closes the worker's connection, if it opened one, or gives it back to those kept for later builds;
        /// either way its read of the store ends first.
        func close() {
            if let connection {
                connection.endReads()
                if connection.isInsideTransaction { try? connection.execute("COMMIT") }
                kept?.giveBack(connection)
            }
            connection = nil
        }

        /// The worker's read-only connection to the store: one a session kept, or one opened on first use. It
        /// sees what the build's connection committed: the load, before any page is queued.
        func database() throws -> Database {
            if let connection { return connection }
            let database = try kept?.take() ?? open()
            // Kept before the read begins: `close` gives a session's connection back whatever happens next.
            connection = database
            // One read for the whole render: a read of its own for each page took the store's locks and, as
            // pieces were saved beside it, found the store changed and dropped the connection's cache. The
            // pieces saved meanwhile are this build's own, which no other page of it asks for.
            if !database.isInsideTransaction { try database.execute("BEGIN") }
            return database
        }

        private func open() throws -> Database {
            // Pages read rows on workers only in a queue that has a store (`readsStore`).
            guard let storePath else { preconditionFailure("a render queue without a store has no rows to read") }
            let opened = try Database(path: storePath, readOnly: true)
            // A page's rows are leaves spread over the table, each read once: the kernel's page cache has
            // them, and this one needs little more than the trees' inner pages. Not mapped either: mapped
            // pages count as the process's memory once per connection (decisions.md 15).
            try opened.execute("PRAGMA cache_size = -4096")
            return opened
        }
    }

    private let templates: TemplateSet
    /// Whether workers can read rows (the queue was made with a store).
    let readsStore: Bool
    private let knownNames: Set<String>
    private let recordNames: Set<String>
    private let site: TemplateText.Site?
    private let writer: OutputWriter
    private let capacity: Int
    private let condition = NSCondition()
    private var jobs = FIFO<Job>()
    private var busy = 0
    /// Workers waiting for a job.
    private var idle = 0
    /// Whether the caller waits for room in a full queue.
    private var submitterWaits = false
    private var closed = false
    private var failure: (any Error)?
    private var workers: [Thread] = []

    /// Starts `workerCount` workers writing through `writer`; templates may use `knownNames` without a
    /// value (`recordNames` inside a record only), and helpers of page values use `site`; the store at
    /// `storePath`, if any, is where workers read rows.
    init(templates: TemplateSet, knownNames: Set<String>, recordNames: Set<String> = [], site: TemplateText.Site? = nil,
         writer: OutputWriter, storePath: String? = nil, keptConnections: WorkerConnections? = nil,
         workerCount: Int = ProcessInfo.processInfo.activeProcessorCount, capacity: Int = 8192)
    {
        self.templates = templates
        self.knownNames = knownNames
        self.recordNames = recordNames
        self.site = site
        self.writer = writer
        self.capacity = capacity
        readsStore = storePath != nil
        for _ in 0..<max(1, workerCount) {
            let thread = Thread { [self] in work(Worker(storePath: storePath, kept: keptConnections)) }
            thread.stackSize = 1 << 22
            workers.append(thread)
            thread.start()
        }
    }

    /// Queues a page: `template` rendered with the context `context` makes (on a worker thread, so it
    /// must not touch the build's connection, only the worker's), written to `path` (relative to the
    /// output folder).
    func submit(template: String, page: PageKind? = nil, path: String, context: @escaping (Worker) throws -> [String: Any]) throws {
        try submit(paths: [path]) { [self] worker in
            [try templates.render(template, context: context(worker), knownNames: knownNames, recordNames: recordNames, page: page, site: site)]
        }
    }

    /// Queues a list page whose items may be put in from pieces rendered before (`ListItemPieces`):
    /// `context` makes its context with them, or, asked again with `false` when the render could not use
    /// them (the section was not where pieces apply), from every row.
    func submit(template: String, page: PageKind?, path: String, pieces: ListItemPieces,
                context: @escaping (Worker, Bool) throws -> ([String: Any], ItemFragments?)) throws {
        try submit(paths: [path]) { [self] worker in
            let (values, fragments) = try context(worker, true)
            let text = try templates.render(template, context: values, knownNames: knownNames, recordNames: recordNames, page: page,
                                            site: site, fragments: fragments)
            guard let fragments else { return [text] }
            if fragments.applied {
                pieces.keep(fragments)
                return [text]
            }
            // Placeholders stood for the items that had pieces: rendered again from their rows.
            guard fragments.cached.contains(where: { $0 != nil }) else { return [text] }
            let (plain, _) = try context(worker, false)
            return [try templates.render(template, context: plain, knownNames: knownNames, recordNames: recordNames, page: page, site: site)]
        }
    }

    /// Queues files that are no template's pages (a page's feeds, one per format): `documents` makes their
    /// texts on a worker thread (touching only the worker's connection, not the build's), one for each of
    /// `paths`, where they are written.
    func submit(paths: [String], documents: @escaping (Worker) throws -> [String]) throws {
        condition.lock()
        defer { condition.unlock() }
        if jobs.count >= capacity {
            submitterWaits = true
            while jobs.count > capacity / 2 && failure == nil { condition.wait() }
            submitterWaits = false
        }
        if let failure { throw failure }
        jobs.append(Job(make: documents, paths: paths))
        // Only workers wait while the caller submits: one of them is enough for one job.
        if idle > 0 { condition.signal() }
    }

    /// Waits until every queued page is written and the workers have stopped; throws the first error.
    func finish() throws {
        condition.lock()
        closed = true
        condition.broadcast()
        while !jobs.isEmpty || busy > 0 || !workers.isEmpty { condition.wait() }
        let failure = failure
        condition.unlock()
        if let failure { throw failure }
    }

    private func work(_ worker: Worker) {
        while true {
            condition.lock()
            while jobs.isEmpty && !closed {
                idle += 1
                condition.wait()
                idle -= 1
            }
            guard !jobs.isEmpty, failure == nil else {
                // Closed before `finish` returns: the last connection to close deletes the store's -wal and
                // -shm files, which must not happen behind the back of whoever uses the store next.
                worker.close()
                workers.removeFirst()
                condition.broadcast()
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()!
            busy += 1
            // Other workers may wait on the same condition, so all are woken, from the take that leaves half
            // the queue until the caller has the lock again (a handful of broadcasts per half a queue).
            if submitterWaits && jobs.count <= capacity / 2 { condition.broadcast() }
            condition.unlock()
            do {
                let texts = try job.make(worker)
                // A file planned and not written would be one the manifest lists and the folder lacks.
                precondition(texts.count == job.paths.count, "\(job.paths[0]): \(texts.count) texts for \(job.paths.count) files")
                for (text, path) in zip(texts, job.paths) { try writer.write(text, to: path) }
            } catch {
                condition.lock()
                // A template a record's value chose is named with the page, so that the record can be found.
                if failure == nil { failure = (error as? TemplateError)?.onPage(job.paths[0]) ?? error }
                jobs.removeAll()
                condition.broadcast()
                condition.unlock()
            }
            condition.lock()
            busy -= 1
            // `finish` waits for the last page.
            if closed && jobs.isEmpty && busy == 0 { condition.broadcast() }
            condition.unlock()
        }
    }
}

/// The render workers' read-only connections to the store, kept by a watch's session from one build to
/// the next: opening one and reading the store's schema again took about a millisecond a worker, each build.
final class WorkerConnections: @unchecked Sendable {
    private let lock = NSLock()
    private var free: [Database] = []

    /// No connections yet: the first build's workers open theirs.
    init() {}

    /// How many connections are kept free.
    var count: Int { lock.withLock { free.count } }

    /// A kept connection, or nil when none is free.
    func take() -> Database? {
        lock.withLock { free.popLast() }
    }

    /// Keeps `connection` for a worker of a later build, with no read of it left open (a statement stopped
    /// part way would keep this build's view of the store for the next).
    func giveBack(_ connection: Database) {
        connection.endReads()
        lock.withLock { free.append(connection) }
    }
}

/// A first-in, first-out queue whose takes cost O(1) amortized: taking the first of an array moves every
/// other element, and the render queue holds up to 8,192 jobs, under its lock (a 100,000-record build spent
/// 3% of its render CPU in that move, decisions.md 23).
struct FIFO<Element> {
    /// Newest last.
    private var incoming: [Element] = []
    /// Oldest last, so a take is a `popLast`.
    private var outgoing: [Element] = []

    /// How many elements wait.
    var count: Int { incoming.count + outgoing.count }
    /// Whether none waits.
    var isEmpty: Bool { incoming.isEmpty && outgoing.isEmpty }

    /// Adds `element` after the others.
    mutating func append(_ element: Element) { incoming.append(element) }

    /// The oldest element, removed; nil when empty.
    mutating func removeFirst() -> Element? {
        if outgoing.isEmpty {
            // Each element is moved once here, however long it waited; both buffers are kept.
            swap(&incoming, &outgoing)
            outgoing.reverse()
        }
        return outgoing.popLast()
    }

    /// Drops every element.
    mutating func removeAll() {
        incoming.removeAll()
        outgoing.removeAll()
    }
}
