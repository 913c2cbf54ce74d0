#!/usr/bin/env python3
"""The parts of bench/soak that wrk cannot do, plus its sampler and its report. Standard library only.

  soak.py clients PORT SECONDS OUT.json [--longpoll N] [--slow N] [--bad N]
      Long-polls, slow clients, bad and unusual requests for SECONDS, each on its own connections, and
      checks every answer against what the server must say (status, order, connection closed or not).
      Writes counts, mismatches and errors to OUT.json.
  soak.py sample PID PORT INTERVAL OUT.csv PHASE_FILE
      Every INTERVAL seconds until PID exits or PHASE_FILE says "stop": the server's VmRSS, open
      descriptors, threads, CPU time, its TCP connections by state, the load average and a few gauges
      from GET /metrics. One CSV row per sample.
  soak.py quiet PID PORT [SECONDS]
      Prints the server's descriptor count at a moment it holds no client connection (the baseline).
  soak.py drain PID PORT BASELINE_FDS SECONDS OUT.json
      After the load: polls every 0.2 s until the server holds no client connection and no more
      descriptors than BASELINE_FDS, or SECONDS pass. Records how long it took and what was left.
  soak.py report DIR
      Reads what bench/soak left in DIR and prints the report (markdown); exits 1 when a check fails.
"""
import asyncio
import csv
import json
import os
import random
import re
import socket
import sys
import time
import urllib.request
from collections import Counter, defaultdict

HOST = "127.0.0.1"

# ------------------------------------------------------------------------------------------ /proc


def proc_status(pid):
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "Threads"):
                values[key] = int(value.split()[0])
    return values


def proc_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


TCP_STATES = {"01": "established", "02": "syn_sent", "03": "syn_recv", "04": "fin_wait1", "05": "fin_wait2",
              "06": "time_wait", "07": "close", "08": "close_wait", "09": "last_ack", "0A": "listen", "0B": "closing"}


def server_sockets(pid, port):
    """The server's TCP sockets by state: only sockets whose inode is one of PID's descriptors, so the
    clients' ends of the same connections (local port ≠ PORT anyway) and TIME_WAIT leftovers (no
    descriptor) do not count."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    states = Counter()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    local_port = int(parts[1].rsplit(":", 1)[1], 16)
                    if local_port == port and parts[9] in inodes:
                        states[TCP_STATES.get(parts[3], parts[3])] += 1
        except FileNotFoundError:
            pass
    return states


def metrics_gauges(port):
    wanted = ("http_requests_in_flight", "changes_long_poll_waiters", "db_pool_connections_in_use", "db_pool_waiting")
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/metrics", timeout=5) as r:
            text = r.read().decode()
    except Exception:
        return {name: "" for name in wanted}
    found = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in wanted:
            found[name] = int(float(value))
    return {name: found.get(name, "") for name in wanted}


def cmd_sample(pid, port, interval, out, phase_file):
    pid, port, interval = int(pid), int(port), float(interval)
    fields = ["t_s", "phase", "rss_kib", "hwm_kib", "fds", "threads", "established", "close_wait", "other_tcp",
              "cpu_s", "load1", "in_flight", "long_poll_waiters", "pool_in_use", "pool_waiting"]
    start = time.monotonic()
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        while True:
            try:
                phase = open(phase_file).read().strip()
            except OSError:
                phase = "?"
            if phase == "stop":
                return
            try:
                status = proc_status(pid)
                row = {"t_s": round(time.monotonic() - start, 1), "phase": phase, "rss_kib": status["VmRSS"],
                       "hwm_kib": status["VmHWM"], "threads": status["Threads"], "fds": fd_count(pid),
                       "cpu_s": round(proc_cpu_seconds(pid), 2)}
                sockets = server_sockets(pid, port)
            except (FileNotFoundError, ProcessLookupError):
                return
            row["established"] = sockets.pop("established", 0)
            row["close_wait"] = sockets.pop("close_wait", 0)
            sockets.pop("listen", None)
            row["other_tcp"] = sum(sockets.values())
            row["load1"] = open("/proc/loadavg").read().split()[0]
            row.update({"in_flight": "", "long_poll_waiters": "", "pool_in_use": "", "pool_waiting": ""})
            gauges = metrics_gauges(port)
            row.update({"in_flight": gauges["http_requests_in_flight"], "long_poll_waiters": gauges["changes_long_poll_waiters"],
                        "pool_in_use": gauges["db_pool_connections_in_use"], "pool_waiting": gauges["db_pool_waiting"]})
            writer.writerow(row)
            f.flush()
            # Sleep in small steps: a new phase is sampled at once (and "stop" noticed quickly).
            until = time.monotonic() + interval
            while time.monotonic() < until:
                time.sleep(min(0.25, max(0.0, until - time.monotonic())))
                try:
                    if open(phase_file).read().strip() != phase:
                        break
                except OSError:
                    pass


def describe_fds(pid):
    """Each descriptor's target; sockets named by their table (tcp with ports and state, or unix with path)."""
    tables = {}
    for name in ("tcp", "tcp6"):
        try:
            for line in list(open(f"/proc/net/{name}"))[1:]:
                parts = line.split()
                tables[parts[9]] = (f"tcp :{int(parts[1].rsplit(':', 1)[1], 16)}->:{int(parts[2].rsplit(':', 1)[1], 16)} "
                                    f"{TCP_STATES.get(parts[3], parts[3])}")
        except OSError:
            pass
    try:
        for line in list(open("/proc/net/unix"))[1:]:
            parts = line.split()
            tables[parts[6]] = "unix " + (parts[7] if len(parts) > 7 else "(unnamed)")
    except OSError:
        pass
    found = []
    for fd in sorted(os.listdir(f"/proc/{pid}/fd"), key=int):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            target = tables.get(target[8:-1], target)
        found.append(f"{fd}: {target}")
    return found


def cmd_quiet(pid, port, seconds="10"):
    """The server's descriptor count at a moment it holds no TCP connection on PORT (polled for up to
    SECONDS; the sampler's own GET /metrics comes and goes), or the count when time runs out."""
    pid, port = int(pid), int(port)
    until = time.monotonic() + float(seconds)
    while True:
        before = fd_count(pid)
        sockets = server_sockets(pid, port)
        sockets.pop("listen", None)
        after = fd_count(pid)
        if (not sockets and before == after) or time.monotonic() > until:
            return after
        time.sleep(0.1)


