import BudgetCore
import HTTPServer

/// What a list answers in: JSON, or CSV (RFC 4180) for the lists that offer it (docs/api.md, CSV), as the
/// request's `Accept` chooses.
enum ListFormat: Sendable {
    case json
    case csv

    /// A list that answers CSV too, JSON first: JSON wins ties and answers when `Accept` is missing, `*/*`, or
    /// names neither.
    static let jsonOrCSV: [ListFormat] = [.json, .csv]

    /// The media type `Accept` names it by.
    var mediaType: String {
        switch self {
        case .json: "application/json"
        case .csv: CSVText.mediaType
        }
    }

    /// The format `request`'s `Accept` prefers among `offered`, most preferred first (RFC 9110 §12.5.1).
    init(_ request: Request, among offered: [ListFormat]) {
        // Most requests (every one of bench/run's) name no Accept: they pay for no negotiation.
        guard offered.count > 1, request.headers.contains("Accept") else {
            self = offered.first ?? .json
            return
        }
        let chosen = request.preferredMediaType(among: offered.map(\.mediaType))
        self = offered.first { $0.mediaType == chosen } ?? offered[0]
    }
}
