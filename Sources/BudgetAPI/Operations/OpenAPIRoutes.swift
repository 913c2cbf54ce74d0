import HTTPServer

/// `GET /openapi.yaml`: the API's contract, as openapi.yaml held it when this binary was built.
///
/// The EmbedOpenAPI plugin (Plugins/) compiles the file into the binary, so the server needs no file beside it.
struct OpenAPIRoutes: Sendable {
    static let path = "/openapi.yaml"
    /// RFC 9512 registers `application/yaml`.
    static let contentType = "application/yaml; charset=utf-8"

    private static let document = Array(embeddedFiles[0].text.utf8)

    func register(in router: inout Router<Database>) {
        router.get(Self.path) { _, _ in
            Response(status: .ok, headers: ["Content-Type": Self.contentType], body: Self.document)
        }
    }
}