def cmd_drain(pid, port, baseline, seconds, out):
    pid, port, baseline, seconds = int(pid), int(port), int(baseline), float(seconds)
    start = time.monotonic()
    result = {"baseline_fds": baseline, "limit_s": seconds}
    while True:
        fds = fd_count(pid)
        sockets = server_sockets(pid, port)
        sockets.pop("listen", None)
        elapsed = time.monotonic() - start
        result.update({"fds": fds, "sockets": dict(sockets), "elapsed_s": round(elapsed, 2)})
        if fds <= baseline and not sockets:
            result["drained"] = True
            break
        if elapsed > seconds:
            result["drained"] = False
            # What is still open, for the report.
            result["open"] = describe_fds(pid)
            break
        time.sleep(0.2)
    with open(out, "w") as f:
        json.dump(result, f)
    print(json.dumps(result))

# ------------------------------------------------------------------------------------ HTTP client


class ProtocolError(Exception):
    pass


async def read_response(reader, is_head=False, slow_chunk=0, slow_pause=0.0):
    """One response: (status, headers with lower-case names, body). slow_chunk > 0 reads the body
    slow_chunk bytes at a time with slow_pause between reads (a slow client)."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial:
            raise EOFError("connection closed before an answer")
        raise ProtocolError(f"connection closed inside a response head: {e.partial[:80]!r}")
    lines = head.decode("latin-1").split("\r\n")
    match = re.match(r"HTTP/1\.[01] (\d{3}) ", lines[0] + " ")
    if not match:
        raise ProtocolError(f"bad status line {lines[0][:80]!r}")
    status = int(match.group(1))
    headers = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if is_head or status in (100, 204, 304) or 100 <= status < 200:
        return status, headers, b""
    if "content-length" in headers:
        length = int(headers["content-length"])
        if slow_chunk:
            body = bytearray()
            while len(body) < length:
                chunk = await reader.read(min(slow_chunk, length - len(body)))
                if not chunk:
                    raise ProtocolError(f"body cut at {len(body)} of {length} bytes")
                body += chunk
                await asyncio.sleep(slow_pause)
            return status, headers, bytes(body)
        try:
            return status, headers, await reader.readexactly(length)
        except asyncio.IncompleteReadError as e:
            raise ProtocolError(f"body cut at {len(e.partial)} of {length} bytes")
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return status, headers, bytes(body)
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    return status, headers, await reader.read()


async def expect_eof(reader, seconds=5.0):
    """True once the server closes its side; False if it sends more or keeps the connection open."""
    try:
        data = await asyncio.wait_for(reader.read(65536), seconds)
    except (asyncio.TimeoutError, TimeoutError):
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True
    return data == b""


async def connect(rcvbuf=None, limit=2 ** 16):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await asyncio.wait_for(loop.sock_connect(sock, (HOST, PORT)), 10)
    return await asyncio.open_connection(sock=sock, limit=limit)


def close(writer):
    try:
        writer.close()
    except Exception:
        pass

# ------------------------------------------------------------------------------------------ state


PORT = 0
DEADLINE = 0.0
counts = defaultdict(lambda: defaultdict(Counter))     # class -> kind -> status (or "abandoned", "cut_at_end")
errors = defaultdict(lambda: defaultdict(Counter))     # class -> kind -> error type
mismatches = defaultdict(lambda: defaultdict(list))    # class -> kind -> examples (at most 5 kept)
mismatch_counts = defaultdict(Counter)
durations = defaultdict(list)                          # "longpoll_quiet" -> seconds
follow = {"since_regressions": 0, "max_last_seq": 0}


def mismatch(cls, kind, text):
    mismatch_counts[cls][kind] += 1
    if len(mismatches[cls][kind]) < 5:
        mismatches[cls][kind].append(text)


def time_left():
    return DEADLINE - time.monotonic()


REQ_TIMEOUT = 35.0   # no ordinary answer may take longer (the server's own request timeout is 10 s)

# ------------------------------------------------------------------------------------- long-polls


async def current_seq():
    """The feed's head now: the X-Sync-Seq every GET of a record carries (docs/sync.md)."""
    reader, writer = await connect()
    try:
        writer.write(b"GET /profile HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n\r\n")
        status, headers, _ = await asyncio.wait_for(read_response(reader), REQ_TIMEOUT)
        return int(headers["x-sync-seq"])
    finally:
        close(writer)


async def longpoll_worker(kind):
    """quiet: waits on a collection nobody writes (comments), so each poll lasts its full 20 s;
    follow: follows the whole feed from lastSeq like a syncing client; abandon: gives up mid-wait."""
    cls = "longpoll"
    since = await current_seq()
    reader = writer = None
    while time_left() > 0:
        try:
            if writer is None:
                reader, writer = await connect()
            if kind == "follow":
                path = f"/changes?since={since}&wait=20&limit=100"
            else:
                path = f"/changes?since={since}&collection=comments&wait=20&limit=100"
            writer.write(f"GET {path} HTTP/1.1\r\nHost: soak\r\n\r\n".encode())
            started = time.monotonic()
            if kind == "abandon":
                await asyncio.sleep(random.uniform(1, 10))
                counts[cls][kind]["abandoned"] += 1
                close(writer)
                writer = None
                continue
            budget = min(20 + REQ_TIMEOUT, max(0.1, time_left()))
            try:
                status, _, body = await asyncio.wait_for(read_response(reader), budget)
            except (asyncio.TimeoutError, TimeoutError):
                if time_left() <= 0:
                    counts[cls][kind]["cut_at_end"] += 1
                    break
                raise
            counts[cls][kind][status] += 1
            elapsed = time.monotonic() - started
            if status != 200:
                mismatch(cls, kind, f"{path} -> {status} {body[:200]!r}")
                continue
            answer = json.loads(body)
            if kind == "quiet":
                durations["longpoll_quiet"].append(elapsed)
                if answer["changes"]:
                    mismatch(cls, kind, f"{path}: changes on a collection nobody writes: {body[:200]!r}")
            else:
                durations["longpoll_follow"].append(elapsed)
                if answer["lastSeq"] < since:
                    follow["since_regressions"] += 1
                    mismatch(cls, kind, f"{path}: lastSeq {answer['lastSeq']} < since {since}")
                follow["max_last_seq"] = max(follow["max_last_seq"], answer["lastSeq"])
                await asyncio.sleep(0.25)
            since = max(since, answer["lastSeq"])
        except Exception as e:  # noqa: BLE001 — every failure is counted by type
            if time_left() <= 0:
                break
            errors[cls][kind][type(e).__name__] += 1
            mismatch(cls, kind, f"error {type(e).__name__}: {e}")
            if writer is not None:
                close(writer)
            writer = None
            await asyncio.sleep(0.5)
    if writer is not None:
        close(writer)

