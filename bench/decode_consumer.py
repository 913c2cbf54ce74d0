#!/usr/bin/env python3
"""A model of a change-feed consumer on logical decoding, for bench/write-path (WRITE_PATH_LOGICAL=1).

  decode_consumer.py PGBIN PORT DB SLOT PUBLICATION SECONDS PACE_MS WRITE

Streams the slot with pg_recvlogical (pgoutput, protocol 1) to its standard output, reads the inserts into
transactions from that stream, and every PACE_MS ms, when WRITE is 1, hands the changes received since the
last run to bench_consume() in one statement on its own connection (the sequencer's write of the feed; it
advances the replication origin named as the slot in the same transaction). With WRITE 0 it only reads the stream. Runs SECONDS, then prints
"runs changes backend_pid consumer_cpu_us": the consumer's PostgreSQL backend, and the CPU of this process and
pg_recvlogical together (what the server's own decoding would replace).

pg_recvlogical writes each message of the stream followed by a newline; the messages are binary, so the
stream is parsed message by message (PostgreSQL's "Logical Replication Message Formats", protocol 1).
"""
import os
import signal
import struct
import subprocess
import sys
import threading
import time

pgbin, port, db, slot, publication = sys.argv[1:6]
seconds, pace, write = float(sys.argv[6]), float(sys.argv[7]) / 1000, sys.argv[8] == "1"

recv = subprocess.Popen(
    [pgbin + "/pg_recvlogical", "-h", "127.0.0.1", "-p", port, "-U", "postgres", "-d", db, "--slot", slot,
     "--start", "-o", "proto_version=1", "-o", f"publication_names={publication}", "-s", "1", "-F", "0",
     "-f", "-"],
    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

lock = threading.Lock()
pending = []        # (ledger_id, id, version, family) of each insert since the last run
last_commit = [0]   # the end LSN of the last whole transaction received
relations = {}      # relid -> column names


def cstring(buf, at):
    end = buf.index(b"\0", at)
    return buf[at:end].decode(), end + 1


def tuple_data(buf, at):
    """The columns of a TupleData as text (None for NULL or an unchanged TOAST value), and the next offset."""
    (count,) = struct.unpack_from(">h", buf, at)
    at += 2
    values = []
    for _ in range(count):
        kind = buf[at:at + 1]
        at += 1
        if kind == b"t":
            (length,) = struct.unpack_from(">i", buf, at)
            values.append(buf[at + 4:at + 4 + length].decode())
            at += 4 + length
        else:
            values.append(None)
    return values, at


def message(buf, at):
    """Parses one message at `at` (raising IndexError or struct.error when it is not all there yet); answers
    the offset after it and its newline."""
    kind = buf[at:at + 1]
    if kind == b"":
        raise IndexError
    at += 1
    effect = None
    if kind == b"B":
        at += 20
    elif kind == b"C":
        _, _, end_lsn, _ = struct.unpack_from(">bqqq", buf, at)
        at += 25
        effect = ("commit", end_lsn)
    elif kind == b"O":
        at += 8
        _, at = cstring(buf, at)
    elif kind == b"Y":
        at += 4
        _, at = cstring(buf, at)
        _, at = cstring(buf, at)
    elif kind == b"R":
        (relid,) = struct.unpack_from(">I", buf, at)
        at += 4
        _, at = cstring(buf, at)
        _, at = cstring(buf, at)
        at += 1
        (count,) = struct.unpack_from(">h", buf, at)
        at += 2
        names = []
        for _ in range(count):
            at += 1
            name, at = cstring(buf, at)
            names.append(name)
            at += 8
        relations[relid] = names
    elif kind == b"I":
        (relid,) = struct.unpack_from(">I", buf, at)
        at += 5  # the relation and 'N'
        values, at = tuple_data(buf, at)
        names = relations[relid]
        row = dict(zip(names, values))
        if "parent_id" in row and "split" in row:
            family = row["id"] if row["split"] == "t" else row["parent_id"]
            effect = ("insert", (row["ledger_id"], row["id"], row["version"], family))
    elif kind in (b"U", b"D", b"T"):
        raise SystemExit(f"decode_consumer: the model reads inserts only, got {kind!r}")
    else:
        raise SystemExit(f"decode_consumer: unknown message {kind!r}")
    # pg_recvlogical writes the newline on its own: a message is only taken once it is there, so that one
    # cut before it is parsed again whole, and counted once.
    if buf[at:at + 1] != b"\n":
        raise IndexError
    if effect is not None:
        with lock:
            if effect[0] == "commit":
                last_commit[0] = effect[1]
            else:
                pending.append(effect[1])
    return at + 1


def reader():
    buf = b""
    while True:
        chunk = recv.stdout.read1(1 << 16)
        if not chunk:
            return
        buf += chunk
        at = 0
        while True:
            try:
                at = message(buf, at)
            except (IndexError, struct.error):
                break
        buf = buf[at:]


threading.Thread(target=reader, daemon=True).start()

psql = subprocess.Popen([pgbin + "/psql", "-X", "-q", "-At", "-h", "127.0.0.1", "-p", port, "-U", "postgres",
                         "-d", db], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)


def ask(sql):
    psql.stdin.write(sql + "\n")
    psql.stdin.flush()
    return psql.stdout.readline().strip()


backend = int(ask("SELECT pg_backend_pid();"))


def array(values):
    return "'{" + ",".join("NULL" if v is None else v for v in values) + "}'"


runs = changes = 0
end = time.time() + seconds
while time.time() < end:
    began = time.time()
    with lock:
        batch, pending[:] = pending[:], []
        lsn = last_commit[0]
    if batch and write:
        columns = list(zip(*batch))
        ask(f"SELECT bench_consume({array(columns[0])}::bigint[], {array(columns[1])}::bigint[], "
            f"{array(columns[2])}::integer[], {array(columns[3])}::bigint[], "
            f"'{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}'::pg_lsn);")
        runs += 1
    changes += len(batch)
    time.sleep(max(0, pace - (time.time() - began)))

recv.send_signal(signal.SIGINT)
try:
    recv.wait(timeout=10)
except subprocess.TimeoutExpired:
    recv.kill()
    recv.wait()
usage = os.times()
own_us = int((usage.user + usage.system + usage.children_user + usage.children_system) * 1_000_000)
psql.stdin.close()
psql.wait(timeout=10)
print(runs, changes, backend, own_us)
