#!/usr/bin/env python3
"""bench/relay.py PORT_FILE TARGET_PORT TOTALS_FILE [LIFETIME]: a counting TCP relay on loopback.

Listens on a free port of 127.0.0.1 and writes that port to PORT_FILE once it accepts connections.
Every connection is passed on to 127.0.0.1:TARGET_PORT, and the bytes each way are counted exactly
as they cross: what the client sent (requests with their HTTP headers) and what it received. On
SIGTERM or SIGINT, or after LIFETIME seconds (default 900, so a forgotten relay does not stay),
writes the totals as one JSON line to TOTALS_FILE and exits:

    {"connections": 1, "clientToServer": 123456, "serverToClient": 7890123}

bench/sync runs one pull and one push through it for the bytes on the wire; the relay adds a hop
and some latency, so rates are measured without it.
"""
import asyncio
import json
import os
import signal
import sys


async def main(port_file, target_port, totals_file, lifetime):
    totals = {"connections": 0, "clientToServer": 0, "serverToClient": 0}

    async def forward(reader, writer, direction):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                totals[direction] += len(data)
                writer.write(data)
                await writer.drain()
            # The sender closed its side: pass the end on, and let the other direction finish.
            if writer.can_write_eof():
                writer.write_eof()
        except (ConnectionError, OSError):
            writer.close()

    async def handle(client_reader, client_writer):
        totals["connections"] += 1
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(
            forward(client_reader, server_writer, "clientToServer"),
            forward(server_reader, client_writer, "serverToClient"),
        )
        client_writer.close()
        server_writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)

    # Written to a temporary name and renamed, so a reader never sees half a port number.
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % server.sockets[0].getsockname()[1])
    os.rename(port_file + ".tmp", port_file)

    try:
        await asyncio.wait_for(stop.wait(), lifetime)
    except asyncio.TimeoutError:
        pass
    server.close()
    with open(totals_file + ".tmp", "w") as f:
        f.write(json.dumps(totals) + "\n")
    os.rename(totals_file + ".tmp", totals_file)


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__.strip().splitlines()[0])
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]) if len(sys.argv) == 5 else 900))
