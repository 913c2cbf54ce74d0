-- GET /categories/:id with a random id in 1...200.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

request = function()
  return wrk.format("GET", path_prefix .. "/categories/" .. random_category(), with_auth({}))
end
