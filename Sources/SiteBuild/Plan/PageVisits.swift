import ResultsController
import SiteRender
import SiteStore

/// Which pages of a listing a build looks at: from its controller's delta when the plan is driven by
/// deltas, every page otherwise.
extension PageRenderer {
    /// The changes of `listing` that name its pages, or nil when every page of it is looked at: the plan
    /// visits everything, or the controller has no delta (its results were fetched afresh) or one that
    /// inserted or deleted sections. A listing looked at whole has its last pages visited whole.
    func pagesToVisit(of listing: ListingConfig, delta: Delta?, dirty: Set<Int64>, controller: ResultsController) throws -> DeltaPages? {
        guard !plan.visitsEverything else { return nil }
        let dirtyPlaces = dirty.compactMap { controller.indexPath(for: $0) }
        guard let delta, let pages = DeltaPages(delta: delta, dirty: dirtyPlaces) else {
            plan.visit(plan.manifest.slots(ownedBy: listing.name))
            return nil
        }
        return pages
    }

    /// The page numbers of section `section` to look at, in order: those `visit` names (every page
    /// without it). Pages of the section the last build had beyond the present count are visited, so
    /// that they go. A Markdown listing's newest page summarises every row (`markdownSummary`): it is
    /// looked at whenever a row changed.
    func pageNumbers(of listing: ListingConfig, section: Int, paginator: Paginator, visit: DeltaPages?,
                     markdownSummary: Bool) throws -> [Int] {
        guard let visit else { return Array(1...paginator.pageCount) }
        var numbers = visit.pages(ofSection: section, paginator)
        // Most of a section's older pages to look at (a record new at the top shifts them all): read in one query.
        if numbers.count >= 16, numbers.count * 4 >= paginator.pageCount {
            plan.readAhead(folder: String(paginator.basePath.dropFirst()) + "page")
        }
        if visit.sections[section]?.countChanged == true {
            // Every page up to the new count is planned (`numbers`), and planning a page visits its files;
            // only the pages past it are visited here, so that they go. Visiting every old page looked each
            // file up in the manifest: 45,000 lookups, a tenth of the main thread in a 100,000-record round.
            var old = paginator
            old.rowCount = visit.oldRowCount(ofSection: section, now: paginator.rowCount)
            if old.pageCount > paginator.pageCount {
                plan.visit(paths: (paginator.pageCount + 1...old.pageCount).flatMap {
                    pageFiles(of: listing, directory: String(old.path(ofPage: $0).dropFirst()))
                })
            }
        }
        if listing.writesMarkdown, markdownSummary, !visit.isEmpty, !numbers.contains(paginator.newestPage) {
            numbers = (numbers + [paginator.newestPage]).sorted()
        }
        return numbers
    }

    /// Every file a page of `listing` in `directory` may have: the page, its Markdown twin, its feeds.
    private func pageFiles(of listing: ListingConfig, directory: String) -> [String] {
        [directory + "index.html", directory + "index.md"] + listing.feeds.map { directory + $0.fileName }
    }
}
