@testable import BudgetAPI
import Testing
import APITestSupport
import BudgetCore

/// RFC 7396 merge patch on generic collections, and json-server's shallow merge for plain JSON (docs/json-server.md).
@Suite struct MergePatchTests {
    static let mergePatch = [("Content-Type", "application/merge-patch+json")]

    @Test func mergePatchMergesObjectsAtEveryDepthAndNullRemovesThere() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"notes":[{"id":1,"a":{"b":{"c":1,"d":2},"e":3},"f":4}]}"#)
            let merged = try await app.request(
                "PATCH", "/notes/1", json: #"{"a":{"b":{"c":10,"x":1.50},"e":null},"g":{"h":null}}"#, headers: Self.mergePatch
            )
            #expect(merged.status == 200)
            // c changes in place, x is appended, e (depth 2) goes, and g's null member is not stored.
            #expect(merged.text == #"{"id":1,"a":{"b":{"c":10,"d":2,"x":1.50}},"f":4,"g":{}}"#)
            #expect(try await app.request("GET", "/notes/1").text == merged.text)
        }
    }

    @Test func mergePatchReplacesArraysAndEverythingThatIsNotAnObject() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"notes":[{"id":1,"tags":["a","b"],"point":{"x":1},"label":"old","n":[{"k":1}]}]}"#)
            let merged = try await app.request(
                "PATCH", "/notes/1", json: #"{"tags":["c"],"point":"gone","label":{"text":"new","hint":null},"n":[{"j":2}]}"#,
                headers: Self.mergePatch
            )
            // RFC 7396 §2: arrays are values, not merged; an object patch over a non-object starts from {}.
            #expect(merged.text == #"{"id":1,"tags":["c"],"point":"gone","label":{"text":"new"},"n":[{"j":2}]}"#)
            // A patch that is not an object would replace the whole record (RFC 7396 §2), which must stay an object.
            let whole = try await app.request("PATCH", "/notes/1", json: #"["x"]"#, headers: Self.mergePatch)
            #expect(whole.status == 400)
        }
    }

    @Test func plainJSONPatchStaysJsonServersShallowMerge() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"notes":[{"id":1,"a":{"b":1,"c":2},"d":3}]}"#)
            let merged = try await app.request("PATCH", "/notes/1", json: #"{"a":{"b":5},"d":null}"#)
            #expect(merged.text == #"{"id":1,"a":{"b":5},"d":null}"#)
        }
    }

    @Test func singularResourcesMergeRecursivelyToo() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"profile":{"name":"demo","settings":{"theme":"dark","font":12}}}"#)
            let merged = try await app.request(
                "PATCH", "/profile", json: #"{"settings":{"font":null,"lang":"en"}}"#, headers: Self.mergePatch
            )
            #expect(merged.text == #"{"name":"demo","settings":{"theme":"dark","lang":"en"}}"#)
            let shallow = try await app.request("PATCH", "/profile", json: #"{"settings":{"theme":"light"}}"#)
            #expect(shallow.text == #"{"name":"demo","settings":{"theme":"light"}}"#)
        }
    }

    /// The Earthquake app's case (docs/json-server.md): a new magnitude must keep place, time and code.
    @Test func quakeMagnitudePatchKeepsTheOtherProperties() async throws {
        try await TestApp.with { app in
            try await app.seed(
                #"""
                {"quakes":[{"type":"Feature","properties":{"mag":3.41,"place":"12 km SW of Ridgecrest, CA",
                 "time":1763683200123,"code":"40812345"},"geometry":{"type":"Point","coordinates":[-117.7715,35.5512,8.42]},
                 "id":"ci40812345"}]}
                """#)
            let patched = try await app.request(
                "PATCH", "/quakes/ci40812345", json: #"{"properties":{"mag":3.62}}"#, headers: Self.mergePatch
            )
            #expect(patched.status == 200)
            #expect(
                patched.text == #"""
                    {"type":"Feature","properties":{"mag":3.62,"place":"12 km SW of Ridgecrest, CA","time":1763683200123,\#
                    "code":"40812345"},"geometry":{"type":"Point","coordinates":[-117.7715,35.5512,8.42]},"id":"ci40812345"}
                    """#)
        }
    }

    /// RFC 7396 Appendix A's examples, on the values themselves; numbers keep their text.
    @Test(arguments: [
        (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
        (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
        (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
        (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
        (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
        (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
        (#"{"e":null}"#, #"{"a":1}"#, #"{"e":null,"a":1}"#),
        (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
        (#"{"n":1.0}"#, #"{"m":12345678901234567890.10}"#, #"{"n":1.0,"m":12345678901234567890.10}"#),
    ])
    func rfc7396Examples(target: String, patch: String, expected: String) throws {
        guard case .object(let stored) = try JSONParser.parse(Array(target.utf8)),
            case .object(let changes) = try JSONParser.parse(Array(patch.utf8))
        else {
            Issue.record("the cases are objects")
            return
        }
        #expect(JSONWriter.string(.object(PatchRule.mergePatch.apply(changes, to: stored))) == expected)
    }
}
