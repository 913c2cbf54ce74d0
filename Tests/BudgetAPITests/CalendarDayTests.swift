import BudgetCore
import Testing
@testable import BudgetAPI

@Suite struct CalendarDayTests {
    @Test(arguments: ["2026-11-20", "2024-02-29", "2000-02-29", "0001-01-01", "9999-12-31"])
    func acceptsRealDates(text: String) {
        #expect(CalendarDay(text) != nil)
    }

    @Test(arguments: [
        "2026-02-29", "1900-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "2026-11-00",
        "26-11-20", "2026/11/20", "2026-11-20T00:00:00Z", "", "2026-1-20", "２０２６-11-20", "0000-01-01",
    ])
    func refusesOtherText(text: String) {
        #expect(CalendarDay(text) == nil)
    }
}

@Suite struct MonthTextTests {
    @Test(arguments: ["2026-11", "2028-02", "0001-01", "9999-12"])
    func acceptsMonths(text: String) {
        #expect(Month(text)?.description == text)
        #expect(Month(text)?.firstDay == text + "-01")
    }

    @Test(arguments: ["2026-13", "2026-1", "26-11", "2026-11-01", "2026-00", "0000-01", "2026/11", "", "current", "２０２６-11"])
    func refusesOtherText(text: String) {
        #expect(Month(text) == nil)
    }

    @Test func countsAcrossYearEnds() throws {
        let december = try #require(Month("2025-12"))
        #expect(december.adding(1).description == "2026-01")
        #expect(december.adding(-12).description == "2024-12")
        #expect(try #require(Month("2026-01")).index - december.index == 1)
    }
}
