#!/usr/bin/env python3
"""CPU time in microseconds, from /proc/PID/stat (utime + stime).

  procstat.py cpu PID        one process (all its threads)
  procstat.py tree PID       PID and all its live children, plus what PID has reaped from children
                             that exited (cutime + cstime): for the postmaster, whose backends come
                             and go (pgbench connects 64 of them per run), and for nginx's master.
  procstat.py mem PID        VmRSS and VmHWM in KiB
  procstat.py watch EXE FILE every 0.2 s until killed: the largest VmHWM (KiB) of any process running
                             the executable EXE, written to FILE as "KiB PID" whenever it grows (for a
                             server started by someone else's script, whose own figure is rounded)
"""
import os
import sys
import time

TICK_US = 1_000_000 / os.sysconf("SC_CLK_TCK")


def fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    # The command name may hold spaces or parentheses: fields start after the last ')'.
    rest = text[text.rindex(")") + 2:].split()
    return rest  # rest[0] is field 3 (state); field N is rest[N - 3]


def own(rest):
    return int(rest[14 - 3]) + int(rest[15 - 3])


def reaped(rest):
    return int(rest[16 - 3]) + int(rest[17 - 3])


def tree(root):
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            rest = fields(name)
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
        if name == str(root):
            total += own(rest) + reaped(rest)
        elif rest[4 - 3] == str(root):
            total += own(rest)
    return total


def mem(pid):
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(value.split()[0])
    return f"{values['VmRSS']} {values['VmHWM']}"


def watch(exe, path):
    exe = os.path.realpath(exe)
    best = 0
    while True:
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                if os.readlink(f"/proc/{name}/exe") != exe:
                    continue
                with open(f"/proc/{name}/status") as f:
                    hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
            except (OSError, StopIteration, ValueError):
                continue
            if hwm > best:
                best = hwm
                with open(path + ".new", "w") as f:
                    f.write(f"{hwm} {name}\n")
                os.replace(path + ".new", path)
        time.sleep(0.2)


def main():
    if sys.argv[1] == "watch":
        watch(sys.argv[2], sys.argv[3])
        return
    mode, pid = sys.argv[1], int(sys.argv[2])
    if mode == "cpu":
        print(int(own(fields(pid)) * TICK_US))
    elif mode == "tree":
        print(int(tree(pid) * TICK_US))
    elif mode == "mem":
        print(mem(pid))
    else:
        sys.exit(f"unknown mode {mode}")


main()
