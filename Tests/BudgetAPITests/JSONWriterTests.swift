import BudgetCore
import Testing
@testable import BudgetAPI

@Suite struct JSONWriterTests {
    @Test(arguments: [
        #"{"id":1,"title":"a","author":{"name":"b"},"tags":["x",2,true,null]}"#,
        #"{"n":12345678901234567890123,"x":1.10,"e":1e2,"neg":-0.5}"#,
        #"{"z":1,"a":2,"m":3}"#,
        #"{"s":"quote \" backslash \\ newline \n tab \t bell \u0007 é 😀 /"}"#,
        // PostgreSQL's to_json escapes: the short forms \b and \f, lowercase hex, DEL and `/` as they are.
        #"{"s":"backspace \b formfeed \f unit \u001f del \#u{7F}"}"#,
        "[]", "{}", #""text""#, "null", "true",
    ])
    func roundTripsCompactJSONExactly(text: String) throws {
        let value = try JSONParser.parse(Array(text.utf8))
        #expect(JSONWriter.string(value) == text)
    }

    @Test func compactsWhitespace() throws {
        let value = try JSONParser.parse(Array(#" { "a" : [ 1 , 2 ] } "#.utf8))
        #expect(JSONWriter.string(value) == #"{"a":[1,2]}"#)
    }

    @Test func objectsKeepMemberOrderAndReplaceInPlace() {
        var object: JSONObject = ["b": .number("1"), "a": .number("2")]
        object["b"] = .string("x")
        object["c"] = .null
        #expect(object.names == ["b", "a", "c"])
        object["a"] = nil
        #expect(JSONWriter.string(.object(object)) == #"{"b":"x","c":null}"#)
    }

    @Test func repeatedNamesKeepTheFirstPositionAndTheLastValue() throws {
        let value = try JSONParser.parse(Array(#"{"a":1,"b":2,"a":3}"#.utf8))
        #expect(JSONWriter.string(value) == #"{"a":3,"b":2}"#)
    }
}
