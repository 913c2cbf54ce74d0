import Foundation

/// Runs blocking work (process spawning, libpq) on its own thread instead of Swift's cooperative pool.
public func runOffCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
