/// Told when a controller's results change, as NSFetchedResultsControllerDelegate is.
public protocol ResultsControllerDelegate: AnyObject {
    /// Called before the delta is handed over (a table view's `beginUpdates`). Unlike
    /// NSFetchedResultsController's, it comes once the controller's results are already the new ones: the
    /// old index paths are in the delta, not in the controller.
    func controllerWillChangeContent(_ controller: ResultsController)
    /// Called with the delta once the controller's state is the new one.
    func controller(_ controller: ResultsController, didChange delta: Delta)
    /// Called after every change has been reported.
    func controllerDidChangeContent(_ controller: ResultsController)
}

extension ResultsControllerDelegate {
    /// Does nothing by default.
    public func controllerWillChangeContent(_ controller: ResultsController) {}
    /// Does nothing by default.
    public func controller(_ controller: ResultsController, didChange delta: Delta) {}
    /// Does nothing by default.
    public func controllerDidChangeContent(_ controller: ResultsController) {}
}
