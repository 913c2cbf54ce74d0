import HTTPServer

/// The ways a request on a generic collection can fail, each knowing its problem (docs/json-server.md, docs/api.md).
enum CollectionError: ProblemConvertible {
    /// No seed defined this name; `existing` lists every name that answers, typed ones included.
    case unknownCollection(String, existing: [String])
    case recordNotFound(collection: String, key: String)
    /// `/:name/:id` on a singular resource, which has no records.
    case singularHasNoRecords(String)
    /// `PUT` or `PATCH` on `/:name` of a plural collection.
    case pluralNeedsRecordID(String)
    /// `PUT /db` on a server started without `--allow-reset`.
    case resetNotAllowed
    /// A body id that differs from the id in the path.
    case idMismatch(pathKey: String)

    var problem: Problem {
        switch self {
        case .unknownCollection(let name, let existing):
            let names = existing.isEmpty ? "none" : existing.joined(separator: ", ")
            return Problem(.notFound, detail: "no collection named '\(name)'; the collections are: \(names)")
        case .recordNotFound(let collection, let key):
            return Problem(.notFound, detail: "\(collection) has no record with id \(key)")
        case .singularHasNoRecords(let name):
            return Problem(.notFound, detail: "\(name) is a singular resource; use /\(name)")
        case .pluralNeedsRecordID(let name):
            return Problem(
                .methodNotAllowed,
                detail: "\(name) is a collection: PUT and PATCH take a record path such as /\(name)/1",
                headers: ["Allow": "GET, HEAD, POST"]
            )
        case .resetNotAllowed:
            return Problem(.forbidden, detail: "PUT /db replaces the whole database; start the server with --allow-reset to allow it")
        case .idMismatch(let pathKey):
            return APIError.invalidFields([.init(field: "id", message: "must equal the id in the path (\(pathKey))")]).problem
        }
    }
}
