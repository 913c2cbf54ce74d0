import BudgetCore
import HTTPServer

/// The query of `GET /changes` (docs/sync.md), checked: `since`, `limit`, `collection` and `wait`.
struct ChangeFeedRequest: Sendable, Equatable {
    /// Changes with a seq above this are wanted; 0 means from the beginning.
    var since: Int64 = 0
    var limit = ChangeFeedRequest.defaultLimit
    /// Only this collection's changes; nil for all.
    var collection: String?
    /// How long to long-poll when nothing newer exists yet; zero answers at once.
    var wait: Duration = .zero

    static let defaultLimit = 100
    static let limitRange = 1...1000
    /// docs/sync.md: `wait` is at most 60 s, which also stays under the server's 60 s idle timeout.
    static let waitRange = 0...60

    /// Reads the query items; anything malformed is a 400 that names the parameter.
    init(request: Request) throws {
        if let text = request.queryValue("since") {
            guard let since = Self.nonNegativeInteger(text) else {
                throw APIError.malformedQuery("since must be a non-negative integer (a lastSeq this feed answered), not \(text)")
            }
            self.since = since
        }
        if let text = request.queryValue("limit") {
            guard let limit = Self.nonNegativeInteger(text), Self.limitRange.contains(Int(limit)) else {
                throw APIError.malformedQuery(
                    "limit must be an integer from \(Self.limitRange.lowerBound) to \(Self.limitRange.upperBound), not \(text)")
            }
            self.limit = Int(limit)
        }
        if let text = request.queryValue("wait") {
            guard let seconds = Self.nonNegativeInteger(text), Self.waitRange.contains(Int(seconds)) else {
                throw APIError.malformedQuery(
                    "wait must be a whole number of seconds from \(Self.waitRange.lowerBound) to \(Self.waitRange.upperBound), not \(text)")
            }
            wait = .seconds(seconds)
        }
        if let name = request.queryValue("collection") {
            guard CollectionNames.isWellFormed(name) else { throw SyncError.unknownCollection(name) }
            collection = name
        }
    }

    /// Digits only: no sign, no spaces, no fraction; nil also when it overflows a bigint.
    private static func nonNegativeInteger(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19,
            text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return Int64(text)
    }
}
