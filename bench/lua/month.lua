-- GET /months/YYYY-MM for the current month in UTC, the month bench/sql/months-data.sql spreads the data up to.
wrk.path = "/months/" .. os.date("!%Y-%m")
