import Foundation
import PackagePlugin

/// Turns the package's openapi.yaml into a Swift source of the target, so that `GET /openapi.yaml` serves the
/// contract the binary was built with, from any folder.
///
/// The file is the command's one input: editing it reruns the command.
@main
struct EmbedOpenAPI: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let document = context.package.directoryURL.appending(path: "openapi.yaml")
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedOpenAPI.swift")
        let tool = try context.tool(named: "embed-files").url
        return [
            .buildCommand(
                displayName: "Embedding openapi.yaml", executable: tool, arguments: [output.path, document.path],
                inputFiles: [document], outputFiles: [output]
            )
        ]
    }
}
