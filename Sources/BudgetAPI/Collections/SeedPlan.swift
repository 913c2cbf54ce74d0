import BudgetCore
import Postgres

/// A db.json document checked and sorted into what goes where, before anything is written.
///
/// Every top-level array is a collection and every top-level object a singular resource (docs/json-server.md);
/// the typed resources' names (`TypedResources`) go through their typed validation instead. All issues are
/// collected, so an author fixes the file in one pass.
struct SeedPlan {
    /// One typed resource's records, validated and turned into the statements that insert them.
    struct TypedRecords {
        var collection: String
        /// Each record's insert and its place in the file, for the issue a constraint it breaks becomes.
        var inserts: [(query: Query, path: String)] = []
    }

    struct Collection {
        var name: String
        var kind: CollectionKind
        /// Bodies with their ids set; a singular resource has one body and the empty key.
        var records: [(key: String, body: JSONObject)]
        var nextID: Int64
    }

    /// Every typed resource's records, in `TypedResources.all` order (owners before the records naming them).
    private(set) var typed = TypedResources.names.map { TypedRecords(collection: $0) }
    private(set) var collections: [Collection] = []
    private var issues: [SeedError.Issue] = []

    /// - Parameter context: the ledger the records go into, and what today is for a transaction without a `date`.
    init(_ document: JSONValue, context: RecordContext) throws(SeedError) {
        guard case .object(let members) = document else {
            throw .invalid([.init(path: SeedPath.root, message: "must be a JSON object of collections, not \(document.typeName)")])
        }
        for (name, value) in members {
            let path = SeedPath.member(SeedPath.root, name)
            if name == Self.schemaMember {
                continue
            } else if CollectionNames.reserved.contains(name) {
                issue(path, "'\(name)' is reserved for the server's own routes (\(CollectionNames.reserved.sorted().joined(separator: ", ")))")
            } else if !CollectionNames.isWellFormed(name) {
                issue(path, "a collection name is 1 to 100 letters, digits, '_' or '-'")
            } else if let index = TypedResources.names.firstIndex(of: name) {
                typed[index].inserts = typedRecords(TypedResources.all[index], value, path: path, context: context)
            } else if case .object(let body) = value {
                collections.append(Collection(name: name, kind: .singular, records: [("", body)], nextID: 1))
            } else if case .array(let elements) = value {
                collections.append(plural(name, elements, path: path))
            } else {
                issue(path, "must be an array (a collection) or an object (a singular resource), not \(value.typeName)")
            }
        }
        guard issues.isEmpty else { throw .invalid(Array(issues.prefix(50))) }
    }

    /// The member editors add to point at a JSON Schema for the file; it is no collection, and json-server 0.17
    /// skips it too (docs/json-server.md, where we differ: it is not kept, so `GET /db` leaves it out).
    static let schemaMember = "$schema"

    private mutating func issue(_ path: String, _ message: String) {
        issues.append(.init(path: path, message: message))
    }

    /// A plural collection: ids kept, missing ones numbered after the largest integer id, duplicates refused.
    private mutating func plural(_ name: String, _ elements: [JSONValue], path: String) -> Collection {
        var records: [(key: String, body: JSONObject, path: String)] = []
        var firstPathOfKey: [String: String] = [:]
        var largest: Int64 = 0
        for (index, element) in elements.enumerated() {
            let recordPath = SeedPath.element(path, index)
            guard case .object(let body) = element else {
                issue(recordPath, "record is not an object (it is \(element.typeName))")
                continue
            }
            do {
                let id = try body.documentID()
                if let id, let earlier = firstPathOfKey.updateValue(recordPath, forKey: id.key) {
                    issue(SeedPath.member(recordPath, "id"), "duplicate id \(id.key) (also at \(earlier))")
                }
                largest = max(largest, id?.positiveInteger ?? 0)
                records.append((id?.key ?? "", body, recordPath))
            } catch {
                issue(SeedPath.member(recordPath, "id"), "must be an integer or a non-empty string")
            }
        }
        var nextID = largest + 1
        let numbered = records.map { record -> (key: String, body: JSONObject) in
            guard record.key.isEmpty else { return (record.key, record.body) }
            let id = DocumentID(pathSegment: String(nextID))
            nextID += 1
            return (id.key, record.body.settingID(id))
        }
        return Collection(name: name, kind: .plural, records: numbered, nextID: nextID)
    }

    /// Records of a typed table, validated by the API's own rules, kept with their bookkeeping members.
    private mutating func typedRecords<Resource: TypedResource>(
        _ resource: Resource.Type,
        _ value: JSONValue,
        path: String,
        context: RecordContext
    ) -> [(query: Query, path: String)] {
        guard case .array(let elements) = value else {
            issue(path, "must be an array of records, not \(value.typeName)")
            return []
        }
        var records: [(query: Query, path: String)] = []
        for (index, element) in elements.enumerated() {
            let recordPath = SeedPath.element(path, index)
            guard case .object(let members) = element else {
                issue(recordPath, "record is not an object (it is \(element.typeName))")
                continue
            }
            let createdAt = timestamp(members, "createdAt", path: recordPath)
            let updatedAt = timestamp(members, "updatedAt", path: recordPath)
            let version = self.version(members, path: recordPath)
            do {
                let fields = try Resource.fields(from: members, mode: .seed, fieldPrefix: "")
                let record = SeedRecord(fields: fields, createdAt: createdAt, updatedAt: updatedAt, version: version)
                records.append((Resource.seedInsert(record, context: context), recordPath))
            } catch APIError.invalidFields(let errors) {
                for error in errors { issue(SeedPath.member(recordPath, error.field), error.message) }
            } catch {
                issue(recordPath, "\(error)")
            }
        }
        return records
    }

    private mutating func timestamp(_ members: JSONObject, _ name: String, path: String) -> Timestamp? {
        guard let value = members[name] else { return nil }
        guard case .string(let text) = value, let timestamp = Timestamp(text) else {
            issue(SeedPath.member(path, name), "must be a time such as 2026-11-21T08:00:00Z")
            return nil
        }
        return timestamp
    }

    private mutating func version(_ members: JSONObject, path: String) -> Int32? {
        guard let value = members["version"] else { return nil }
        guard case .number(let literal) = value, let version = Int32(literal), version >= 1 else {
            issue(SeedPath.member(path, "version"), "must be a positive integer")
            return nil
        }
        return version
    }
}
