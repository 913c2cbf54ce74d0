-- bench/push: POST /categories/1/transactions from one connection, as BENCH_PUSH_MODE says:
--   plain  the request alone;
--   keyed  the same with an Idempotency-Key header, a new key each time;
--   batch  an atomic POST /batch of BENCH_PUSH_BATCH (100) such requests, each with a new idempotencyKey.
-- Keys are BENCH_KEY_PREFIX-n, so no run replays another's. Every answer should be 201 (200 for a batch).
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local mode = os.getenv("BENCH_PUSH_MODE") or "plain"
local size = tonumber(os.getenv("BENCH_PUSH_BATCH") or "100")
local prefix = os.getenv("BENCH_KEY_PREFIX") or tostring(os.time())
local body = '{"title":"bench","amount":12.50}'
local path = path_prefix .. "/categories/1/transactions"
local counter = 0

local function next_key()
  counter = counter + 1
  return prefix .. "-" .. (thread_number or 0) .. "-" .. counter
end

request = function()
  if mode == "keyed" then
    return wrk.format("POST", path, with_auth({ ["Content-Type"] = "application/json", ["Idempotency-Key"] = next_key() }), body)
  elseif mode == "batch" then
    local operations = {}
    for i = 1, size do
      operations[i] = '{"method":"POST","path":"/categories/1/transactions","body":' .. body .. ',"idempotencyKey":"' .. next_key() .. '"}'
    end
    local batch = '{"atomic":true,"operations":[' .. table.concat(operations, ",") .. ']}'
    return wrk.format("POST", path_prefix .. "/batch", with_auth({ ["Content-Type"] = "application/json" }), batch)
  end
  return wrk.format("POST", path, with_auth({ ["Content-Type"] = "application/json" }), body)
end
