import BudgetAPI
import Foundation
import Postgres
import Testing
import TestSupport
import APITestSupport
import BudgetCore

/// `schedules` (issue #31, items 6-8): the resource and its validation, the poster (exactly once, however
/// many processes and however long one was down), splits, schedules posted by hand, upcoming occurrences
/// and the months' `scheduled`. The dates of each frequency are `ScheduleDateTests`'.
@Suite struct ScheduleTests {
    static func options(today: String) throws -> BudgetApp.Options {
        var options = BudgetApp.Options()
        options.clock = CivilClock(now: try #require(Timestamp("\(today)T12:00:00Z")))
        options.allowsReset = true
        return options
    }

    /// Categories 1 (Rent) and 2 (Fun), account 1 (Checking), on a server whose today is `today`.
    static func withLedger(today: String = "2026-11-15", databaseURL: String? = nil, _ body: (TestApp) async throws -> Void) async throws {
        try await TestApp.with(databaseURL: databaseURL, options: try options(today: today), poolConfiguration: TestApp.smallPool) { app in
            if databaseURL == nil {
                #expect(try await app.request("POST", "/categories", json: #"{"title":"Rent","amount":1200}"#).status == 201)
                #expect(try await app.request("POST", "/categories", json: #"{"title":"Fun","amount":100}"#).status == 201)
                #expect(try await app.request("POST", "/accounts", json: #"{"name":"Checking","type":"checking"}"#).status == 201)
            }
            try await body(app)
        }
    }

    /// The import ids of the ledger's transactions, in id order.
    static func importIDs(_ app: TestApp) async throws -> [String] {
        try await app.request("GET", "/transactions?_sort=id").array.compactMap { $0["importId"] as? String }
    }

    @Test func createReadReplaceMergeAndDelete() async throws {
        try await Self.withLedger { app in
            let created = try await app.request(
                "POST", "/schedules",
                json:
                    #"{"title":"Rent","amount":"1200","accountId":1,"categoryId":1,"payee":"Landlord","frequency":"monthly","firstDate":"2026-12-01"}"#
            )
            #expect(created.status == 201 && created.header("Location") == "/schedules/1", "\(created.text)")
            let stamp = try #require(created.object["createdAt"] as? String)
            #expect(
                created.text
                    == #"{"id":1,"title":"Rent","amount":1200.00,"accountId":1,"categoryId":1,"splits":null,"payee":"Landlord","note":null,"frequency":"monthly","firstDate":"2026-12-01","endDate":null,"nextDate":"2026-12-01","autoPost":false,"createdAt":"\#(stamp)","updatedAt":"\#(stamp)","version":1}"#
            )
            #expect(try await app.request("GET", "/schedules/1").text == created.text)

            let patched = try await app.request("PATCH", "/schedules/1", json: #"{"firstDate":"2026-11-30","autoPost":true,"nextDate":"ignored"}"#)
            #expect(patched.status == 200 && patched.object["nextDate"] as? String == "2026-11-30" && patched.object["version"] as? Int == 2)
            // PUT is the whole record: no account, payee or autoPost any more; parts instead of a category.
            let replaced = try await app.request(
                "PUT", "/schedules/1",
                json:
                    #"{"title":"Shop","amount":"75.50","splits":[{"categoryId":2,"amount":"25.5","note":"treats"},{"categoryId":1,"amount":50}],"frequency":"weekly","firstDate":"2026-11-20"}"#
            )
            #expect(replaced.status == 200, "\(replaced.text)")
            #expect(
                replaced.text.contains(
                    #""accountId":null,"categoryId":null,"splits":[{"categoryId":2,"amount":25.50,"note":"treats"},{"categoryId":1,"amount":50.00,"note":null}],"payee":null"#
                ), "\(replaced.text)")
            #expect(replaced.object["autoPost"] as? Bool == false && replaced.object["nextDate"] as? String == "2026-11-20")
            // Parts and the amount change together; a category takes the parts' place with splits: null.
            let rescaled = try await app.request(
                "PATCH", "/schedules/1", json: #"{"amount":"80.00","splits":[{"categoryId":2,"amount":"30"},{"categoryId":1,"amount":50}]}"#)
            #expect(rescaled.status == 200 && rescaled.object["amount"] as? Double == 80, "\(rescaled.text)")
            let plain = try await app.request("PATCH", "/schedules/1", json: #"{"splits":null,"categoryId":2}"#)
            #expect(plain.status == 200 && plain.text.contains(#""categoryId":2,"splits":null"#), "\(plain.text)")
            let created7 = try await app.request(
                "PUT", "/schedules/7", json: #"{"title":"Once","amount":5,"categoryId":1,"frequency":"once","firstDate":"2026-12-24"}"#)
            #expect(created7.status == 201 && created7.header("Location") == "/schedules/7")

            #expect(try await app.request("GET", "/schedules?frequency=once").array.map { $0["id"] as? Int } == [7])
            #expect(try await app.request("GET", "/schedules?nextDate_gte=2026-12-01").array.map { $0["id"] as? Int } == [7])
            #expect(try await app.request("GET", "/schedules?q=once").array.map { $0["id"] as? Int } == [7])
            let bySplits = try await app.request("GET", "/schedules?splits=1")
            #expect(bySplits.status == 400 && bySplits.text.contains("splits"), "\(bySplits.text)")
            #expect(try await app.request("GET", "/schedules?_sort=splits").status == 400)

            let deleted = try await app.request("DELETE", "/schedules/7")
            #expect(deleted.status == 200 && deleted.text == created7.text)
            #expect(try await app.request("GET", "/schedules/7").status == 404)
            let feed = try await app.request("GET", "/changes?collection=schedules").text
            #expect(feed.contains(#""collection":"schedules","id":1,"op":"upsert""#) && feed.contains(#""id":7,"op":"delete""#), "\(feed)")
        }
    }

    @Test(arguments: [
        (#"{"title":"X","amount":1,"categoryId":1,"frequency":"fortnightly"}"#, ["frequency"]),
        (#"{"title":"X","amount":1,"categoryId":1}"#, ["frequency"]),
        (#"{"amount":1,"categoryId":1,"frequency":"monthly"}"#, ["title"]),
        (#"{"title":"X","amount":1,"categoryId":1,"frequency":"monthly","firstDate":"2026-12-01","endDate":"2026-11-30"}"#, ["endDate"]),
        (#"{"title":"X","amount":1,"categoryId":1,"frequency":"monthly","firstDate":"2026-02-30"}"#, ["firstDate"]),
        (#"{"title":"X","amount":1,"frequency":"monthly"}"#, ["categoryId"]),
        (
            #"{"title":"X","amount":1,"categoryId":1,"splits":[{"categoryId":1,"amount":0.5},{"categoryId":2,"amount":0.5}],"frequency":"monthly"}"#,
            ["categoryId"]
        ),
        (#"{"title":"X","amount":1,"splits":[{"categoryId":1,"amount":0.5},{"categoryId":2,"amount":0.75}],"frequency":"monthly"}"#, ["splits"]),
        (#"{"title":"X","amount":1,"splits":[{"categoryId":1,"amount":1}],"frequency":"monthly"}"#, ["splits"]),
        (#"{"title":"X","amount":1,"splits":{"categoryId":1},"frequency":"monthly"}"#, ["splits"]),
        (#"{"title":"X","amount":1,"splits":[{"categoryId":1,"amount":0.5},{"amount":0.5}],"frequency":"monthly"}"#, ["splits[1].categoryId"]),
        (
            #"{"title":"X","amount":1,"splits":[{"categoryId":1,"amount":0.5},{"categoryId":2,"amount":"x","tag":1}],"frequency":"monthly"}"#,
            ["splits[1].tag", "splits[1].amount"]
        ),
        (#"{"title":"X","amount":1,"splits":[7,{"categoryId":2,"amount":1}],"frequency":"monthly"}"#, ["splits[0]"]),
        (#"{"title":"X","amount":1,"accountId":9,"frequency":"monthly"}"#, ["accountId"]),
        (#"{"title":"X","amount":1,"categoryId":9,"frequency":"monthly"}"#, ["categoryId"]),
        (
            #"{"title":"X","amount":1,"splits":[{"categoryId":1,"amount":0.5},{"categoryId":9,"amount":0.5}],"frequency":"monthly"}"#,
            ["splits[1].categoryId"]
        ),
        (#"{"title":"X","amount":1,"categoryId":1,"frequency":"monthly","autoPost":"yes","colour":"red"}"#, ["colour", "autoPost"]),
    ])
    func invalidSchedulesAre422NamingTheFieldAndWriteNothing(body: String, fields: [String]) async throws {
        try await Self.withLedger { app in
            let answer = try await app.request("POST", "/schedules", json: body)
            #expect(answer.status == 422 && answer.problemFields == fields, "\(body): \(answer.text)")
            #expect(try await app.scalar("SELECT count(*) FROM schedules") == "0")
        }
    }

    @Test func writesThatBreakAStoredScheduleAre422() async throws {
        try await Self.withLedger { app in
            let split = try await app.request(
                "POST", "/schedules",
                json:
                    #"{"title":"Shop","amount":3,"splits":[{"categoryId":1,"amount":1},{"categoryId":2,"amount":2}],"frequency":"weekly","firstDate":"2026-12-01"}"#
            )
            #expect(split.status == 201, "\(split.text)")
            for (body, field) in [
                (#"{"amount":4}"#, "splits"), (#"{"categoryId":1}"#, "categoryId"), (#"{"endDate":"2026-11-01"}"#, "endDate"),
                (#"{"splits":null}"#, "categoryId"),
            ] {
                let answer = try await app.request("PATCH", "/schedules/1", json: body)
                #expect(answer.status == 422 && answer.problemFields == [field], "\(body): \(answer.text)")
            }
            #expect(try await app.request("GET", "/schedules/1").object["version"] as? Int == 1)
            // An account schedules name stays; a category's schedules go with it.
            #expect(
                try await app.request("POST", "/schedules", json: #"{"title":"Fee","amount":1,"accountId":1,"frequency":"monthly"}"#).status == 201)
            let refused = try await app.request("DELETE", "/accounts/1")
            #expect(refused.status == 409 && refused.problemFields == ["id"], "\(refused.text)")
            #expect(
                try await app.request("POST", "/schedules", json: #"{"title":"Fun","amount":1,"categoryId":2,"frequency":"monthly"}"#).status == 201)
            #expect(try await app.request("DELETE", "/categories/2").status == 200)
            // Schedule 1's part named category 2 by value: it stays, and the poster leaves it due until edited.
            #expect(try await app.request("GET", "/schedules").array.map { $0["id"] as? Int } == [1, 2])
        }
    }

    @Test func anAutoPostScheduleBecomesTransactionsExactlyOnce() async throws {
        try await Self.withLedger { app in
            let created = try await app.request(
                "POST", "/schedules",
                json:
                    #"{"title":"Rent","amount":"1200.00","accountId":1,"categoryId":1,"payee":"Landlord","note":"flat","frequency":"monthly","firstDate":"2026-09-15","autoPost":true}"#
            )
            #expect(created.status == 201)
            let cursor = try #require((try await app.request("GET", "/changes").object["lastSeq"] as? NSNumber)?.int64Value)
            // Due: 09-15, 10-15 and today, 11-15.
            #expect(try await app.service.schedulePoster.postDue() == 3)
            #expect(try await app.service.schedulePoster.postDue() == 0, "a second run posts nothing")
            let posted = try await app.request("GET", "/transactions?_sort=date")
            #expect(posted.array.map { $0["importId"] as? String } == ["schedule:1:2026-09-15", "schedule:1:2026-10-15", "schedule:1:2026-11-15"])
            let first = try #require(posted.array.first)
            #expect(first["title"] as? String == "Rent" && first["accountId"] as? Int == 1 && first["categoryId"] as? Int == 1)
            #expect(first["amount"] as? Double == 1200 && first["date"] as? String == "2026-09-15" && first["payee"] as? String == "Landlord")
            #expect(first["note"] as? String == "flat" && first["cleared"] as? String == "uncleared")
            let schedule = try await app.request("GET", "/schedules/1")
            #expect(schedule.object["nextDate"] as? String == "2026-12-15" && schedule.object["version"] as? Int == 2)
            #expect(try await app.request("GET", "/schedules/upcoming?days=31").array.map { $0["date"] as? String } == ["2026-12-15"])
            #expect(try await app.request("GET", "/accounts/1").object["balance"] as? Double == -3600)
            // The posted transactions reach the feed as any write does, and the schedule's new version with them.
            let feed = try await app.request("GET", "/changes?since=\(cursor)").object["changes"] as? [[String: Any]] ?? []
            #expect(feed.filter { $0["collection"] as? String == "transactions" }.count == 3)
            #expect(feed.contains { $0["collection"] as? String == "schedules" && $0["version"] as? Int == 2 })
        }
    }

    @Test func aScheduleThatIsNotAutoPostNeverPosts() async throws {
        try await Self.withLedger { app in
            let salary = try await app.request(
                "POST", "/schedules", json: #"{"title":"Salary","amount":"-3000","accountId":1,"frequency":"twiceAMonth","firstDate":"2026-10-01"}"#)
            #expect(salary.status == 201)
            // Before the poster lets them pass, the missed ones are still to come.
            #expect(try await app.request("GET", "/schedules/1").object["nextDate"] as? String == "2026-10-15")
            #expect(try await app.service.schedulePoster.postDue() == 0)
            #expect(try await app.service.schedulePoster.postDue() == 0)
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "0")
            // 10-15 and 10-31 passed; today's (11-15) is still to come, as a reminder.
            #expect(try await app.request("GET", "/schedules/1").object["nextDate"] as? String == "2026-11-15")
            #expect(
                try await app.request("GET", "/schedules/upcoming?days=20").text
                    == #"[{"scheduleId":1,"date":"2026-11-15","title":"Salary","amount":-3000.00},{"scheduleId":1,"date":"2026-11-30","title":"Salary","amount":-3000.00}]"#
            )
        }
    }

    @Test func aSplitSchedulePostsASplit() async throws {
        try await Self.withLedger { app in
            let created = try await app.request(
                "POST", "/schedules",
                json:
                    #"{"title":"Shop","amount":"90.00","accountId":1,"splits":[{"categoryId":1,"amount":60,"note":"bulk"},{"categoryId":2,"amount":30}],"frequency":"weekly","firstDate":"2026-11-08","autoPost":true}"#
            )
            #expect(created.status == 201, "\(created.text)")
            #expect(try await app.service.schedulePoster.postDue() == 2)
            // Two parents (11-08, 11-15), each with its two parts.
            #expect(
                try await app.scalar(
                    "SELECT string_agg(concat_ws(' ', date, split, parent_id IS NOT NULL, category_id, amount, import_id, note), '; ' ORDER BY date, parent_id NULLS FIRST, id) FROM transactions"
                )
                    == "2026-11-08 t f 90.00 schedule:1:2026-11-08; 2026-11-08 f t 1 60.00 bulk; 2026-11-08 f t 2 30.00; "
                    + "2026-11-15 t f 90.00 schedule:1:2026-11-15; 2026-11-15 f t 1 60.00 bulk; 2026-11-15 f t 2 30.00")
            #expect(try await app.request("GET", "/accounts/1").object["balance"] as? Double == -180)
            let month = try await app.request("GET", "/months/2026-11").object["categories"] as? [[String: Any]] ?? []
            #expect(month.map { $0["spent"] as? Double } == [120, 60])
        }
    }

    @Test func aServerDownForThreeMonthsCatchesUpOnce() async throws {
        let url = try await TestDatabase.fresh()
        let before = try Self.options(today: "2026-11-15")
        try await TestApp.with(databaseURL: url, options: before) { (app: TestApp) async throws in
            #expect(try await app.request("POST", "/categories", json: #"{"title":"Rent","amount":1200}"#).status == 201)
            #expect(try await app.request("POST", "/accounts", json: #"{"name":"Checking","type":"checking"}"#).status == 201)
            for body in [
                #"{"title":"Rent","amount":1200,"accountId":1,"categoryId":1,"frequency":"monthly","firstDate":"2026-10-31","autoPost":true}"#,
                #"{"title":"Coffee","amount":"4.50","accountId":1,"frequency":"everyOtherWeek","firstDate":"2026-11-10","autoPost":true}"#,
                #"{"title":"Call mum","amount":0,"categoryId":1,"frequency":"weekly","firstDate":"2026-11-01"}"#,
            ] {
                #expect(try await app.request("POST", "/schedules", json: body).status == 201)
            }
            #expect(try await app.service.schedulePoster.postDue() == 2)
            #expect(try await Self.importIDs(app) == ["schedule:1:2026-10-31", "schedule:2:2026-11-10"])
        }
        // Three months later a server starts on the same database: its first run, at start, posts what came due.
        let after = try Self.options(today: "2027-02-15")
        try await TestApp.with(databaseURL: url, options: after) { (app: TestApp) async throws in
            try await waitUntil("the poster's first run finished") { app.service.schedulePoster.completedRuns >= 1 }
            let expected = [
                "schedule:1:2026-10-31", "schedule:2:2026-11-10",
                "schedule:2:2026-11-24", "schedule:1:2026-11-30", "schedule:2:2026-12-08", "schedule:2:2026-12-22",
                "schedule:1:2026-12-31", "schedule:2:2027-01-05", "schedule:2:2027-01-19", "schedule:1:2027-01-31",
                "schedule:2:2027-02-02",
            ]
            #expect(try await Self.importIDs(app).sorted { $0.suffix(10) < $1.suffix(10) } == expected)
            #expect(try await app.service.schedulePoster.postDue() == 0, "nothing twice on a second run")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "11")
            // The schedule posted by hand (Sundays) posted nothing, and its missed weeks passed.
            let reminder = try await app.request("GET", "/schedules/3")
            #expect(reminder.object["nextDate"] as? String == "2027-02-21", "\(reminder.text)")
            #expect(
                try await app.request("GET", "/schedules/upcoming?days=14").array.map { "\($0["scheduleId"]!) \($0["date"]!)" }
                    == ["2 2027-02-16", "3 2027-02-21", "1 2027-02-28", "3 2027-02-28"])
        }
    }

    @Test func twoServersPostingTheSameSchedulesWriteEachOccurrenceOnce() async throws {
        try await Self.withLedger(today: "2026-11-15") { first in
            try await TestApp.with(
                databaseURL: first.databaseURL, options: try Self.options(today: "2026-11-15"), poolConfiguration: TestApp.smallPool
            ) { second in
                try await waitUntil("both posters ran at start") {
                    first.service.schedulePoster.completedRuns >= 1 && second.service.schedulePoster.completedRuns >= 1
                }
                // 400 daily occurrences, 2025-10-12 through today, and a split every week since 2026-01-04.
                #expect(
                    try await first.request(
                        "POST", "/schedules",
                        json: #"{"title":"Daily","amount":1,"accountId":1,"frequency":"daily","firstDate":"2025-10-12","autoPost":true}"#
                    ).status == 201)
                #expect(
                    try await second.request(
                        "POST", "/schedules",
                        json:
                            #"{"title":"Weekly","amount":3,"splits":[{"categoryId":1,"amount":1},{"categoryId":2,"amount":2}],"frequency":"weekly","firstDate":"2026-01-04","autoPost":true}"#
                    ).status == 201)
                async let a = first.service.schedulePoster.postDue()
                async let b = second.service.schedulePoster.postDue()
                async let c = first.service.schedulePoster.postDue()
                let total = try await a + b + c
                #expect(total == 400 + 46, "each occurrence is written by one run")
                #expect(try await first.scalar("SELECT count(*) FROM transactions WHERE parent_id IS NULL") == "446")
                #expect(try await first.scalar("SELECT count(DISTINCT import_id) FROM transactions") == "446")
                #expect(try await first.scalar("SELECT count(*) FROM transactions WHERE parent_id IS NOT NULL") == "92")
                #expect(try await second.service.schedulePoster.postDue() == 0)
                let daily = try await second.request("GET", "/schedules/1")
                #expect(daily.object["nextDate"] as? String == "2026-11-16")
            }
        }
    }

    @Test func upcomingDaysOutOfRangeIs400NamingDays() async throws {
        try await Self.withLedger { app in
            for days in ["0", "367", "-1", "abc", "1.5", ""] {
                let answer = try await app.request("GET", "/schedules/upcoming?days=\(days)")
                #expect(answer.status == 400 && answer.problemFields == ["days"], "days=\(days): \(answer.text)")
            }
            for days in ["1", "366"] {
                let answer = try await app.request("GET", "/schedules/upcoming?days=\(days)")
                #expect(answer.status == 200 && answer.text == "[]", "days=\(days): \(answer.text)")
            }
        }
    }

    @Test func monthsCountWhatSchedulesStillBring() async throws {
        try await Self.withLedger { app in
            for body in [
                // Posted on 11-01 (counted in spent, no longer scheduled), then 1200.00 each month to come.
                #"{"title":"Rent","amount":1200,"accountId":1,"categoryId":1,"frequency":"monthly","firstDate":"2026-11-01","autoPost":true}"#,
                // Money in, by hand: from 11-25 on.
                #"{"title":"Salary","amount":-3000,"accountId":1,"frequency":"monthly","firstDate":"2026-11-25"}"#,
                // Let pass by the poster: no longer to come.
                #"{"title":"Gift","amount":50,"categoryId":2,"frequency":"once","firstDate":"2026-10-05"}"#,
                // Twice in December only.
                #"{"title":"Party","amount":"12.25","categoryId":2,"frequency":"weekly","firstDate":"2026-12-20","endDate":"2026-12-31"}"#,
            ] {
                #expect(try await app.request("POST", "/schedules", json: body).status == 201)
            }
            #expect(try await app.service.schedulePoster.postDue() == 1)
            let november = try await app.request("GET", "/months/2026-11")
            #expect(november.text.contains(#","scheduled":-3000.00,"categories":["#), "\(november.text)")
            let months = try await app.request("GET", "/months?from=2026-10&to=2027-01").array
            #expect(months.map { $0["scheduled"] as? Double } == [0, -3000, -1775.5, -1800])
            for month in ["2026-10", "2026-12", "2027-01"] {
                let alone = try await app.request("GET", "/months/\(month)").object["scheduled"] as? Double
                #expect(alone == months.first { $0["month"] as? String == month }?["scheduled"] as? Double)
            }
        }
    }

    /// posted_through is no member and not exported: a seed finds it in the posted transactions, so a posted
    /// transaction deleted before the export stays deleted, and the restored schedule's next date is the same.
    @Test func aSeedKnowsWhatWasPostedFromTheTransactions() async throws {
        try await Self.withLedger { first in
            let body =
                #"{"title":"Rent","amount":1200,"accountId":1,"categoryId":1,"frequency":"monthly","firstDate":"2026-09-15","autoPost":true}"#
            #expect(try await first.request("POST", "/schedules", json: body).status == 201)
            #expect(
                try await first.request(
                    "POST", "/schedules", json: #"{"title":"Call","amount":0,"categoryId":1,"frequency":"weekly","firstDate":"2026-11-01"}"#
                ).status == 201)
            #expect(try await first.service.schedulePoster.postDue() == 3)
            let september = try #require(try await first.request("GET", "/transactions?importId=schedule:1:2026-09-15").array.first?["id"] as? Int)
            #expect(try await first.request("DELETE", "/transactions/\(september)").status == 200)
            let exported = try await first.request("GET", "/db").text
            try await TestApp.with(options: try Self.options(today: "2026-11-15")) { second in
                try await second.seed(exported)
                #expect(try await second.request("GET", "/db").text == exported)
                #expect(try await second.request("GET", "/schedules/1").object["nextDate"] as? String == "2026-12-15")
                #expect(try await second.service.schedulePoster.postDue() == 0, "the deleted September rent is not posted again")
                #expect(try await Self.importIDs(second) == ["schedule:1:2026-10-15", "schedule:1:2026-11-15"])
                // The reminder had nothing posted: its past weeks pass at the poster's run, as on the first server.
                #expect(try await second.request("GET", "/schedules/2").object["nextDate"] as? String == "2026-11-15")
                #expect(try await second.request("GET", "/schedules/1").text == first.request("GET", "/schedules/1").text, "the rent was not touched")
            }
        }
    }

    @Test func batchesAndIdempotencyKeysTakeSchedules() async throws {
        try await Self.withLedger { app in
            // The second schedule's part names no category: the atomic batch writes neither.
            let failed = try await app.request(
                "POST", "/batch",
                json: """
                    {"atomic":true,"operations":[
                      {"method":"POST","path":"/schedules","body":{"title":"Rent","amount":1200,"categoryId":1,"frequency":"monthly"}},
                      {"method":"POST","path":"/schedules","body":{"title":"Shop","amount":3,"splits":[{"categoryId":1,"amount":1},{"categoryId":9,"amount":2}],"frequency":"weekly"}}
                    ]}
                    """)
            #expect(failed.status == 422, "\(failed.text)")
            #expect(failed.text.contains(#""field":"splits[1].categoryId""#), "\(failed.text)")
            #expect(try await app.scalar("SELECT count(*) FROM schedules") == "0")

            let key = [("Idempotency-Key", "\"rent-once\"")]
            let body = #"{"title":"Rent","amount":1200,"categoryId":1,"frequency":"monthly","firstDate":"2026-12-01"}"#
            let first = try await app.request("POST", "/schedules", json: body, headers: key)
            let again = try await app.request("POST", "/schedules", json: body, headers: key)
            #expect(first.status == 201 && again.status == 201 && again.text == first.text && again.header("Idempotent-Replayed") == "true")
            #expect(try await app.scalar("SELECT count(*) FROM schedules") == "1")
        }
    }

    @Test func exportAndSeedKeepSchedules() async throws {
        try await Self.withLedger { first in
            #expect(
                try await first.request(
                    "POST", "/schedules",
                    json:
                        #"{"id":4,"title":"Shop","amount":3,"splits":[{"categoryId":1,"amount":1},{"categoryId":2,"amount":2,"note":"n"}],"frequency":"yearly","firstDate":"2027-02-28","endDate":"2030-01-01"}"#
                ).status == 201)
            let exported = try await first.request("GET", "/db").text
            #expect(
                exported.contains(
                    #""schedules":[{"id":4,"title":"Shop","amount":3.00,"accountId":null,"categoryId":null,"splits":[{"categoryId":1,"amount":1.00,"note":null},{"categoryId":2,"amount":2.00,"note":"n"}],"payee":null,"note":null,"frequency":"yearly","firstDate":"2027-02-28","endDate":"2030-01-01","autoPost":false,"createdAt":"#
                ), "\(exported)")
            #expect(!exported.contains("nextDate"))
            try await TestApp.with(options: try Self.options(today: "2026-11-15")) { second in
                try await second.seed(exported)
                #expect(try await second.request("GET", "/db").text == exported)
                #expect(try await second.request("GET", "/schedules/4").object["nextDate"] as? String == "2027-02-28")
                #expect(
                    try await second.request("POST", "/schedules", json: #"{"title":"N","amount":1,"categoryId":1,"frequency":"once"}"#).object["id"]
                        as? Int == 5)
            }
            #expect(
                try await first.request("GET", "/").text.contains(#"<a href="/schedules">/schedules</a></td><td>typed</td><td class="count">1</td>"#))
        }
    }
}
