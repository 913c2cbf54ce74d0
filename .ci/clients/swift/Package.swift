// swift-tools-version: 6.1
import PackageDescription

// A Swift client generated from budget-server's openapi.yaml, and one app's flow through it (docs/clients.md).
// .ci/clients copies this folder and openapi.yaml into a scratch folder and builds it there: the generated code
// (the OpenAPIGenerator build plugin's output) never enters the repository.
let package = Package(
    name: "budget-client-flow",
    platforms: [.macOS(.v14), .iOS(.v17)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // openapi.yaml and openapi-generator-config.yaml beside the Swift source; the plugin generates the rest.
        .target(
            name: "BudgetClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .executableTarget(
            name: "ClientFlow",
            dependencies: [
                "BudgetClient",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
