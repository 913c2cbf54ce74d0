import BudgetCore
import HTTPServer

/// Turns a request's bytes into JSON after checking its media type (400, 415: docs/api.md, Errors).
enum RequestBody {
    static let json = "application/json"
    static let mergePatch = "application/merge-patch+json"

    /// The body parsed as JSON; `accepting` lists the media types this route takes.
    static func parse(_ request: Request, accepting mediaTypes: [String] = [json]) throws -> JSONValue {
        guard let contentType = request.contentType, mediaTypes.contains(contentType) else {
            throw APIError.unsupportedMediaType(received: request.contentType, accepted: mediaTypes)
        }
        guard !request.body.isEmpty else { throw APIError.malformedBody("the request body is empty; send a JSON object") }
        let value: JSONValue
        do {
            value = try JSONParser.parse(request.body)
        } catch {
            throw APIError.malformedBody("the body is not valid JSON: \(error)")
        }
        // PostgreSQL's text and jsonb cannot hold U+0000: a jsonb insert fails (a 500), and a text parameter would
        // end at the NUL and store a cut string. Refused here, where the field can be named.
        if let field = value.pathHoldingNUL() {
            throw APIError.invalidFields([
                .init(field: field, message: "must not contain the character U+0000 (\\u0000), which cannot be stored")
            ])
        }
        return value
    }

    /// The body as one JSON object.
    static func object(_ request: Request, accepting mediaTypes: [String] = [json]) throws -> JSONObject {
        let value = try parse(request, accepting: mediaTypes)
        guard case .object(let members) = value else {
            throw APIError.malformedBody("the body must be a JSON object, not \(value.typeName)")
        }
        return members
    }

    /// The body as one object or an array of objects (a bulk create, all or nothing: docs/api.md).
    static func objects(_ request: Request) throws -> (records: [JSONObject], isArray: Bool) {
        switch try parse(request) {
        case .object(let members):
            return ([members], false)
        case .array(let elements):
            guard !elements.isEmpty else { throw APIError.malformedBody("the body is an empty array; send at least one object") }
            let records = try elements.enumerated().map { index, element in
                guard case .object(let members) = element else {
                    throw APIError.malformedBody("element \(index) of the body must be a JSON object, not \(element.typeName)")
                }
                return members
            }
            return (records, true)
        case let other:
            throw APIError.malformedBody("the body must be a JSON object or an array of objects, not \(other.typeName)")
        }
    }
}

extension JSONValue {
    /// Where the first member name or string holding U+0000 is (`title`, `tags[0]`, `author.name`, `[1].note`;
    /// `$` for a top-level string), or nil when none does.
    func pathHoldingNUL(at path: String = "") -> String? {
        switch self {
        case .string(let text):
            return text.utf8.contains(0) ? (path.isEmpty ? "$" : path) : nil
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let found = element.pathHoldingNUL(at: "\(path)[\(index)]") { return found }
            }
            return nil
        case .object(let members):
            for (name, value) in members {
                let memberPath = path.isEmpty ? name : "\(path).\(name)"
                if name.utf8.contains(0) { return memberPath }
                if let found = value.pathHoldingNUL(at: memberPath) { return found }
            }
            return nil
        case .null, .bool, .number:
            return nil
        }
    }
}
