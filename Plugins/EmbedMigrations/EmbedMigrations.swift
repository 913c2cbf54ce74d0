import Foundation
import PackagePlugin

/// Turns the `*.sql` files of the target's own folder (`migrations/`) into a Swift source of that target, so
/// the binary carries its schema and runs from any folder.
///
/// The list is taken afresh whenever SwiftPM plans a build, which it does when the folder gains or loses a
/// file; an edited file reruns the command, since every file is one of its inputs.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        // The target's folder (`Target.directoryURL` needs tools version 6.1).
        let folder = context.package.directoryURL.appending(path: "migrations")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) migrations",
                executable: try context.tool(named: "embed-files").url,
                arguments: [output.path] + files.map(\.path),
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }
}
