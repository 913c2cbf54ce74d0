-- bench/soak, class "reads": GETs of records and lists with query parameters, over the typed resources
-- (200 categories × 50 transactions, ids 1…10000, loaded by bench/sql/load.sql) and the generic
-- collections of examples/posts.json. Every answer should be 200 (304 for the conditional GETs).
-- No HEAD here: wrk does not tell its parser a response answers a HEAD, waits for the body and stalls
-- the connection; bench/soak.py sends the HEADs.
dofile(os.getenv("BENCH_LUA_DIR") .. "/soak_common.lua")

local function c() return math.random(1, 200) end
local function t() return math.random(1, 10000) end

-- kind, weight, path builder
local mix = {
  { "category", 20, function() return "/categories/" .. c() end },
  { "category_list_page", 8, function() return "/categories?_page=" .. math.random(1, 20) .. "&_limit=10" end },
  { "category_sort", 3, function() return "/categories?_sort=-amount,title&_start=" .. math.random(0, 190) .. "&_end=" .. math.random(191, 200) end },
  { "category_embed", 4, function() return "/categories/" .. c() .. "?_embed=transactions" end },
  { "category_transactions", 14, function() return "/categories/" .. c() .. "/transactions?_sort=-date,amount&_limit=20" end },
  { "transaction", 14, function() return "/transactions/" .. t() end },
  { "transaction_expand", 4, function() return "/transactions/" .. t() .. "?_expand=category" end },
  { "transaction_filter", 8, function()
      local lo = math.random(0, 15)
      return "/transactions?categoryId=" .. c() .. "&amount_gte=" .. lo .. "&amount_lte=" .. (lo + 5) .. "&_sort=amount&_limit=10"
    end },
  { "transaction_v1_ops", 4, function()
      return "/transactions?amount:gt=" .. math.random(0, 18) .. "&date:gte=2024-01-10&_sort=-amount&_per_page=10&_page=" .. math.random(1, 5)
    end },
  { "transaction_q", 4, function() return "/transactions?q=Purchase%20" .. c() .. "-&_limit=5" end },
  { "transaction_like", 3, function() return "/transactions?title_like=%5EPurchase%20" .. c() .. "-1&_limit=5" end },
  { "transaction_in", 2, function() return "/transactions?categoryId:in=" .. c() .. "," .. c() .. "&_limit=10&_page=2" end },
  { "posts", 3, function() return "/posts?_page=1&_limit=2&_sort=-views" end },
  { "post_embed", 2, function() return "/posts/" .. math.random(1, 3) .. "?_embed=comments" end },
  { "post_comments", 1, function() return "/posts/1/comments" end },
  { "profile", 1, function() return "/profile" end },
  { "changes", 2, function() return "/changes?since=" .. math.random(0, 10000) .. "&limit=20&collection=transactions" end },
  { "health", 1, function() return "/health" end },
  { "ready", 1, function() return "/ready" end },
}
local total = 0
for _, m in ipairs(mix) do total = total + m[2] end

local etag_paths = {}   -- a few conditional GETs: If-None-Match with an ETag seen before → 304

function init(args)
  soak_init()
end

request = function()
  if math.random(100) <= 3 and #etag_paths > 0 then
    local e = etag_paths[math.random(#etag_paths)]
    count(kinds, "k_conditional")
    return wrk.format("GET", e[1], { ["If-None-Match"] = e[2] })
  end
  local r = math.random(total)
  for _, m in ipairs(mix) do
    r = r - m[2]
    if r <= 0 then
      count(kinds, "k_" .. m[1])
      local path = m[3]()
      return wrk.format("GET", path)
    end
  end
end

response = function(status, headers, body)
  count_status(status)
  -- /profile is never written during the soak, so its ETag stays valid: a stable 304 target.
  if status == 200 and #etag_paths < 8 and headers["ETag"] and body and body:find('"theme"', 1, true) then
    table.insert(etag_paths, { "/profile", headers["ETag"] })
  end
end

function done(summary, latency, requests)
  soak_done("reads", summary, latency)
end
