-- POST /transactions in one of the 20 accounts (bench/splits) with one category: bench/lua/post_split.lua's
-- request without its parts, to set beside it (the same route, account, title and total).
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local headers = with_auth({ ["Content-Type"] = "application/json" })

request = function()
  local body = '{"title":"bench","amount":62.50,"accountId":' .. math.random(1, 20) .. ',"categoryId":' .. random_category() .. '}'
  return wrk.format("POST", path_prefix .. "/transactions", headers, body)
end
