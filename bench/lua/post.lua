-- POST /categories/:id/transactions with a random id in 1...200; every answer should be 201.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local headers = with_auth({ ["Content-Type"] = "application/json" })
local body = '{"title":"bench","amount":12.50}'

request = function()
  return wrk.format("POST", path_prefix .. "/categories/" .. random_category() .. "/transactions", headers, body)
end
