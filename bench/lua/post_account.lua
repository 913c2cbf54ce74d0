-- POST /categories/:id/transactions in one of the 20 accounts (bench/accounts): bench/lua/post.lua's
-- request with an accountId, to set beside it.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local headers = with_auth({ ["Content-Type"] = "application/json" })

request = function()
  local body = '{"title":"bench","amount":12.50,"accountId":' .. math.random(1, 20) .. '}'
  return wrk.format("POST", path_prefix .. "/categories/" .. random_category() .. "/transactions", headers, body)
end
