import BudgetCore
import HTTPServer
import Postgres

/// A list request planned against a catalog, and its answer: the page of records with `X-Total-Count` and
/// `Link`, or the 1.x envelope (docs/json-server.md, the query language), held whole when it is small and
/// streamed as its rows arrive when it is not (docs/api.md, Large answers).
struct ListAnswer: Sendable {
    /// How long a list with regular expressions or `q=` may run, so a hostile pattern cannot hold a connection.
    static let patternTimeoutMilliseconds = 2000
    /// A typed list of at most this many records is read whole, by one statement on the event loop's own
    /// connection, as every list was before lists streamed: the common list pays nothing for streaming. A
    /// typed record has bounded fields (docs/api.md), so this holds at most a few megabytes, usually under 200 KB.
    static let probeRows = 1000

    let query: ListQuery
    let plan: ListPlan
    private let url: PageURL
    /// The request's `If-None-Match`, for a 304 decided before any record is read (a weak tag's).
    private let condition: EntityTagCondition?
    private let path: String
    private let maxRows: Int?
    /// JSON, or CSV when the list offers it and `Accept` prefers it.
    let format: ListFormat
    /// Whether the list offers more than JSON, so that its answers depend on `Accept` (`Vary`).
    private let variesByAccept: Bool

    /// - Parameters:
    ///   - maxRows: `--max-rows`, the most records any list answers; nil for no cap.
    ///   - ignoring: query parameters that are not the query language's (a list source's own, such as `month`).
    ///   - formats: what the list answers in, JSON first (`ListFormat`); `Accept` chooses among them.
    init(
        request: Request, catalog: some FieldCatalog, maxRows: Int? = nil, ignoring: Set<String> = [], formats: [ListFormat] = [.json]
    ) throws {
        format = ListFormat(request, among: formats)
        variesByAccept = formats.count > 1
        if format == .csv, request.query.contains(where: { $0.name == "_embed" || $0.name == "_expand" }) {
            throw APIError.malformedQuery(
                "_embed and _expand nest records, which CSV cannot hold: leave them out, or ask for JSON (Accept: application/json)")
        }
        query = try ListQuery.parse(ignoring.isEmpty ? request.query : request.query.filter { !ignoring.contains($0.name) })
        plan = try ListPlan(query, catalog: catalog, maxRows: maxRows)
        url = PageURL(request)
        condition = try request.entityTagCondition("If-None-Match")
        path = request.path
        self.maxRows = maxRows
    }

    /// What the answer's content depends on besides the data: the parts of its weak tag (`ListValidator`).
    /// Described only where a weak tag is made (a streamed list, or a probe asked with `If-None-Match`):
    /// `String(reflecting:)` walks the query by reflection, which the common small list need not pay for.
    /// A CSV answer's tag names its format too, so that it never matches the same list's JSON; JSON's is as
    /// it was before lists answered CSV.
    private var identity: [String] {
        let common = [path, String(reflecting: query), "\(maxRows ?? 0)", "\(StreamSettings.bufferedBytes)", url.origin]
        return format == .csv ? common + [CSVText.mediaType] : common
    }

    /// The statement that reads a typed list whole if it has at most `probeRows` records, with the layout of its
    /// rows: `ListPlan.selectPage`'s one level with the header as InitPlans, or for the envelope (whose OFFSET
    /// needs the total) `ListPlan.selectRows`. The data version is one more header column when the request holds
    /// an entity tag that could be a streamed list's weak one. Its results are binary (bench/README.md, The list).
    func probe(_ record: PlainRecord, _ target: ListTarget) -> Probe {
        let version = wantsVersion ? ChangeFeedQueries.dataVersion(target.ledger) : nil
        guard !plan.isEnvelope else { return fullProbe(record, target) }
        var header: [Query] = [ChangeFeedQueries.position(target.ledger)]
        var layout = ProbeLayout(position: 0, first: 1)
        if plan.pagination != .none {
            layout.total = header.count
            header.append(plan.totalColumn(from: target.source, scope: target.scope))
        }
        // A row of the page proves its owner (ListOwner.isImpliedByRows); an empty page asks `fullProbe`.
        if let owner = target.owner, !owner.isImpliedByRows {
            layout.owner = header.count
            header.append("(\(owner.exists))")
        }
        if let version {
            layout.version = header.count
            header.append(version)
        }
        layout.first = header.count
        let statement = plan.selectPage(
            columns: record.columns, from: target.source, scope: target.scope, tieBreak: target.tieBreak, header: header,
            limit: Self.probeRows + 1)
        return Probe(statement: statement.inBinary(), layout: layout, answersEmptyPage: false)
    }

