/// The payload of a `budget_changes` notification: each ledger whose feed a sequencer run moved, with its
/// new position, e.g. `1:5012,7:40` (migrations/0017), so that a run wakes the long-polls of those
/// ledgers alone (docs/change-feed.md).
enum ChangeNotice {
    /// The ledgers `payload` names; nil, "every ledger", for `*` (a run that touched too many to list) and
    /// for anything unreadable, so that a payload this version does not understand wakes too many, never
    /// too few.
    static func ledgers(in payload: String) -> [Int64]? {
        var ledgers: [Int64] = []
        for pair in payload.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let ledger = Int64(parts[0]), Int64(parts[1]) != nil else { return nil }
            ledgers.append(ledger)
        }
        return ledgers
    }
}
