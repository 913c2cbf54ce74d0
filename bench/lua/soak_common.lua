-- Shared by bench/lua/soak_read.lua and soak_write.lua (bench/soak). Counts every answer by status,
-- every request by kind, and at the end prints one machine-readable line that bench/soak.py parses:
--   SOAK class=<class> requests=N duration_us=N p50_us=N p99_us=N max_us=N connect=N read=N write=N
--        timeout=N status=N s200=N s404=N … k_<kind>=N … b201=N … (b: statuses inside POST /batch answers)
-- wrk runs each thread's script in a Lua state of its own; done() reads the threads' tables back.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_number", #threads)
end

statuses = {}   -- "s200" -> count, per thread
kinds = {}      -- "k_list" -> count, per thread
inner = {}      -- "b201" -> count: each operation's status inside a batch answer

function count(tbl, key)
  tbl[key] = (tbl[key] or 0) + 1
end

function soak_init()
  math.randomseed(os.time() * 1000 + (thread_number or 0) * 7919)
end

function count_status(status)
  count(statuses, "s" .. status)
end

local function merge(into, from)
  if type(from) ~= "table" then return end
  for k, v in pairs(from) do into[k] = (into[k] or 0) + v end
end

function soak_done(class, summary, latency)
  local all_statuses, all_kinds, all_inner = {}, {}, {}
  for _, t in ipairs(threads) do
    merge(all_statuses, t:get("statuses"))
    merge(all_kinds, t:get("kinds"))
    merge(all_inner, t:get("inner"))
  end
  local e = summary.errors
  local parts = {
    string.format("SOAK class=%s requests=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d connect=%d read=%d write=%d timeout=%d status=%d",
      class, summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
      e.connect, e.read, e.write, e.timeout, e.status)
  }
  for _, tbl in ipairs({ all_statuses, all_kinds, all_inner }) do
    local keys = {}
    for k in pairs(tbl) do table.insert(keys, k) end
    table.sort(keys)
    for _, k in ipairs(keys) do table.insert(parts, k .. "=" .. tbl[k]) end
  end
  io.write(table.concat(parts, " ") .. "\n")
end
