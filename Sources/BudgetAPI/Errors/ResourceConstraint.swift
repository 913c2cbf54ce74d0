import Postgres

/// A named constraint that a write to a typed resource can break, declared with the resource
/// (`TypedResource.constraints`), and the 409 or 422 it answers (docs/architecture.md, Adding a typed
/// resource, step 4). The name is the migration's; `ConstraintMappingTests` holds every declared one to
/// the schema (its table, its columns, the table a foreign key references) and every constraint of the
/// schema to an answer.
struct ResourceConstraint: Sendable {
    enum Kind: Sendable {
        case primaryKey, unique, foreignKey, check

        /// What PostgreSQL (or the trigger raising it) reports breaking it as.
        var sqlState: SQLState {
            switch self {
            case .primaryKey, .unique: SQLState.uniqueViolation
            case .foreignKey: SQLState.foreignKeyViolation
            case .check: SQLState.checkViolation
            }
        }
    }

    /// What a write that breaks it answers.
    enum Answer: Sendable {
        /// 409: the write is valid but meets the state of other records.
        case conflict(detail: String)
        /// 422: the member's value is invalid.
        case invalid(message: String)
    }

    let name: String
    let kind: Kind
    /// The member the answer names; a trigger that names the member the write changed wins (`namesColumn`).
    let field: String
    let answer: Answer
    let namesColumn: Bool
    /// For a foreign key of the resource's own table: the collection whose record `field` names.
    let references: String?

    /// A unique key a record of the same ledger holds already (409).
    static func unique(_ name: String, field: String, detail: String) -> Self {
        Self(name: name, kind: .unique, field: field, answer: .conflict(detail: detail), namesColumn: false, references: nil)
    }

    /// `field` names a record of `owner` that the ledger lacks (422). `namesColumn` when a trigger raises it
    /// naming the member (a part's `splits[1].categoryId`).
    static func foreignKey(_ name: String, field: String, references owner: any TypedResource.Type, namesColumn: Bool = false) -> Self {
        Self(
            name: name, kind: .foreignKey, field: field, answer: .invalid(message: "no \(owner.recordName) has this id"),
            namesColumn: namesColumn, references: owner.collection)
    }

    /// A foreign key (a trigger's, by the migrations) that keeps a record from going or changing while
    /// others name it (409): an account its transactions, a part its split.
    static func keeps(_ name: String, field: String, detail: String) -> Self {
        Self(name: name, kind: .foreignKey, field: field, answer: .conflict(detail: detail), namesColumn: false, references: nil)
    }

    /// A check a body alone cannot settle (422), or one that refuses the change itself (`conflict`, 409).
    static func check(_ name: String, field: String, message: String, namesColumn: Bool = false) -> Self {
        Self(name: name, kind: .check, field: field, answer: .invalid(message: message), namesColumn: namesColumn, references: nil)
    }

    static func check(_ name: String, field: String, conflict detail: String, namesColumn: Bool = false) -> Self {
        Self(name: name, kind: .check, field: field, answer: .conflict(detail: detail), namesColumn: namesColumn, references: nil)
    }

    /// The primary key `(ledger_id, id)` every typed table has, as PostgreSQL names it (`<table>_pkey`).
    static func primaryKey(of collection: String) -> Self {
        Self(
            name: "\(collection)_pkey", kind: .primaryKey, field: "id", answer: .conflict(detail: "this id is already taken"),
            namesColumn: false, references: nil)
    }

    /// The answer to `error`, which broke this constraint.
    func error(_ error: PostgresError) -> APIError {
        let field = namesColumn ? (error.column ?? field) : field
        return switch answer {
        case .conflict(let detail): .conflict(field: field, detail: detail)
        case .invalid(let message): .invalidFields([.init(field: field, message: message)])
        }
    }
}

extension TypedResources {
    /// Every typed resource's constraints by name, each with its resource's collection.
    static let constraints: [String: (collection: String, constraint: ResourceConstraint)] = {
        var byName: [String: (collection: String, constraint: ResourceConstraint)] = [:]
        for resource in all {
            for constraint in [.primaryKey(of: resource.collection)] + resource.constraints {
                precondition(byName[constraint.name] == nil, "\(constraint.name) is declared twice")
                byName[constraint.name] = (resource.collection, constraint)
            }
        }
        return byName
    }()

    /// The declared constraint `error` broke, when it is one of a typed resource's.
    static func constraint(brokenBy error: PostgresError) -> ResourceConstraint? {
        guard let name = error.constraint, let constraint = constraints[name]?.constraint, constraint.kind.sqlState == error.sqlState else {
            return nil
        }
        return constraint
    }
}

extension TypedResource {
    /// The foreign key by which this resource's records name `owner`'s, declared in `constraints`: exactly
    /// one that a client's write breaks by naming a missing record (a nested route's owner).
    static func foreignKey(to owner: any TypedResource.Type) -> ResourceConstraint {
        let keys = constraints.filter { $0.kind == .foreignKey && $0.references == owner.collection && !$0.namesColumn }
        guard keys.count == 1 else { preconditionFailure("\(collection) declares \(keys.count) foreign keys to \(owner.collection), not one") }
        return keys[0]
    }
}