    /// `ListPlan.selectRows`: a row even for an empty page, so the header always arrives (total, position,
    /// ownerExists, [version], then the record's columns). What `probe` falls back on when its page is empty.
    func fullProbe(_ record: PlainRecord, _ target: ListTarget) -> Probe {
        let statement = plan.selectRows(
            columns: record.columns, from: target.source, scope: target.scope, tieBreak: target.tieBreak, ledger: target.ledger,
            ownerExists: target.owner?.exists ?? "TRUE", limit: Self.probeRows + 1,
            version: wantsVersion ? ChangeFeedQueries.dataVersion(target.ledger) : nil)
        let layout = ProbeLayout(total: 0, position: 1, owner: 2, version: wantsVersion ? 3 : nil, first: wantsVersion ? 4 : 3)
        return Probe(statement: statement.inBinary(), layout: layout, answersEmptyPage: true)
    }

    /// A typed list: the query language over the source's members, without the parameters the source took.
    init(request: Request, source: ListSource, maxRows: Int? = nil, formats: [ListFormat] = [.json]) throws {
        try self.init(request: request, catalog: source.shape.catalog, maxRows: maxRows, ignoring: source.parameters, formats: formats)
    }

    /// Whether the request's `If-None-Match` names a tag at all: only then is the data version worth reading
    /// in the probe.
    private var wantsVersion: Bool {
        if case .tags = condition { true } else { false }
    }

    /// The answer from a probe's rows, or nil when the list has more than `probeRows` records (then it is read
    /// through a cursor: `start`). Throws the owner's error when the statement says it does not exist. Call it
    /// with a result that has a row: an empty one-level page asks `fullProbe` first.
    func probed(_ result: QueryResult, _ layout: ProbeLayout, _ record: PlainRecord, _ target: ListTarget) throws -> Response? {
        let row = result[0]
        if let owner = target.owner, let column = layout.owner, try !row.decode(Bool.self, at: column) { throw owner.missing }
        let total = try layout.total.map { Int(try row.decode(Int64.self, at: $0)) } ?? 0
        let syncSeq = try row.decode(Int64.self, at: layout.position)
        guard result.count <= Self.probeRows else {
            guard let column = layout.version else { return nil }
            let tag = ListValidator.tag(identity: identity, version: try row.decode(String.self, at: column))
            return isNotModified(tag) ? notModified(head(total: total, syncSeq: syncSeq), tag: tag) : nil
        }
        var response = head(total: total, syncSeq: syncSeq)
        switch format {
        case .json:
            response.body = ListResponse.body(total: total, pagination: plan.pagination, data: record.jsonArray(result, from: layout.first))
        // CSV holds the records alone: the envelope's numbers have no place in it (docs/api.md, CSV).
        case .csv: response.body = record.csv(result, from: layout.first)
        }
        return response
    }

    /// Begins the answer on `connection`, in the snapshot of `Database.streamedAnswer`'s transaction: the header
    /// (count, feed position, data version, owner) in one statement, then a cursor over the records.
    func start(_ target: ListTarget, on connection: Connection) throws -> StreamedStart {
        if plan.usesPatterns {
            // SET LOCAL ends with the transaction; every FETCH is a statement of its own, each under the timeout.
            try connection.execute("SET LOCAL statement_timeout = \(literal: Self.patternTimeoutMilliseconds)")
        }
        let header = try connection.query(headerStatement(target))[0]
        if let owner = target.owner, try !header.decode(Bool.self, at: 3) { throw owner.missing }
        let total = Int(try header.decode(Int64.self, at: 0))
        let head = head(total: total, syncSeq: try header.decode(Int64.self, at: 1))
        let tag = ListValidator.tag(identity: identity, version: try header.decode(String.self, at: 2))
        if isNotModified(tag) { return .answer(notModified(head, tag: tag)) }
        let rows = rowsStatement(target, total: total)
        let source: ListRows
        if format == .csv, case .plain(let record) = target.element {
            let table = try target.lookup.map { try CellTable(connection.query($0.query), member: $0.member) }
            let cursor = try Cursor("budget_list", for: rows, on: connection)
            source = ListRows(cursor: cursor, element: target.element, opening: record.csvHeader, closing: [], csv: CSVRows(table: table))
        } else {
            let cursor = try Cursor("budget_list", for: rows, on: connection)
            let (opening, closing) = ListResponse.wrapping(total: total, pagination: plan.pagination)
            source = ListRows(
                cursor: cursor, element: target.element, opening: opening + [UInt8(ascii: "[")], closing: [UInt8(ascii: "]")] + closing)
        }
        return .body(head, weakTag: tag, source: source)
    }

