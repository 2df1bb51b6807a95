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
    public func controllerWillChangeContent(_ controller: ResultsController) {}
    public func controller(_ controller: ResultsController, didChange delta: Delta) {}
    public func controllerDidChangeContent(_ controller: ResultsController) {}
}
