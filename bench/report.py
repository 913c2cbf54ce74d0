#!/usr/bin/env python3
"""Prints bench/run's markdown report: us beside the peers, and every target met or missed.

  report.py RESULTS_TSV EXTRA_TSV RSS_TSV FACTS

RESULTS_TSV and RSS_TSV are the peers harness's own files (one row per system and request; peak RSS per
system in whole MiB). EXTRA_TSV has the same columns, for the runs bench/run adds itself (the
synchronous_commit=off POST runs, pgbench on our own SQL, the change-feed probe run). FACTS holds one
"key<TAB>value" per line (date, revision, our exact peak RSS, the feed latency, ...).

CPU columns of the TSVs are average cores busy during the measured run; per request they become
cores × 10⁶ / req/s microseconds.
"""
import csv
import sys

REQUESTS = [
    ("health", "GET /health"),
    ("category", "GET /categories/:id"),
    ("transactions", "GET /categories/:id/transactions"),
    ("post", "POST /categories/:id/transactions"),
]
SWIFT_PEERS = [("hummingbird", "Hummingbird"), ("flyingfox", "FlyingFox")]
# The month reads bench/run adds (#20), ours ("ours-months") beside pgbench on the plainest SQL that
# answers the same figures ("pgbench-months"), on the data spread over 12 months.
MONTH_REQUESTS = [("categories_month", "GET /categories?month=current"), ("month", "GET /months/{month}")]
MONTH_PG_RATIO_MAX = 1.5  # our PostgreSQL µs/req ÷ pgbench's on the plainest SQL
# Targets (bench/README.md): server CPU µs per request, by request.
SERVER_US_TARGET = {"category": 60, "transactions": 140, "post": 120}
PG_RATIO_MAX = 1.25      # our PostgreSQL µs/req ÷ pgbench's on the plain SQL
PEER_RATIO_MIN = 1.3     # our req/s ÷ the best Swift peer's
POST_RATIO_MIN = 0.5     # our POST req/s ÷ pgbench's plain-SQL POST tps
HEALTH_RATIO_MIN = 0.9   # our /health req/s ÷ nginx's
RSS_MAX_MIB = 30


def rows(path):
    try:
        return {(r["system"], r["endpoint"]): r for r in csv.DictReader(open(path), delimiter="\t")}
    except OSError:
        return {}


def num(r, key):
    try:
        return float(r[key]) if r and r.get(key) else None
    except ValueError:
        return None


def rps(r):
    return num(r, "rps")


def per_req(r, key):
    """CPU µs per request from cores busy and req/s."""
    cores, rate = num(r, key), rps(r)
    return cores * 1e6 / rate if cores is not None and rate else None


def other_cores(r):
    parts = [num(r, k) or 0.0 for k in ("server_cpu", "pg_cpu", "client_cpu")]
    machine = num(r, "machine_cpu")
    return None if machine is None else max(0.0, machine - sum(parts))


def f0(v):
    return "–" if v is None else f"{v:,.0f}"


def f1(v):
    return "–" if v is None else f"{v:.1f}"


def f2(v):
    return "–" if v is None else f"{v:.2f}"


def verdict(ok):
    return "–" if ok is None else ("met" if ok else "**missed**")


