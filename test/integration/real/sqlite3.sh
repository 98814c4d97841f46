# requires: sqlite3
# SQLite: 20000 rows from a recursive CTE, an index, group-by queries.
sqlite3 db.sqlite <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, grp INTEGER, name TEXT, val REAL);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)
INSERT INTO t(grp, name, val) SELECT x % 37, 'name-' || (x * 7919 % 20011), x * 1.5 FROM c;
CREATE INDEX t_grp ON t(grp, name);
SELECT grp, count(*), sum(val), min(name), max(name) FROM t GROUP BY grp ORDER BY grp LIMIT 10;
SELECT count(DISTINCT name) FROM t;
SELECT name FROM t WHERE grp = 5 ORDER BY name LIMIT 5;
UPDATE t SET name = upper(name) WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT count(*), group_concat(substr(name, 1, 3), '') LIKE '%NAM%' FROM t;
VACUUM;
PRAGMA integrity_check;
SQL
