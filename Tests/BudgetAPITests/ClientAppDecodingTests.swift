import Foundation
import Testing
import TestSupport
import APITestSupport
import BudgetCore

/// The client apps' own networking and decoding, pointed at a server seeded with `examples/` (docs/json-server.md).
///
/// Each test decodes the server's answers with Foundation's `JSONDecoder` configured exactly as its app configures
/// it, so an example in the wrong shape (a string where a `Date` is expected, a missing id) fails here.
@Suite struct ClientAppDecodingTests {
    /// The text of `examples/<name>`.
    static func example(_ name: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("examples/\(name)"), encoding: .utf8)
    }

    @Test func earthquakeAppDecodesTheFeedAndUpsertsByCode() async throws {
        try await TestApp.with { app in
            try await app.seed(try Self.example("quakes.json"))
            var local: [String: Quake] = [:]  // the app's store, keyed by `code`
            let feed = try await app.request("GET", "/all_day")
            #expect(feed.status == 200)
            for quake in try JSONDecoder().decode(QuakeFeed.self, from: Data(feed.body)).quakes { local[quake.code] = quake }
            #expect(local.count == 4)
            let ridgecrest = try #require(local["40812345"])
            #expect(ridgecrest.magnitude == 3.41)
            #expect(ridgecrest.place == "12 km SW of Ridgecrest, CA")
            #expect(ridgecrest.time == Date(timeIntervalSince1970: 1_763_683_200.123))

            // The app changes one quake's magnitude with a merge patch; the record must still decode as a feature.
            let patch = try await app.request(
                "PATCH", "/quakes/ci40812345", json: #"{"properties":{"mag":3.62}}"#,
                headers: [("Content-Type", "application/merge-patch+json")]
            )
            #expect(patch.status == 200)
            let feature = try JSONDecoder().decode(QuakeFeature.self, from: Data(patch.body))
            local[feature.quake.code] = feature.quake
            #expect(local.count == 4)
            #expect(local["40812345"]?.magnitude == 3.62)
            #expect(local["40812345"]?.time == ridgecrest.time)
            let collection = try await app.request("GET", "/quakes")
            #expect(try JSONDecoder().decode([QuakeFeature].self, from: Data(collection.body)).count == 4)
        }
    }

    @Test func postsAppListsThenCreatesWithExactly201() async throws {
        try await TestApp.with { app in
            try await app.seed(try Self.example("posts.json"))
            let list = try await app.request("GET", "/posts")
            let posts = try JSONDecoder().decode([Post].self, from: Data(list.body))
            #expect(posts.map(\.id) == [1, 2, 3])
            let draft = NewPost(title: "Written offline", author: "ada", views: 0, published: false)
            let body = String(decoding: try JSONEncoder().encode(draft), as: UTF8.self)
            let created = try await app.request("POST", "/posts", json: body)
            #expect(created.status == 201)
            let post = try JSONDecoder().decode(Post.self, from: Data(created.body))
            #expect(post.id == 4 && post.title == draft.title)
            #expect(created.header("Location") == "/posts/4")
        }
    }

    @Test func budgetAppTotalsMatchSpentAndRemainingToTheCent() async throws {
        try await TestApp.with { app in
            try await app.seed(try Self.example("budget.json"))
            let categories = try JSONDecoder().decode(
                [BudgetCategory].self, from: Data(try await app.request("GET", "/categories").body))
            let transactions = try JSONDecoder().decode(
                [BudgetTransaction].self, from: Data(try await app.request("GET", "/transactions").body))
            #expect(categories.count == 2 && transactions.count == 3)
            for category in categories {
                let spent = transactions.filter { $0.categoryId == category.id }.reduce(Decimal(0)) { $0 + $1.amount }
                #expect(Self.cents(spent) == Self.cents(category.spent), "spent of \(category.title)")
                #expect(Self.cents(category.amount - spent) == Self.cents(category.remaining), "remaining of \(category.title)")
            }
        }
    }

    @Test func personDogAppDecodesWithTheDefaultDecoder() async throws {
        try await TestApp.with { app in
            try await app.seed(try Self.example("people.json"))
            let people = try JSONDecoder().decode([Person].self, from: Data(try await app.request("GET", "/people").body))
            let ada = try #require(people.first)
            #expect(ada.firstName == "Ada" && ada.lastName == "Lovelace")
            // Foundation's default Date encoding: seconds since 2001-01-01 00:00 UTC.
            #expect(ada.birthday == ISO8601DateFormatter().date(from: "1815-12-10T00:00:00Z"))
            #expect(ada.dogs.map(\.id) == [1] && ada.dogs.first?.name == "Babbage")

            // What the app uploads, encoded with the default JSONEncoder, comes back as the same value.
            let alan = Person(
                id: 3, firstName: "Alan", lastName: "Turing",
                birthday: try #require(ISO8601DateFormatter().date(from: "1912-06-23T00:00:00Z")),
                dogs: [Dog(id: 2, name: "Enigma")])
            let created = try await app.request("POST", "/people", json: String(decoding: try JSONEncoder().encode(alan), as: UTF8.self))
            #expect(created.status == 201)
            #expect(try JSONDecoder().decode(Person.self, from: Data(created.body)) == alan)
        }
    }

    @Test func entriesDecodeWithTheISO8601Strategy() async throws {
        try await TestApp.with { app in
            try await app.seed(try Self.example("entries.json"))
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let entries = try decoder.decode([Entry].self, from: Data(try await app.request("GET", "/entries").body))
            #expect(entries.map(\.id) == [1, 2, 3])
            #expect(entries[0].date == ISO8601DateFormatter().date(from: "2026-11-02T09:30:00Z"))
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            let new = Entry(id: 4, title: "Renew passport", date: entries[2].date.addingTimeInterval(86_400), done: false)
            let created = try await app.request("POST", "/entries", json: String(decoding: try encoder.encode(new), as: UTF8.self))
            #expect(try decoder.decode(Entry.self, from: Data(created.body)) == new)
        }
    }

    /// Categories and transactions, read by Foundation's default ISO 8601 strategy (no fractional seconds), as the
    /// apps this server exists for and swift-openapi-generator's default `Configuration()` decode them.
    @Test func typedRecordsDecodeWithTheDefaultISO8601Strategy() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Groceries","amount":400}"#)
            _ = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"Milk","amount":"3.49"}"#)
            // The database keeps microseconds; answers cut them to the second.
            _ = try await app.scalar("UPDATE categories SET created_at = '2026-11-21 08:00:00.999999+00' WHERE id = 1 RETURNING id")
            #expect(try await app.scalar("SELECT created_at = '2026-11-21 08:00:00.999999+00' FROM categories WHERE id = 1") == "t")
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let category = try decoder.decode(Stamped.self, from: Data(try await app.request("GET", "/categories/1").body))
            #expect(category.createdAt == ISO8601DateFormatter().date(from: "2026-11-21T08:00:00Z"))
            let transactions = try decoder.decode([Stamped].self, from: Data(try await app.request("GET", "/transactions").body))
            #expect(transactions.count == 1)
            #expect(transactions[0].updatedAt >= category.createdAt)
            let embedded = try decoder.decode(
                StampedWithTransactions.self, from: Data(try await app.request("GET", "/categories/1?_embed=transactions").body))
            #expect(embedded.transactions.map(\.createdAt) == transactions.map(\.createdAt))
            let feed = try decoder.decode(StampedFeed.self, from: Data(try await app.request("GET", "/changes").body))
            #expect(feed.changes.compactMap(\.data).count == 2)
        }
    }

    static func cents(_ value: Decimal) -> Int {
        var exact = value * 100
        var rounded = Decimal()
        NSDecimalRound(&rounded, &exact, 0, .plain)
        return NSDecimalNumber(decimal: rounded).intValue
    }
}

