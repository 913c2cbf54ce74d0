/// A list query that the query language refuses, with what to tell the client.
///
/// BudgetAPI answers it as a 400 problem whose detail is `detail` (docs/json-server.md); the core knows
/// nothing of HTTP.
public struct MalformedQuery: Error, Equatable, Sendable, CustomStringConvertible {
    public let detail: String

    public init(_ detail: String) { self.detail = detail }

    public var description: String { detail }
}
