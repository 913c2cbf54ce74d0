@testable import BudgetCore

// JSON request bodies: the parser and writer round trip, and every number read as money. The validation a
// POST, PUT or PATCH runs on a record (RequestBody and the records' fields, in BudgetAPI) answers HTTP problems
// and is left to BudgetAPI's tests: the fuzz build compiles only whole modules that need nothing beyond the
// standard library (README.md).

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    if let value = JSONBodyTarget.checkRoundTrip(bytes) { JSONBodyTarget.checkMoney(value) }
    return 0
}

enum JSONBodyTarget {
    /// Parses `bytes`; what parses is written back and must parse to the same value and the same text again.
    static func checkRoundTrip(_ bytes: [UInt8]) -> JSONValue? {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            invariant((0...bytes.count).contains(error.offset), "failure offset \(error.offset) in \(bytes.count) bytes")
            return nil
        }
        let written = JSONWriter.bytes(value)
        let again: JSONValue
        do {
            again = try JSONParser.parse(written)
        } catch {
            fatalError("written JSON does not parse (\(error)): \(String(decoding: written, as: UTF8.self).debugDescription)")
        }
        invariant(again == value, "written JSON parses to another value: \(String(decoding: written, as: UTF8.self).debugDescription)")
        invariant(JSONWriter.bytes(again) == written, "writing is not stable")
        return value
    }

    /// Every number a body holds is read as money the way a record's amount is: what reads back is in range,
    /// and its canonical text (two decimals) reads back as the same amount, also through the JSON parser.
    static func checkMoney(_ value: JSONValue) {
        switch value {
        case .number(let text):
            guard let amount = try? Money(parsing: text) else { return }
            invariant(abs(amount.cents) <= Money.maximumCents, "amount \(amount) out of range, from \(text)")
            invariant((try? Money(parsing: amount.description)) == amount, "amount \(amount) does not read back")
            guard case .number(let written)? = try? JSONParser.parse(Array(amount.description.utf8)) else {
                fatalError("invariant: \(amount) is not a JSON number")
            }
            invariant((try? Money(parsing: written)) == amount, "amount \(amount) as JSON reads back as \(written)")
        case .array(let elements): elements.forEach(checkMoney)
        case .object(let members): members.forEach { checkMoney($0.value) }
        case .null, .bool, .string: break
        }
    }
}
