import Crypto

/// Lets a request through only with `Authorization: Bearer <token>` (RFC 6750 §2.1); anything else is 401.
///
/// Paths in `openPaths` (health checks) pass without a token. The 401 carries `WWW-Authenticate: Bearer`,
/// plus `error="invalid_token"` when a token was sent but is not the one (RFC 6750 §3, §3.1). Gates run after
/// `CORSPolicy` has answered preflights, which browsers send without credentials.
///
/// The token is compared in constant time, and neither it nor the header is ever logged or echoed.
public struct BearerTokenGate: RequestGate {
    private let expected: SHA256.Digest
    private let openPaths: Set<String>

    public init(token: String, openPaths: Set<String> = []) {
        expected = SHA256.hash(data: Array(token.utf8))
        self.openPaths = openPaths
    }

    public func check(_ request: Request) throws {
        if openPaths.contains(request.path) { return }
        guard matches(try Self.token(of: request)) else { throw Self.invalidToken }
    }

    /// The token of the request's one `Authorization: Bearer` field, or the 401 for none, a malformed one or two.
    public static func token(of request: Request) throws -> Substring {
        let credentials = request.headers.values(for: "Authorization")
        // A request with no bearer credentials gets the bare challenge, without an error code (RFC 6750 §3.1).
        guard !credentials.isEmpty, credentials.contains(where: { Self.bearerToken(in: $0) != nil }) else {
            throw Self.unauthorized(detail: "This server needs an Authorization: Bearer token.", challenge: "Bearer")
        }
        // Two Authorization fields are one too many: which one would a proxy have checked?
        guard credentials.count == 1, let token = Self.bearerToken(in: credentials[0]) else { throw invalidToken }
        return token
    }

    /// The 401 for a token that is not (or no longer) valid (RFC 6750 §3.1).
    public static let invalidToken = unauthorized(detail: "The bearer token is not valid.", challenge: #"Bearer error="invalid_token""#)

    /// Whether `token` is the configured one: both are hashed and the digests compared without an early
    /// exit, so the time taken tells nothing of how much of a guess was right, nor of the secret's length.
    public func matches(_ token: Substring) -> Bool {
        constantTimeEquals(SHA256.hash(data: Array(token.utf8)), expected)
    }

    /// The token of a `Bearer` credential: the scheme compares case-insensitively (RFC 9110 §11.1).
    static func bearerToken(in value: String) -> Substring? {
        let trimmed = value.trimmingASCIIWhitespace()
        guard let space = trimmed.firstIndex(where: { $0 == " " || $0 == "\t" }),
            String(trimmed[..<space]).equalsIgnoringASCIICase("Bearer")
        else { return nil }
        let token = trimmed[space...].trimmingASCIIWhitespace()
        return token.isEmpty ? nil : token
    }

    private static func unauthorized(detail: String, challenge: String) -> Problem {
        Problem(.unauthorized, detail: detail, headers: ["WWW-Authenticate": challenge])
    }
}

/// Whether two byte sequences are equal, looking at every byte of the longer one whatever they hold, so the
/// time taken does not depend on where they first differ, nor on whether their lengths do.
func constantTimeEquals(_ lhs: some Sequence<UInt8>, _ rhs: some Sequence<UInt8>) -> Bool {
    let lhs = Array(lhs), rhs = Array(rhs)
    var difference: UInt8 = lhs.count == rhs.count ? 0 : 1
    for index in 0..<max(lhs.count, rhs.count) {
        let left = index < lhs.count ? lhs[index] : 0
        let right = index < rhs.count ? rhs[index] : 0
        difference |= left ^ right
    }
    return difference == 0
}
