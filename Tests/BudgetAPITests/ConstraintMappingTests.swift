import Foundation
import HTTPServer
import Postgres
import Testing
import APITestSupport
import TestSupport

@testable import BudgetAPI

/// Every unique key, foreign key and trigger-raised constraint of the schema that a client's write can
/// break answers 409 or 422 with a field, never a 500 (docs/architecture.md, Errors). The names come from
/// the migrated database itself (`pg_constraint`, unique indexes, and the `CONSTRAINT = '…'` of the
/// PL/pgSQL functions that raise), so a new migration's constraint without a mapping in
/// `DatabaseErrors.swift` fails here rather than as a 500 in production.
@Suite struct ConstraintMappingTests {
    /// Constraints no client write reaches, each with the reason. Everything else must map.
    static let internalOnly: [String: String] = [
        "schema_migrations_pkey": "the migrator records each migration once, under its lock",
        "change_log_pkey": "the sequencer writes the change log",
        "change_log_seq_key": "the sequencer writes the change log",
        "change_feed_state_pkey": "one row per ledger, written with the ledger",
        "change_feed_state_ledger_id_fkey": "one row per ledger, written with the ledger",
        "idempotency_keys_pkey": "claimed under an advisory lock; a lost race is a serialization failure (IdempotencyQueries.store)",
        "idempotency_keys_ledger_id_fkey": "the server names the caller's ledger",
        "categories_ledger_id_fkey": "the server names the caller's ledger",
        "accounts_ledger_id_fkey": "the server names the caller's ledger",
        "schedules_ledger_id_fkey": "the server names the caller's ledger",
        "collections_ledger_id_fkey": "the server names the caller's ledger",
        "documents_collection_fkey": "the server creates a document's collection in the same statement",
        "collections_pkey": "checked before the write by name (PUT /db and the generic routes create collections idempotently)",
        "ledgers_pkey": "ledger ids come from their sequence",
        "users_pkey": "user ids come from their sequence",
        "users_default_ledger_fkey": "the server sets a user's default ledger to one it just created",
        "memberships_pkey": "a membership is upserted",
        "memberships_user_id_fkey": "members are added by user name, looked up first",
        "memberships_ledger_id_fkey": "the server names the caller's ledger",
        "access_tokens_pkey": "token ids come from their sequence",
        "access_tokens_digest_unique": "a token's digest is of 32 random bytes",
        "access_tokens_user_id_fkey": "tokens are minted for the authenticated user",
        "login_attempts_pkey": "login attempts are counted per name by the server",
        "login_attempts_user_id_fkey": "login attempts are counted per name by the server",
    ]

    /// What PostgreSQL raises for each kind of constraint.
    static func sqlState(forKind kind: String) -> SQLState {
        switch kind {
        case "u", "p", "i": SQLState.uniqueViolation
        case "f": SQLState.foreignKeyViolation
        default: SQLState.checkViolation
        }
    }

