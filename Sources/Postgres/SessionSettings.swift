/// The settings every connection of ours runs with, whichever way it connects (docs/operations.md,
/// "PostgreSQL settings").
///
/// `TimeZone` and `DateStyle` fix the text PostgreSQL prints, so `Timestamp` and `PostgresDate` always
/// parse it. `jit` is off: our statements are short, and compiling one costs more than it saves. A
/// change-feed page of 1000 changes (estimated just above `jit_above_cost`) took 38 ms of PostgreSQL's
/// CPU with JIT and 13 ms without.
enum SessionSettings {
    static let values: [(name: String, value: String)] = [
        ("TimeZone", "UTC"),
        ("DateStyle", "ISO,YMD"),
        ("jit", "off"),
    ]

    /// `SET name TO 'value';` for each, for a connection that is already open.
    static var statements: String {
        values.map { "SET \($0.name) TO '\($0.value)';" }.joined(separator: " ")
    }

    /// `-c name=value` for each, for libpq's `options` at connection start (the values hold no spaces).
    static var startupOptions: String {
        values.map { "-c \($0.name)=\($0.value)" }.joined(separator: " ")
    }
}
