#!/usr/bin/env python3
"""Summarises the sanitizer report files scripts/sanitizers collected (one file per process).

  sanitizer_reports.py ROOT REPORT_DIR

Reads every file in REPORT_DIR (demangled with `swift demangle --simplified`), splits it into reports,
and prints one line per distinct report (deduplicated on the top frames of its two stacks):

  COUNT CLASS KIND — first access (function file:line) / previous access (function file:line)

CLASS is
  mutex   both accesses run inside a `withLock { … }` closure of a Synchronization.Mutex (the source line of
          one of their first frames in our tree calls withLock). ThreadSanitizer on Linux cannot see
          Mutex's handoff: the standard library's Synchronization module is not instrumented and a contended
          lock is handed over by the kernel (PI futex). Such reports are false positives as long as both
          sides really use the same Mutex; check the two lines.
  published  one access is an object's initialisation run inside a withLock closure in our code (the object
          was made and stored under a Mutex), the other a later use of that object on another thread, which
          found it through the same Mutex as far as the stacks show. Same blind spot; check that the
          reader really took the object from under that Mutex.
  ours    a frame in Sources/ or Tests/, not of the kinds above: read it.
  theirs  no frame in Sources/ or Tests/ (Swift runtime, Foundation, Dispatch, a dependency).

The last line is machine-readable: "TOTALS reports=N mutex=N published=N ours=N theirs=N".
"""
import os
import re
import subprocess
import sys
from collections import Counter

root, report_dir = sys.argv[1].rstrip("/"), sys.argv[2]

HEADER = re.compile(r"^(WARNING: ThreadSanitizer: .*|==\d+==ERROR: (?:AddressSanitizer|LeakSanitizer).*|.*runtime error: .*)$", re.M)
# "#3 func /path/file.swift:12:5 (module+0x…)" (TSan) or "#3 0x55… in func /path/file.swift:12:5" (ASan);
# frames without a source path ("… crtstuff.c", "(libFoundation.so+0x…)") keep their module as path.
FRAME = re.compile(r"^\s*#(\d+) (?:0x[0-9a-f]+ in )?(.+?) (/\S+?|\S+\.c|<null>)(?::(\d+))?(?::\d+)?(?: \(|$)", re.M)


def demangle(text):
    try:
        return subprocess.run(["swift", "demangle", "--simplified"], input=text, capture_output=True, text=True,
                              timeout=120).stdout or text
    except (OSError, subprocess.SubprocessError):
        return text


source_cache = {}


def source_line(path, line):
    if path not in source_cache:
        try:
            source_cache[path] = open(path, errors="replace").read().splitlines()
        except OSError:
            source_cache[path] = []
    lines = source_cache[path]
    return lines[line - 1] if line and 0 < line <= len(lines) else ""


def ours(path):
    return path.startswith(root + "/Sources/") or path.startswith(root + "/Tests/")


def short(path):
    return path.replace(root + "/", "")


def stacks(block):
    """The report's stacks: [(title, [(function, path, line)])] in order (access, previous access, …)."""
    parts = re.split(r"\n(?=  \S)", block)
    result = []
    for part in parts:
        title = part.strip().splitlines()[0] if part.strip() else ""
        frames = [(m.group(2), m.group(3), int(m.group(4)) if m.group(4) else 0) for m in FRAME.finditer(part)]
        if frames:
            result.append((title, frames))
    return result


def in_with_lock(frames):
    """True if one of the first frames in our tree is on (or inside the closure of) a withLock call."""
    seen = 0
    for function, path, line in frames[:8]:
        if not ours(path):
            continue
        seen += 1
        if "withLock" in source_line(path, line):
            return True
        if seen >= 3:
            break
    return False


ALLOCATORS = ("malloc", "calloc", "realloc", "swift_slowAlloc", "swift_allocObject", "operator new")


def initialised_under_lock(frames):
    """An initialiser (object construction) whose stack passes through a withLock call in our code."""
    if not any(".init(" in f or "__allocating_init" in f for f, _, _ in frames[:4]):
        return False
    return any(ours(p) and "withLock" in source_line(p, l) for _, p, l in frames)


def describe(frames):
    """The stack's first frame that is not the allocator (what a leak or an access happened in)."""
    useful = [f for f in frames if "compiler-rt" not in f[1] and not f[0].startswith(ALLOCATORS)] or frames
    first = useful[0]
    own = next(((f, p, l) for f, p, l in frames if ours(p) and l), None)
    text = f"{first[0][:90]} {short(first[1])}{':' + str(first[2]) if first[2] else ''}"
    if own and own != first:
        text += f" (first own line: {short(own[1])}:{own[2]})"
    return text


seen = Counter()
classes = Counter()
examples = {}
for name in sorted(os.listdir(report_dir)):
    text = demangle(open(os.path.join(report_dir, name), errors="replace").read())
    starts = [m.start() for m in HEADER.finditer(text)]
    for i, start in enumerate(starts):
        block = text[start:starts[i + 1] if i + 1 < len(starts) else len(text)]
        header = block.splitlines()[0]
        kind = re.sub(r"\s*\(pid=\d+\)", "", header.split(": ", 1)[-1]).strip()[:80]
        st = stacks(block)
        accesses = [frames for title, frames in st if not title.startswith(("Location", "Thread", "Mutex"))][:2]
        if not accesses:
            accesses = [st[0][1]] if st else [[("?", "?", 0)]]
        all_frames = [f for _, frames in st for f in frames]
        if "ThreadSanitizer" in header and len(accesses) == 2 and all(in_with_lock(a) for a in accesses):
            cls = "mutex"
        elif "ThreadSanitizer" in header and len(accesses) == 2 and any(initialised_under_lock(a) for a in accesses):
            cls = "published"
        elif any(ours(p) for _, p, _ in all_frames):
            cls = "ours"
        else:
            cls = "theirs"
        key = (cls, kind) + tuple(describe(a) for a in accesses)
        seen[key] += 1
        classes[cls] += 1
        examples.setdefault(key, f"{name}")

for key, count in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0])):
    cls, kind, *accesses = key
    print(f"{count}× {cls} {kind} — " + " / ".join(accesses) + f" [{examples[key]}]")
print(f"TOTALS reports={sum(classes.values())} mutex={classes['mutex']} published={classes['published']} "
      f"ours={classes['ours']} theirs={classes['theirs']}")
