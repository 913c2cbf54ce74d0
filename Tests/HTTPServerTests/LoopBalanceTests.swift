import Glibc
import HTTPServer
import TestSupport
import Testing

@Suite("Connections are shared evenly between the event loops")
struct LoopBalanceTests {
    /// A burst of connects (a load balancer's pool, wrk's 64) used to land on whichever loop woke first.
    @Test func aBurstOfConnectionsIsSplitEvenlyAcrossTheLoops() async throws {
        var router = Router<Void>()
        // A handler runs on its connection's loop thread, so the thread names the loop.
        router.get("/thread") { _ in .text(String(UInt(bitPattern: Int(bitPattern: pthread_self())))) }
        try await withTestServer(handler: router) { port, _ in
            let threads = try await runOffCooperativePool {
                // Every connection is open before the first request, so none has closed when the next arrives.
                let clients = try (0..<8).map { _ in try TestClient(port: port) }
                return try clients.map { try $0.request("GET", "/thread").text }
            }
            let perLoop = Dictionary(grouping: threads, by: { $0 }).mapValues(\.count)
            #expect(perLoop.count == 2, "both loops got connections: \(perLoop)")
            #expect(perLoop.values.sorted() == [4, 4], "\(perLoop)")
        }
    }
}