# ------------------------------------------------------------------------------------ slow clients


def request_bytes(method, path, body=None, headers=()):
    lines = [f"{method} {path} HTTP/1.1", "Host: soak"]
    lines += list(headers)
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


async def trickle(writer, data, pause):
    for i in range(len(data)):
        writer.write(data[i:i + 1])
        await writer.drain()
        await asyncio.sleep(pause)


async def slow_case(kind):
    """One slow-client exchange; returns nothing, records counts and mismatches."""
    cls = "slow"
    c = random.randint(1, 200)
    if kind == "trickle_ok":
        # ~45 bytes at 0.12 s each: ~5.5 s, inside the server's 10 s request timeout → 200.
        reader, writer = await connect()
        try:
            await trickle(writer, request_bytes("GET", f"/categories/{c}"), 0.12)
            status, _, body = await asyncio.wait_for(read_response(reader), REQ_TIMEOUT)
            counts[cls][kind][status] += 1
            if status != 200 or b'"id":%d,' % c not in body:
                mismatch(cls, kind, f"-> {status} {body[:120]!r}")
        finally:
            close(writer)
    elif kind == "trickle_body_ok":
        reader, writer = await connect()
        try:
            body = b'{"title":"trickled","amount":"1.25","note":"slow body"}'
            data = request_bytes("POST", f"/categories/{c}/transactions", body)
            head_len = len(data) - len(body)
            writer.write(data[:head_len])
            await trickle(writer, data[head_len:], 0.08)
            status, _, answer = await asyncio.wait_for(read_response(reader), REQ_TIMEOUT)
            counts[cls][kind][status] += 1
            if status != 201:
                mismatch(cls, kind, f"-> {status} {answer[:120]!r}")
            else:  # tidy up, so the soak does not grow the table
                writer.write(request_bytes("DELETE", f"/transactions/{json.loads(answer)['id']}"))
                status, _, _ = await asyncio.wait_for(read_response(reader), REQ_TIMEOUT)
                if status != 200:
                    mismatch(cls, kind, f"DELETE after the trickled POST -> {status}")
        finally:
            close(writer)
    elif kind == "trickle_too_slow":
        # One byte every 0.6 s: the request cannot be complete within 10 s → 408, then the server closes.
        reader, writer = await connect()
        read_task = None
        try:
            data = request_bytes("GET", f"/categories/{c}/transactions")
            started = time.monotonic()
            read_task = asyncio.ensure_future(asyncio.wait_for(read_response(reader), 30))
            for i in range(len(data)):
                if read_task.done():
                    break
                try:
                    writer.write(data[i:i + 1])
                    await writer.drain()
                except (ConnectionResetError, BrokenPipeError):
                    break
                await asyncio.wait([read_task], timeout=0.6)
            status, _, _ = await read_task
            read_task = None
            elapsed = time.monotonic() - started
            counts[cls][kind][status] += 1
            durations["trickle_too_slow_408_after"].append(elapsed)
            if status != 408:
                mismatch(cls, kind, f"-> {status} after {elapsed:.1f} s")
            if not await expect_eof(reader):
                mismatch(cls, kind, "the server kept the connection open after its 408")
        finally:
            close(writer)
            if read_task is not None:
                read_task.cancel()
                await asyncio.gather(read_task, return_exceptions=True)
    elif kind == "slow_reader":
        # ~190 KB read 1 KiB per 20 ms through a 4 KiB receive buffer: the server must wait on a full socket.
        reader, writer = await connect(rcvbuf=4096, limit=4096)
        try:
            writer.write(request_bytes("GET", f"/transactions?_start={random.randint(0, 8000)}&_limit=1000"))
            status, headers, body = await asyncio.wait_for(read_response(reader, slow_chunk=1024, slow_pause=0.02), 120)
            counts[cls][kind][status] += 1
            if status != 200 or len(body) != int(headers.get("content-length", -1)) or not body.endswith(b"]"):
                mismatch(cls, kind, f"-> {status}, {len(body)} bytes")
        finally:
            close(writer)
    elif kind == "slow_reader_pipelined":
        reader, writer = await connect(rcvbuf=4096, limit=4096)
        try:
            ids = [random.randint(1, 200) for _ in range(3)]
            writer.write(b"".join(request_bytes("GET", f"/categories/{i}/transactions?_limit=200") for i in ids))
            for i in ids:
                status, _, body = await asyncio.wait_for(read_response(reader, slow_chunk=2048, slow_pause=0.02), 120)
                counts[cls][kind][status] += 1
                if status != 200 or (body != b"[]" and b'"categoryId":%d,' % i not in body):
                    mismatch(cls, kind, f"answer for category {i}: {status} {body[:100]!r} (out of order?)")
        finally:
            close(writer)
    elif kind == "idle_then_request":
        reader, writer = await connect()
        try:
            await asyncio.sleep(5)
            writer.write(request_bytes("GET", f"/categories/{c}"))
            status, _, _ = await asyncio.wait_for(read_response(reader), REQ_TIMEOUT)
            counts[cls][kind][status] += 1
            if status != 200:
                mismatch(cls, kind, f"-> {status}")
        finally:
            close(writer)
    elif kind == "abandon_mid_head":
        reader, writer = await connect()
        writer.write(b"GET /categories/1 HTTP/1.1\r\nHost: so")
        await asyncio.sleep(random.uniform(0.5, 3))
        close(writer)
        counts[cls][kind]["abandoned"] += 1
    elif kind == "abandon_mid_body":
        reader, writer = await connect()
        writer.write(b"POST /categories/1/transactions HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1000\r\n\r\n{\"title\":\"never finished")
        await asyncio.sleep(random.uniform(0.5, 3))
        close(writer)
        counts[cls][kind]["abandoned"] += 1
    elif kind == "abandon_unread_answer":
        # Asks for ~190 KB and closes without reading: the server's write fails and it must let go.
        reader, writer = await connect(rcvbuf=4096, limit=4096)
        writer.write(request_bytes("GET", "/transactions?_limit=1000"))
        await asyncio.sleep(0.3)
        close(writer)
        counts[cls][kind]["abandoned"] += 1


