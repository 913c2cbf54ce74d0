import HTTPServer
import Postgres

/// A create route's part in an atomic batch's combined writes (docs/sync.md, "Batches").
///
/// An offline client's push is mostly creates of one kind, one after another. Written one statement each, a
/// batch of a hundred costs PostgreSQL a hundred executions of the same INSERT, each with its own executor
/// start-up, foreign key checks and change capture (a statement-level trigger). Written as one INSERT of a
/// hundred rows, it costs one of each, plus a hundred rows (bench/README.md, "bench/push"). The batch does
/// this for a run of consecutive operations on the same create route whose rows that route can give
/// (`RecordRoutes.combinableCreate`); every other operation runs through its route as before.
///
/// A run's INSERT fails as a whole, and would not say which operation failed: the batch then runs again, from
/// its first operation, every one through its own route (`BatchRoute`), so each answers as it would alone.
///
/// A keyed create on its own writes its one row with its key in one statement the same way (`Idempotency`).
struct CombinableCreate: Sendable {
    /// One operation's part of the INSERT.
    struct Row {
        /// Its VALUES row.
        let values: Query
        /// Whether the client chose the record's id. One statement moves the id sequence past chosen ids only
        /// when it ends (migrations/0013's capture), so a record without an id after one with an id would not
        /// get the id a statement of its own gives it, and could meet an id chosen later in the same statement:
        /// a run ends before such a record (`CombinableInserts.insert(together:)` says the same of an array).
        let choosesID: Bool
    }

    /// The operation's row, or nil when it runs alone, through its route.
    let row: @Sendable (Request, Database) -> Row?
    /// One INSERT of the rows, answering one row per row, in their order.
    let insert: @Sendable ([Query]) -> Query
    /// How many columns each row of the INSERT answers: what a keyed create stores of it to replay
    /// (`Idempotency`, docs/sync.md).
    let columns: Int
    /// The route's answer to each row of the INSERT, in order, before the middleware every route's answer
    /// passes through (`BatchRoute.tags`).
    let answers: @Sendable (QueryResult) throws -> [Response]
}
