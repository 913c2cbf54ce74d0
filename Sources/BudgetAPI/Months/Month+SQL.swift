import BudgetCore
import Postgres

extension Month {
    /// The first day as a bound `date`.
    var sql: Query { "\(firstDay)::date" }
}
