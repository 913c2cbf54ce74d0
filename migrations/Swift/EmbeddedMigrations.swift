import Postgres

/// The schema's migrations as `migrations/*.sql` held them when this binary was built.
///
/// `embeddedFiles` is generated from migrations/*.sql by the EmbedMigrations plugin (Plugins/), so the binary applies
/// its own schema from any working directory; `--migrations-dir` reads a folder instead.
public enum EmbeddedMigrations {
    /// Every embedded migration; a file not named `NNNN_name.sql` is an error, as it is in a folder.
    public static func all() throws(MigrationError) -> [Migration] {
        try embeddedFiles.map { file throws(MigrationError) in try Migration(fileName: file.fileName, sql: file.text) }
    }
}
