import BudgetCore
import Postgres

/// The SQL that appends `_embed` and `_expand` members to generic records, in the same statement as the list.
///
/// The record's bytes stay as stored: its text loses only its closing brace, and `,"name":<json>` follows, so
/// member order and every digit survive (jsonb would reorder and respace them, and `json` has no concatenation).
/// The appended JSON is PostgreSQL's too: the related records' stored `body` text, joined with commas. Names
/// of collections and members are bound parameters; only this file's own text is SQL.
extension DocumentQueries {
    /// The ledger's plural collections, which `_embed` and `_expand` may name.
    static func pluralNames(in ledger: LedgerID) -> Query {
        "SELECT name FROM collections WHERE ledger_id = \(ledger) AND kind = 'plural' ORDER BY created_at, name"
    }

    /// One record of the ledger's `collection` with `relations` appended; no row when there is none.
    static func find(_ key: String, in collection: String, ledger: LedgerID, with relations: [DocumentRelation]) -> Query {
        """
        SELECT \(body(with: relations)) FROM documents d
        WHERE d.ledger_id = \(ledger) AND d.collection = \(collection) AND d.id = \(key)
        """
    }

    /// The JSON text of record `d` with one member per relation appended at the end; the related records are
    /// `d`'s ledger's.
    ///
    /// `concat_ws` skips NULLs, which covers an empty record (no comma before the first member) and a member
    /// that is left out; stored bodies are compact objects from `JSONWriter`, and JSON whitespace around
    /// the braces is trimmed in case a row was written by other means.
    static func body(with relations: [DocumentRelation]) -> Query {
        guard !relations.isEmpty else { return "d.body" }
        let members = Query.joined(relations.map(member), separator: ", ")
        return """
            (SELECT '{' || concat_ws(',', nullif(btrim(substr(record.text, 2, length(record.text) - 2), \(whitespace)), ''), \
            \(members)) || '}' FROM (SELECT btrim(d.body::text, \(whitespace)) AS text) record)
            """
    }

    /// `"name":<json>`, or NULL to leave it out.
    ///
    /// A record that already has a member of that name keeps its own: replacing it in place would mean
    /// re-rendering the record, and appending a second one would give the client duplicate keys.
    private static func member(_ relation: DocumentRelation) -> Query {
        let value: Query =
            switch relation {
            case .children(let collection, let field):
                // Containment, as DELETE finds dependents, so the GIN index answers and 1 and "1" both match.
                """
                (SELECT coalesce('[' || string_agg(related.body::text, ',' ORDER BY related.position) || ']', '[]') \
                FROM documents related WHERE related.ledger_id = d.ledger_id AND related.collection = \(collection) \
                AND (related.doc @> jsonb_build_object(\(field)::text, d.id) \
                OR related.doc @> jsonb_build_object(\(field)::text, \(idAsNumberWhenItIsOne))))
                """
            case .parent(_, let collection, let field):
                // ->> gives a number's and a string's text alike, which is how documents.id stores ids.
                """
                (SELECT related.body::text FROM documents related \
                WHERE related.ledger_id = d.ledger_id AND related.collection = \(collection) AND related.id = d.doc ->> \(field)::text)
                """
            }
        let name = relation.member
        return "CASE WHEN d.doc ? \(name)::text THEN NULL ELSE to_json(\(name)::text)::text || ':' || \(value) END"
    }

    /// Record `d`'s id as a JSON number when its text is an integer (as `DocumentID` reads one), else as a string.
    private static let idAsNumberWhenItIsOne: Query =
        "CASE WHEN d.id ~ '^-?(0|[1-9][0-9]*)$' THEN to_jsonb(d.id::numeric) ELSE to_jsonb(d.id) END"

    /// JSON's insignificant whitespace (RFC 8259 §2), as the characters `btrim` removes.
    private static let whitespace = " \t\n\r"
}
