import Synchronization

/// Request ids: a client's sane `X-Request-Id` is echoed, otherwise one is made up cheaply.
package enum RequestID {
    /// Eight random hex digits chosen once per process, so ids from two runs do not collide.
    private static let prefix: String = {
        let random = UInt32.random(in: .min ... .max)
        let hex = String(random, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }()

    private static let counter = Atomic<UInt64>(0)

    /// A new id such as `"3fa2c91b-42"`: the process prefix and a counter, no syscall, no lock.
    package static func make() -> String {
        let next = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return prefix + "-" + String(next)
    }

    /// The client's id when it is 1–200 visible ASCII characters, so it is safe to log and echo.
    package static func sanitized(_ value: String?) -> String? {
        guard let value, (1...200).contains(value.utf8.count),
            value.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else { return nil }
        return value
    }
}
