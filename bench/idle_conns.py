#!/usr/bin/env python3
"""Opens COUNT keep-alive connections to HOST:PORT, sends one GET /health on each, reads every answer,
then holds them all open (idle) until killed or HOLD seconds pass.

  idle_conns.py HOST PORT COUNT READY_FILE [HOLD_SECONDS]

Writes "ok=N failed=M" to READY_FILE once every connection has its answer (or failed), so the
caller can read the server's RSS while the connections are open and idle.
"""
import os
import resource
import selectors
import socket
import sys
import time

host, port, count, ready_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
hold = float(sys.argv[5]) if len(sys.argv) > 5 else 60

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
if hard < count + 64:
    sys.exit(f"open-file limit {hard} is too low for {count} connections")

request = b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"
selector = selectors.DefaultSelector()
sockets = []
failed = 0
deadline = time.monotonic() + 60

for _ in range(count):
    try:
        s = socket.create_connection((host, port), timeout=5)
        s.sendall(request)
        s.setblocking(False)
        sockets.append(s)
        selector.register(s, selectors.EVENT_READ, bytearray())
    except OSError:
        failed += 1

pending = len(sockets)
ok = 0
while pending and time.monotonic() < deadline:
    for key, _ in selector.select(timeout=1):
        s, buffer = key.fileobj, key.data
        try:
            chunk = s.recv(4096)
        except BlockingIOError:
            continue
        except OSError:
            chunk = b""
        if chunk:
            buffer += chunk
        head, sep, rest = bytes(buffer).partition(b"\r\n\r\n")
        if not chunk or sep:
            selector.unregister(s)
            pending -= 1
            if sep and head.startswith(b"HTTP/1.1 200"):
                ok += 1
            else:
                failed += 1
failed += pending

with open(ready_file + ".tmp", "w") as f:
    f.write(f"ok={ok} failed={failed}\n")
os.rename(ready_file + ".tmp", ready_file)

end = time.monotonic() + hold
while time.monotonic() < end:
    time.sleep(0.5)
