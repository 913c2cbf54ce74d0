#!/usr/bin/env python3
"""The client side of bench/stream: what large answers cost the server (bench/README.md, "Large answers").

Runs against a server already loaded with POSTS generic posts and prints one markdown report. The
server's memory comes from /proc/PID/status: VmRSS now, and VmHWM, its peak, which writing 5 to
/proc/PID/clear_refs resets, so each phase's peak is that phase's own.

  stream.py --port PORT --pid PID [--path /posts]
"""
import argparse
import socket
import statistics
import threading
import time


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


def reset_peak(pid):
    with open(f"/proc/{pid}/clear_refs", "w") as refs:
        refs.write("5")


class Answer:
    def __init__(self):
        self.status = None
        self.first_byte = None
        self.done = None
        self.body_bytes = 0
        self.complete = False


def request(port, path, answer=None, read_delay=None, read_size=65536, stop_after_head=None):
    """Sends GET path and reads the answer: chunked bodies decoded, times taken from the send.

    read_delay (seconds between reads of read_size) makes a slow reader; stop_after_head, an Event,
    makes a client that reads the head and then nothing until it is set."""
    answer = answer or Answer()
    started = time.monotonic()
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        data = sock.recv(read_size)
        if not data:
            raise RuntimeError("closed before the head")
        if answer.first_byte is None:
            answer.first_byte = time.monotonic() - started
        buffer += data
    head, _, buffer = buffer.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    answer.status = int(lines[0].split()[1])
    headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:]}
    if stop_after_head is not None:
        stop_after_head.wait()
        sock.close()
        return answer
    chunked = headers.get("transfer-encoding") == "chunked"
    length = int(headers.get("content-length", "0"))

    def more():
        nonlocal buffer
        if read_delay:
            time.sleep(read_delay)
        data = sock.recv(read_size)
        if not data:
            raise EOFError
        buffer += data

    try:
        if not chunked:
            while len(buffer) < length:
                more()
            answer.body_bytes = length
            answer.complete = True
        else:
            while True:
                while b"\r\n" not in buffer:
                    more()
                size_line, _, buffer = buffer.partition(b"\r\n")
                size = int(size_line.split(b";")[0], 16)
                if size == 0:
                    answer.complete = True
                    break
                while len(buffer) < size + 2:
                    more()
                answer.body_bytes += size
                buffer = buffer[size + 2:]
    except EOFError:
        pass
    answer.done = time.monotonic() - started
    sock.close()
    return answer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--path", default="/posts")
    parser.add_argument("--slow-seconds", type=int, default=30)
    parser.add_argument("--stalled", type=int, default=64)
    options = parser.parse_args()
    port, pid, path = options.port, options.pid, options.path

    for _ in range(3):
        request(port, "/posts?_limit=10")
    idle = status_kib(pid, "VmRSS")
    print(f"idle server RSS: {idle / 1024:.1f} MiB\n")

    print("| measure | run 1 | run 2 | run 3 |\n|---|---:|---:|---:|")
    singles = []
    for _ in range(3):
        reset_peak(pid)
        answer = request(port, path)
        singles.append((answer, status_kib(pid, "VmHWM") - idle))
    print("| one `GET %s`: status, complete | %s |" % (path, " | ".join(f"{a.status}, {a.complete}" for a, _ in singles)))
    print("| bytes | %s |" % " | ".join(f"{a.body_bytes:,}" for a, _ in singles))
    print("| time to first byte, ms | %s |" % " | ".join(f"{a.first_byte * 1000:.1f}" for a, _ in singles))
    print("| total, s | %s |" % " | ".join(f"{a.done:.2f}" for a, _ in singles))
    print("| server peak RSS above idle, MiB | %s |" % " | ".join(f"{p / 1024:.1f}" for _, p in singles))

    eights = []
    for _ in range(3):
        reset_peak(pid)
        answers = [Answer() for _ in range(8)]
        threads = [threading.Thread(target=request, args=(port, path, answer)) for answer in answers]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        eights.append((answers, time.monotonic() - started, status_kib(pid, "VmHWM") - idle))
    print("| 8 at once: complete | %s |" % " | ".join(f"{sum(a.complete for a in run)}/8" for run, _, _ in eights))
    print("| 8 at once: all done, s | %s |" % " | ".join(f"{wall:.2f}" for _, wall, _ in eights))
    print("| 8 at once: slowest first byte, ms | %s |" % " | ".join(
        f"{max(a.first_byte for a in run) * 1000:.0f}" for run, _, _ in eights))
    print("| 8 at once: server peak RSS above idle, MiB | %s |" % " | ".join(f"{p / 1024:.1f}" for _, _, p in eights))

    # A reader of 1 KB/s: 1 KiB a second for slow_seconds, sampling the server's RSS meanwhile.
    reset_peak(pid)
    slow = Answer()
    samples = []
    reader = threading.Thread(target=lambda: request(port, path, slow, read_delay=1.0, read_size=1024))
    reader.daemon = True
    reader.start()
    for _ in range(options.slow_seconds):
        time.sleep(1)
        samples.append(status_kib(pid, "VmRSS") - idle)
    slow_peak = status_kib(pid, "VmHWM") - idle
    print(f"\na 1 KB/s reader for {options.slow_seconds} s: server RSS above idle at most "
          f"{max(samples)} KiB (sampled each second), peak {slow_peak} KiB; its first byte after "
          f"{(slow.first_byte or 0) * 1000:.0f} ms")

    # Clients that open the list, read its head and then nothing: /health meanwhile.
    time.sleep(2)
    reset_peak(pid)
    stop = threading.Event()
    stalled = [Answer() for _ in range(options.stalled)]
    threads = [threading.Thread(target=request, args=(port, path, a), kwargs={"stop_after_head": stop}, daemon=True)
               for a in stalled]
    for thread in threads:
        thread.start()
    time.sleep(3)
    latencies = []
    health = socket.create_connection(("127.0.0.1", port))
    for _ in range(500):
        started = time.monotonic()
        health.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        data = b""
        while b'"ok"}' not in data:
            data += health.recv(4096)
        latencies.append(time.monotonic() - started)
    health.close()
    heads_by_status = {}
    for answer in stalled:
        heads_by_status[answer.status] = heads_by_status.get(answer.status, 0) + 1
    stalled_peak = status_kib(pid, "VmHWM") - idle
    latencies.sort()
    print(f"\n{options.stalled} clients that open `GET {path}` and stop reading after its head "
          f"(heads by status: {heads_by_status}, none = still waiting): 500 `GET /health` one after another "
          f"meanwhile, p50 {statistics.median(latencies) * 1000:.2f} ms, p99 {latencies[494] * 1000:.2f} ms, "
          f"max {latencies[-1] * 1000:.2f} ms; server peak RSS above idle {stalled_peak / 1024:.1f} MiB")
    stop.set()
    for thread in threads:
        thread.join(timeout=30)


if __name__ == "__main__":
    main()
