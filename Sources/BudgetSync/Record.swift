import Foundation

/// One record of a collection, as the exact JSON the server sent.
///
/// The bytes are kept as received, so numbers keep every digit (`amount: 400.00`, a 20-digit id);
/// typed views decode them with `decode(_:)`.
public struct Record: Sendable, Hashable {
    /// The collection's name, such as `categories` or a json-server collection like `posts`.
    public let collection: String
    /// The record's id as text: a number as its digits, a string id as itself.
    public let id: String
    /// The record's JSON object, byte for byte as the server answered it.
    public let json: Data
    /// The `ETag` the server gives this version, as the feed and the record's GET carry it: pass it as
    /// `ifMatch` when queuing an edit of this version. Nil for a record the server sent without one.
    public let etag: String?

    public init(collection: String, id: String, json: Data, etag: String? = nil) {
        self.collection = collection
        self.id = id
        self.json = json
        self.etag = etag
    }

    /// Reads the record's id from its `id` member.
    public init(collection: String, json: Data, etag: String? = nil) throws {
        let bytes = [UInt8](json)
        guard let idRange = try JSONScanner.members(of: bytes, in: bytes.indices)["id"] else {
            throw SyncError.malformedAnswer("a record of \(collection) has no id")
        }
        self.init(collection: collection, id: try JSONScanner.text(in: bytes, at: idRange), json: json, etag: etag)
    }

    /// The record decoded as `type`, with `decoder` configured as the app needs (dates, keys).
    public func decode<T: Decodable>(_ type: T.Type, using decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: json)
    }

    /// The record's `version` member, which counts its own writes (docs/sync.md); nil for a record
    /// without one, such as a json-server document.
    public var version: Int? {
        let bytes = [UInt8](json)
        guard let range = try? JSONScanner.members(of: bytes, in: bytes.indices)["version"] else { return nil }
        return JSONScanner.integer(in: bytes, at: range)
    }

    /// The record's path on the server, `/collection/id`.
    public var path: String { Record.path(collection: collection, id: id) }

    static func path(collection: String, id: String) -> String {
        // RFC 3986 §3.3: a segment may not hold "/" or "?" unescaped.
        let segment = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))) ?? id
        return "/\(collection)/\(segment)"
    }
}

/// One entry of the change feed: a record's latest version, or its tombstone (docs/sync.md).
public struct Change: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case upsert(Record)
        case delete
    }

    public let collection: String
    public let id: String
    public let kind: Kind
    /// The feed position; nil for a record the client fetched directly (a conflict's refetch).
    public let seq: Int?
    public let version: Int?

    public init(collection: String, id: String, kind: Kind, seq: Int?, version: Int?) {
        self.collection = collection
        self.id = id
        self.kind = kind
        self.seq = seq
        self.version = version
    }
}

/// One answer of `GET /changes`: its changes, the position to continue from, and whether more wait.
struct ChangePage {
    var changes: [Change]
    var lastSeq: Int
    var hasMore: Bool

    init(parsing body: Data) throws {
        let bytes = [UInt8](body)
        let top = try JSONScanner.members(of: bytes, in: bytes.indices)
        guard let changesRange = top["changes"], let lastRange = top["lastSeq"], let moreRange = top["hasMore"],
            let lastSeq = JSONScanner.integer(in: bytes, at: lastRange)
        else { throw SyncError.malformedAnswer("a /changes page without changes, lastSeq or hasMore") }
        self.lastSeq = lastSeq
        hasMore = String(decoding: bytes[moreRange], as: UTF8.self) == "true"
        changes = try JSONScanner.elements(of: bytes, in: changesRange).map { range in
            let members = try JSONScanner.members(of: bytes, in: range)
            guard let collectionRange = members["collection"], let idRange = members["id"], let opRange = members["op"] else {
                throw SyncError.malformedAnswer("a change without collection, id or op")
            }
            let collection = try JSONScanner.string(in: bytes, at: collectionRange)
            let id = try JSONScanner.text(in: bytes, at: idRange)
            let kind: Change.Kind
            switch try JSONScanner.string(in: bytes, at: opRange) {
            case "delete": kind = .delete
            case "upsert":
                guard let dataRange = members["data"] else { throw SyncError.malformedAnswer("an upsert without data") }
                let etag = try members["etag"].map { try JSONScanner.string(in: bytes, at: $0) }
                kind = .upsert(Record(collection: collection, id: id, json: Data(bytes[dataRange]), etag: etag))
            case let other: throw SyncError.malformedAnswer("unknown op \(other)")
            }
            return Change(
                collection: collection, id: id, kind: kind,
                seq: members["seq"].flatMap { JSONScanner.integer(in: bytes, at: $0) },
                version: members["version"].flatMap { JSONScanner.integer(in: bytes, at: $0) })
        }
    }
}
