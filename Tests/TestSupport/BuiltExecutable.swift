import Foundation

/// Finds an executable product of this package that `swift build --build-tests` (and `swift test`)
/// built beside the test bundle.
public enum BuiltExecutable {
    /// `product` beside the running test bundle, else in the package's `.build/debug`.
    public static func path(of product: String) throws -> String {
        let bundleFolder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let packageRoot = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [
            bundleFolder.appendingPathComponent(product).path,
            packageRoot.appendingPathComponent(".build/debug/\(product)").path,
        ]
        guard let found = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw BuiltExecutableError.missing(product: product, searched: candidates)
        }
        return found
    }
}

public enum BuiltExecutableError: Error, CustomStringConvertible {
    case missing(product: String, searched: [String])

    public var description: String {
        switch self {
        case .missing(let product, let searched):
            "the \(product) executable was not found (looked at \(searched.joined(separator: ", "))); "
                + "run `swift build --build-tests` first"
        }
    }
}
