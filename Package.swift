// swift-tools-version: 6.0
import PackageDescription

// Dependencies point one way: CLinux ← Sockets ← HTTPServer, CLibPQ + Sockets ← Postgres, and BudgetAPI on top
// of both. Sockets holds descriptors, epoll and the generic event loop (a thread, its task executor and its
// `Reactor`); HTTPServer's connections and Postgres's event-loop connections both run on it. HTTPServer knows
// nothing of budgets; Postgres knows nothing of HTTP. HTTPWire, under HTTPServer, is HTTP's wire format (the
// request, response and problem model and the parsers) with nothing beneath it but JSONText. BudgetCore is the
// budget's pure rules (money, months and days, the list query language, JSON, CSV, collection names, the month
// figures), with nothing beneath it but JSONText: BudgetAPI and BudgetSync both build on it, and the fuzz
// targets build HTTPWire and BudgetCore whole (fuzz/README.md). Migrations holds our schema (migrations/*.sql,
// embedded at build time) for Postgres's generic Migrator. JSONText (the one JSON string escaper) sits under
// HTTPWire, BudgetCore, LogHandlers, BudgetAPI and BudgetSync. The log backends (LogHandlers: text and JSON
// lines, the batching sink) are chosen once, by the executable; no library module depends on them. No SwiftNIO
// anywhere.
let package = Package(
    name: "budget-server",
    // The server runs on Linux and macOS; BudgetSync also builds for the Apple platforms whose apps sync
    // with it (iOS 17 is where SwiftData, the store docs/budgetsync.md wires, begins).
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .executable(name: "budget-server", targets: ["budget-server"]),
        .library(name: "BudgetSync", targets: ["BudgetSync"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // epoll, eventfd and accept4, which Swift's Glibc module leaves out, and a signal sent once the process has exited.
        .target(name: "CLinux"),
        .target(name: "Sockets", dependencies: ["CLinux"]),
        .target(name: "JSONText"),
        // The budget's pure rules, shared by the server, the client library and the fuzz targets: money,
        // months and days, the list query language, JSON and CSV, collection names, month figures.
        .target(name: "BudgetCore", dependencies: ["JSONText"]),
        // HTTP's wire format: the request, response and problem model and the parsers of heads and chunked
        // bodies, with no dependency beyond JSONText, so that the fuzz targets build it alone.
        .target(name: "HTTPWire", dependencies: ["JSONText"]),
        .target(
            name: "HTTPServer",
            dependencies: [
                "HTTPWire",
                "Sockets",
                "JSONText",
                "LogHandlers",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "Postgres",
            dependencies: [
                "CLibPQ",
                "Sockets",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .target(
            name: "LogHandlers",
            dependencies: ["Sockets", "JSONText", .product(name: "Logging", package: "swift-log")]
        ),
        // The schema, migrations/*.sql, compiled into the binary by the EmbedMigrations plugin (which runs
        // embed-files). The target's folder is migrations/ itself, its Swift in migrations/Swift: SwiftPM
        // re-plans the build when a target's folder gains or loses a file, so a new .sql file is embedded
        // without a code change; a folder outside every target would be read once and then go stale.
        .executableTarget(name: "embed-files"),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["embed-files"]),
        // openapi.yaml, served at GET /openapi.yaml, compiled into BudgetAPI the same way.
        .plugin(name: "EmbedOpenAPI", capability: .buildTool(), dependencies: ["embed-files"]),
        .target(
            name: "Migrations", dependencies: ["Postgres"], path: "migrations", sources: ["Swift"],
            plugins: ["EmbedMigrations"]
        ),
        .target(
            name: "LocalPostgres",
            dependencies: ["CLinux", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "BudgetAPI",
            dependencies: [
                "BudgetCore",
                "HTTPServer",
                "Postgres",
                "JSONText",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // scrypt for passwords (docs/households.md); brings only swift-asn1, no SwiftNIO.
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            plugins: ["EmbedOpenAPI"]
        ),
        .executableTarget(
            name: "budget-server",
            dependencies: [
                "BudgetAPI",
                "CLinux",
                "HTTPServer",
                "Postgres",
                "LocalPostgres",
                "LogHandlers",
                "Migrations",
                "Sockets",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The client half of the sync protocol, for apps (docs/budgetsync.md): Foundation, BudgetCore (its money,
        // months and month figures, re-exported) and JSONText, no server module.
        .target(name: "BudgetSync", dependencies: ["BudgetCore", "JSONText"]),
        // The BudgetSync examples (docs/budgetsync.md, Examples): an app's flow each, run against a server
        // seeded from the db.json beside them; BudgetSyncTests run both.
        .target(
            name: "ExampleSupport", dependencies: ["BudgetSync", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "examples/ExampleSupport"),
        .executableTarget(
            name: "example-posts", dependencies: ["BudgetSync", "ExampleSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "examples/posts"),
        .executableTarget(
            name: "example-budget", dependencies: ["BudgetSync", "ExampleSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "examples/budget"),
        .target(
            name: "TestSupport",
            dependencies: ["Postgres", "Migrations", "LocalPostgres", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "SocketsTests", dependencies: ["Sockets"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "LogHandlers", "TestSupport"]),
        .testTarget(name: "LogHandlersTests", dependencies: ["LogHandlers", "TestSupport"]),
        .testTarget(
            name: "PostgresTests",
            dependencies: ["Postgres", "Migrations", "Sockets", "TestSupport", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(name: "LocalPostgresTests", dependencies: ["LocalPostgres", "Postgres", "TestSupport"]),
        .target(
            name: "APITestSupport",
            dependencies: ["BudgetAPI", "BudgetCore", "HTTPServer", "Postgres", "TestSupport", .product(name: "Logging", package: "swift-log")],
            path: "Tests/APITestSupport"
        ),
        .testTarget(name: "BudgetAPITests", dependencies: ["BudgetAPI", "BudgetCore", "HTTPServer", "Postgres", "TestSupport", "APITestSupport"]),
        .testTarget(name: "OperationsTests", dependencies: ["Postgres", "TestSupport"]),
        .testTarget(name: "BudgetSyncTests", dependencies: ["BudgetSync", "BudgetCore", "BudgetAPI", "Postgres", "TestSupport", "APITestSupport"]),
        // bench/sync's client: BudgetSync's pull and push rates against a running server (bench/README.md).
        // BoundedPullMemoryTests run it as a child process, for a memory figure of its own.
        .executableTarget(
            name: "budget-sync-bench",
            dependencies: ["BudgetSync", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "bench/sync-bench"
        ),
    ],
    swiftLanguageModes: [.v6]
)
