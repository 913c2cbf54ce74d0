// One app's flow through the Swift client that swift-openapi-generator made from openapi.yaml (docs/clients.md).
// Run by .ci/clients against a fresh server: ClientFlow BASE_URL TOKEN. Any expectation that does not hold stops it
// with a non-zero exit; the runtime's own errors (a body that does not decode, say) do too.

import BudgetClient
import Foundation
import OpenAPIRuntime
import OpenAPIURLSession

struct FlowFailure: Error, CustomStringConvertible {
    let description: String
}

func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw FlowFailure(description: "swift flow: " + message()) }
}

func money(_ text: String) -> Decimal { Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))! }

/// A batch operation's body: any JSON value.
func json(_ text: String) throws -> OpenAPIValueContainer { try JSONDecoder().decode(OpenAPIValueContainer.self, from: Data(text.utf8)) }

let arguments = CommandLine.arguments
guard arguments.count == 3, let serverURL = URL(string: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: ClientFlow BASE_URL TOKEN\n".utf8))
    exit(2)
}
// Configuration() as it comes: its date decoding is Foundation's plain ISO 8601, without fractional seconds.
let client = Client(
    serverURL: serverURL, configuration: Configuration(), transport: URLSessionTransport(),
    middlewares: [BearerToken(arguments[2]), HeaderPercentDecoding()])

do {
    let before = try await client.listCategories().ok.body.json
    guard case .case1(let listed) = before else { throw FlowFailure(description: "swift flow: the list is not an array") }

    // A quoted Idempotency-Key, as the IETF draft writes it: the retry replays the first answer.
    let input = Components.Schemas.CategoryInput(title: "Groceries (Swift)", amount: money("400.00"))
    let created = try await client.createCategories(headers: .init(idempotencyKey: #""swift-create-1""#), body: .json(.CategoryInput(input))).created
    guard case .Category(let category) = try created.body.json else { throw FlowFailure(description: "swift flow: not one category") }
    let replay = try await client.createCategories(headers: .init(idempotencyKey: #""swift-create-1""#), body: .json(.CategoryInput(input))).created
    try expect(replay.headers.idempotentReplayed?.rawValue == "true", "the retry was not a replay")
    guard case .Category(let replayed) = try replay.body.json else { throw FlowFailure(description: "swift flow: not one category") }
    try expect(replayed.id == category.id, "the replay named another category")
    try expect(abs(category.createdAt.timeIntervalSinceNow) < 3600, "createdAt \(category.createdAt) is not now")

    // Two transactions: the Decimal goes out as a JSON number; a string amount goes out as JSON text the server reads.
    let milk = try await client.createCategoryTransactions(
        path: .init(id: category.id),
        body: .json(.CategoryTransactionInput(.init(title: "Milk", amount: money("3.49"), date: "2026-11-20")))).created
    guard case .Transaction(let milkRecord) = try milk.body.json else { throw FlowFailure(description: "swift flow: not one transaction") }
    let shop = try await client.createTransactions(
        body: .json(.TransactionInput(.init(categoryId: category.id, title: "Weekly shop", amount: money("119.96"))))).created
    guard case .Transaction = try shop.body.json else { throw FlowFailure(description: "swift flow: not one transaction") }

    // spent and remaining, exactly.
    let read = try await client.getCategory(path: .init(id: category.id)).ok
    let held = try read.body.json
    try expect(held.spent == money("123.45") && held.remaining == money("276.55"), "spent \(held.spent), remaining \(held.remaining)")
    let etag = read.headers.eTag

    // _where is the JSON object's text.
    let whereText = #"{"amount":{"gte":100},"categoryId":{"eq":\#(category.id)}}"#
    guard case .case1(let big) = try await client.listTransactions(query: .init(_where: whereText)).ok.body.json else {
        throw FlowFailure(description: "swift flow: the _where list is not an array")
    }
    try expect(big.map(\.title) == ["Weekly shop"], "_where picked \(big.map(\.title))")

    // If-None-Match: 304 while unchanged (through HeaderPercentDecoding: the runtime would send %22…%22).
    _ = try await client.getCategory(path: .init(id: category.id), headers: .init(ifNoneMatch: etag)).notModified

    // If-Match: the first edit holds, the second with the same (now stale) tag is 412.
    let edited = try await client.updateCategory(
        path: .init(id: category.id), headers: .init(ifMatch: etag), body: .json(.init(amount: money("450.00")))).ok
    let stale = try await client.updateCategory(
        path: .init(id: category.id), headers: .init(ifMatch: etag), body: .json(.init(amount: money("500.00")))).preconditionFailed
    try expect(stale.headers.eTag == edited.headers.eTag, "the 412 did not carry the current ETag")

    // A 422 problem names every invalid field.
    let invalid = try await client.createTransactions(
        body: .json(.TransactionInput(.init(categoryId: category.id, title: "", amount: money("1.234"))))).unprocessableContent
    let fields = try invalid.body.applicationProblemJson.errors?.map(\.field).sorted()
    try expect(fields == ["amount", "title"], "422 fields: \(String(describing: fields))")

    // The change feed names the deleted record.
    let seq = read.headers.xSyncSeq
    _ = try await client.deleteTransaction(path: .init(id: milkRecord.id)).ok
    let feed = try await client.getChanges(query: .init(since: seq, collection: "transactions")).ok.body.json
    let deleted = feed.changes.filter { $0.op == .delete }.map { $0.id }
    try expect(deleted == [.case1(Int(milkRecord.id))], "the delete's id: \(deleted)")

    // An atomic batch whose second operation is stale: 412 with the current ETag, and its first operation is rolled
    // back. (The delete changed the category's spent, so its tag moved again.)
    let current = try await client.getCategory(path: .init(id: category.id)).ok.headers.eTag
    let batch = Components.Schemas.BatchRequest(atomic: true, operations: [
        .init(method: .post, path: "/categories", body: try json(#"{"title":"Rent (Swift)","amount":950}"#)),
        .init(method: .patch, path: "/categories/\(category.id)", body: try json(#"{"amount":"1.00"}"#), ifMatch: etag),
    ])
    let output = try await client.applyBatch(body: .json(batch))
    guard case .clientError(statusCode: 412, let failed) = output else { throw FlowFailure(description: "swift flow: batch answered \(output)") }
    let problem = try failed.body.applicationProblemJson
    try expect(problem.value2.operation == 1 && problem.value2.failure.status == 412, "batch failure: \(problem)")
    try expect(problem.value2.headers?.additionalProperties["ETag"] == current, "the failed operation's headers: \(String(describing: problem.value2.headers))")
    guard case .case1(let after) = try await client.listCategories().ok.body.json else {
        throw FlowFailure(description: "swift flow: the list is not an array")
    }
    try expect(after.count == listed.count + 1, "the atomic batch left a category behind")
    print("swift flow: passed")
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