    /// The statement of `start`'s header: total, feed position, data version, ownerExists.
    func headerStatement(_ target: ListTarget) -> Query {
        plan.selectHeader(from: target.source, scope: target.scope, ledger: target.ledger, ownerExists: target.owner?.exists ?? "TRUE")
    }

    /// The statement `start`'s cursor reads the records with, given the `total` its header counted.
    func rowsStatement(_ target: ListTarget, total: Int) -> Query {
        let columns: Query =
            switch target.element {
            case .plain(let record): record.columns
            case .rendered(let element): "(\(element))::text"
            }
        return plan.selectCursorRows(
            columns: columns, from: target.source, scope: target.scope, tieBreak: target.tieBreak, offset: plan.offset(total: total))
    }

    /// The answer's status and headers, without a body: `Content-Type`, `Vary`, `X-Sync-Seq`, `X-Total-Count`, `Link`.
    private func head(total: Int, syncSeq: Int64) -> Response {
        var response = Response.json([])
        if format == .csv { response.headers.replaceOrAdd("Content-Type", CSVText.contentType) }
        // RFC 9110 §12.5.5: the representation depends on Accept, for caches and for a 304 (§15.4.5).
        if variesByAccept { response.headers.add("Vary", "Accept") }
        response.syncSeq = syncSeq
        for header in ListResponse.headers(total: total, pagination: plan.pagination, limit: plan.limit, url: url) {
            response.headers.replaceOrAdd(header.name, header.value)
        }
        return response
    }

    private func isNotModified(_ tag: EntityTag) -> Bool {
        ListValidator.isNotModified(condition, tag: tag)
    }

    private func notModified(_ head: Response, tag: EntityTag) -> Response {
        ListValidator.notModified(head, tag: tag)
    }
}

/// Which rows a list answers and how each becomes JSON: the pieces its statements are made of.
struct ListTarget: Sendable {
    /// What the list answers per record.
    var element: ListElement
    /// The FROM list, e.g. `documents d`; bound values welcome.
    var source: Query
    /// Which rows belong to the list at all, e.g. `d.ledger_id = \(ledger) AND d.collection = \(name)`; bound
    /// values welcome. It names the ledger: every row of `source` may be any ledger's.
    var scope: Query
    /// The ledger whose feed position (`X-Sync-Seq`) and data version the answer reports.
    var ledger: LedgerID
    /// The default order, which also breaks ties of `_sort`, e.g. `d.position`.
    var tieBreak: Query
    /// For a nested list, whether its parent exists and what to throw when it does not, answered by the
    /// list's own statement, so a 404 costs no extra round trip.
    var owner: ListOwner?
    /// For CSV, text read once per answer for a member (`CellLookup`); such a list is always read in one
    /// snapshot through `start`, never by the probe.
    var lookup: CellLookup?
}

/// How a list's cursor rows become CSV: with the text a `CellLookup` read, if any.
struct CSVRows {
    var table: CellTable?
}

/// The parent of a nested list.
struct ListOwner: Sendable {
    /// A boolean SQL expression, e.g. `EXISTS (SELECT 1 FROM categories WHERE id = 7)`.
    var exists: Query
    var missing: any Error & Sendable
    /// Whether any row of the list proves that the owner exists, as a child's foreign key to it does (not
    /// deferrable, so every snapshot holds it): the one-level probe then checks the owner only when its page is
    /// empty (`ListAnswer.probe`).
    var isImpliedByRows = false
}

/// Which columns of a probe's rows hold the header, and where the record's columns start.
struct ProbeLayout {
    /// The number of matching records (bigint); none when the answer reports no total (it is then 0).
    var total: Int?
    /// The change feed position (bigint), for `X-Sync-Seq`.
    var position: Int
    /// Whether the owner exists (boolean); none when there is no owner to check.
    var owner: Int?
    /// The data version of a weak `ETag` (text).
    var version: Int?
    var first: Int
}

