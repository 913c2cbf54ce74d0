import Foundation

// Build tool of the EmbedMigrations plugin: `embed-migrations OUTPUT FILE.sql…` writes OUTPUT, a Swift source
// declaring `embeddedFiles`, each file's name and its text as a string literal, in the order given. Checking
// the names is left to `Migration(fileName:sql:)`, which does it the same way for a folder read at run time.

let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first else {
    FileHandle.standardError.write(Data("usage: embed-migrations OUTPUT FILE.sql…\n".utf8))
    exit(2)
}

/// `text` as a Swift string literal that reads back byte for byte (the checksum is over those bytes): the
/// quote, the backslash and control characters as `\u{…}`, everything else as itself.
func literal(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
        if scalar == "\\" || scalar == "\"" || scalar.value < 0x20 || scalar.value == 0x7F {
            result += "\\u{" + String(scalar.value, radix: 16) + "}"
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result + "\""
}

var source = "// Generated from migrations/*.sql by the EmbedMigrations plugin at build time; do not edit.\n\n"
source += "let embeddedFiles: [(fileName: String, sql: String)] = [\n"
for path in arguments.dropFirst() {
    let url = URL(fileURLWithPath: path)
    let bytes = try [UInt8](Data(contentsOf: url))
    guard let sql = String(validating: bytes, as: UTF8.self) else {
        FileHandle.standardError.write(Data("error: \(path) is not valid UTF-8\n".utf8))
        exit(1)
    }
    source += "    (\(literal(url.lastPathComponent)), \(literal(sql))),\n"
}
source += "]\n"
try Data(source.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
