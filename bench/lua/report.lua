-- Shared by every wrk script: seeds the random ids and prints one machine-readable line at the end.
-- bench/run parses the BENCH line; wrk's own human summary is printed above it.

local thread_counter = 0

function setup(thread)
  thread_counter = thread_counter + 1
  thread:set("thread_number", thread_counter)
end

function init(args)
  math.randomseed(os.time() * 1000 + (thread_number or 0))
end

function random_category()
  return math.random(1, 200)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "BENCH requests=%d duration_us=%d p50_us=%d p99_us=%d connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
