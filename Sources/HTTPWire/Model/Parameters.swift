/// Path parameters captured by the router, e.g. `id` in `/categories/:id`.
public struct Parameters: Sendable {
    private var values: [(name: String, value: String)]

    public init(_ values: [(String, String)] = []) {
        self.values = values.map { (name: $0.0, value: $0.1) }
    }

    public subscript(name: String) -> String? {
        values.last { $0.name == name }?.value
    }

    package mutating func set(_ name: String, _ value: String) {
        values.append((name: name, value: value))
    }

    /// The parameter's text, or a 400 problem naming the missing parameter.
    public func require(_ name: String) throws -> String {
        guard let value = self[name] else {
            throw Problem(.badRequest, detail: "Missing path parameter '\(name)'.")
        }
        return value
    }

    /// The parameter converted to `T`, or a 400 problem naming the parameter and the bad value.
    public func require<T: LosslessStringConvertible>(_ name: String, as type: T.Type) throws -> T {
        let text = try require(name)
        guard let value = T(text) else {
            throw Problem(
                .badRequest,
                detail: "Path parameter '\(name)' has the invalid value '\(text)'.",
                errors: [.init(field: name, message: "must be a valid \(T.self)")]
            )
        }
        return value
    }
}
