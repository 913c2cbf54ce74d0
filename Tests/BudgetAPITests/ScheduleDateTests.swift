import BudgetAPI
import Foundation
import Postgres
import Testing
import TestSupport
import APITestSupport

/// The dates of every frequency (migrations/0019's rules), read over HTTP from `GET /schedules/upcoming`
/// and each schedule's `nextDate`, against dates worked out by hand: across month ends, the leap day of
/// 2028 and the common February of 2029, and the end of 2028.
///
/// Today is 2028-02-28, so `days=366` reaches 2029-02-28. Every schedule is posted by hand: the poster run
/// explicitly before reading lets their occurrences before today pass, which makes what is upcoming
/// independent of when the poster's timer fires.
@Suite struct ScheduleDateTests {
    static let today = "2028-02-28T12:00:00Z"

    struct Case: Sendable {
        let body: String
        /// Every occurrence from today through 2029-02-28, in order.
        let upcoming: [String]
        /// The schedule's nextDate after the poster let the past pass.
        var nextDate: String? { upcoming.first }
    }

    /// Each body names category 1; the comments give the occurrences before today, which must not show.
    static let cases: [Case] = [
        Case(body: #""frequency":"once","firstDate":"2028-03-01""#, upcoming: ["2028-03-01"]),
        // Across the year end.
        Case(
            body: #""frequency":"daily","firstDate":"2028-12-30","endDate":"2029-01-02""#,
            upcoming: ["2028-12-30", "2028-12-31", "2029-01-01", "2029-01-02"]),
        // 02-15 and 02-22 are past; the leap day is a Tuesday like them.
        Case(
            body: #""frequency":"weekly","firstDate":"2028-02-15","endDate":"2028-03-15""#,
            upcoming: ["2028-02-29", "2028-03-07", "2028-03-14"]),
        Case(
            body: #""frequency":"everyOtherWeek","firstDate":"2028-12-21","endDate":"2029-01-20""#,
            upcoming: ["2028-12-21", "2029-01-04", "2029-01-18"]),
        // 01-31 is past; 28 days later is today, which a schedule posted by hand still has to come.
        Case(
            body: #""frequency":"every4Weeks","firstDate":"2028-01-31","endDate":"2028-06-01""#,
            upcoming: ["2028-02-28", "2028-03-27", "2028-04-24", "2028-05-22"]),
        // The 15th (02-15 is past) and the last day; February of a leap year ends on the 29th.
        Case(
            body: #""frequency":"twiceAMonth","firstDate":"2028-02-10","endDate":"2028-04-15""#,
            upcoming: ["2028-02-29", "2028-03-15", "2028-03-31", "2028-04-15"]),
        // On the 31st: the last day of shorter months, and the 31st again after them.
        Case(
            body: #""frequency":"monthly","firstDate":"2028-01-31","endDate":"2028-07-01""#,
            upcoming: ["2028-02-29", "2028-03-31", "2028-04-30", "2028-05-31", "2028-06-30"]),
        // On the 31st across the year end, into a common February.
        Case(
            body: #""frequency":"monthly","firstDate":"2028-10-31","endDate":"2029-02-28""#,
            upcoming: ["2028-10-31", "2028-11-30", "2028-12-31", "2029-01-31", "2029-02-28"]),
        // 2027-12-31 is past.
        Case(
            body: #""frequency":"everyOtherMonth","firstDate":"2027-12-31","endDate":"2028-09-01""#,
            upcoming: ["2028-02-29", "2028-04-30", "2028-06-30", "2028-08-31"]),
        // 2027-11-30 is past; each date is counted from the first (05-30, not 05-29 after the leap day).
        Case(
            body: #""frequency":"every3Months","firstDate":"2027-11-30","endDate":"2028-12-01""#,
            upcoming: ["2028-02-29", "2028-05-30", "2028-08-30", "2028-11-30"]),
        // 2027-10-31 is past; no end.
        Case(
            body: #""frequency":"every4Months","firstDate":"2027-10-31""#,
            upcoming: ["2028-02-29", "2028-06-30", "2028-10-31", "2029-02-28"]),
        // 2027-08-31 is past.
        Case(
            body: #""frequency":"twiceAYear","firstDate":"2027-08-31""#,
            upcoming: ["2028-02-29", "2028-08-31", "2029-02-28"]),
        // February 29: February 28 in 2025-2027 (past) and 2029.
        Case(body: #""frequency":"yearly","firstDate":"2024-02-29""#, upcoming: ["2028-02-29", "2029-02-28"]),
        // 2026-02-28 is past; the next is today; 2030-02-28 is past the window.
        Case(body: #""frequency":"everyOtherYear","firstDate":"2026-02-28""#, upcoming: ["2028-02-28"]),
        // Ended before today: nothing to come, and no nextDate.
        Case(body: #""frequency":"monthly","firstDate":"2027-01-15","endDate":"2027-06-15""#, upcoming: []),
    ]

    static func options() throws -> BudgetApp.Options {
        var options = BudgetApp.Options()
        options.clock = CivilClock(now: try #require(Timestamp(today)))
        return options
    }

    @Test func everyFrequencyFallsOnTheDatesWorkedOutByHand() async throws {
        try await TestApp.with(options: try Self.options()) { app in
            #expect(try await app.request("POST", "/categories", json: #"{"title":"Bills","amount":100}"#).status == 201)
            for (index, item) in Self.cases.enumerated() {
                let created = try await app.request(
                    "POST", "/schedules", json: #"{"title":"S\#(index + 1)","amount":"10.00","categoryId":1,\#(item.body)}"#)
                #expect(created.status == 201 && created.object["id"] as? Int == index + 1, "\(item.body): \(created.text)")
            }
            #expect(try await app.service.schedulePoster.postDue() == 0, "a schedule posted by hand posts nothing")

            let answer = try await app.request("GET", "/schedules/upcoming?days=366")
            #expect(answer.status == 200, "\(answer.text)")
            let upcoming = answer.array.map { ($0["scheduleId"] as? Int ?? 0, $0["date"] as? String ?? "") }
            for (index, item) in Self.cases.enumerated() {
                #expect(upcoming.filter { $0.0 == index + 1 }.map(\.1) == item.upcoming, "\(item.body)")
                let schedule = try await app.request("GET", "/schedules/\(index + 1)")
                #expect(schedule.object["nextDate"] as? String == item.nextDate, "\(item.body): \(schedule.text)")
            }
            #expect(upcoming.count == Self.cases.reduce(0) { $0 + $1.upcoming.count })
            // By date, then by schedule.
            #expect(upcoming.map { "\($0.1) \(String(format: "%03d", $0.0))" } == upcoming.map { "\($0.1) \(String(format: "%03d", $0.0))" }.sorted())
            #expect(
                try await app.request("GET", "/schedules/upcoming?days=1").array.map { "\($0["scheduleId"]!) \($0["date"]!)" }
                    == ["5 2028-02-28", "14 2028-02-28"] + [3, 6, 7, 9, 10, 11, 12, 13].map { "\($0) 2028-02-29" })
            // Each occurrence as the schedule has it, and 30 days by default (through 2028-03-29).
            let first = try await app.request("GET", "/schedules/upcoming")
            #expect(first.array.first.map { $0.count } == 4)
            #expect(first.text.hasPrefix(#"[{"scheduleId":5,"date":"2028-02-28","title":"S5","amount":10.00},"#), "\(first.text)")
            #expect(first.array.last?["date"] as? String == "2028-03-27")
            #expect(first.array.filter { ($0["date"] as? String ?? "") > "2028-03-29" }.isEmpty)
        }
    }
}