def main():
    results, extra = rows(sys.argv[1]), rows(sys.argv[2])
    rss = {}
    try:
        for line in open(sys.argv[3]):
            name, mib = line.split()
            rss[name] = mib
    except OSError:
        pass
    facts = {}
    for line in open(sys.argv[4]):
        key, _, value = line.rstrip("\n").partition("\t")
        facts[key] = value
    by = dict(results)
    by.update(extra)
    get = lambda system, ep: by.get((system, ep))

    print(f"## bench/run {facts.get('seconds', '?')} — {facts.get('date', '')} — {facts.get('revision', '')}")
    print()
    print(f"wrk -t1 -c{facts.get('conns', '64')} for {facts.get('seconds', '?')} s after a warm-up, random ids 1…200, on "
          f"{facts.get('cpus', '?')} cores; one PostgreSQL for every system; each system loaded with the same "
          f"200 categories × 50 transactions. pgbench runs the plain SQL of each answer (-M prepared, same "
          f"client count). Our server: log level {facts.get('log_level', 'info')}, pool size {facts.get('pool_size', '?')}.")
    print()

    # ------------------------------------------------------------------ side by side
    print("| request | ours req/s | Hummingbird | FlyingFox | pgbench (plain SQL) | nginx | ours p50 / p99 ms | ours errors "
          "| ours server µs/req | ours pg µs/req | pgbench pg µs/req | other cores (noise) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    lines = REQUESTS + [("post-async", "POST, synchronous_commit=off")]
    for ep, label in lines:
        base = "post" if ep == "post-async" else ep
        ours = get("ours-async" if ep == "post-async" else "ours", base)
        pgb = get("pgbench-async" if ep == "post-async" else "pgbench", base)
        peers = ["–", "–"] if ep == "post-async" else [f0(rps(get(s, base))) for s, _ in SWIFT_PEERS]
        ngx = f0(rps(get("nginx", base))) if ep != "post-async" else "–"
        lat = f"{ours['p50_ms']} / {ours['p99_ms']}" if ours else "–"
        print(f"| `{label}` | {f0(rps(ours))} | {peers[0]} | {peers[1]} | {f0(rps(pgb))} | {ngx} | {lat} | "
              f"{ours['errors'] if ours else '–'} | {f1(per_req(ours, 'server_cpu'))} | {f1(per_req(ours, 'pg_cpu'))} | "
              f"{f1(per_req(pgb, 'pg_cpu'))} | {f2(other_cores(ours))} |")
    print()

    # ------------------------------------------------------------------ months
    if any(get("ours-months", ep) for ep, _ in MONTH_REQUESTS):
        print("Month reads, on the same data spread over the 12 months up to this one (a quarter of the categories "
              "rolling over, some month budgets): ours beside pgbench on the plainest SQL that answers the same "
              "figures (bench/sql/plain-*.sql) and on our own statements (bench/sql/categories-month.sql, month.sql).")
        print()
        print("| request | ours req/s | ours p50 / p99 ms | ours errors | ours server µs/req | ours pg µs/req "
              "| pgbench plain tps | plain pg µs/tx | pgbench own-SQL tps | own-SQL pg µs/tx | other cores (noise) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for ep, label in MONTH_REQUESTS:
            ours, plain, own = get("ours-months", ep), get("pgbench-months", ep), get("pgbench-ours-sql", ep)
            lat = f"{ours['p50_ms']} / {ours['p99_ms']}" if ours else "–"
            print(f"| `{label}` | {f0(rps(ours))} | {lat} | {ours['errors'] if ours else '–'} | "
                  f"{f1(per_req(ours, 'server_cpu'))} | {f1(per_req(ours, 'pg_cpu'))} | {f0(rps(plain))} | "
                  f"{f1(per_req(plain, 'pg_cpu'))} | {f0(rps(own))} | {f1(per_req(own, 'pg_cpu'))} | {f2(other_cores(ours))} |")
        print()

    # ------------------------------------------------------------------ targets
    checks = []   # (request, measure, value text, target text, ok)
    for ep, label in REQUESTS:
        ours, pgb, ngx = get("ours", ep), get("pgbench", ep), get("nginx", ep)
        if ours is None:
            checks.append((label, "ours ran", "no row", "a row", False))
            continue
        errors = int(float(ours.get("errors") or 0))
        if errors:
            checks.append((label, "errors (non-2xx, socket)", str(errors), "0", False))
        if ep == "health":
            r = rps(ours) / rps(ngx) if rps(ngx) else None
            checks.append((label, "req/s ÷ nginx", f2(r), f"≥ {HEALTH_RATIO_MIN}", None if r is None else r >= HEALTH_RATIO_MIN))
        else:
            ours_pg, plain_pg = per_req(ours, "pg_cpu"), per_req(pgb, "pg_cpu")
            r = ours_pg / plain_pg if ours_pg is not None and plain_pg else None
            checks.append((label, "PostgreSQL µs/req ÷ pgbench plain", f"{f2(r)} ({f1(ours_pg)} / {f1(plain_pg)})",
                           f"≤ {PG_RATIO_MAX}", None if r is None else r <= PG_RATIO_MAX))
        best = max(((rps(get(s, ep)) or 0, name) for s, name in SWIFT_PEERS), default=(0, ""))
        r = rps(ours) / best[0] if best[0] else None
        checks.append((label, f"req/s ÷ best Swift peer ({best[1] or 'none ran'})", f2(r), f"≥ {PEER_RATIO_MIN}",
                       None if r is None else r >= PEER_RATIO_MIN))
        if ep == "post":
            r = rps(ours) / rps(pgb) if rps(pgb) else None
            checks.append((label, "req/s ÷ pgbench plain tps", f2(r), f"≥ {POST_RATIO_MIN}",
                           None if r is None else r >= POST_RATIO_MIN))
        if ep in SERVER_US_TARGET:
            us = per_req(ours, "server_cpu")
            checks.append((label, "server CPU µs/req", f1(us), f"≤ {SERVER_US_TARGET[ep]}",
                           None if us is None else us <= SERVER_US_TARGET[ep]))
    for ep, label in MONTH_REQUESTS:
        ours, plain = get("ours-months", ep), get("pgbench-months", ep)
        if ours is None:
            continue
        errors = int(float(ours.get("errors") or 0))
        if errors:
            checks.append((label, "errors (non-2xx, socket)", str(errors), "0", False))
        ours_pg, plain_pg = per_req(ours, "pg_cpu"), per_req(plain, "pg_cpu")
        r = ours_pg / plain_pg if ours_pg is not None and plain_pg else None
        checks.append((label, "PostgreSQL µs/req ÷ pgbench plainest SQL", f"{f2(r)} ({f1(ours_pg)} / {f1(plain_pg)})",
                       f"≤ {MONTH_PG_RATIO_MAX}", None if r is None else r <= MONTH_PG_RATIO_MAX))
    peak = facts.get("ours_hwm_kib")
    peak_mib = int(peak) / 1024 if peak else (float(rss["ours"]) if "ours" in rss else None)
    checks.append(("all four, c64", "peak RSS MiB (VmHWM)", f1(peak_mib), f"≤ {RSS_MAX_MIB}",
                   None if peak_mib is None else peak_mib <= RSS_MAX_MIB))

    met = sum(1 for c in checks if c[4] is True)
    known = sum(1 for c in checks if c[4] is not None)
    print(f"Targets: {met} of {known} met.")
    print()
    print("| request | measure | ours | target | |")
    print("|---|---|---:|---|---|")
    for request, measure, value, target, ok in checks:
        print(f"| `{request}` | {measure} | {value} | {target} | {verdict(ok)} |")
    print()

    # ------------------------------------------------------------------ notes
    notes = []
    for ep, label in REQUESTS:
        ours = get("ours", ep)
        if ours and not rps(ours):
            notes.append(f"`{label}`: no request of ours finished within the measured run (every one took longer "
                         f"than it; see the server's access log with BENCH_KEEP=1).")
    ours_async, pgb_async = get("ours-async", "post"), get("pgbench-async", "post")
    if ours_async and pgb_async and rps(pgb_async):
        notes.append(f"synchronous_commit=off (set on the database for our server, and for pgbench's plain POST): "
                     f"{f0(rps(ours_async))} req/s against {f0(rps(pgb_async))} tps = {f2(rps(ours_async) / rps(pgb_async))}×; "
                     f"PostgreSQL {f1(per_req(ours_async, 'pg_cpu'))} against {f1(per_req(pgb_async, 'pg_cpu'))} µs per write.")
    if facts.get("feed"):
        probe = get("ours-probe", "post")
        notes.append(facts["feed"] + (f" That run: {f0(rps(probe))} req/s, p99 {probe['p99_ms']} ms." if probe else ""))
    if facts.get("idle"):
        notes.append(facts["idle"])
    peers_rss = ", ".join(f"{name} {rss[s]}" for s, name in [("ours", "ours")] + SWIFT_PEERS + [("nginx", "nginx")] if s in rss)
    if peers_rss:
        notes.append(f"Peak RSS per system, MiB (the harness's whole-MiB figures): {peers_rss}.")
    for key in ("checks", "loads", "uptime_before", "uptime_after"):
        if facts.get(key):
            notes.append(facts[key])
    for n in notes:
        print(f"- {n}")
    print()

    # ------------------------------------------------------------------ diagnostic
    diag = [(ep, label, get("pgbench-ours-sql", ep)) for ep, label in REQUESTS[1:]]
    if any(r for _, _, r in diag):
        print("Diagnostic only, not a target: pgbench running *our own* SQL (bench/sql/*.sql, the statements the "
              "routes send) on our database. It shows what our queries cost PostgreSQL by themselves.")
        print()
        print("| request | pgbench tps, our SQL | its pg µs/tx | pgbench tps, plain SQL | ours req/s ÷ own-SQL tps |")
        print("|---|---:|---:|---:|---:|")
        for ep, label, r in diag:
            ours = get("ours", ep)
            ratio = rps(ours) / rps(r) if r and rps(r) and ours else None
            print(f"| `{label}` | {f0(rps(r))} | {f1(per_req(r, 'pg_cpu'))} | {f0(rps(get('pgbench', ep)))} | {f2(ratio)} |")
        print()


if __name__ == "__main__":
    main()
