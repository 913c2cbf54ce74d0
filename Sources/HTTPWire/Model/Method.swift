/// An HTTP request method; an open set, compared case-sensitively as RFC 9110 §9.1 requires.
public struct Method: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static let get = Method(rawValue: "GET")
    public static let head = Method(rawValue: "HEAD")
    public static let post = Method(rawValue: "POST")
    public static let put = Method(rawValue: "PUT")
    public static let patch = Method(rawValue: "PATCH")
    public static let delete = Method(rawValue: "DELETE")
    public static let options = Method(rawValue: "OPTIONS")

    /// RFC 9110 §9.2.1: a safe method asks only to read, so a server changes nothing for it.
    public var isSafe: Bool {
        self == .get || self == .head || self == .options || rawValue == "TRACE"
    }
}
