/// Where a request came from as its client sees it: the scheme and host it addressed, and its own address.
///
/// Taken at face value it is `http`, the Host header and the TCP peer (`direct`). Behind a reverse proxy
/// those describe the proxy, so an application that trusts its proxy asks `RequestPipeline` to resolve
/// the origin from the proxy's headers instead (`forwarded`), once per request, before anything else
/// reads it. Never resolve it from headers a client can send straight to the server: they are forgeable.
public struct ClientOrigin: Sendable, Equatable {
    /// `"http"` or `"https"`.
    public var scheme: String
    /// `host[:port]` as the client addressed it; nil when unknown (an HTTP/1.0 request without Host).
    public var host: String?
    /// The client's address (`"192.0.2.7"`, `"2001:db8::1"`), or what a proxy put in its place (`"unknown"`,
    /// an obfuscated `"_hidden"`); nil when unknown.
    public var address: String?

    public init(scheme: String = "http", host: String?, address: String?) {
        (self.scheme, self.host, self.address) = (scheme, host, address)
    }

    /// The origin of a request received without a proxy: plain HTTP, its Host header and its TCP peer.
    public static func direct(headers: Headers, peer: String?) -> ClientOrigin {
        ClientOrigin(host: headers["Host"], address: peer)
    }

    /// The origin a trusted proxy reports, each part falling back to `direct`'s.
    ///
    /// Each part comes from the first place that has a valid one: the first element of `Forwarded`
    /// (RFC 7239 §4; the element the proxy nearest the client wrote), then the first item of
    /// `X-Forwarded-Proto`, `X-Forwarded-Host` or `X-Forwarded-For`, then `direct`. A malformed
    /// `Forwarded` field is ignored as a whole, and so is an `X-Forwarded-*` field whose first item is not
    /// an address, a host or `http`/`https`: never an error, since the client did nothing wrong. Only
    /// `http` and `https` are taken as a scheme.
    ///
    /// Taking the first element trusts every hop: the proxy facing the clients must replace, not append
    /// to, any of these fields a client sent (docs/operations.md).
    public static func forwarded(headers: Headers, direct: ClientOrigin) -> ClientOrigin {
        let element = ForwardedElement.parseList(headers.values(for: "Forwarded"))?.first
        let proto = element?.proto ?? firstItem(of: "X-Forwarded-Proto", in: headers)?.lowercased()
        let host = element?.host ?? firstItem(of: "X-Forwarded-Host", in: headers).flatMap { ForwardedElement.isHost($0) ? $0 : nil }
        let address = element?.forNode ?? firstItem(of: "X-Forwarded-For", in: headers).flatMap(Self.address)
        return ClientOrigin(
            scheme: proto.flatMap { ["http", "https"].contains($0) ? $0 : nil } ?? direct.scheme,
            host: host ?? direct.host,
            address: address ?? direct.address
        )
    }

    /// The first item of a comma-separated field over all its lines (RFC 9110 §5.6.1), or nil.
    private static func firstItem(of name: String, in headers: Headers) -> String? {
        for line in headers.values(for: name) {
            for item in line.split(separator: ",", omittingEmptySubsequences: false) {
                let item = item.trimmingASCIIWhitespace()
                if !item.isEmpty { return String(item) }
            }
        }
        return nil
    }

    /// An `X-Forwarded-For` item: a bare IPv4 or IPv6 address, or an IPv6 one in brackets.
    private static func address(_ item: String) -> String? {
        if ForwardedElement.isIPv4(item) || ForwardedElement.isIPv6(item) { return item }
        if item.hasPrefix("["), item.hasSuffix("]") {
            let inner = String(item.dropFirst().dropLast())
            return ForwardedElement.isIPv6(inner) ? inner : nil
        }
        return nil
    }
}
