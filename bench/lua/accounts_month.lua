-- GET /months/YYYY-MM for the current month in UTC (bench/accounts: its salaries fall in every month up to it).
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local headers = with_auth({})

request = function()
  return wrk.format("GET", path_prefix .. "/months/" .. os.date("!%Y-%m"), headers)
end
