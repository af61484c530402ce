extension Flattener {
    /// Keeps the run of an inner `Signal { … }` that completed, to start the next one with: most such producers
    /// neither keep their observer nor their lifetime, so a `.concat` chain of them makes its run, observer and
    /// lifetime once (and puts the run in the flatMap's lifetime once) instead of once per value. Only a run whose
    /// observer nothing else holds is reused (`takeSpare`): nobody can send into it any more.
    @inlinable
    func keepAsSpare(_ ended: Run) {
        guard case .flattened(let run, let observer) = ended else { return }
        guard !state.isTerminated else {
            run.unregister()
            return
        }
        dropSpare()
        state.spare = (run, observer)
    }

    /// The spare run and its observer, made ready to run inner run `id`; nil when there is none, or when something
    /// else still holds its observer (then it is dropped).
    @inlinable
    func takeSpare(for id: InnerID) -> (run: FlattenedRun<Value, Failure>, observer: Observer<Value, Failure>)? {
        guard var spare = state.spare.take() else { return nil }
        guard isKnownUniquelyReferenced(&spare.observer) else {
            spare.run.unregister()
            return nil
        }
        spare.run.reopen(as: id)
        return spare
    }

    /// Lets go of the spare run, taking it out of the flatMap's lifetime.
    @inlinable
    func dropSpare() {
        state.spare.take()?.run.unregister()
    }
}
