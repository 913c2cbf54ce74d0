-- POST /transactions in one of the 20 accounts (bench/splits) split into five parts of 12.50 in five different
-- random categories: one parent and five parts written by one statement. Every answer should be 201.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local headers = with_auth({ ["Content-Type"] = "application/json" })

request = function()
  -- Five distinct categories: a start in 1...200 and four steps of 40 around the circle.
  local first = random_category()
  local parts = {}
  for i = 0, 4 do
    parts[#parts + 1] = '{"categoryId":' .. ((first + 40 * i - 1) % 200 + 1) .. ',"amount":12.50}'
  end
  local body = '{"title":"bench","amount":62.50,"accountId":' .. math.random(1, 20) ..
    ',"splits":[' .. table.concat(parts, ",") .. ']}'
  return wrk.format("POST", path_prefix .. "/transactions", headers, body)
end
