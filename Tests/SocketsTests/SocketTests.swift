import Sockets
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct SocketTests {
    @Test func listenerOnPortZeroReportsTheBoundPort() throws {
        let listener = try Socket.listen(on: SocketAddress(host: "127.0.0.1", port: 0))
        defer { listener.close() }
        let address = try listener.localAddress()
        #expect(address.port > 0)
        #expect(address.description == "127.0.0.1:\(address.port)")
        #expect(try listener.accept() == nil)
    }

    @Test func acceptReadAndSendThroughEpoll() throws {
        let listener = try Socket.listen(on: SocketAddress(host: "127.0.0.1", port: 0))
        defer { listener.close() }
        let epoll = try Epoll()
        defer { epoll.close() }
        try epoll.add(listener.descriptor, for: .readable)
        let client = try Socket.connect(to: SocketAddress(host: "localhost", port: try listener.localAddress().port))
        defer { client.close() }
        try client.setReceiveTimeout(milliseconds: 2000)

        let ready = Epoll.ReadyList(capacity: 8)
        try epoll.wait(into: ready, timeoutMilliseconds: 2000)
        #expect(ready.count == 1)
        #expect(ready[0].descriptor == listener.descriptor)
        let server = try #require(try listener.accept())
        defer { server.close() }
        try server.setNoDelay()

        var scratch = [UInt8](repeating: 0, count: 16)
        #expect(try scratch.withUnsafeMutableBytes { try server.read(into: $0) } == .wouldBlock)
        _ = try Array("ping".utf8).withUnsafeBytes { try client.send($0) }
        try epoll.add(server.descriptor, for: .readable)
        try epoll.wait(into: ready, timeoutMilliseconds: 2000)
        #expect(ready[0].descriptor == server.descriptor && ready[0].events.contains(.readable))
        #expect(try scratch.withUnsafeMutableBytes { try server.read(into: $0) } == .bytes(4))
        #expect(String(decoding: scratch[..<4], as: UTF8.self) == "ping")

        #expect(try Array("pong".utf8).withUnsafeBytes { try server.send($0) } == 4)
        #expect(try scratch.withUnsafeMutableBytes { try client.read(into: $0) } == .bytes(4))
        try server.shutdownWrite()
        #expect(try scratch.withUnsafeMutableBytes { try client.read(into: $0) } == .endOfStream)
    }

    @Test func sendToAClosedPeerThrowsInsteadOfRaisingSIGPIPE() throws {
        let listener = try Socket.listen(on: SocketAddress(host: "127.0.0.1", port: 0))
        defer { listener.close() }
        let client = try Socket.connect(to: SocketAddress(host: "127.0.0.1", port: try listener.localAddress().port))
        var accepted: Socket?
        for _ in 0..<100 where accepted == nil {
            accepted = try listener.accept()
            if accepted == nil { usleep(10_000) }
        }
        let server = try #require(accepted)
        defer { server.close() }
        client.close()
        let payload = [UInt8](repeating: 1, count: 64 * 1024)
        let error = #expect(throws: SocketError.self) {
            for _ in 0..<100 { _ = try payload.withUnsafeBytes { try server.send($0) }; usleep(1000) }
        }
        #expect(error?.errno == EPIPE || error?.errno == ECONNRESET)
    }

    @Test func eventNotifierWakesAWaitingEpoll() throws {
        let epoll = try Epoll()
        defer { epoll.close() }
        let notifier = try EventNotifier()
        defer { notifier.close() }
        try epoll.add(notifier.descriptor, for: .readable)
        let ready = Epoll.ReadyList()
        try epoll.wait(into: ready, timeoutMilliseconds: 0)
        #expect(ready.count == 0)
        try notifier.notify()
        try notifier.notify()
        try epoll.wait(into: ready, timeoutMilliseconds: 1000)
        #expect(ready.count == 1 && ready[0].descriptor == notifier.descriptor)
        try notifier.drain()
        try epoll.wait(into: ready, timeoutMilliseconds: 0)
        #expect(ready.count == 0)
    }

    @Test func addressesParseAndFailWithTypedErrors() throws {
        #expect(try SocketAddress(host: "::1", port: 8080).description == "[::1]:8080")
        let error = #expect(throws: SocketError.self) { try SocketAddress(host: "not-an-ip", port: 1) }
        #expect(error?.errno == EINVAL)
        #expect(error?.description.contains("inet_pton") == true)
        let taken = try Socket.listen(on: SocketAddress(host: "127.0.0.1", port: 0))
        defer { taken.close() }
        let clash = #expect(throws: SocketError.self) {
            try Socket.listen(on: SocketAddress(host: "127.0.0.1", port: try taken.localAddress().port))
        }
        #expect(clash?.errno == EADDRINUSE)
    }
}
