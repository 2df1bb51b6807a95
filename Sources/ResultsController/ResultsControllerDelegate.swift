/// Told when a controller's results change, as NSFetchedResultsControllerDelegate is.
public protocol ResultsControllerDelegate: AnyObject {
    /// Called before the controller's state changes.
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
