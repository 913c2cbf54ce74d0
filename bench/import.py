#!/usr/bin/env python3
"""The client side of bench/import: a bank statement imported, then imported again (bench/README.md,
"Importing a statement").

Builds a CSV statement of ROWS rows (date, amount, title, category, note: about 80 bytes a row), posts it to
/transactions/import twice and prints one markdown report: rows/s for each, and the server's peak RSS above
its RSS before the phase (VmHWM, reset by writing 5 to /proc/PID/clear_refs).

  import.py --port PORT --pid PID --rows 50000 --categories 200
"""
import argparse
import http.client
import json
import time

# The server's memory as bench/stream reads it: VmRSS and VmHWM from /proc, the peak reset per phase.
from stream import reset_peak, status_kib


def statement(rows, categories):
    lines = ["date,amount,title,category,note"]
    for index in range(rows):
        day = f"2026-{index % 12 + 1:02d}-{index % 28 + 1:02d}"
        amount = f"-{index % 400 + 1}.{index % 100:02d}"
        lines.append(f'{day},{amount},"Card payment {index:06d}, Main Street",Category {index % categories + 1},ref {index:08d}')
    return ("\r\n".join(lines) + "\r\n").encode()


def post(port, body):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    started = time.monotonic()
    connection.request("POST", "/transactions/import", body=body, headers={"Content-Type": "text/csv"})
    response = connection.getresponse()
    answer = response.read()
    elapsed = time.monotonic() - started
    connection.close()
    if response.status not in (200, 201):
        raise RuntimeError(f"import answered {response.status}: {answer[:500]!r}")
    return json.loads(answer), elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--rows", type=int, default=50000)
    parser.add_argument("--categories", type=int, default=200)
    args = parser.parse_args()

    body = statement(args.rows, args.categories)
    mib = len(body) / 1048576
    print(f"statement: {args.rows} rows, {mib:.2f} MiB")
    print()
    print("| phase | created | duplicates | seconds | rows/s | server RSS before (MiB) | peak above it (MiB) | peak / file size |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for phase in ("import", "re-import (all duplicates)"):
        before = status_kib(args.pid, "VmRSS")
        reset_peak(args.pid)
        outcome, elapsed = post(args.port, body)
        peak = status_kib(args.pid, "VmHWM")
        grown = (peak - before) / 1024
        print(f"| {phase} | {outcome['created']} | {outcome['duplicates']} | {elapsed:.2f} | {args.rows / elapsed:,.0f} |"
              f" {before / 1024:.1f} | {grown:.1f} | {grown / mib:.2f}x |")


if __name__ == "__main__":
    main()