SLOW_KINDS = ["trickle_ok", "trickle_body_ok", "trickle_too_slow", "slow_reader", "slow_reader_pipelined",
              "idle_then_request", "abandon_mid_head", "abandon_mid_body", "abandon_unread_answer"]


async def slow_worker(number):
    cls = "slow"
    # Worker i starts with kind i so every kind runs from the first minute, then picks at random.
    kind = SLOW_KINDS[number % len(SLOW_KINDS)]
    while time_left() > 0:
        try:
            await asyncio.wait_for(slow_case(kind), max(0.1, time_left()))
        except (asyncio.TimeoutError, TimeoutError):
            if time_left() <= 0:
                counts[cls][kind]["cut_at_end"] += 1
                break
            errors[cls][kind]["timeout"] += 1
            mismatch(cls, kind, "no answer in time")
        except Exception as e:  # noqa: BLE001
            if time_left() <= 0:
                break
            errors[cls][kind][type(e).__name__] += 1
            mismatch(cls, kind, f"error {type(e).__name__}: {e}")
        kind = random.choice(SLOW_KINDS)
        await asyncio.sleep(0.1)

# -------------------------------------------------------------------------- bad and unusual requests


HEALTH = b"GET /health HTTP/1.1\r\nHost: soak\r\n\r\n"


