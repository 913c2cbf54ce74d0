-- GET /health (the server) or the same bytes from nginx; the path comes from the URL.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")
