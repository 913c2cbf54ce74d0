import Foundation
import HTTPTypes
import OpenAPIRuntime

import struct Foundation.URL

/// Undoes the percent-encoding that swift-openapi-runtime applies to header parameters (it writes them like URI
/// components, so `If-Match: "abc"` leaves as `If-Match: %22abc%22`; apple/swift-openapi-generator issues 529,
/// 827 and 857). budget-server answers such a value with a 400 that names the cause (docs/clients.md).
///
/// Only the header parameters of budget-server's openapi.yaml are decoded; every other field passes untouched.
public struct HeaderPercentDecoding: ClientMiddleware {
    /// The request headers that openapi.yaml declares as parameters.
    public static let parameterHeaders: [HTTPField.Name] = [
        HTTPField.Name("If-Match")!, HTTPField.Name("If-None-Match")!, HTTPField.Name("Idempotency-Key")!,
        HTTPField.Name("X-Request-Id")!,
    ]

    public init() {}

    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        for name in Self.parameterHeaders {
            let values = request.headerFields[values: name]
            guard !values.isEmpty else { continue }
            request.headerFields[values: name] = values.map { $0.removingPercentEncoding ?? $0 }
        }
        return try await next(request, body, baseURL)
    }
}

/// Sends `Authorization: Bearer <token>` with every request, for a server started with `--api-token`.
public struct BearerToken: ClientMiddleware {
    private let token: String

    public init(_ token: String) {
        self.token = token
    }

    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(token)"
        return try await next(request, body, baseURL)
    }
}
