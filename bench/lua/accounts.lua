-- GET /accounts: every account with its balances (bench/accounts).
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local headers = with_auth({})

request = function()
  return wrk.format("GET", path_prefix .. "/accounts", headers)
end
