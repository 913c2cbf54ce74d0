import BudgetSync
import Foundation
import Testing

/// Reading a record's id from its exact JSON (pure logic, no server): escapes undone as RFC 8259 §7 says.
@Suite struct RecordParsingTests {
    @Test(arguments: [
        (#"{"id":"plain"}"#, "plain"),
        (#"{"id":"q\"uote \\ slash\/ tab\t nl\n cr\r bs\b ff\f"}"#, "q\"uote \\ slash/ tab\t nl\n cr\r bs\u{08} ff\u{0C}"),
        (#"{"id":"\u00e9t\u00e9 \ud83d\ude00"}"#, "été 😀"),
        (#"{ "title" : "x" , "id" : 12345678901234567890 }"#, "12345678901234567890"),
    ])
    func idIsReadWithItsEscapesUndone(json: String, id: String) throws {
        let record = try Record(collection: "posts", json: Data(json.utf8))
        #expect(record.id == id)
        #expect(record.json == Data(json.utf8), "the bytes stay as received")
    }

    @Test(arguments: [#"{"id":"bad \x escape"}"#, #"{"id":"unterminated}"#, #"{"title":"no id"}"#])
    func malformedRecordsAreRefused(json: String) {
        #expect(throws: SyncError.self) { try Record(collection: "posts", json: Data(json.utf8)) }
    }
}
