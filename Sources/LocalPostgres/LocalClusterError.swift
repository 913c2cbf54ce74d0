/// Why a private PostgreSQL cluster could not be prepared, started or stopped.
public enum LocalClusterError: Error, CustomStringConvertible, Sendable {
    /// No folder holding both `initdb` and `pg_ctl` was found.
    case postgresNotInstalled(searched: [String])
    /// A program next to `pg_ctl` (such as `createdb`) is missing.
    case programMissing(name: String, directory: String)
    /// The Unix socket path would exceed the kernel's limit for `sun_path`.
    case socketPathTooLong(path: String, limit: Int)
    /// Running as root, but there is no `postgres` OS user to run the server as.
    case postgresUserMissing
    /// The `postgres` OS user cannot reach the cluster folder: `blockedFolder` above it denies search (x) permission,
    /// or, when nil, the folder itself cannot be written.
    case directoryNotAccessible(path: String, blockedFolder: String?)
    /// A PostgreSQL program exited with a failure status.
    case commandFailed(command: String, status: Int32, output: String)

    public var description: String {
        switch self {
        case .postgresNotInstalled(let searched):
            return "PostgreSQL server programs (initdb, pg_ctl) were not found. Searched: "
                + searched.joined(separator: ", ")
                + ". Install them (Debian/Ubuntu: `apt-get install postgresql`) or set DATABASE_URL to an existing server."
        case .programMissing(let name, let directory):
            return "\(name) was not found in \(directory); install the PostgreSQL client programs (`apt-get install postgresql-client`)."
        case .socketPathTooLong(let path, let limit):
            return "the cluster folder's path is too long for a Unix socket: \(path) is \(path.utf8.count) bytes, "
                + "the limit is \(limit). Choose a shorter folder."
        case .postgresUserMissing:
            return "running as root, but there is no `postgres` OS user to run PostgreSQL as (PostgreSQL refuses to run as root). "
                + "Install the postgresql package, which creates it, or run as an ordinary user."
        case .directoryNotAccessible(let path, let blockedFolder?):
            return "the postgres OS user (PostgreSQL's user when started as root) cannot enter \(blockedFolder), "
                + "so it cannot reach \(path): \(blockedFolder) lacks search (x) permission for it. "
                + "Allow it (`setfacl -m u:postgres:x \(blockedFolder)` or `chmod o+x \(blockedFolder)`), "
                + "or choose a --data-dir outside \(blockedFolder)."
        case .directoryNotAccessible(let path, nil):
            return "the postgres OS user (PostgreSQL's user when started as root) cannot write \(path)."
        case .commandFailed(let command, let status, let output):
            return "`\(command)` failed with status \(status): \(output)"
        }
    }
}
