import ArgumentParser
import Foundation
import HTTPServer
import LogHandlers
import BudgetAPI
import Migrations
import Postgres
import Logging

/// Picks a setting from a flag, else an environment variable, else a default (docs/configuration.md).
enum Setting {
    static func resolve<Value: LosslessStringConvertible>(
        _ flag: Value?,
        environment name: String,
        default defaultValue: Value
    ) throws -> Value {
        try resolve(flag, environment: name) ?? defaultValue
    }

    static func resolve<Value: LosslessStringConvertible>(_ flag: Value?, environment name: String) throws -> Value? {
        if let flag { return flag }
        guard let text = ProcessInfo.processInfo.environment[name], !text.isEmpty else { return nil }
        guard let value = Value(text) else {
            throw ValidationError("environment variable \(name)=\(text) is not a valid \(Value.self)")
        }
        return value
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Options every command that touches the database shares.
struct DatabaseOptions: ParsableArguments {
    @Option(help: "PostgreSQL URL (env DATABASE_URL). Without one, a private cluster is started under --data-dir.")
    var databaseURL: String?

    @Option(help: "Folder of the embedded PostgreSQL cluster (env BUDGET_DATA_DIR, default ./.budget-data).")
    var dataDir: String?

    @Option(help: "Folder of NNNN_name.sql migrations to apply instead of those built into the binary (env MIGRATIONS_DIR).")
    var migrationsDir: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (env LOG_LEVEL, default info).")
    var logLevel: Logger.Level?

    func resolvedLogLevel() throws -> Logger.Level {
        let name = try Setting.resolve(logLevel?.rawValue, environment: "LOG_LEVEL", default: "info")
        guard let level = Logger.Level(rawValue: name) else {
            let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("LOG_LEVEL=\(name) is not one of \(names)")
        }
        return level
    }

    /// The migrator of the migrations built into the binary, or of the folder `--migrations-dir` names.
    func makeMigrator(logger: Logger) throws -> Migrator {
        let migrations =
            if let path = try Setting.resolve(migrationsDir, environment: "MIGRATIONS_DIR") {
                try Migration.read(from: URL(fileURLWithPath: path))
            } else {
                try EmbeddedMigrations.all()
            }
        return Migrator(migrations: migrations, logger: logger)
    }

    func resolvedDataDirectory() throws -> URL {
        URL(fileURLWithPath: try Setting.resolve(dataDir, environment: "BUDGET_DATA_DIR", default: ".budget-data"))
    }
}

/// How log lines look: text for people, JSON Lines for log collectors (`--log-format`, env LOG_FORMAT).
enum LogFormat: String, CaseIterable, ExpressibleByArgument {
    case text
    case json

    static func resolve(_ flag: LogFormat?) throws -> LogFormat {
        let name = try Setting.resolve(flag?.rawValue, environment: "LOG_FORMAT", default: LogFormat.text.rawValue)
        guard let format = LogFormat(rawValue: name) else {
            throw ValidationError("LOG_FORMAT=\(name) is not one of \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return format
    }
}

/// Sends every log line to standard error at one level and in one format, chosen once at the edge.
func makeLogger(level: Logger.Level, format: LogFormat = .text) -> Logger {
    LoggingSystem.bootstrap { label in
        switch format {
        case .text:
            var handler = TextLogHandler(label: label)
            handler.logLevel = level
            return handler
        case .json:
            var handler = JSONLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
    var logger = Logger(label: "budget-server")
    logger.logLevel = level
    return logger
}

/// `--time-zone`, for the commands that write transactions: what today is (docs/configuration.md).
struct TimeZoneOptions: ParsableArguments {
    @Option(help: "IANA time zone that decides today's date and month=current (env TIME_ZONE, default UTC).")
    var timeZone: String?

    /// The clock of the chosen zone, once PostgreSQL confirmed it knows the name: an unknown zone stops the
    /// command with an error that says so.
    func makeClock(checkingOn connection: Connection) throws -> CivilClock {
        let zone = try Setting.resolve(timeZone, environment: "TIME_ZONE", default: "UTC")
        guard try CivilClock.knows(zone, on: connection) else {
            throw ValidationError(
                "--time-zone (or TIME_ZONE) '\(zone)' is not a time zone PostgreSQL knows; give an IANA name such as UTC, Europe/Berlin or Asia/Tokyo"
            )
        }
        return CivilClock(timeZone: zone)
    }
}
