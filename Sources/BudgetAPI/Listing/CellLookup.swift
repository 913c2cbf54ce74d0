import Postgres

/// Text a CSV row shows for a key member, read once per answer in the answer's snapshot rather than joined
/// to every row: a transaction's `category`, its category's title by `categoryId` (docs/api.md, CSV).
///
/// A join cost PostgreSQL about a quarter more CPU on a 10,000-row export than the same page as JSON
/// (bench/README.md, CSV export); a dictionary of a few hundred titles costs next to nothing.
struct CellLookup: Sendable {
    /// Two columns, an integer key and its text, e.g. `SELECT id, title FROM categories`.
    let query: Query
    /// The record member (its index among `PlainRecord`'s columns) whose integer is replaced by its text.
    let member: Int
}
