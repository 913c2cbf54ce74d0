import Crypto
import CryptoExtras
import Dispatch
import Foundation
import HTTPServer
import Synchronization

/// scrypt password hashes as 0016 keeps them: `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt base64>$<hash base64>`.
///
/// One hash costs N·r·128 bytes and, at the default N = 2^17, r = 8, about a quarter second of CPU: far too
/// long for an event loop or a cooperative thread. So derivations run on Dispatch's global queue, at most
/// `concurrency` at a time (the rest wait their turn, at most `maximumWaiting` of them; beyond that a login is
/// 503 with Retry-After). A stored hash names its own parameters, so raising the default later leaves old
/// hashes verifiable.
///
/// A login for an unknown name is checked against a dummy hash of the same parameters, so it costs the
/// same time as a wrong password and answers the same.
final class PasswordHasher: Sendable {
    /// log2 of scrypt's N for new hashes: 17 by default; tests lower it (`BudgetApp.Options.passwordCost`).
    let logN: Int
    static let blockSize = 8
    static let parallelism = 1
    static let saltBytes = 16
    static let hashBytes = 32
    let concurrency: Int
    static let maximumWaiting = 64

    private struct Permits {
        var free: Int
        var waiting: [CheckedContinuation<Bool, Never>] = []
    }

    private let permits: Mutex<Permits>  // free slots and the waiters for one, guarded by the mutex
    private let dummy: Mutex<String?>  // made on first need, guarded by the mutex

    init(logN: Int = 17, concurrency: Int = max(2, ProcessInfo.processInfo.activeProcessorCount)) {
        self.logN = logN
        self.concurrency = concurrency
        permits = Mutex(Permits(free: concurrency))
        dummy = Mutex(nil)
    }

    /// A new hash of `password` with a fresh random salt.
    func hash(_ password: String) async throws -> String {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<Self.saltBytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let parameters = Parameters(logN: logN, r: Self.blockSize, p: Self.parallelism)
        let derived = try await derive(password, salt: salt, parameters: parameters)
        return
            "$scrypt$ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)$\(Data(salt).base64EncodedString())$\(Data(derived).base64EncodedString())"
    }

    /// Whether `password` is the one `stored` was made from; with no stored hash (an unknown user) it checks
    /// against a dummy of the same cost and answers false.
    func verify(_ password: String, against stored: String?) async throws -> Bool {
        let target: String
        if let stored { target = stored } else { target = try await dummyHash() }
        guard let parsed = Self.parse(target) else {
            _ = try await derive(
                password, salt: Array(repeating: 0, count: Self.saltBytes), parameters: Parameters(logN: logN, r: Self.blockSize, p: Self.parallelism)
            )
            return false
        }
        let derived = try await derive(password, salt: parsed.salt, parameters: parsed.parameters)
        return constantTimeMatches(derived, parsed.hash) && stored != nil
    }

    private func dummyHash() async throws -> String {
        if let made = dummy.withLock({ $0 }) { return made }
        let made = try await hash("not a password: the dummy that unknown names are checked against")
        dummy.withLock { if $0 == nil { $0 = made } }
        return made
    }

    struct Parameters: Equatable {
        let logN: Int
        let r: Int
        let p: Int
    }

    static func parse(_ stored: String) -> (parameters: Parameters, salt: [UInt8], hash: [UInt8])? {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "scrypt" else { return nil }
        var values: [String: Int] = [:]
        for pair in parts[2].split(separator: ",") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, let value = Int(kv[1]) else { return nil }
            values[String(kv[0])] = value
        }
        guard let logN = values["ln"], let r = values["r"], let p = values["p"], (1...24).contains(logN), (1...32).contains(r),
            (1...16).contains(p), let salt = Data(base64Encoded: String(parts[3])),
            let hash = Data(base64Encoded: String(parts[4])), !hash.isEmpty
        else { return nil }
        return (Parameters(logN: logN, r: r, p: p), Array(salt), Array(hash))
    }

    private func derive(_ password: String, salt: [UInt8], parameters: Parameters) async throws -> [UInt8] {
        guard await acquire() else {
            throw Problem(
                .serviceUnavailable, detail: "too many logins at once; retry shortly",
                headers: Headers([("Retry-After", "1")]))
        }
        defer { release() }
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(
                    with: Result {
                        let key = try KDF.Scrypt.deriveKey(
                            from: Array(password.utf8), salt: salt, outputByteCount: Self.hashBytes,
                            rounds: 1 << parameters.logN, blockSize: parameters.r, parallelism: parameters.p)
                        return key.withUnsafeBytes { Array($0) }
                    })
            }
        }
    }

    /// A slot to derive in: at once, or after a running derivation ends; false when too many already wait.
    private func acquire() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer: Bool? = permits.withLock { permits in
                if permits.free > 0 {
                    permits.free -= 1
                    return true
                }
                if permits.waiting.count >= Self.maximumWaiting { return false }
                permits.waiting.append(continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    private func release() {
        let next = permits.withLock { permits -> CheckedContinuation<Bool, Never>? in
            if permits.waiting.isEmpty {
                permits.free += 1
                return nil
            }
            return permits.waiting.removeFirst()
        }
        next?.resume(returning: true)
    }
}

/// Whether two byte arrays are equal, looking at every byte whatever they hold.
func constantTimeMatches(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    var difference: UInt8 = lhs.count == rhs.count ? 0 : 1
    for index in 0..<max(lhs.count, rhs.count) {
        difference |= (index < lhs.count ? lhs[index] : 0) ^ (index < rhs.count ? rhs[index] : 0)
    }
    return difference == 0
}
