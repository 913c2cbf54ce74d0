import Synchronization

// What a held transaction has not sent yet (docs/sync.md, "How a push is written")
//
// A transaction held across asynchronous steps (`ReservedConnection` on a pool worker, `LoopReservation` on
// an event loop) sends nothing by itself when it opens: its BEGIN travels with its first statement, a
// statement deferred to the commit travels with the COMMIT, a statement sent ahead travels with the next
// one, and a scope that ends before any of its statements went sends nothing at all. Both keep that
// bookkeeping here, so both send exactly the same statements in the same round trips.

/// The rows of a statement queued to travel with the next one (`TransactionRunner.sendWithNext`), delivered
/// when that round trip ends.
public final class PendingAnswer: Sendable {
    private let outcome = Mutex<Result<QueryResult, PostgresError>?>(nil)

    init() {}

    /// The statement's rows or error; nil while it has not been sent.
    public var result: Result<QueryResult, PostgresError>? { outcome.withLock { $0 } }

    func deliver(_ result: Result<QueryResult, PostgresError>) {
        outcome.withLock { $0 = $0 ?? result }
    }
}

/// Open scopes and the statements waiting for the next round trip, of one held transaction. Not thread-safe:
/// its owner keeps it under a lock or on one thread.
struct UnsentStatements {
    /// A statement not sent yet: a scope's opening (with the depth it opens), a deferred statement, or one
    /// sent ahead whose answer someone waits for.
    fileprivate struct Unsent {
        let query: Query
        var opensDepth: Int? = nil
        var answer: PendingAnswer? = nil
    }

    /// How many transactions and savepoints are open, sent or not.
    private(set) var depth = 0
    private var unsent: [Unsent] = []

    /// Opens a transaction (or a savepoint inside one); its opening waits for the next round trip.
    mutating func open(isolation: IsolationLevel) -> TransactionScope {
        let scope = TransactionScope(isNested: depth > 0, isolation: isolation)
        depth += 1
        unsent.append(Unsent(query: scope.begin, opensDepth: depth))
        return scope
    }

    /// Queues `query` for the end of the innermost open scope (or the next statement sent).
    mutating func deferUntilCommit(_ query: Query) {
        precondition(depth > 0, "deferUntilCommit outside a transaction")
        unsent.append(Unsent(query: query))
    }

    /// Queues `query` to go with the next statement; its rows reach the answer returned.
    mutating func sendWithNext(_ query: Query) -> PendingAnswer {
        let answer = PendingAnswer()
        unsent.append(Unsent(query: query, answer: answer))
        return answer
    }

    /// Every statement still unsent, to go ahead of the next job's own; nothing is left unsent after it.
    mutating func takeAll() -> UnsentBatch {
        defer { unsent.removeAll() }
        return UnsentBatch(unsent)
    }

    /// Ends the innermost scope: what to send for it (its statements still unsent, then COMMIT or ROLLBACK),
    /// or nil when nothing needs sending (none of its statements reached the server, and it committed with
    /// nothing deferred or it rolled back).
    mutating func close(_ scope: TransactionScope, committing: Bool) -> UnsentBatch? {
        defer { depth -= 1 }
        // Everything unsent from the scope's opening on (or all of it, when the opening was sent) is the scope's.
        let opening = unsent.lastIndex { $0.opensDepth == depth }
        let own = Array(unsent[(opening ?? 0)...])
        unsent.removeSubrange((opening ?? 0)...)
        if committing {
            if opening != nil, own.count == 1 { return nil }
            return UnsentBatch(own + [Unsent(query: scope.commit)])
        }
        // Statements sent ahead in a scope that never reached the server never run.
        for dropped in own { dropped.answer?.deliver(.failure(Self.neverSent)) }
        return opening == nil ? UnsentBatch([Unsent(query: scope.rollback)]) : nil
    }

    /// `body` inside `scope`, just opened, then `close`d: committing when `shouldCommit` accepts what `body`
    /// returned, else (or when it throws) rolling back. What both holders' `transaction` does.
    static func run<T>(
        _ scope: TransactionScope, commitIf shouldCommit: (T) -> Bool, _ body: () async throws -> T,
        close: (TransactionScope, _ committing: Bool) async throws -> Void
    ) async throws -> T {
        let value: T
        do {
            value = try await body()
        } catch {
            // The original error matters more than a rollback that fails on a broken connection.
            _ = try? await close(scope, false)
            throw error
        }
        try await close(scope, shouldCommit(value))
        return value
    }

    static let neverSent = PostgresError(kind: .protocolViolation, message: "the statement's scope ended before it was sent")

    /// Statements taken to go in one round trip, and whom to tell their answers.
    struct UnsentBatch {
        let queries: [Query]
        private let answers: [(index: Int, answer: PendingAnswer)]

        fileprivate init(_ unsent: [Unsent]) {
            queries = unsent.map(\.query)
            answers = unsent.enumerated().compactMap { index, item in item.answer.map { (index, $0) } }
        }

        private init(queries: [Query], answers: [(index: Int, answer: PendingAnswer)]) {
            self.queries = queries
            self.answers = answers
        }

        /// No statements.
        static let none = UnsentBatch([])

        var isEmpty: Bool { queries.isEmpty }

        /// `first`'s statements, then `second`'s, in one round trip.
        static func + (first: UnsentBatch, second: UnsentBatch) -> UnsentBatch {
            UnsentBatch(
                queries: first.queries + second.queries,
                answers: first.answers + second.answers.map { ($0.index + first.queries.count, $0.answer) })
        }

        /// Gives each statement sent ahead its outcome from `outcomes` (one per query of this batch, then
        /// any more the round trip carried), and answers the rest's rows; throws the round trip's first
        /// failure, which a statement skipped after it shares.
        func finish(_ outcomes: [Result<QueryResult, PostgresError>]) throws -> [QueryResult] {
            for (index, answer) in answers { answer.deliver(outcomes[index]) }
            var rows: [QueryResult] = []
            rows.reserveCapacity(outcomes.count - queries.count)
            for outcome in outcomes[queries.count...] { rows.append(try outcome.get()) }
            // A failure among this batch's own statements (a deferred one, a scope's opening) fails the trip.
            for case .failure(let error) in outcomes[..<queries.count] { throw error }
            return rows
        }

        /// Tells the statements sent ahead that the round trip failed before any answer came.
        func fail(_ error: PostgresError) {
            for (_, answer) in answers { answer.deliver(.failure(error)) }
        }
    }
}
