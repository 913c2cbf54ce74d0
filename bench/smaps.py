#!/usr/bin/env python3
"""What a process's resident memory is made of, from /proc/PID/smaps (KiB).

  smaps.py PID          one line per group, largest first
  smaps.py PID -v       one line per mapped file or kind of anonymous memory

Groups: Foundation (libFoundation*, ICU), the Swift runtime (libswift*, libdispatch), the executable,
libpq and the libraries it loads (OpenSSL, Kerberos, LDAP, GnuTLS, ...), libc and friends, and
anonymous memory split into glibc malloc arenas (the main heap, and the 64 MiB-aligned heaps of the
other arenas), thread stacks (the 8 MiB mappings) and the rest. File-backed pages are mostly shared
clean pages of libraries (the "clean" column): they count in RSS (VmRSS, VmHWM) although the page
cache holds one copy for every process that maps them; "dirty" is memory of this process alone.
"""
import collections
import os
import re
import sys

ARENA_ALIGN = 64 << 20   # glibc's HEAP_MAX_SIZE on 64-bit: non-main arenas are aligned to it
STACK_KIB = (8192, 8196)

SWIFT = re.compile(r"^(libswift|libdispatch|libBlocksRuntime|lib_Concurrency)")
FOUNDATION = re.compile(r"^(libFoundation|lib_FoundationICU|libicu)")
LIBC = re.compile(r"^(libc|libm|libstdc\+\+|libgcc_s|ld-linux|libresolv|libpthread|libdl|librt)[.-]")


def parse(pid):
    maps, cur = [], None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$", line)
            if m:
                cur = {"start": int(m.group(1), 16), "end": int(m.group(2), 16), "perms": m.group(3),
                       "path": m.group(4).strip()}
                maps.append(cur)
                continue
            key, _, value = line.partition(":")
            if key in ("Rss", "Private_Dirty", "Shared_Dirty", "Private_Clean", "Shared_Clean") and cur is not None:
                cur[key] = int(value.split()[0])
    return maps


def name_of(entry, exe):
    path = entry["path"]
    if path == "":
        size = (entry["end"] - entry["start"]) // 1024
        if entry["start"] % ARENA_ALIGN == 0 and "rw" in entry["perms"]:
            return "anon: malloc arenas"
        if size in STACK_KIB:
            return "anon: thread stacks"
        return "anon: other"
    if path == "[heap]":
        return "anon: malloc arenas"   # the main arena
    if path.startswith("["):
        return path
    return re.sub(r"\.so[.0-9]*$", ".so", path.rsplit("/", 1)[-1])


def group_of(name, exe):
    if name.startswith("anon:") or name.startswith("["):
        return name
    if name == exe:
        return "the executable"
    if FOUNDATION.match(name):
        return "Foundation + ICU"
    if SWIFT.match(name):
        return "Swift runtime"
    if LIBC.match(name):
        return "libc, libm, libstdc++, ld.so"
    return "libpq and what it loads"


def main():
    pid, verbose = sys.argv[1], "-v" in sys.argv[2:]
    exe = os.readlink(f"/proc/{pid}/exe").rsplit("/", 1)[-1]
    totals = collections.defaultdict(collections.Counter)
    for e in parse(pid):
        name = name_of(e, exe)
        key = name if verbose else group_of(name, exe)
        totals[key]["Rss"] += e.get("Rss", 0)
        totals[key]["dirty"] += e.get("Private_Dirty", 0) + e.get("Shared_Dirty", 0)
        totals[key]["clean"] += e.get("Private_Clean", 0) + e.get("Shared_Clean", 0)
    total = sum(c["Rss"] for c in totals.values())
    print(f"{'':40s} {'RSS KiB':>8s} {'dirty':>8s} {'clean':>8s}")
    for key, c in sorted(totals.items(), key=lambda kv: -kv[1]["Rss"]):
        if c["Rss"]:
            print(f"{key[:40]:40s} {c['Rss']:8d} {c['dirty']:8d} {c['clean']:8d}")
    print(f"{'total':40s} {total:8d}")


if __name__ == "__main__":
    main()
