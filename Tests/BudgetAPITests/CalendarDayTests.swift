import Testing
@testable import BudgetAPI

@Suite struct CalendarDayTests {
    @Test(arguments: ["2026-11-20", "2024-02-29", "2000-02-29", "0001-01-01", "9999-12-31"])
    func acceptsRealDates(text: String) {
        #expect(CalendarDay(text) != nil)
    }

    @Test(arguments: ["2026-02-29", "1900-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "2026-11-00",
                      "26-11-20", "2026/11/20", "2026-11-20T00:00:00Z", "", "2026-1-20", "２０２６-11-20", "0000-01-01"])
    func refusesOtherText(text: String) {
        #expect(CalendarDay(text) == nil)
    }
}
