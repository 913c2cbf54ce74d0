import Postgres

/// A typed record of a seed file, with the bookkeeping an export wrote, so that export → seed → export is unchanged.
struct SeedRecord<Fields: Sendable>: Sendable {
    var fields: Fields
    var createdAt: Timestamp?
    var updatedAt: Timestamp?
    var version: Int32?
}

/// How writes set one column from a request's fields: the value a complete write (create, replace, seed)
/// gives it, with its default when the body left the member out, and the value a PATCH gives it when the
/// body has the member.
struct ColumnWrite<Fields: Sendable>: Sendable {
    /// Whether the body gave the member (PATCH sets the column only then).
    let isGiven: @Sendable (Fields) -> Bool
    /// The value of a create, replace or seed; `today` is the clock's (`CivilClock.today`).
    let complete: @Sendable (_ fields: Fields, _ today: Query) -> Query
    /// The value of a PATCH that gave the member.
    let patch: @Sendable (Fields) -> Query
    /// Whether a replace whose body left the member out keeps the stored value (docs/api.md names these).
    let isKeptWhenAbsent: Bool

    /// What a create gives a member the body left out.
    enum Default: Sendable {
        /// SQL text, e.g. `false` or `'uncleared'`.
        case sql(Query)
        /// Today in the server's time zone.
        case today
    }

    /// A member that is absent or set (`Value?`): absent is NULL, or `default` on a complete write.
    /// `complete` reads another value for complete writes (an account's on-budget default follows its type).
    static func value<Value: PostgresEncodable>(
        _ get: @escaping @Sendable (Fields) -> Value?, cast: SQLIdentifier? = nil, default: Default? = nil,
        keptWhenAbsent: Bool = false, complete: (@Sendable (Fields) -> Value?)? = nil
    ) -> Self {
        let whole = complete ?? get
        return ColumnWrite(
            isGiven: { get($0) != nil },
            complete: { fields, today in
                let value = typed("\(whole(fields))", cast)
                switch `default` {
                case nil: return value
                case .sql(let sql): return "coalesce(\(value), \(sql))"
                case .today: return "coalesce(\(value), \(today))"
                }
            },
            patch: { typed("\(get($0))", cast) },
            isKeptWhenAbsent: keptWhenAbsent)
    }

    /// A member that is absent, cleared or set (`Value??`): absent is NULL on a complete write.
    static func nullable<Value: PostgresEncodable>(
        _ get: @escaping @Sendable (Fields) -> Value??, cast: SQLIdentifier, keptWhenAbsent: Bool = false
    ) -> Self {
        ColumnWrite(
            isGiven: { get($0) != nil },
            complete: { fields, _ in typed("\(get(fields) ?? nil)", cast) },
            patch: { typed("\(get($0) ?? nil)", cast) },
            isKeptWhenAbsent: keptWhenAbsent)
    }

    private static func typed(_ value: Query, _ cast: SQLIdentifier?) -> Query {
        guard let cast else { return value }
        return "\(value)::\(cast)"
    }
}

/// One member of a typed record as its resource declares it: the `RecordField` that reads and lists use,
/// and, for a member with a column of its own, how writes set it. A resource's insert, replace, update and
/// seed statements take their columns and values from these (`RecordMembers`), so a member is declared
/// once (docs/architecture.md, Adding a typed resource).
struct RecordMember<Fields: Sendable>: Sendable {
    let name: String
    /// The table's column, which the member reads as `alias.column` unless it has SQL of its own.
    let column: SQLIdentifier?
    /// SQL of its own over the resource's aliases (a derived member; JSON built in SQL).
    let sql: Query?
    let type: ColumnType
    let origin: RecordField.Origin
    let isSearchable: Bool
    /// How create, replace and PATCH write a stored member's column; nil when the resource's own statements do.
    let write: ColumnWrite<Fields>?
    /// What a seed writes to a kept member's column (what the export holds); nil when it writes none.
    let seed: (@Sendable (SeedRecord<Fields>) -> Query)?

    /// The member as reads and lists see it, over a row `alias`.
    func field(alias: SQLIdentifier) -> RecordField {
        let sql = sql ?? column.map { "\(alias).\($0)" } ?? ""
        return RecordField(name, sql, type, origin, isSearchable: isSearchable)
    }

    /// The id, which a client may choose: the statements write it themselves, before the other columns.
    static var id: Self { Self(name: "id", column: "id", sql: nil, type: .integer, origin: .stored, isSearchable: false, write: nil, seed: nil) }

