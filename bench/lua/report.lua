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

-- bench/households runs the same scripts under /ledgers/1 with a token: BENCH_PATH_PREFIX goes before
-- every path and BENCH_TOKEN into Authorization. Unset (every other bench), requests are as they were.
path_prefix = os.getenv("BENCH_PATH_PREFIX") or ""
local token = os.getenv("BENCH_TOKEN")

function with_auth(headers)
  if token ~= nil and token ~= "" then headers["Authorization"] = "Bearer " .. token end
  return headers
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "BENCH requests=%d duration_us=%d p50_us=%d p99_us=%d connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