/// A statement that reads a typed list whole, and how to read its rows.
struct Probe {
    let statement: Query
    let layout: ProbeLayout
    /// Whether an empty page still answers a row with the header (`ListAnswer.fullProbe`).
    let answersEmptyPage: Bool
}

/// What a list answers per record: plain columns that Swift renders, or JSON that SQL rendered.
///
/// Typed lists are plain but for `_embed`/`_expand`, rare enough to leave in SQL with their nested records;
/// generic collections pass their stored JSON through.
enum ListElement: Sendable {
    case plain(PlainRecord)
    /// SQL for one record's JSON over the list's source, e.g. `d.body`; bound values welcome.
    case rendered(Query)
}

/// A list's records read through its cursor, rendered a batch at a time: the JSON array (inside the
/// envelope's members when there is one), or CSV rows after their header row, never more than one batch of
/// it in memory.
///
/// `@unchecked Sendable` as every `ChunkSource`: one job at a time, in order.
final class ListRows: ChunkSource, @unchecked Sendable {
    private var cursor: Cursor
    private let element: ListElement
    /// What comes before the first record, sent with the first piece.
    private var opening: [UInt8]
    private let closing: [UInt8]
    /// Set when the plain records are CSV rows, each ending with its CRLF, rather than a JSON array's elements.
    private let csv: CSVRows?
    private var hasRecords = false
    private var isComplete = false

    init(cursor: Cursor, element: ListElement, opening: [UInt8], closing: [UInt8], csv: CSVRows? = nil) {
        self.cursor = cursor
        self.element = element
        self.opening = opening
        self.closing = closing
        self.csv = csv
    }

    func next(on connection: Connection) throws -> [UInt8]? {
        guard !isComplete else { return nil }
        var piece = opening
        opening = []
        if let rows = try cursor.fetch(on: connection) {
            piece.reserveCapacity(piece.count + rows.valueBytes + rows.count * 64)
            if let csv, case .plain(let record) = element {
                for row in rows { record.appendCSV(row, from: 0, to: &piece, table: csv.table) }
            } else {
                for row in rows {
                    if hasRecords { piece.append(UInt8(ascii: ",")) }
                    hasRecords = true
                    switch element {
                    case .plain(let record): record.append(row, from: 0, to: &piece)
                    case .rendered: row.withBytes(at: 0) { piece.append(contentsOf: $0 ?? UnsafeRawBufferPointer(start: nil, count: 0)) }
                    }
                }
            }
        }
        if cursor.isExhausted {
            isComplete = true
            piece += closing
        }
        return piece
    }
}

extension Database {
    /// Answers a list: a typed list without patterns first tries to read itself whole in one statement on the
    /// event loop's own connection (`ListAnswer.probeRows`); anything else, and a typed list with more records,
    /// is read through a cursor on the stream pool and streamed when it is large (`streamedAnswer`).
    func list(_ answer: ListAnswer, _ target: ListTarget) async throws -> Response {
        if case .plain(let record) = target.element, !answer.plan.usesPatterns, !isInTransaction, target.lookup == nil || answer.format != .csv {
            var probe = answer.probe(record, target)
            var result = try await query(probe.statement)
            if result.isEmpty, !probe.answersEmptyPage {
                // No row, no header: the statement that always answers one, in a snapshot of its own.
                probe = answer.fullProbe(record, target)
                result = try await query(probe.statement)
            }
            if let response = try answer.probed(result, probe.layout, record, target) { return response }
        }
        return try await streamedAnswer { connection in try answer.start(target, on: connection) }
    }

    /// Answers a typed list of `source`'s records within its scope (its ledger's) and `scope` (see the other `list`).
    func list(_ answer: ListAnswer, from source: ListSource, scope: Query? = nil, owner: ListOwner? = nil) async throws -> Response {
        let rows: Query = scope.map { "\(source.scope) AND (\($0))" } ?? source.scope
        return try await list(
            answer,
            ListTarget(
                element: source.element, source: source.from, scope: rows, ledger: ledger, tieBreak: source.tieBreak, owner: owner,
                lookup: source.lookup))
    }
}