    /// A member clients write, stored in `column`.
    static func stored(
        _ name: String, _ column: SQLIdentifier, _ type: ColumnType, _ write: ColumnWrite<Fields>, sql: Query? = nil, isSearchable: Bool = false
    )
        -> Self
    {
        Self(name: name, column: column, sql: sql, type: type, origin: .stored, isSearchable: isSearchable, write: write, seed: nil)
    }

    /// A member clients write that the resource's own statements store (a transaction's `splits`, its parts).
    static func stored(_ name: String, sql: Query, _ type: ColumnType) -> Self {
        Self(name: name, column: nil, sql: sql, type: type, origin: .stored, isSearchable: false, write: nil, seed: nil)
    }

    /// A member the server keeps; a seed writes `seed`'s value to its column when it has one.
    static func kept(_ name: String, _ column: SQLIdentifier, _ type: ColumnType, seed: (@Sendable (SeedRecord<Fields>) -> Query)? = nil) -> Self {
        Self(name: name, column: column, sql: nil, type: type, origin: .kept, isSearchable: false, write: nil, seed: seed)
    }

    /// A member every read computes.
    static func derived(_ name: String, _ sql: Query, _ type: ColumnType) -> Self {
        Self(name: name, column: nil, sql: sql, type: type, origin: .derived, isSearchable: false, write: nil, seed: nil)
    }

    /// The times and version every typed record has, which a seed takes from the export (or now, and 1).
    static var createdAt: Self { .kept("createdAt", "created_at", .timestamp) { "coalesce(\($0.createdAt)::timestamptz, now())" } }
    static var updatedAt: Self { .kept("updatedAt", "updated_at", .timestamp) { "coalesce(\($0.updatedAt)::timestamptz, now())" } }
    static var version: Self { .kept("version", "version", .integer) { "coalesce(\($0.version)::integer, 1)" } }
}

/// A typed record's members in their JSON order, over a row `alias` of its table, and what its statements
/// write, derived from them: the column list and value list of insert, replace and seed, and PATCH's
/// assignments (`TypedResource`'s default statements).
struct RecordMembers<Fields: Sendable>: Sendable {
    let alias: SQLIdentifier
    let members: [RecordMember<Fields>]
    let shape: RecordShape
    /// The written columns after `ledger_id` and `id`, with how each is written, in member order.
    private let writes: [(column: SQLIdentifier, write: ColumnWrite<Fields>)]
    /// The kept columns a seed writes after `writes`', in member order.
    private let seeds: [(column: SQLIdentifier, value: @Sendable (SeedRecord<Fields>) -> Query)]

    init(recordName: String, alias: SQLIdentifier, _ members: [RecordMember<Fields>]) {
        self.alias = alias
        self.members = members
        shape = RecordShape(recordName: recordName, fields: members.map { $0.field(alias: alias) })
        writes = members.compactMap { member in member.write.flatMap { write in member.column.map { ($0, write) } } }
        seeds = members.compactMap { member in member.seed.flatMap { seed in member.column.map { ($0, seed) } } }
    }

    /// The column of the member `name`, e.g. `category_id` for `categoryId`.
    func column(of name: String) -> SQLIdentifier? { members.first { $0.name == name }?.column }

    /// The columns every complete write names after `ledger_id` and `id`, e.g. `title, amount, rollover`.
    var columns: Query { Query.joined(writes.map { "\($0.column)" }, separator: ", ") }

    /// `fields`' values for `columns`, with each default for a member the body left out.
    func values(_ fields: Fields, today: Query) -> Query {
        Query.joined(writes.map { $0.write.complete(fields, today) }, separator: ", ")
    }

    /// What an upsert's conflict sets from its `excluded` row: every column, but those a replace keeps when
    /// the body left them out.
    func replacements(_ fields: Fields) -> [Query] {
        writes.filter { !$0.write.isKeptWhenAbsent || $0.write.isGiven(fields) }.map { "\($0.column) = excluded.\($0.column)" }
    }

    /// PATCH: the columns of the members the body gave, set to their values.
    func assignments(_ fields: Fields) -> [Query] {
        writes.filter { $0.write.isGiven(fields) }.map { "\($0.column) = \($0.write.patch(fields))" }
    }

    /// `columns` and the kept columns a seed writes (its times and version, what else the export holds).
    var seedColumns: Query { Query.joined([columns] + seeds.map { "\($0.column)" }, separator: ", ") }

    /// `record`'s values for `seedColumns`.
    func seedValues(_ record: SeedRecord<Fields>, today: Query) -> Query {
        Query.joined([values(record.fields, today: today)] + seeds.map { $0.value(record) }, separator: ", ")
    }
}
