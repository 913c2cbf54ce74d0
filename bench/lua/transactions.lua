-- GET /categories/:id/transactions (50 rows each) with a random id in 1...200.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

request = function()
  return wrk.format("GET", path_prefix .. "/categories/" .. random_category() .. "/transactions", with_auth({}))
end
