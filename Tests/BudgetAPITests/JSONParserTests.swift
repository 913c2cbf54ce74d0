import BudgetCore
import Testing
@testable import BudgetAPI

@Suite struct JSONParserTests {
    @Test(arguments: [
        (#"{"a":1}"#, JSONValue.object(["a": .number("1")])),
        (
            #" [1, -0.5, 1e2, 12.50, 1234567890123456789012] "#,
            .array([.number("1"), .number("-0.5"), .number("1e2"), .number("12.50"), .number("1234567890123456789012")])
        ),
        (
            #"{"s":"a\"b\\c\n\u00e9\ud83d\ude00","t":true,"f":false,"n":null}"#,
            .object(["s": .string("a\"b\\c\n\u{e9}\u{1F600}"), "t": .bool(true), "f": .bool(false), "n": .null])
        ),
        (#"{"a":1,"a":2}"#, .object(["a": .number("2")])),
        (#""héllo""#, .string("héllo")),
        ("[]", .array([])),
        ("{}", .object([:])),
    ])
    func parsesValidDocuments(text: String, expected: JSONValue) throws {
        #expect(try JSONParser.parse(Array(text.utf8)) == expected)
    }

    @Test(arguments: [
        "", " ", "{", "[1,]", "{\"a\":}", "{\"a\" 1}", "{a:1}", "01", "1.", ".5", "-", "1e", "+1", "NaN",
        "Infinity", "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "[1] 2",
        "{\"a\":1}}", "\"tab\there\"", "[1 2]",
    ])
    func rejectsMalformedDocuments(text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test func limitsNesting() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(deep.utf8)) }
        let allowed = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: Never.self) { try JSONParser.parse(Array(allowed.utf8)) }
    }
}

/// What fuzz/ found in the pure parts: names and patterns are compared as their bytes and scalars, not
/// as Swift's canonically equivalent Characters.
@Suite struct CanonicalEquivalenceTests {
    @Test func precomposedAndDecomposedNamesAreTwoMembers() throws {
        guard case .object(let members) = try JSONParser.parse(Array(#"{"e\u0301":1,"\u00e9":2}"#.utf8)) else {
            Issue.record("not an object")
            return
        }
        #expect(members.members.count == 2)
        #expect(members["e\u{301}"] == .number("1"))
        #expect(members["\u{e9}"] == .number("2"))
    }

    @Test(arguments: [("50%\u{301}", "50\\%\u{301}"), ("a_\u{301}b", "a\\_\u{301}b"), ("\\\u{301}", "\\\\\u{301}"), ("plain", "plain")])
    func likeWildcardsAreEscapedEvenBeforeACombiningMark(text: String, escaped: String) {
        #expect(LikePattern.escaped(text).unicodeScalars.elementsEqual(escaped.unicodeScalars))
    }
}
