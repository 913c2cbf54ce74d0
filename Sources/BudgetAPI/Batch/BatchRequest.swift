import BudgetCore
import HTTPServer

/// A `POST /batch` body (docs/sync.md), checked whole before any operation runs, so that a malformed batch
/// writes nothing: `{"atomic":true,"operations":[{"method":"POST","path":"/categories","body":{…},
/// "idempotencyKey":"…","ifMatch":"\"…\""},…]}`.
struct BatchRequest: Sendable {
    struct Operation: Sendable {
        let method: Method
        let path: String
        let body: JSONValue?
        let idempotencyKey: IdempotencyKey?
        /// Sent as the operation's `If-Match`, so offline edits can be conditional too.
        let ifMatch: String?

        /// The operation as the request the server would have received on its own.
        func request(parent: Request, index: Int) -> Request {
            var headers = Headers()
            if body != nil { headers.add("Content-Type", RequestBody.json) }
            if let ifMatch { headers.add("If-Match", ifMatch) }
            var request = Request(method: method, target: path, headers: headers, body: body.map(JSONWriter.bytes) ?? [])
            request.id = "\(parent.id)-\(index)"
            request.peer = parent.peer
            request.origin = parent.origin
            return request
        }

        var summary: String { "\(method) \(path)" }
    }

    static let writeMethods: [Method] = [.post, .put, .patch, .delete]
    /// Longer paths would have been refused as URLs (414 over 8 KiB: docs/operations.md, Limits).
    static let maximumPathBytes = 8 * 1024

    let isAtomic: Bool
    let operations: [Operation]

    init(_ request: Request, maximumOperations: Int) throws {
        let members = try RequestBody.object(request)
        var errors: [Problem.FieldError] = []
        for member in members where !["atomic", "operations"].contains(member.name) {
            errors.append(.init(field: member.name, message: "unknown member; a batch has atomic and operations"))
        }
        switch members["atomic"] {
        case nil, .bool?: break
        default: errors.append(.init(field: "atomic", message: "must be true or false"))
        }
        if case .bool(let atomic)? = members["atomic"] { isAtomic = atomic } else { isAtomic = false }

        guard case .array(let elements)? = members["operations"] else {
            errors.append(.init(field: "operations", message: "must be an array of operations"))
            throw APIError.invalidFields(errors)
        }
        guard elements.count <= maximumOperations else { throw BatchError.tooManyOperations(elements.count, maximum: maximumOperations) }
        if elements.isEmpty { errors.append(.init(field: "operations", message: "must hold at least one operation")) }

        var operations: [Operation] = []
        for (index, element) in elements.enumerated() {
            do {
                operations.append(try Self.operation(element, field: "operations[\(index)]"))
            } catch APIError.invalidFields(let invalid) {
                errors += invalid
            }
        }
        guard errors.isEmpty else { throw APIError.invalidFields(errors) }
        self.operations = operations
    }

    /// One operation, with every invalid member of it reported at once.
    private static func operation(_ value: JSONValue, field: String) throws -> Operation {
        guard case .object(let members) = value else {
            throw APIError.invalidFields([.init(field: field, message: "must be an object, not \(value.typeName)")])
        }
        var errors: [Problem.FieldError] = []
        func string(_ name: String, required: Bool) -> String? {
            switch members[name] {
            case .string(let text)?: return text
            case nil where !required: return nil
            case nil: errors.append(.init(field: "\(field).\(name)", message: "is required"))
            case let other?: errors.append(.init(field: "\(field).\(name)", message: "must be a string, not \(other.typeName)"))
            }
            return nil
        }
        for member in members where !["method", "path", "body", "idempotencyKey", "ifMatch"].contains(member.name) {
            errors.append(.init(field: "\(field).\(member.name)", message: "unknown member"))
        }
        let method = string("method", required: true).map { Method(rawValue: $0.uppercased()) }
        if let method, !writeMethods.contains(method) {
            errors.append(.init(field: "\(field).method", message: "must be POST, PUT, PATCH or DELETE"))
        }
        let path = string("path", required: true)
        if let path, let problem = pathProblem(path) { errors.append(.init(field: "\(field).path", message: problem)) }
        var key: IdempotencyKey?
        if let text = string("idempotencyKey", required: false) {
            do { key = try IdempotencyKey(text) } catch let error as IdempotencyError {
                errors.append(.init(field: "\(field).idempotencyKey", message: error.problem.detail ?? "malformed"))
            }
        }
        let ifMatch = string("ifMatch", required: false)
        if let ifMatch, EntityTagCondition(headerValue: ifMatch) == nil {
            errors.append(.init(field: "\(field).ifMatch", message: "must be * or a list of entity tags such as \"\\\"abc\\\"\""))
        }
        let body = members["body"]
        if method == .delete, body != nil {
            errors.append(.init(field: "\(field).body", message: "a DELETE takes no body"))
        }
        guard errors.isEmpty, let method, let path else { throw APIError.invalidFields(errors) }
        return Operation(method: method, path: path, body: body, idempotencyKey: key, ifMatch: ifMatch)
    }

    /// Why `path` cannot be an operation's target, or nil when it can.
    private static func pathProblem(_ path: String) -> String? {
        guard path.hasPrefix("/") else { return "must be a path starting with /, such as /categories" }
        guard path.utf8.count <= maximumPathBytes else { return "is longer than \(maximumPathBytes) bytes" }
        // By bytes: a scalar outside visible ASCII has a byte outside it too.
        let bytes = path.utf8
        guard bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return "must be a URL path of visible ASCII characters (percent-encode the others)"
        }
        guard !bytes.contains(UInt8(ascii: "#")) else { return "must not hold a fragment" }
        let route = bytes.firstIndex(of: UInt8(ascii: "?")).map { String(path[..<$0]) } ?? path
        guard route != BatchRoute.path, !route.hasPrefix(BatchRoute.path + "/") else { return "a batch cannot contain a batch" }
        return nil
    }
}