    @Test func everyConstraintAClientCanBreakMapsTo409Or422() async throws {
        let url = try await TestDatabase.fresh()
        let constraints: [(name: String, kind: String, state: SQLState?)] = try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            let migrator = Migrator(migrations: try TestDatabase.migrations(), logger: TestApp.logger)
            _ = try migrator.migrate(on: connection)
            // Keys and foreign keys; unique indexes that are no constraint; what PL/pgSQL raises by name,
            // with the SQLSTATE it raises (ERRCODE = '…'), read from the function's text.
            let result = try connection.query(
                """
                SELECT conname::text, contype::text, NULL::text FROM pg_constraint
                WHERE connamespace = 'public'::regnamespace AND contype IN ('p', 'u', 'f')
                UNION ALL
                SELECT i.indexrelid::regclass::text, 'i', NULL FROM pg_index i
                WHERE i.indisunique AND i.indrelid::regclass::text NOT LIKE 'pg\\_%'
                  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
                UNION ALL
                SELECT m[2], 't', m[1] FROM pg_proc p
                CROSS JOIN LATERAL regexp_matches(p.prosrc, 'ERRCODE = ''([a-z_]+)'',\\s*CONSTRAINT = ''([a-z_]+)''', 'g') m
                WHERE p.pronamespace = 'public'::regnamespace
                ORDER BY 1
                """)
            return try result.map { row in
                let raised = try row.decode(String?.self, at: 2).map { name -> SQLState? in
                    switch name {
                    case "check_violation": SQLState.checkViolation
                    case "foreign_key_violation": SQLState.foreignKeyViolation
                    case "unique_violation": SQLState.uniqueViolation
                    default: nil
                    }
                }
                return (try row.decode(String.self, at: 0), try row.decode(String.self, at: 1), raised ?? nil)
            }
        }
        // The schema has them (a broken query would make this test pass vacuously).
        #expect(constraints.count > 40, "\(constraints.count) constraints read")
        #expect(constraints.contains { $0.kind == "t" }, "no trigger-raised constraint read")
        for constraint in constraints where Self.internalOnly[constraint.name] == nil {
            var error = PostgresError(kind: .server, sqlState: constraint.state ?? Self.sqlState(forKind: constraint.kind))
            error.constraint = constraint.name
            guard let mapped = APIError(translating: error) else {
                Issue.record("\(constraint.name) (\(constraint.kind)) has no mapping in DatabaseErrors.swift: it would answer 500")
                continue
            }
            let problem = mapped.problem
            #expect([409, 422].contains(problem.status.code), "\(constraint.name) answers \(problem.status.code)")
            #expect(!problem.errors.isEmpty, "\(constraint.name) names no field")
        }
        // Every exemption is still a constraint of the schema: a renamed one must be looked at again.
        let names = Set(constraints.map(\.name))
        for name in Self.internalOnly.keys {
            #expect(names.contains(name), "\(name) is exempted but no longer in the schema")
        }
    }

    /// The constraints each typed resource declares (`TypedResource.constraints`, and the primary key the
    /// registry adds) are the schema's: a key or foreign key of the resource's own table, a foreign key to the
    /// table of the collection it says it references, over the column of the member it names; or raised by
    /// a trigger function, with the SQLSTATE the declaration expects; a check, of its own table. And every key and foreign key of a
    /// typed resource's table is declared with that resource or exempted above, so none maps by accident.
    @Test func typedResourcesDeclareTheirTablesConstraints() async throws {
        let url = try await TestDatabase.fresh()
        typealias Row = (name: String, kind: String, table: String, references: String, columns: [String], raised: String)
        let rows: [Row] = try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            let migrator = Migrator(migrations: try TestDatabase.migrations(), logger: TestApp.logger)
            _ = try migrator.migrate(on: connection)
            let result = try connection.query(
                """
                SELECT c.conname::text, c.contype::text, c.conrelid::regclass::text,
                       CASE WHEN c.contype = 'f' THEN c.confrelid::regclass::text ELSE '' END,
                       (SELECT string_agg(a.attname::text, ',' ORDER BY a.attnum) FROM pg_attribute a
                        WHERE a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)), ''
                FROM pg_constraint c
                WHERE c.connamespace = 'public'::regnamespace AND c.contype IN ('p', 'u', 'f', 'c') AND c.conrelid <> 0
                UNION ALL
                SELECT i.indexrelid::regclass::text, 'i', i.indrelid::regclass::text, '', '', '' FROM pg_index i
                WHERE i.indisunique AND i.indrelid::regclass::text NOT LIKE 'pg\\_%'
                  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
                UNION ALL
                SELECT m[2], 't', '', '', '', m[1] FROM pg_proc p
                CROSS JOIN LATERAL regexp_matches(p.prosrc, 'ERRCODE = ''([a-z_]+)'',\\s*CONSTRAINT = ''([a-z_]+)''', 'g') m
                WHERE p.pronamespace = 'public'::regnamespace
                """)
            return try result.map { row in
                (
                    try row.decode(String.self, at: 0), try row.decode(String.self, at: 1), try row.decode(String.self, at: 2),
                    try row.decode(String.self, at: 3), (try row.decode(String?.self, at: 4) ?? "").split(separator: ",").map(String.init),
                    try row.decode(String.self, at: 5)
                )
            }
        }
        #expect(rows.contains { $0.kind == "f" } && rows.contains { $0.kind == "t" }, "\(rows.count) rows read")
        let resources = Dictionary(uniqueKeysWithValues: TypedResources.all.map { ($0.collection, $0) })
        #expect(TypedResources.constraints.count >= 30, "\(TypedResources.constraints.count) constraints declared")
        let raisedStates: [String: SQLState] = [
            "check_violation": SQLState.checkViolation, "foreign_key_violation": SQLState.foreignKeyViolation,
            "unique_violation": SQLState.uniqueViolation,
        ]
        for (name, (collection, constraint)) in TypedResources.constraints.sorted(by: { $0.key < $1.key }) {
            let found = rows.filter { $0.name == name }
            guard !found.isEmpty else {
                Issue.record("\(collection) declares \(name), which the schema does not have")
                continue
            }
            for row in found {
                switch row.kind {
                case "t":
                    #expect(raisedStates[row.raised] == constraint.kind.sqlState, "\(name) is raised as \(row.raised)")
                case "c":
                    #expect(constraint.kind == .check, "\(name) is a check")
                    #expect(row.table == collection, "\(name) is of \(row.table), declared by \(collection)")
                case "f":
                    #expect(constraint.kind == .foreignKey, "\(name) is a foreign key")
                    #expect(row.table == collection, "\(name) is of \(row.table), declared by \(collection)")
                    if let references = constraint.references {
                        #expect(row.references == references, "\(name) references \(row.references), not \(references)")
                        let column = resources[collection]?.column(of: constraint.field)?.name
                        #expect(column.map(row.columns.contains) == true, "\(name) is over \(row.columns), not \(constraint.field)'s column")
                    }
                default:
                    #expect([.unique, .primaryKey].contains(constraint.kind), "\(name) is a key")
                    #expect(row.table == collection, "\(name) is of \(row.table), declared by \(collection)")
                }
            }
        }
        for row in rows where row.kind != "c" && resources[row.table] != nil && Self.internalOnly[row.name] == nil {
            #expect(TypedResources.constraints[row.name]?.collection == row.table, "\(row.name) of \(row.table) is not declared by its resource")
        }
    }
}
