-- bench/soak, class "writes": POST, PATCH and DELETE on transactions (and a few on the generic "posts"
-- collection), some with Idempotency-Key (fresh keys, replays of a key with the same body, and a key
-- reused with another body), some PATCHes with a stale If-Match, and POST /batch (atomic and not).
--
-- Records this connection's thread created (from Location headers, batch answers included) go to a pool
-- that DELETEs draw from, and deletes speed up while the pool is large, so the tables stay about the same
-- size for the whole soak instead of growing with every minute of it (which would make list answers,
-- and with them the server's memory, grow without any leak).
--
-- Expected statuses: 200, 201; 404 (a record deleted meanwhile by another connection, or a replayed
-- POST's id deleted twice), 409 (an Idempotency-Key still in flight on another connection), 412 (stale
-- If-Match), 422 (a key reused with another body). Never 5xx.
dofile(os.getenv("BENCH_LUA_DIR") .. "/soak_common.lua")

local json_headers = { ["Content-Type"] = "application/json" }
local pools = { transactions = {}, posts = {} }
local keys = {}          -- recent idempotency keys: { key, path, body }
local key_counter = 0
local run_id

local function c() return math.random(1, 200) end
local function seed_t() return math.random(1, 10000) end

local function amount() return string.format("%d.%02d", math.random(0, 40), math.random(0, 99)) end
local function date() return string.format("2025-%02d-%02d", math.random(1, 12), math.random(1, 28)) end

local function transaction_body(with_category)
  local note = math.random(4) == 1 and ('"note":"soak note ' .. math.random(1e6) .. '",') or ""
  local cat = with_category and ('"categoryId":' .. c() .. ',') or ""
  return '{' .. cat .. note .. '"title":"soak ' .. math.random(1e6) .. '","amount":"' .. amount() .. '","date":"' .. date() .. '"}'
end

local function take(pool)
  local n = #pool
  if n == 0 then return nil end
  local i = math.random(n)
  local id = pool[i]
  pool[i] = pool[n]
  pool[n] = nil
  return id
end

local function pick(pool)
  if #pool == 0 then return nil end
  return pool[math.random(#pool)]
end

local function new_key()
  key_counter = key_counter + 1
  return run_id .. "-" .. (thread_number or 0) .. "-" .. key_counter
end

local function with_headers(extra)
  local h = { ["Content-Type"] = extra["Content-Type"] or "application/json" }
  for k, v in pairs(extra) do h[k] = v end
  return h
end

local function post_transaction()
  count(kinds, "k_post")
  return wrk.format("POST", "/categories/" .. c() .. "/transactions", json_headers, transaction_body(false))
end

local function post_idempotent()
  local r = math.random(100)
  if #keys > 0 and r <= 30 then
    local k = keys[math.random(#keys)]
    if r <= 3 then
      count(kinds, "k_post_idempotent_conflicting_body")   -- same key, another body: 422
      return wrk.format("POST", k[2], with_headers({ ["Idempotency-Key"] = '"' .. k[1] .. '"' }), transaction_body(true))
    end
    count(kinds, "k_post_idempotent_replay")               -- same key, same body: the first answer again
    return wrk.format("POST", k[2], with_headers({ ["Idempotency-Key"] = '"' .. k[1] .. '"' }), k[3])
  end
  count(kinds, "k_post_idempotent_new")
  local k = { new_key(), "/transactions", transaction_body(true) }
  if #keys >= 64 then keys[math.random(64)] = k else table.insert(keys, k) end
  return wrk.format("POST", k[2], with_headers({ ["Idempotency-Key"] = '"' .. k[1] .. '"' }), k[3])
end

local function patch_transaction()
  local id = (math.random(2) == 1 and pick(pools.transactions)) or seed_t()
  local body = '{"note":"patched ' .. math.random(1e6) .. '","amount":"' .. amount() .. '"}'
  local r = math.random(100)
  if r <= 10 then
    count(kinds, "k_patch_stale_if_match")                 -- 412
    return wrk.format("PATCH", "/transactions/" .. id, with_headers({ ["If-Match"] = '"0000stale0000"' }), body)
  elseif r <= 20 then
    count(kinds, "k_patch_idempotent")
    return wrk.format("PATCH", "/transactions/" .. id, with_headers({ ["Idempotency-Key"] = new_key() }), body)
  elseif r <= 55 then
    count(kinds, "k_patch_merge")
    return wrk.format("PATCH", "/transactions/" .. id, with_headers({ ["Content-Type"] = "application/merge-patch+json" }),
      '{"note":null,"title":"merged ' .. math.random(1e6) .. '"}')
  end
  count(kinds, "k_patch")
  return wrk.format("PATCH", "/transactions/" .. id, json_headers, body)
end

local function delete_transaction()
  local id = take(pools.transactions)
  if not id then return post_transaction() end
  count(kinds, "k_delete")
  return wrk.format("DELETE", "/transactions/" .. id)
end

local function generic()
  local r = math.random(100)
  local id = r <= 45 and take(pools.posts)
  if id then
    count(kinds, "k_post_generic_delete")
    return wrk.format("DELETE", "/posts/" .. id)
  end
  if r <= 60 then
    count(kinds, "k_patch_generic")
    return wrk.format("PATCH", "/posts/" .. math.random(1, 3), json_headers, '{"views":' .. math.random(1e6) .. '}')
  end
  count(kinds, "k_post_generic")
  return wrk.format("POST", "/posts", json_headers,
    '{"title":"soak ' .. math.random(1e6) .. '","author":"soak","views":' .. math.random(1000) .. ',"tags":["a","b"],"meta":{"n":12345678901234567}}')
end

local function batch()
  if math.random(100) <= 70 then
    count(kinds, "k_batch_atomic")
    local ops = {
      '{"method":"POST","path":"/categories/' .. c() .. '/transactions","body":' .. transaction_body(false) .. '}',
      '{"method":"POST","path":"/transactions","body":' .. transaction_body(true) .. ',"idempotencyKey":"' .. new_key() .. '"}',
      '{"method":"PATCH","path":"/transactions/' .. seed_t() .. '","body":{"note":"batch ' .. math.random(1e6) .. '"}}',
    }
    return wrk.format("POST", "/batch", json_headers, '{"atomic":true,"operations":[' .. table.concat(ops, ",") .. ']}')
  end
  count(kinds, "k_batch_non_atomic")
  local ops = {
    '{"method":"POST","path":"/transactions","body":' .. transaction_body(true) .. '}',
    '{"method":"PATCH","path":"/posts/' .. math.random(1, 3) .. '","body":{"views":' .. math.random(1e6) .. '}}',
  }
  local id = take(pools.transactions)
  if id then table.insert(ops, '{"method":"DELETE","path":"/transactions/' .. id .. '"}') end
  return wrk.format("POST", "/batch", json_headers, '{"atomic":false,"operations":[' .. table.concat(ops, ",") .. ']}')
end

function init(args)
  soak_init()
  run_id = string.format("soak%x%x", os.time(), math.random(1, 0x7fffffff))
end

request = function()
  -- Hold the pool near 300: above it, most writes become deletes.
  if #pools.transactions > 300 and math.random(100) <= 55 then return delete_transaction() end
  local r = math.random(100)
  if r <= 24 then return post_transaction()
  elseif r <= 38 then return post_idempotent()
  elseif r <= 58 then return patch_transaction()
  elseif r <= 82 then return delete_transaction()
  elseif r <= 87 then return generic()
  else return batch() end
end

response = function(status, headers, body)
  count_status(status)
  local location = headers["Location"] or headers["location"]
  if status == 201 and location then
    local collection, id = location:match("^/(%a+)/(%d+)$")
    if collection and pools[collection] and #pools[collection] < 5000 then table.insert(pools[collection], tonumber(id)) end
  end
  if body and body:sub(1, 10) == '{"atomic":' then
    for s in body:gmatch('{"status":(%d+),"headers"') do count(inner, "b" .. s) end
    for id in body:gmatch('"Location":"/transactions/(%d+)"') do
      if #pools.transactions < 5000 then table.insert(pools.transactions, tonumber(id)) end
    end
  end
end

function done(summary, latency, requests)
  soak_done("writes", summary, latency)
end