def json_post(path, body, content_type="application/json"):
    return (f"POST {path} HTTP/1.1\r\nHost: soak\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def get(path, extra=""):
    return f"GET {path} HTTP/1.1\r\nHost: soak\r\n{extra}\r\n".encode()


SMUGGLED = b"GET /categories/1 HTTP/1.1\r\nHost: soak\r\n\r\n"

# name -> (class, bytes or a function giving them, expected statuses in order, server closes after,
#          HEAD request?). Framing faults (close=True) never reach a handler; the others are answered by
# the API and keep the connection, which a GET /health after them proves.
CASES = {
    # request smuggling shapes: each must be refused, never read as two requests
    "smuggle_cl_and_te": ("bad", b"POST /categories HTTP/1.1\r\nHost: soak\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + SMUGGLED, [400], True),
    "smuggle_two_content_lengths": ("bad", b"POST /categories HTTP/1.1\r\nHost: soak\r\nContent-Length: 5\r\nContent-Length: 48\r\n\r\nhello" + SMUGGLED, [400], True),
    "smuggle_te_unknown": ("bad", b"POST /categories HTTP/1.1\r\nHost: soak\r\nTransfer-Encoding: xchunked\r\n\r\n" + SMUGGLED, [400], True),
    "smuggle_te_chunked_not_last": ("bad", b"POST /categories HTTP/1.1\r\nHost: soak\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n" + SMUGGLED, [400], True),
    "smuggle_space_before_colon": ("bad", b"POST /categories HTTP/1.1\r\nHost: soak\r\nContent-Length : 3\r\n\r\nabc" + SMUGGLED, [400], True),
    "smuggle_obs_fold": ("bad", b"GET /health HTTP/1.1\r\nHost: soak\r\nX-A: b\r\n Content-Length: 48\r\n\r\n" + SMUGGLED, [400], True),
    "smuggle_bare_lf": ("bad", b"GET /health HTTP/1.1\nHost: soak\nContent-Length: 0\n\n" + SMUGGLED, [400], True),
    "smuggle_bare_cr": ("bad", b"GET /health HTTP/1.1\r\nHost: soak\rContent-Length: 48\r\n\r\n" + SMUGGLED, [400], True),
    "smuggle_bad_chunk_size": ("bad", b"POST /categories HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n" + SMUGGLED, [400], True),
    "smuggle_chunk_size_overflow": ("bad", b"POST /categories HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\nhello\r\n0\r\n\r\n", [413], True),
    "smuggle_negative_length": ("bad", b"POST /categories HTTP/1.1\r\nHost: soak\r\nContent-Length: -1\r\n\r\n", [400], True),
    "smuggle_two_hosts": ("bad", b"GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", [400], True),
    # a body that looks like a request is a body: one answer for it, then the real next request
    "body_shaped_like_a_request": ("edge", b"GET /health HTTP/1.1\r\nHost: soak\r\nContent-Length: %d\r\n\r\n" % len(SMUGGLED) + SMUGGLED + HEALTH, [200, 200], False),
    # malformed framing
    "no_host": ("bad", b"GET /health HTTP/1.1\r\n\r\n", [400], True),
    "garbage_tls_hello": ("bad", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", [400], True),
    "bad_method_token": ("bad", b"G@T /health HTTP/1.1\r\nHost: soak\r\n\r\n", [400], True),
    "bad_percent_encoding": ("bad", b"GET /categories/%zz HTTP/1.1\r\nHost: soak\r\n\r\n", [400], True),
    "nul_in_header": ("bad", b"GET /health HTTP/1.1\r\nHost: soak\r\nX-A: a\x00b\r\n\r\n", [400], True),
    "http2_request_line": ("bad", b"GET /health HTTP/2.0\r\nHost: soak\r\n\r\n", [505], True),   # the one deliberate 5xx
    # size limits
    "oversized_header": ("bad", b"GET /health HTTP/1.1\r\nHost: soak\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n", [431], True),
    "too_many_headers": ("bad", b"GET /health HTTP/1.1\r\nHost: soak\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(150)) + b"\r\n", [431], True),
    "oversized_url": ("bad", b"GET /categories?q=" + b"a" * 9000 + b" HTTP/1.1\r\nHost: soak\r\n\r\n", [414], True),
    "oversized_body_length": ("bad", b"POST /categories HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n" + b"[" * 65536, [413], True),
    "oversized_body_chunked": ("bad", b"POST /posts HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + (b"10000\r\n" + b" " * 65536 + b"\r\n") * 18, [413], True),
    # bodies the API refuses
    "malformed_json": ("bad", json_post("/categories", b'{"title":"x","amount":'), [400], False),
    "json_not_an_object": ("bad", json_post("/posts", b"[1,2,{]"), [400], False),
    "json_too_deep": ("bad", json_post("/posts", b"[" * 10000 + b"]" * 10000), [400], False),
    "empty_body": ("bad", json_post("/categories", b""), [400], False),
    "not_json_content_type": ("bad", json_post("/categories", b"hello", "text/plain"), [415], False),
    "validation_errors": ("bad", json_post("/categories", b'{"title":"","amount":-1}'), [422], False),
    "validation_money": ("bad", lambda: json_post(f"/categories/{random.randint(1, 200)}/transactions", b'{"title":"x","amount":1.234}'), [422], False),
    "unknown_category": ("bad", json_post("/transactions", b'{"categoryId":999999,"title":"x","amount":1}'), [422], False),
    "batch_malformed": ("bad", json_post("/batch", b'{"atomic":true,"operations":[{"method":"FLY","path":"/x"}]}'), [422], False),
    # query parameters the API refuses
    "query_unknown_field": ("bad", get("/transactions?bogus=1"), [400], False),
    "query_bad_page": ("bad", get("/transactions?_page=abc"), [400], False),
    "query_bad_number": ("bad", get("/transactions?amount_gte=abc"), [400], False),
    "query_bad_regex": ("bad", get("/posts?title_like=%28"), [400], False),
    "query_bad_where": ("bad", get("/posts?_where=%7Bbad"), [400], False),
    "query_bad_changes": ("bad", get("/changes?since=-5&wait=abc"), [400], False),
    "query_negative_limit": ("bad", get("/transactions?_limit=-3"), [400], False),
    "query_unknown_sort": ("bad", get("/transactions?_sort=nope"), [400], False),
    "path_bad_id": ("bad", get("/categories/abc"), [400], False),
    # routes
    "unknown_route": ("bad", get("/nope/1/2/3"), [404], False),
    "unknown_collection": ("bad", get("/no_such_collection"), [404], False),
    "missing_record": ("bad", get("/categories/999999"), [404], False),
    "method_not_allowed": ("bad", b"DELETE /categories HTTP/1.1\r\nHost: soak\r\n\r\n", [405], False),
    # valid but unusual
    "head": ("edge", lambda: b"HEAD /categories/%d HTTP/1.1\r\nHost: soak\r\n\r\n" % random.randint(1, 200), [200], False, True),
    "expect_100_continue": ("edge", b"POST /posts HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 16\r\n\r\n", [100, 201], False),
    "chunked_body": ("edge", b"POST /posts HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"tit\r\nb\r\nle\":\"chunk\"\r\n1\r\n}\r\n0\r\n\r\n", [201], False),
    "http10": ("edge", b"GET /health HTTP/1.0\r\n\r\n", [200], True),
    "pipelined_three": ("edge", get("/categories/1") + get("/health") + get("/categories/2/transactions?_limit=2"), [200, 200, 200], False),
    "cors_preflight": ("edge", b"OPTIONS /categories HTTP/1.1\r\nHost: soak\r\nOrigin: http://app.example\r\nAccess-Control-Request-Method: PATCH\r\nAccess-Control-Request-Headers: content-type, idempotency-key\r\n\r\n", [204], False),
    "absolute_form_target": ("edge", b"GET http://soak/health HTTP/1.1\r\nHost: soak\r\n\r\n", [200], False),
}


async def bad_case(name):
    spec = CASES[name]
    cls, data, expected, closes = spec[0], spec[1], spec[2], spec[3]
    is_head = len(spec) > 4 and spec[4]
    if callable(data):
        data = data()
    reader, writer = await connect()
    try:
        if name == "expect_100_continue":
            writer.write(data)
            status, _, _ = await asyncio.wait_for(read_response(reader), REQ_TIMEOUT)
            got = [status]
            writer.write(b'{"title":"100c"}')
            status, _, body = await asyncio.wait_for(read_response(reader), REQ_TIMEOUT)
            got.append(status)
        else:
            writer.write(data if closes else data + HEALTH)
            try:
                await asyncio.wait_for(writer.drain(), REQ_TIMEOUT)
            except (ConnectionResetError, BrokenPipeError):
                pass   # the server may answer (413, 431) and stop reading before all of it was sent
            got = []
            for i in range(len(expected)):
                status, headers, body = await asyncio.wait_for(read_response(reader, is_head=is_head and i == 0), REQ_TIMEOUT)
                got.append(status)
            if not closes:
                status, _, _ = await asyncio.wait_for(read_response(reader), REQ_TIMEOUT)
                if status != 200:
                    mismatch(cls, name, f"GET /health after it on the same connection -> {status}")
        for status in got:
            counts[cls][name][status] += 1
        if got != expected:
            mismatch(cls, name, f"expected {expected}, got {got}")
        if closes and not await expect_eof(reader):
            mismatch(cls, name, "the server did not close the connection after answering")
        if name in ("chunked_body", "expect_100_continue") and got[-1] == 201:
            record = json.loads(body)
            writer.write(f"DELETE /posts/{record['id']} HTTP/1.1\r\nHost: soak\r\n\r\n".encode())
            await asyncio.wait_for(read_response(reader), REQ_TIMEOUT)
    finally:
        close(writer)


async def bad_worker(number):
    names = sorted(CASES)
    i = number
    while time_left() > 0:
        name = names[i % len(names)] if i < len(names) * 2 else random.choice(names)
        i += 1
        cls = CASES[name][0]
        try:
            await asyncio.wait_for(bad_case(name), max(0.1, time_left()))
        except (asyncio.TimeoutError, TimeoutError):
            if time_left() <= 0:
                break
            errors[cls][name]["timeout"] += 1
            mismatch(cls, name, "no answer in time")
        except Exception as e:  # noqa: BLE001
            if time_left() <= 0:
                break
            errors[cls][name][type(e).__name__] += 1
            mismatch(cls, name, f"error {type(e).__name__}: {e}")
        await asyncio.sleep(0.02)   # these are not about throughput; leave the CPU to the server


async def run_clients(longpolls, slows, bads):
    workers = []
    for i in range(longpolls):
        kind = "abandon" if i % 8 == 7 else ("follow" if i % 4 == 1 else "quiet")
        workers.append(longpoll_worker(kind))
    workers += [slow_worker(i) for i in range(slows)]
    workers += [bad_worker(i) for i in range(bads)]
    await asyncio.gather(*workers)


def cmd_clients(port, seconds, out, longpolls=32, slows=12, bads=8):
    global PORT, DEADLINE
    PORT = int(port)
    started = time.monotonic()
    DEADLINE = started + float(seconds)
    asyncio.run(run_clients(int(longpolls), int(slows), int(bads)))

    def summary(values):
        if not values:
            return None
        values = sorted(values)
        return {"n": len(values), "min": round(values[0], 2), "p50": round(values[len(values) // 2], 2), "max": round(values[-1], 2)}
    result = {
        "connections": {"longpoll": int(longpolls), "slow": int(slows), "bad_and_edge": int(bads)},
        "elapsed_s": round(time.monotonic() - started, 1),
        "counts": {cls: {kind: {str(k): v for k, v in c.items()} for kind, c in kinds.items()} for cls, kinds in counts.items()},
        "errors": {cls: {kind: dict(c) for kind, c in kinds.items()} for cls, kinds in errors.items()},
        "mismatch_counts": {cls: dict(c) for cls, c in mismatch_counts.items()},
        "mismatches": {cls: dict(kinds) for cls, kinds in mismatches.items()},
        "durations": {k: summary(v) for k, v in durations.items()},
        "follow": follow,
        "deliberate_5xx": {"http2_request_line": 505},
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=1)

# ------------------------------------------------------------------------------------------ report


def parse_wrk(path):
    try:
        text = open(path).read()
    except OSError:
        return None
    line = next((l for l in text.splitlines() if l.startswith("SOAK ")), None)
    if line is None:
        return {"missing": True, "tail": text[-500:]}
    values = dict(kv.split("=", 1) for kv in line.split()[1:])
    return {k: (v if k == "class" else int(v)) for k, v in values.items()}


def mib(kib):
    return f"{int(kib) / 1024:.1f}"


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else 0


def cmd_report(directory):
    d = directory
    meta = json.load(open(f"{d}/meta.json"))
    failures = []
    out = []
    p = out.append

    minutes = meta["seconds"] / 60
    p(f"## bench/soak {meta['seconds'] // 60 if meta['seconds'] % 60 == 0 else f'{minutes:.1f}'} min — {meta['date']} — {meta['revision']}")
    p("")
    p(f"{meta['connections']} connections for {meta['seconds']} s against the release build on {meta['cores']} cores: "
      f"wrk reads c{meta['read_conns']}, wrk writes c{meta['write_conns']}, {meta['longpoll_conns']} long-poll clients, "
      f"{meta['slow_conns']} slow clients, {meta['bad_conns']} bad/unusual-request clients; server log level "
      f"{meta['log_level']}, pool size {meta['pool_size']}. Load average before: {meta['load_before']}; after: {meta['load_after']}.")
    p("")

    # requests by class
    p("### Requests by class")
    p("")
    p("| class | requests | req/s | statuses | p50 | p99 | max | client errors |")
    p("|---|---:|---:|---|---:|---:|---:|---|")
    totals = Counter()
    status_totals = Counter()
    five_xx = Counter()
    wrk_kinds = {}
    batch_inner = Counter()
    for cls, expected in (("reads", {200, 304}), ("writes", {200, 201, 404, 409, 412, 422})):
        w = parse_wrk(f"{d}/wrk-{cls}.txt")
        if not w or w.get("missing"):
            failures.append(f"wrk {cls} printed no summary: {w and w.get('tail')}")
            continue
        statuses = {int(k[1:]): v for k, v in w.items() if re.fullmatch(r"s\d+", k)}
        errs = {k: w[k] for k in ("connect", "read", "write", "timeout") if w[k]}
        totals[cls] = w["requests"]
        status_totals.update(statuses)
        for s, n in statuses.items():
            if s >= 500:
                five_xx[f"{cls} {s}"] += n
        unexpected = {s: n for s, n in statuses.items() if s not in expected}
        if unexpected:
            failures.append(f"{cls}: unexpected statuses {unexpected}")
        if errs:
            failures.append(f"{cls}: wrk socket errors {errs}")
        p(f"| {cls} (wrk) | {w['requests']} | {w['requests'] / (w['duration_us'] / 1e6):.0f} | "
          f"{', '.join(f'{s}: {n}' for s, n in sorted(statuses.items()))} | {w['p50_us'] / 1000:.1f} ms | "
          f"{w['p99_us'] / 1000:.1f} ms | {w['max_us'] / 1000:.0f} ms | {errs or 'none'} |")
        if cls == "writes":
            batch_inner.update({int(k[1:]): v for k, v in w.items() if re.fullmatch(r"b\d+", k)})
            inner5 = sum(n for s, n in batch_inner.items() if s >= 500)
            if inner5:
                five_xx["writes: batch operations 5xx"] += inner5
        wrk_kinds[cls] = {k[2:]: v for k, v in w.items() if k.startswith("k_")}
    clients = json.load(open(f"{d}/clients.json")) if os.path.exists(f"{d}/clients.json") else None
    if clients is None:
        failures.append("the Python clients wrote no summary")
    else:
        for cls in ("longpoll", "slow", "bad", "edge"):
            kinds = clients["counts"].get(cls, {})
            statuses = Counter()
            for kind, c in kinds.items():
                statuses.update(c)
            answered = sum(v for k, v in statuses.items() if k.isdigit())
            totals[cls] = answered
            status_totals.update({int(k): v for k, v in statuses.items() if k.isdigit()})
            for k, v in statuses.items():
                if k.isdigit() and int(k) >= 500:
                    deliberate = cls == "bad" and k == "505" and set(
                        kind for kind, c in kinds.items() if "505" in c) <= {"http2_request_line"}
                    if not deliberate:
                        five_xx[f"{cls} {k}"] += v
            errs = Counter()
            for kind, c in clients["errors"].get(cls, {}).items():
                errs.update(c)
            if errs:
                failures.append(f"{cls}: client errors {dict(errs)}")
            mm = clients["mismatch_counts"].get(cls, {})
            if mm:
                failures.append(f"{cls}: answers that were not what the server must say: {mm}")
            rate = answered / clients["elapsed_s"] if clients["elapsed_s"] else 0
            p(f"| {cls} (soak.py) | {answered} | {rate:.1f} | "
              f"{', '.join(f'{s}: {n}' for s, n in sorted(statuses.items(), key=lambda kv: (not kv[0].isdigit(), kv[0])))} | | | | "
              f"{dict(errs) or 'none'} |")
    p(f"| **total** | {sum(totals.values())} | | {', '.join(f'{s}: {n}' for s, n in sorted(status_totals.items()))} | | | | |")
    p("")
    p("Kinds of request in each class (requests sent):")
    p("")
    for cls, kinds in wrk_kinds.items():
        line = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]))
        if cls == "writes":
            line += "; operations inside batches by status: " + ", ".join(f"{s}: {n}" for s, n in sorted(batch_inner.items()))
        p(f"- {cls}: {line}")
    if clients:
        for cls in ("longpoll", "slow", "bad", "edge"):
            kinds = clients["counts"].get(cls, {})
            p(f"- {cls}: " + "; ".join(f"{kind} {dict(sorted(c.items()))}" for kind, c in sorted(kinds.items())))
        dur = clients["durations"]
        if dur.get("longpoll_quiet"):
            q = dur["longpoll_quiet"]
            p(f"- quiet long-polls (`wait=20` on a collection nobody writes) lasted {q['min']}–{q['max']} s (median {q['p50']} s)")
            if q["max"] > 20 + 10 or q["min"] < 19:
                failures.append(f"quiet long-polls lasted {q['min']}–{q['max']} s, not about 20 s")
        if dur.get("longpoll_follow"):
            fl = dur["longpoll_follow"]
            p(f"- feed-following long-polls answered in {fl['min']}–{fl['max']} s (median {fl['p50']} s); "
              f"lastSeq never went backwards: {clients['follow']['since_regressions'] == 0}")
        if dur.get("trickle_too_slow_408_after"):
            t = dur["trickle_too_slow_408_after"]
            p(f"- too-slow trickles got their 408 after {t['min']}–{t['max']} s (request timeout 10 s, sweep every 2.5 s)")
        for cls, kinds in clients["mismatches"].items():
            for kind, examples in kinds.items():
                p(f"- MISMATCH {cls}/{kind} ×{clients['mismatch_counts'][cls][kind]}: {' | '.join(examples[:3])}")
    p("")

    # server-side view
    metrics_status = Counter()
    metrics_5xx = Counter()
    try:
        for line in open(f"{d}/metrics-end.txt"):
            m = re.match(r'http_requests_total\{(.*)\} (\S+)', line)
            if m:
                labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
                n = int(float(m.group(2)))
                metrics_status[labels.get("status")] += n
                if labels.get("status", "").startswith("5"):
                    metrics_5xx[f"{labels.get('method')} {labels.get('route')} {labels.get('status')}"] += n
    except OSError:
        failures.append("no /metrics at the end")
    p(f"Server's own count (`http_requests_total` at the end, all routes; framing faults never reach it): "
      f"{', '.join(f'{s}: {n}' for s, n in sorted(metrics_status.items()))}; 5xx by route: {dict(metrics_5xx) or 'none'}")
    p("")
    for key, n in metrics_5xx.items():
        five_xx[f"server metrics: {key}"] += n
    p(f"**5xx: {sum(five_xx.values())}** {dict(five_xx) if five_xx else ''} (deliberate and not counted: the 505s "
      f"answering an `HTTP/2.0` request line, {clients['counts'].get('bad', {}).get('http2_request_line', {}).get('505', 0) if clients else 0} of them; "
      f"no 503 is deliberate in this run, since PostgreSQL stays up)")
    if five_xx:
        failures.append(f"5xx answers: {dict(five_xx)}")
    p("")

    # RSS / fd curve
    rows = list(csv.DictReader(open(f"{d}/samples.csv")))
    p("### Server RSS, descriptors and connections")
    p("")
    p("| t (s) | phase | RSS MiB | fds | threads | established | close-wait | other TCP | CPU s | in flight | long-poll waiters | pool in use / waiting | load1 |")
    p("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for r in rows:
        p(f"| {r['t_s']} | {r['phase']} | {mib(r['rss_kib'])} | {r['fds']} | {r['threads']} | {r['established']} | "
          f"{r['close_wait']} | {r['other_tcp']} | {r['cpu_s']} | {r['in_flight']} | {r['long_poll_waiters']} | "
          f"{r['pool_in_use']} / {r['pool_waiting']} | {r['load1']} |")
    p("")
    load_rows = [r for r in rows if r["phase"] == "load"]
    baseline = [r for r in rows if r["phase"] == "baseline"]
    start_t = float(load_rows[0]["t_s"]) if load_rows else 0
    warm = [r for r in load_rows if float(r["t_s"]) - start_t >= meta["warmup_s"]]
    if len(warm) < 4:
        failures.append(f"too few samples after the {meta['warmup_s']} s warm-up to judge growth ({len(warm)})")
    else:
        w_rss = median(int(r["rss_kib"]) for r in warm[:3])
        e_rss = median(int(r["rss_kib"]) for r in warm[-3:])
        w_fd = median(int(r["fds"]) for r in warm[:3])
        e_fd = median(int(r["fds"]) for r in warm[-3:])
        peak = max(int(r["rss_kib"]) for r in warm)
        rss_limit = max(meta["rss_growth_min_mib"] * 1024, w_rss * meta["rss_growth_pct"] / 100)
        # slope over the samples after warm-up, MiB per minute (least squares)
        xs = [float(r["t_s"]) for r in warm]
        ys = [int(r["rss_kib"]) / 1024 for r in warm]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sum((x - mx) ** 2 for x in xs) or 1) * 60
        b_rss = int(baseline[-1]["rss_kib"]) if baseline else int(rows[0]["rss_kib"])
        b_fd = meta["baseline_fds"]
        p(f"- RSS: {mib(rows[0]['rss_kib'])} MiB at start, {mib(b_rss)} MiB at the baseline (after a short pre-warm), "
          f"{mib(w_rss)} MiB after the {meta['warmup_s']} s warm-up, {mib(e_rss)} MiB at the end of the load "
          f"(peak after warm-up {mib(peak)} MiB; trend {slope:+.2f} MiB/min); growth after warm-up "
          f"{(e_rss - w_rss) / 1024:+.1f} MiB, limit {rss_limit / 1024:.1f} MiB "
          f"(max of {meta['rss_growth_min_mib']} MiB and {meta['rss_growth_pct']}% of the warm-up RSS)")
        p(f"- Descriptors: {rows[0]['fds']} at start, {b_fd} at the baseline, {w_fd} after warm-up, {e_fd} at the end "
          f"of the load (limit: warm-up + {meta['fd_growth_max']}); after the load: see below")
        if e_rss - w_rss > rss_limit:
            failures.append(f"RSS grew {(e_rss - w_rss) / 1024:.1f} MiB after warm-up (limit {rss_limit / 1024:.1f} MiB)")
        if e_fd - w_fd > meta["fd_growth_max"]:
            failures.append(f"descriptors grew by {e_fd - w_fd} after warm-up (limit {meta['fd_growth_max']})")
    max_fd = max((int(r["fds"]) for r in load_rows), default=0)
    fd_ceiling = meta["baseline_fds"] + meta["connections"] + meta["fd_growth_max"]
    p(f"- Most descriptors during the load: {max_fd} (ceiling: baseline {meta['baseline_fds']} + "
      f"{meta['connections']} clients + {meta['fd_growth_max']} = {fd_ceiling})")
    if max_fd > fd_ceiling:
        failures.append(f"{max_fd} descriptors during the load, more than {fd_ceiling}")
    cw = max((int(r["close_wait"]) for r in load_rows), default=0)
    p(f"- Most server sockets in CLOSE_WAIT (peer gone, not closed yet) at any sample: {cw}")

    drain = json.load(open(f"{d}/drain.json")) if os.path.exists(f"{d}/drain.json") else None
    if drain is None:
        failures.append("no drain check")
    else:
        if drain["drained"]:
            p(f"- After the load: every client connection closed and descriptors back to {drain['fds']} "
              f"(baseline {drain['baseline_fds']}) {drain['elapsed_s']} s after the last client exited: nothing left hanging")
        else:
            p(f"- After the load: still {drain['fds']} descriptors (baseline {drain['baseline_fds']}) and sockets "
              f"{drain['sockets']} after {drain['elapsed_s']} s: HANGING. Open: {drain.get('open')}")
            failures.append(f"connections left hanging after the load: {drain['fds']} fds vs baseline {drain['baseline_fds']}, {drain['sockets']}")
    p("")

    # server log
    p("### Server")
    p("")
    levels = Counter()
    notable = Counter()
    framing = Counter()
    try:
        with open(f"{d}/server.log", errors="replace") as f:
            for line in f:
                parts = line.split(" ", 3)
                level = parts[1] if len(parts) > 2 else "?"
                levels[level] += 1
                if "framing fault" in line:
                    m = re.search(r"framing fault: (\d+)", line)
                    framing[m.group(1) if m else "?"] += 1
                if level in ("warning", "error", "critical") or "Fatal error" in line or "Crash" in line:
                    notable[re.sub(r"\d+", "N", line.split(": ", 1)[-1].strip())[:200]] += 1
    except OSError:
        pass
    p(f"- Log lines by level: {dict(levels)}; framing faults answered by the connection: {dict(framing)}")
    for text, n in notable.most_common(10):
        p(f"  - ×{n}: `{text}`")
    errorish = sum(n for text, n in notable.items())
    if levels.get("error", 0) or levels.get("critical", 0):
        failures.append(f"the server logged {levels.get('error', 0)} errors and {levels.get('critical', 0)} critical lines")
    p(f"- Server CPU over the load: {meta.get('cpu_load_s', '?')} s; shutdown on SIGTERM: exit status "
      f"{meta.get('exit_status', '?')} after {meta.get('shutdown_s', '?')} s")
    if str(meta.get("exit_status")) != "0":
        failures.append(f"the server exited with status {meta.get('exit_status')} on SIGTERM")
    if meta.get("server_died"):
        failures.append("the server died during the soak")
    p("")
    p("### Verdict")
    p("")
    if failures:
        p("FAILED:")
        for f_ in failures:
            p(f"- {f_}")
    else:
        p("PASSED: no 5xx, every answer as expected, no RSS or descriptor growth after warm-up beyond the limits, "
          "nothing left hanging after the load.")
    text = "\n".join(out) + "\n"
    with open(f"{d}/report.md", "w") as f:
        f.write(text)
    print(text)
    return 1 if failures else 0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "clients":
        positional = [a for a in args if not a.startswith("--")]
        options = dict(zip(args[3::2], args[4::2])) if len(args) > 3 else {}
        cmd_clients(*positional[:3], longpolls=options.get("--longpoll", 32), slows=options.get("--slow", 12),
                    bads=options.get("--bad", 8))
    elif cmd == "sample":
        cmd_sample(*args)
    elif cmd == "quiet":
        print(cmd_quiet(*args))
    elif cmd == "drain":
        cmd_drain(*args)
    elif cmd == "report":
        sys.exit(cmd_report(*args))
    else:
        sys.exit(__doc__)


main()
