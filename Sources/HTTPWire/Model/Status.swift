/// An HTTP status code with its reason phrase; an open set of well-known values.
public struct Status: Hashable, Sendable, CustomStringConvertible {
    public let code: Int
    public let reason: String

    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The status with this code and its usual reason phrase (an empty one for a code not listed here).
    public init(code: Int) {
        self = Self.known.first { $0.code == code } ?? Status(code: code, reason: "")
    }

    public var description: String { "\(code) \(reason)" }

    /// 2xx: the request was received, understood and accepted.
    public var isSuccess: Bool { (200..<300).contains(code) }

    /// RFC 9110 §6.4.1: these answers never carry content, so they get no Content-Length either.
    package var forbidsContent: Bool { code == 204 || code == 304 || (100..<200).contains(code) }

    public static let `continue` = Status(code: 100, reason: "Continue")
    public static let ok = Status(code: 200, reason: "OK")
    public static let created = Status(code: 201, reason: "Created")
    public static let accepted = Status(code: 202, reason: "Accepted")
    public static let noContent = Status(code: 204, reason: "No Content")
    public static let notModified = Status(code: 304, reason: "Not Modified")
    public static let badRequest = Status(code: 400, reason: "Bad Request")
    public static let unauthorized = Status(code: 401, reason: "Unauthorized")
    public static let forbidden = Status(code: 403, reason: "Forbidden")
    public static let notFound = Status(code: 404, reason: "Not Found")
    public static let methodNotAllowed = Status(code: 405, reason: "Method Not Allowed")
    public static let requestTimeout = Status(code: 408, reason: "Request Timeout")
    public static let conflict = Status(code: 409, reason: "Conflict")
    public static let gone = Status(code: 410, reason: "Gone")
    public static let preconditionFailed = Status(code: 412, reason: "Precondition Failed")
    public static let payloadTooLarge = Status(code: 413, reason: "Content Too Large")
    public static let uriTooLong = Status(code: 414, reason: "URI Too Long")
    public static let unsupportedMediaType = Status(code: 415, reason: "Unsupported Media Type")
    public static let unprocessableContent = Status(code: 422, reason: "Unprocessable Content")
    public static let tooManyRequests = Status(code: 429, reason: "Too Many Requests")
    public static let requestHeaderFieldsTooLarge = Status(code: 431, reason: "Request Header Fields Too Large")
    public static let internalServerError = Status(code: 500, reason: "Internal Server Error")
    public static let notImplemented = Status(code: 501, reason: "Not Implemented")
    public static let serviceUnavailable = Status(code: 503, reason: "Service Unavailable")
    public static let httpVersionNotSupported = Status(code: 505, reason: "HTTP Version Not Supported")

    private static let known: [Status] = [
        .continue, .ok, .created, .accepted, .noContent, .notModified, .badRequest, .unauthorized, .forbidden,
        .notFound, .methodNotAllowed, .requestTimeout, .conflict, .gone, .preconditionFailed, .payloadTooLarge,
        .uriTooLong, .unsupportedMediaType, .unprocessableContent, .tooManyRequests, .requestHeaderFieldsTooLarge,
        .internalServerError, .notImplemented, .serviceUnavailable, .httpVersionNotSupported,
    ]
}
