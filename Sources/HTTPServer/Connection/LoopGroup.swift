import Synchronization

/// The loops of one server: the number of connections open across them, and which loop takes a new one.
final class LoopGroup: Sendable {
    private let count = Atomic<Int>(0)
    /// Set once before the loops start; emptied at shutdown, which breaks the loop ↔ group reference cycle.
    private let loops = Mutex<[ServerLoop]>([])

    func join(_ members: [ServerLoop]) {
        loops.withLock { $0 = members }
    }

    func dissolve() {
        loops.withLock { $0 = [] }
    }

    /// The loop with the fewest connections, `acceptor` when it is among the fewest; counts one more on it.
    func assignConnection(acceptedBy acceptor: ServerLoop) -> ServerLoop {
        let owner = loops.withLock { loops in
            var owner = acceptor
            var fewest = acceptor.load.load(ordering: .relaxed)
            for loop in loops where loop !== acceptor {
                let load = loop.load.load(ordering: .relaxed)
                if load < fewest { (owner, fewest) = (loop, load) }
            }
            return owner
        }
        owner.load.add(1, ordering: .relaxed)
        return owner
    }

    /// Counts a new connection unless `limit` are open already; false means refuse it.
    func admit(limit: Int) -> Bool {
        guard count.add(1, ordering: .relaxed).newValue > limit else { return true }
        count.subtract(1, ordering: .relaxed)
        return false
    }

    /// Counts a connection closed.
    func remove() {
        count.subtract(1, ordering: .relaxed)
    }

    var current: Int { count.load(ordering: .relaxed) }
}
