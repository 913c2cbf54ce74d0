-- Categories fill a fifth of each page, so that PostgreSQL finds one by its key through categories_pkey
-- (bench/README.md, "The write path").
--
-- Every insert of a transaction with a category runs the foreign key's check, `SELECT 1 FROM categories
-- WHERE ledger_id = $1 AND id = $2 FOR KEY SHARE`, and the category read asks the same. Categories are few
-- and narrow: 200 of them fill three pages, and on a table of three pages PostgreSQL's cost model prefers
-- reading every row to an index probe. A category row's ledger_id comes after its title and amount, so that
-- scan takes every row apart up to its last column: the check cost a POST about 130k instructions of 487k,
-- the probe costs about 45k; the category read goes from 371k to 197k. At a fill factor of 20 the table is
-- four times larger (200 categories: 12 pages, 96 kB) and the probe is the cheaper plan from about 110
-- categories in the table on; below that the scan it keeps is a short one. A factor of 10 would move that
-- line to about 60 categories, but at 200 it made PostgreSQL read the months' category list (`GET
-- /categories?month`) by a scan and a sort, 3 % dearer; at 20 that list keeps its ordered index scan.
-- An update of a category finds room on its own page. The constraints, keys and rows are unchanged.

ALTER TABLE categories SET (fillfactor = 20);

-- The setting applies to rows written from now on; CLUSTER writes the existing ones again, spread (it fires
-- no trigger and keeps every row's visibility, so the change feed sees nothing). SET WITHOUT CLUSTER then
-- forgets the index it was ordered by, which a later CLUSTER without a table name would otherwise follow.
CLUSTER categories USING categories_pkey;
ALTER TABLE categories SET WITHOUT CLUSTER;
