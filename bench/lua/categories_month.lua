-- GET /categories?month=current: every category with its figures this month (bench/run's months step).
wrk.path = "/categories?month=current"