// MARK: - The apps' models, as each app declares them

/// The timestamps of a category or a transaction, as `Date`s.
struct Stamped: Decodable {
    let id: Int
    let createdAt: Date
    let updatedAt: Date
}

struct StampedWithTransactions: Decodable {
    let createdAt: Date
    let transactions: [Stamped]
}

struct StampedFeed: Decodable {
    struct Change: Decodable { let data: Stamped? }
    let changes: [Change]
}

/// A USGS FeatureCollection; only the features' properties matter to the app.
struct QuakeFeed: Decodable {
    let quakes: [Quake]

    private enum CodingKeys: String, CodingKey { case features }

    init(from decoder: any Decoder) throws {
        quakes = try decoder.container(keyedBy: CodingKeys.self).decode([QuakeFeature].self, forKey: .features).map(\.quake)
    }
}

/// One GeoJSON Feature, read through its `properties`.
struct QuakeFeature: Decodable {
    let quake: Quake

    private enum CodingKeys: String, CodingKey { case properties }

    init(from decoder: any Decoder) throws {
        quake = try decoder.container(keyedBy: CodingKeys.self).decode(Quake.self, forKey: .properties)
    }
}

struct Quake: Decodable {
    let code: String, magnitude: Double, place: String, time: Date

    private enum CodingKeys: String, CodingKey {
        case code, magnitude = "mag", place, time
    }

    init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        code = try values.decode(String.self, forKey: .code)
        magnitude = try values.decode(Double.self, forKey: .magnitude)
        place = try values.decode(String.self, forKey: .place)
        // USGS times are milliseconds since 1970, which no JSONDecoder date strategy reads.
        time = Date(timeIntervalSince1970: TimeInterval(try values.decode(Int64.self, forKey: .time)) / 1000)
    }
}

struct Post: Decodable {
    let id: Int, title: String, author: String, views: Int, published: Bool
}

struct NewPost: Encodable {
    let title: String, author: String, views: Int, published: Bool
}

/// Money as `Decimal`, the type a budget app sums in.
struct BudgetCategory: Decodable {
    let id: Int, title: String, amount: Decimal, spent: Decimal, remaining: Decimal
}

struct BudgetTransaction: Decodable {
    let id: Int, categoryId: Int, amount: Decimal
}

struct Person: Codable, Equatable {
    let id: Int, firstName: String, lastName: String, birthday: Date, dogs: [Dog]

    private enum CodingKeys: String, CodingKey {
        case id, firstName = "first_name", lastName = "last_name", birthday, dogs
    }
}

struct Dog: Codable, Equatable {
    let id: Int, name: String
}

struct Entry: Codable, Equatable {
    let id: Int, title: String, date: Date, done: Bool
}
