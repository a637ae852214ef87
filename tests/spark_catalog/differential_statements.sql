-- Spark's own statements (queries, DDL and DML on Parquet tables and temporary views,
-- DESCRIBE, SHOW, SET, EXPLAIN, errors) for tests/spark_catalog/test_differential.py, which
-- runs them, after every example of Spark's built-in functions, in a session with the plugin's
-- extensions and in one without, and compares the answers. Written for this test, by the
-- categories of Spark's sql-tests inputs (joins, subqueries, set operations, grouping,
-- windows, CTEs, pivots, DDL), and for the words the extensions look at (count(*), min, max,
-- max_by and min_by answered from statistics, DESCRIBE, UPDATE/MERGE/DELETE, file reads,
-- texts starting like the catalog's statements). One statement per `;` at a line's end;
-- {dir} is a fresh directory of the run, named in no answer. A section marked [long] runs
-- in the long test only (--run-long): queries of Spark's alone, which change no state the
-- sections after them read; the default test keeps the plans the extensions' rules look at.
--
-- Not here, as they are not Spark's: the catalog's own statements (DESCRIBE HISTORY, OPTIMIZE,
-- VACUUM, RESTORE, SHOW PARTS, EXPIRE SNAPSHOTS, ALTER TABLE ... ADD/DROP PART), its URL
-- references (tsfile.`<url>`) and its table function table_changes, which Spark refuses and
-- the extensions add (test_statements.py, test_url_references.py, test_change_feed.py). For
-- the same reason no SHOW [USER] FUNCTIONS that lists every function: with the extensions
-- it lists table_changes too.

CREATE DATABASE IF NOT EXISTS sqltests LOCATION '{dir}/sqltests.db';
USE sqltests;
SELECT current_database();

-- Temporary views.
CREATE OR REPLACE TEMPORARY VIEW emp AS SELECT * FROM VALUES
  (1, 'ann', 'eng', 120.0, DATE '2020-01-15', 3),
  (2, 'bob', 'eng', 100.0, DATE '2021-03-01', 1),
  (3, 'cy', 'ops', 90.5, DATE '2019-07-30', NULL),
  (4, 'dee', 'ops', NULL, DATE '2022-11-11', 3),
  (5, 'eve', 'sales', 75.25, NULL, 2),
  (6, 'fay', NULL, 60.0, DATE '2023-05-05', 2)
  AS t(id, name, dept, salary, hired, boss);
CREATE OR REPLACE TEMPORARY VIEW dept AS SELECT * FROM VALUES
  ('eng', 'berlin'), ('ops', 'paris'), ('hr', 'rome') AS t(dept, city);
CREATE OR REPLACE TEMPORARY VIEW readings AS SELECT * FROM VALUES
  (TIMESTAMP '2024-01-01 00:00:00', 'bj', 'd1', 10.5, 1),
  (TIMESTAMP '2024-01-01 01:00:00', 'bj', 'd1', 11.0, NULL),
  (TIMESTAMP '2024-01-01 02:00:00', 'bj', 'd2', NULL, 2),
  (TIMESTAMP '2024-01-01 00:00:00', 'sh', 'd3', 9.0, 0),
  (TIMESTAMP '2024-01-01 03:00:00', 'sh', 'd3', 9.0, 4),
  (TIMESTAMP '2024-01-01 01:00:00', 'sh', 'd4', 7.5, 3)
  AS t(time, city, device, temp, rain);
CREATE OR REPLACE TEMPORARY VIEW nums AS SELECT id, id % 3 AS k, CAST(id AS DOUBLE) / 4 AS v
  FROM range(20);

-- Parquet tables, at locations under {dir}.
CREATE TABLE events (time TIMESTAMP, device STRING, temp DOUBLE, rain INT) USING parquet
  LOCATION '{dir}/events';
INSERT INTO events SELECT time, device, temp, rain FROM readings;
INSERT INTO events VALUES (TIMESTAMP '2024-01-02 00:00:00', 'd9', 1.5, 9);
CREATE TABLE parted (id INT, v STRING, p INT) USING parquet PARTITIONED BY (p)
  LOCATION '{dir}/parted';
INSERT INTO parted VALUES (1, 'a', 1), (2, 'b', 1), (3, 'c', 2);
INSERT OVERWRITE parted PARTITION (p = 2) VALUES (4, 'd');
CREATE TABLE ctas USING parquet LOCATION '{dir}/ctas' AS SELECT id, k FROM nums WHERE id < 5;
SELECT * FROM events ORDER BY time, device;
SELECT * FROM parted ORDER BY id;
SELECT * FROM ctas ORDER BY id;
SELECT * FROM parquet.`{dir}/ctas` ORDER BY id;
CREATE TEMPORARY VIEW pv USING parquet OPTIONS (path '{dir}/events');
SELECT count(*), max(time), max_by(device, time) FROM pv;
INSERT OVERWRITE DIRECTORY '{dir}/csv' USING csv OPTIONS (header 'true')
  SELECT id, name, salary FROM emp;
CREATE TEMPORARY VIEW cv USING csv OPTIONS (path '{dir}/csv', header 'true', inferSchema 'true');
SELECT * FROM cv ORDER BY id;
SELECT count(*), min(salary) FROM cv;
SELECT * FROM csv.`{dir}/csv` ORDER BY 1;
SELECT count(*) FROM parquet.`{dir}/events`;
SELECT count(*) FROM parted WHERE p = 1;

-- What the statistics rules answer on tsfile tables, on other tables.
SELECT count(*) FROM events;
SELECT count(*), count(temp), count(1), count(DISTINCT device) FROM events;
SELECT min(time), max(time), min(temp), max(temp), min(device), max(device) FROM events;
SELECT device, count(*), min(time), max(time) FROM events GROUP BY device ORDER BY device;
SELECT max_by(temp, time), min_by(temp, time) FROM events;
SELECT device, max_by(temp, time) AS last_temp, min_by(rain, time) AS first_rain FROM events
  GROUP BY device ORDER BY device;
SELECT max_by(device, temp), min_by(device, temp) FROM events WHERE temp IS NOT NULL;
SELECT max_by(time, rain), min_by(time, rain) FROM events WHERE device = 'nothing';
SELECT max_by(temp, time, 2) FROM events;
SELECT count(*) FROM events WHERE time >= TIMESTAMP '2024-01-01 01:00:00';
SELECT first(temp), last(temp) FROM (SELECT temp FROM events ORDER BY time, device);
SELECT time, temp FROM events ORDER BY time DESC, device LIMIT 3;
SELECT * FROM events WHERE temp > 9 ORDER BY temp DESC LIMIT 2;
SELECT count(*) FROM readings;
SELECT min(time), max(time) FROM readings;
SELECT max_by(temp, time), min_by(temp, time) FROM readings;
SELECT city, max_by(device, time) FROM readings GROUP BY city ORDER BY city;
SELECT count(*) FROM emp;
SELECT count(*) FROM (SELECT 1) AS t;
SELECT count(*) FROM range(0);
SELECT min(id), max(id), count(*) FROM range(100);

-- [long] Joins.
SELECT e.name, d.city FROM emp e JOIN dept d ON e.dept = d.dept ORDER BY e.name;
SELECT e.name, d.city FROM emp e LEFT JOIN dept d ON e.dept = d.dept ORDER BY e.name;
SELECT e.name, d.city FROM emp e RIGHT JOIN dept d ON e.dept = d.dept ORDER BY d.city, e.name;
SELECT e.name, d.dept, d.city FROM emp e FULL OUTER JOIN dept d ON e.dept = d.dept
  ORDER BY e.name NULLS LAST;
SELECT * FROM emp LEFT SEMI JOIN dept ON emp.dept = dept.dept;
SELECT * FROM emp LEFT ANTI JOIN dept ON emp.dept = dept.dept;
SELECT e.name, d.city FROM emp e CROSS JOIN dept d WHERE e.id < 3;
SELECT * FROM emp NATURAL JOIN dept;
SELECT * FROM emp JOIN dept USING (dept);
SELECT * FROM emp FULL JOIN dept USING (dept);
SELECT a.name, b.name AS boss FROM emp a LEFT JOIN emp b ON a.boss = b.id ORDER BY a.id;
SELECT e.name, x.n FROM emp e, LATERAL (SELECT count(*) AS n FROM emp f WHERE f.boss = e.id) x;
SELECT * FROM emp e JOIN dept d ON e.dept = d.dept AND d.city LIKE 'b%';
SELECT * FROM emp e JOIN dept d;
SELECT * FROM emp e JOIN dept d ON e.nope = d.dept;

-- [long] Subqueries.
SELECT name FROM emp WHERE dept IN (SELECT dept FROM dept);
SELECT name FROM emp WHERE dept NOT IN (SELECT dept FROM dept);
SELECT name FROM emp WHERE boss NOT IN (SELECT boss FROM emp WHERE boss IS NOT NULL);
SELECT name FROM emp e WHERE EXISTS (SELECT 1 FROM emp f WHERE f.boss = e.id);
SELECT name FROM emp e WHERE NOT EXISTS (SELECT 1 FROM emp f WHERE f.boss = e.id);
SELECT name, (SELECT max(salary) FROM emp f WHERE f.dept = e.dept) AS top FROM emp e;
SELECT name FROM emp WHERE salary > (SELECT avg(salary) FROM emp);
SELECT name FROM emp WHERE salary = (SELECT salary FROM emp);
SELECT (SELECT count(*) FROM dept), (SELECT max(id) FROM emp);
SELECT name FROM emp WHERE (dept, boss) IN (SELECT dept, 3 FROM dept);
SELECT dept, avg(salary) FROM emp GROUP BY dept
  HAVING avg(salary) > (SELECT avg(salary) FROM emp);
SELECT * FROM (SELECT * FROM (SELECT id, name FROM emp) WHERE id > 2) WHERE id < 5;

-- [long] Set operations.
SELECT dept FROM emp UNION SELECT dept FROM dept;
SELECT dept FROM emp UNION ALL SELECT dept FROM dept;
SELECT dept FROM emp INTERSECT SELECT dept FROM dept;
SELECT dept FROM emp INTERSECT ALL SELECT dept FROM emp WHERE id < 4;
SELECT dept FROM emp EXCEPT SELECT dept FROM dept;
SELECT dept FROM emp EXCEPT ALL SELECT dept FROM emp WHERE id = 1;
SELECT k FROM nums MINUS SELECT 1;
SELECT 1 AS a, 'x' AS b UNION ALL SELECT 2, 'y' UNION ALL SELECT 3.5, NULL;
SELECT id FROM emp UNION SELECT name FROM emp;
SELECT id, name FROM emp UNION SELECT id FROM emp;
SELECT name FROM emp UNION BY NAME SELECT name FROM dept;

-- Grouping, HAVING, analytics.
SELECT dept, count(*), sum(salary), avg(salary), min(hired), max(hired) FROM emp GROUP BY dept;
SELECT dept, count(*) FROM emp GROUP BY dept HAVING count(*) > 1;
SELECT dept, boss, count(*) FROM emp GROUP BY GROUPING SETS ((dept), (boss), ());
SELECT dept, boss, count(*), grouping(dept), grouping_id() FROM emp GROUP BY ROLLUP (dept, boss);
SELECT dept, boss, sum(salary) FROM emp GROUP BY CUBE (dept, boss);
SELECT dept, count(DISTINCT boss), collect_set(boss), array_sort(collect_list(name))
  FROM emp GROUP BY dept;
SELECT k, percentile(v, 0.5), median(v), stddev(v), variance(v), corr(v, id) FROM nums
  GROUP BY k ORDER BY k;
SELECT k, any_value(k), bool_and(v > 1), bool_or(v > 4), count_if(v > 2) FROM nums GROUP BY k;
SELECT k, sum(v) FILTER (WHERE id % 2 = 0) FROM nums GROUP BY k ORDER BY k;
SELECT k, string_agg(CAST(id AS STRING), ',') WITHIN GROUP (ORDER BY id) FROM nums GROUP BY k;
SELECT dept, count(*) FROM emp GROUP BY ALL;
SELECT dept AS d, count(*) FROM emp GROUP BY 1 ORDER BY 2 DESC, 1;
SELECT name, count(*) FROM emp GROUP BY dept;
SELECT sum(name) FROM emp;
SELECT count(*) FROM emp HAVING count(*) > 100;
SELECT dept, salary FROM emp GROUP BY dept;

-- Windows.
SELECT name, dept, salary, row_number() OVER (PARTITION BY dept ORDER BY salary DESC) AS rn,
  rank() OVER (ORDER BY salary DESC NULLS LAST) AS r,
  dense_rank() OVER (ORDER BY dept NULLS FIRST) AS dr FROM emp ORDER BY id;
SELECT id, lag(v) OVER (ORDER BY id), lead(v, 2, -1) OVER (ORDER BY id),
  ntile(3) OVER (ORDER BY id), percent_rank() OVER (ORDER BY v), cume_dist() OVER (ORDER BY v)
  FROM nums ORDER BY id;
SELECT id, sum(v) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING),
  avg(v) OVER (PARTITION BY k ORDER BY id RANGE BETWEEN 3 PRECEDING AND CURRENT ROW),
  first_value(id) OVER (PARTITION BY k ORDER BY id DESC),
  last_value(id) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING
    AND UNBOUNDED FOLLOWING) FROM nums ORDER BY id;
SELECT device, time, temp - lag(temp) OVER w AS change FROM readings
  WINDOW w AS (PARTITION BY device ORDER BY time) ORDER BY device, time;
SELECT time, count(*) OVER (ORDER BY time RANGE BETWEEN INTERVAL 1 HOUR PRECEDING
  AND CURRENT ROW) AS n FROM readings ORDER BY time, n;
SELECT name, max_by(name, salary) OVER (PARTITION BY dept) FROM emp ORDER BY name;
SELECT rank() FROM emp;
SELECT row_number() OVER (ORDER BY nope) FROM emp;

-- [long] CTEs.
WITH d AS (SELECT dept, count(*) AS n FROM emp GROUP BY dept) SELECT * FROM d WHERE n > 1;
WITH a AS (SELECT 1 AS x), b AS (SELECT x + 1 AS y FROM a) SELECT * FROM a, b;
WITH a AS (SELECT 1 AS x) SELECT * FROM (WITH a AS (SELECT 2 AS x) SELECT * FROM a);
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 6) SELECT sum(n) FROM r;
WITH t AS (SELECT * FROM emp) SELECT t.name FROM t JOIN t AS u ON t.boss = u.id;
WITH a AS (SELECT 1) SELECT * FROM b;

-- [long] Pivot, unpivot, generators.
SELECT * FROM (SELECT dept, boss, salary FROM emp)
  PIVOT (sum(salary) FOR boss IN (1 AS one, 2 AS two, 3 AS three));
SELECT * FROM (SELECT dept, salary FROM emp) PIVOT (avg(salary), count(*) FOR dept IN ('eng', 'ops'));
SELECT * FROM (SELECT id, name, dept FROM emp) UNPIVOT (val FOR col IN (name, dept));
SELECT * FROM (SELECT id, name, dept FROM emp)
  UNPIVOT INCLUDE NULLS (val FOR col IN (name AS n, dept AS d));
SELECT id, pos, x FROM emp LATERAL VIEW posexplode(array(id, boss)) t AS pos, x ORDER BY id, pos;
SELECT id, x FROM emp LATERAL VIEW OUTER explode(CAST(NULL AS ARRAY<INT>)) t AS x;
SELECT inline(array(struct(1, 'a'), struct(2, 'b')));
SELECT stack(3, 1, 'a', 2, 'b', 3, 'c');
SELECT * FROM explode(map('a', 1, 'b', 2));
SELECT * FROM range(3) AS r, LATERAL explode(sequence(0, r.id)) AS e(x);

-- [long] Ordering, limits, DISTINCT.
SELECT boss FROM emp ORDER BY boss NULLS FIRST, id;
SELECT boss FROM emp ORDER BY boss DESC NULLS LAST, id;
SELECT salary FROM emp ORDER BY salary ASC NULLS LAST LIMIT 3 OFFSET 1;
SELECT DISTINCT dept FROM emp;
SELECT DISTINCT dept, boss FROM emp ORDER BY dept, boss;
SELECT * FROM nums ORDER BY v DESC LIMIT 0;
SELECT * FROM nums LIMIT -1;
SELECT id FROM nums SORT BY id;
SELECT id FROM nums DISTRIBUTE BY k SORT BY id;
SELECT id FROM nums CLUSTER BY k;
SELECT * FROM emp ORDER BY 9;

-- [long] Expressions, casts, errors.
SELECT CASE dept WHEN 'eng' THEN 1 WHEN 'ops' THEN 2 ELSE 0 END, nvl(boss, -1), nvl2(boss, 'y', 'n'),
  coalesce(salary, 0) FROM emp ORDER BY id;
SELECT name LIKE 'a%', name RLIKE '^[a-c]', name ILIKE 'A%', name NOT LIKE '%e%' FROM emp;
SELECT salary BETWEEN 80 AND 110, salary IN (100, 120), salary <=> NULL, NOT (salary > 1) FROM emp;
SELECT 1 / 0;
SELECT 7 DIV 0;
SELECT try_divide(1, 0), try_add(2147483647, 1), try_cast('x' AS INT);
SELECT CAST('x' AS INT);
SELECT CAST('2024-13-01' AS DATE);
SELECT 2147483647 + 1;
SELECT CAST(12345.678 AS DECIMAL(4, 1));
SELECT 1.0E308 * 10, -0.0 = 0.0, CAST('NaN' AS DOUBLE) = CAST('NaN' AS DOUBLE);
SELECT 123.456BD, 1Y + 1S + 1L, X'CAFE', 1e2, .5, 0x10 FROM range(1);
SELECT typeof(1), typeof(1L), typeof(1.5), typeof(1.5D), typeof(DATE '2024-01-01'),
  typeof(array(1)), typeof(map(1, 'a')), typeof(named_struct('a', 1)), typeof(NULL);
SELECT 'it''s', "double", `select` FROM (SELECT 1 AS `select`);
SELECT nope;
SELECT * FROM nope;
SELECT upper(1, 2);
SELECT 1 +;
SELEC 1;
SELECT 1; SELECT 2;

-- [long] Dates, times, intervals.
SELECT DATE '2024-02-28' + 1, DATE '2024-03-01' - INTERVAL 1 DAY,
  datediff(DATE '2024-03-01', DATE '2024-02-01'), add_months(DATE '2024-01-31', 1),
  last_day(DATE '2024-02-10'), next_day(DATE '2024-02-10', 'MON');
SELECT TIMESTAMP '2024-01-01 10:00:00' + INTERVAL '1 02:03' DAY TO MINUTE,
  TIMESTAMP '2024-01-02 00:00:00' - TIMESTAMP '2024-01-01 12:30:00',
  date_trunc('MONTH', TIMESTAMP '2024-05-17 08:09:10'), date_format(DATE '2024-05-17', 'EEE dd MMM');
SELECT to_timestamp('2024-05-17 08:09', 'yyyy-MM-dd HH:mm'), to_date('17/05/2024', 'dd/MM/yyyy'),
  unix_timestamp(TIMESTAMP '2024-01-01 00:00:00'), from_unixtime(0), timestamp_seconds(1);
SELECT extract(YEAR FROM hired), extract(DOW FROM hired), date_part('quarter', hired) FROM emp;
SELECT INTERVAL '1-2' YEAR TO MONTH * 2, INTERVAL 3 HOURS / 2, make_interval(1, 2, 0, 3);
SELECT window(time, '2 hours'), count(*) FROM readings GROUP BY 1 ORDER BY 1;
SELECT to_timestamp('not a time', 'yyyy');
SELECT TIMESTAMP_NTZ '2024-01-01 00:00:00', TIMESTAMP_LTZ '2024-01-01 00:00:00';
SELECT from_utc_timestamp(TIMESTAMP '2024-06-01 12:00:00', 'Asia/Shanghai'),
  to_utc_timestamp(TIMESTAMP '2024-06-01 12:00:00', 'America/New_York');

-- [long] Strings, JSON, CSV, regexes.
SELECT concat(name, '-', dept), concat_ws('/', name, dept), length(name), reverse(name),
  initcap(name), repeat(name, 2), lpad(name, 5, '*'), rpad(name, 5, '.') FROM emp ORDER BY id;
SELECT split('a,b,,c', ','), substring_index('a.b.c', '.', 2), translate('abc', 'ab', 'xy'),
  regexp_replace('a1b22c333', '[0-9]+', '#'), regexp_extract('key=val', '(\\w+)=(\\w+)', 2),
  regexp_extract_all('a1b22c333', '[0-9]+', 0), format_string('%05d|%s', 42, 'x');
SELECT to_json(named_struct('a', 1, 'b', array(1, 2))), from_json('{"a":[1,2]}', 'a ARRAY<INT>'),
  get_json_object('{"a":{"b":3}}', '$.a.b'), json_tuple('{"x":1,"y":"z"}', 'x', 'y'),
  schema_of_json('{"a":1.5}');
SELECT from_csv('1,abc', 'a INT, b STRING'), to_csv(named_struct('a', 1, 'b', 'x'));
SELECT base64('spark'), unbase64('c3Bhcms='), hex(255), unhex('FF'), md5('x'), sha2('x', 256),
  crc32('x'), encode('é', 'UTF-8'), decode(encode('é', 'UTF-8'), 'UTF-8');
SELECT 'a' || 'b', 'abc' < 'abd', 'Ab' = 'ab', position('c' IN 'abcabc'), overlay('abc' PLACING 'X' FROM 2);
SELECT collate('a', 'UTF8_LCASE') = 'A', 'b' COLLATE UNICODE_CI = 'B';

-- [long] Arrays, maps, structs, higher-order functions.
SELECT array(1, 2, 3)[0], element_at(array(1, 2, 3), -1), array_contains(array(1, 2), 2),
  array_distinct(array(1, 1, 2)), array_union(array(1), array(2)), flatten(array(array(1), array(2, 3))),
  slice(array(1, 2, 3, 4), 2, 2), arrays_zip(array(1, 2), array('a', 'b'));
SELECT map('a', 1, 'b', 2)['b'], map_keys(map('a', 1)), map_values(map('a', 1)),
  map_from_arrays(array('x', 'y'), array(1, 2)), map_concat(map('a', 1), map('b', 2)),
  map_filter(map('a', 1, 'b', 2), (k, v) -> v > 1), transform_values(map('a', 1), (k, v) -> v * 10);
SELECT named_struct('a', 1, 'b', named_struct('c', 'x')).b.c, struct(1, 'y'), struct(id, name).name
  FROM emp WHERE id = 1;
SELECT transform(array(1, 2, 3), (x, i) -> x * i), filter(array(1, 2, 3, 4), x -> x % 2 = 0),
  exists(array(1, 2), x -> x > 1), forall(array(1, 2), x -> x > 1),
  aggregate(array(1, 2, 3), 0, (acc, x) -> acc + x, acc -> acc * 10),
  zip_with(array(1, 2), array(3, 4), (x, y) -> x + y), array_sort(array(3, 1, 2), (l, r) -> r - l);
SELECT array(1, 2)[5];
SELECT map('a', 1)['z'];
SELECT element_at(array(1), 3);
SELECT sort_array(array(3, NULL, 1)), sort_array(array(3, NULL, 1), false), size(NULL),
  cardinality(array()), array_position(array(5, 6), 6), array_remove(array(1, 2, 1), 1);

-- [long] VALUES, inline tables, table-valued functions.
VALUES (1, 'a'), (2, 'b');
SELECT * FROM VALUES (1, 2), (3, 4) AS t(a, b) WHERE a > 1;
SELECT * FROM VALUES ('x') AS t(a, b);
SELECT * FROM range(2, 10, 3);
SELECT * FROM range(1, 4) JOIN range(2, 6) USING (id);
SELECT * FROM explode(array(10, 20)) AS t(v);

-- [long] Variables, parameters, EXECUTE IMMEDIATE.
DECLARE VARIABLE threshold INT DEFAULT 2;
SELECT name FROM emp WHERE boss >= threshold ORDER BY name;
SET VAR threshold = 3;
SELECT threshold, session.threshold;
EXECUTE IMMEDIATE 'SELECT count(*) FROM emp WHERE boss = ?' USING 3;
EXECUTE IMMEDIATE 'SELECT :a + :b' USING 1 AS a, 2 AS b;
DROP TEMPORARY VARIABLE threshold;

-- DDL and DML on the Parquet tables.
ALTER TABLE events ADD COLUMNS (note STRING COMMENT 'free text');
INSERT INTO events (time, device, note) VALUES (TIMESTAMP '2024-01-03 00:00:00', 'd1', 'late');
SELECT device, note FROM events WHERE note IS NOT NULL;
ALTER TABLE events SET TBLPROPERTIES ('owner.team' = 'x', 'k' = 'v');
SHOW TBLPROPERTIES events ('k');
ALTER TABLE events UNSET TBLPROPERTIES ('k');
ALTER TABLE ctas RENAME TO ctas2;
SELECT count(*) FROM ctas2;
ALTER TABLE parted ADD PARTITION (p = 3);
SHOW PARTITIONS parted;
ALTER TABLE parted DROP PARTITION (p = 3);
ALTER TABLE events ADD COLUMNS (part INT);
ALTER TABLE events RENAME COLUMN part TO part2;
UPDATE events SET temp = 0 WHERE device = 'd1';
DELETE FROM events WHERE device = 'd9';
MERGE INTO events t USING (SELECT 'd1' AS device) s ON t.device = s.device
  WHEN MATCHED THEN UPDATE SET temp = 1;
MERGE WITH SCHEMA EVOLUTION INTO events t USING (SELECT 'd1' AS device, 1 AS extra) s
  ON t.device = s.device WHEN NOT MATCHED THEN INSERT *;
INSERT INTO events SELECT * FROM events WHERE 1 = 0;
INSERT INTO events WITH ('mergeSchema' = 'true') SELECT * FROM events WHERE 1 = 0;
INSERT INTO events BY NAME SELECT 'd7' AS device, TIMESTAMP '2024-01-04 00:00:00' AS time;
INSERT INTO events VALUES (1);
INSERT INTO nope VALUES (1);
TRUNCATE TABLE ctas2;
SELECT count(*) FROM ctas2;
CREATE TABLE events (x INT) USING parquet;
CREATE TABLE IF NOT EXISTS events (x INT) USING parquet;
CREATE VIEW v_emp AS SELECT id, name FROM emp;
CREATE VIEW v_events AS SELECT device, count(*) AS n FROM events GROUP BY device;
SELECT * FROM v_events ORDER BY device;
CREATE OR REPLACE TEMPORARY VIEW tv AS SELECT * FROM events WHERE rain > 1;
SELECT count(*) FROM tv;
ANALYZE TABLE events COMPUTE STATISTICS;
ANALYZE TABLE events COMPUTE STATISTICS FOR COLUMNS temp, rain;
SELECT count(*), max(temp) FROM events;
REFRESH TABLE events;
SHOW TABLES;
SHOW TABLES LIKE 'e*';
SHOW VIEWS;
SHOW COLUMNS IN events;
SHOW CREATE TABLE parted;
SHOW DATABASES LIKE 'sqltests';
SHOW CATALOGS LIKE 'spark*';
SHOW CURRENT NAMESPACE;
SHOW TABLE EXTENDED LIKE 'parted';
SHOW FUNCTIONS LIKE 'max_by';

-- DESCRIBE.
DESCRIBE events;
DESCRIBE TABLE EXTENDED events;
DESC FORMATTED parted;
DESCRIBE events time;
DESCRIBE EXTENDED events temp;
DESCRIBE parted PARTITION (p = 1);
DESCRIBE emp;
DESCRIBE EXTENDED v_emp;
DESCRIBE QUERY SELECT max_by(temp, time) AS m, count(*) AS n FROM events;
DESCRIBE SELECT * FROM emp;
DESCRIBE FUNCTION max_by;
DESCRIBE FUNCTION EXTENDED count;
DESCRIBE DATABASE sqltests;
DESCRIBE nope;
DESCRIBE TABLE tsfile;

-- EXPLAIN.
EXPLAIN SELECT count(*) FROM events;
EXPLAIN SELECT max_by(temp, time), min(time) FROM events WHERE device = 'd1';
EXPLAIN EXTENDED SELECT dept, count(*) FROM emp GROUP BY dept;
EXPLAIN FORMATTED SELECT * FROM parted WHERE p = 1;

-- Texts that start like the catalog's statements, or name tsfile, and are Spark's.
CREATE OR REPLACE TEMPORARY VIEW optimize AS SELECT 1 AS vacuum;
SELECT vacuum FROM optimize;
CREATE OR REPLACE TEMPORARY VIEW tsfile AS SELECT 'not a url' AS restore;
SELECT restore FROM tsfile;
DESCRIBE tsfile;
DESC tsfile restore;
WITH tsfile AS (SELECT 2 AS parts) SELECT parts FROM tsfile;
SELECT tsfile.id FROM range(2) AS tsfile ORDER BY 1;
SELECT id AS history FROM range(1);
CREATE OR REPLACE TEMPORARY VIEW history AS SELECT 1 AS detail, 2 AS events;
DESCRIBE history detail;
DESC HISTORY events;
CREATE OR REPLACE TEMPORARY VIEW detail AS SELECT 1 AS events;
DESCRIBE DETAIL events;
DESCRIBE EXTENDED history detail;
CREATE DATABASE tsfile LOCATION '{dir}/tsfiledb';
CREATE TABLE tsfile.t (x INT) USING parquet LOCATION '{dir}/tsfiledb/t';
INSERT INTO tsfile.t VALUES (1), (2);
DESCRIBE tsfile.t;
DESC TABLE EXTENDED tsfile.t;
DESCRIBE tsfile.`t`;
SELECT * FROM tsfile.t;
SELECT * FROM tsfile.`t`;
SELECT count(*), max(x) FROM tsfile.`t`;
DROP DATABASE tsfile CASCADE;
ALTER TABLE events ALTER COLUMN temp COMMENT 'add part of the day';
ALTER TABLE events SET TBLPROPERTIES ('note' = 'drop part later');
SHOW TBLPROPERTIES events ('note');
DESCRIBE TABLE EXTENDED events AS JSON;
/* a comment first */ DESCRIBE history detail;
-- a line comment first
DESC detail events;
CREATE TEMPORARY FUNCTION tsfile(p STRING) RETURNS TABLE (x STRING) RETURN SELECT upper(p);
SELECT * FROM tsfile('a');
SELECT * FROM tsfile('/a/b.tsfile');
SELECT * FROM tsfile(p => 'c');
DROP TEMPORARY FUNCTION tsfile;
CREATE TEMPORARY FUNCTION plus_one(x INT) RETURNS INT RETURN x + 1;
SELECT plus_one(id) FROM range(3);
DROP TEMPORARY FUNCTION plus_one;
SELECT /*+ BROADCAST(d) */ e.name, d.city FROM emp e JOIN dept d ON e.dept = d.dept;
SELECT /*+ MERGE(e) */ count(*) FROM emp e JOIN dept d ON e.dept = d.dept;
SELECT /*+ REPARTITION(3) */ count(*) FROM events;
SELECT /*+ COALESCE(1) */ * FROM nums WHERE id < 3;
SELECT /*+ REBALANCE */ max(time) FROM events;
SELECT * FROM IDENTIFIER('emp') WHERE id = 1;
TABLE dept;
FROM emp SELECT name WHERE id < 3;
FROM emp |> WHERE id < 4 |> AGGREGATE count(*) AS n GROUP BY dept |> ORDER BY dept;
BEGIN DECLARE v INT DEFAULT 2; SELECT count(*) FROM emp WHERE boss = v; END;
SELECT * FROM parquet.`{dir}/nothing`;
SELECT * FROM events VERSION AS OF 1;
SELECT * FROM events TIMESTAMP AS OF '2024-01-01';
CALL system.sql('SELECT 1');

-- SET, RESET, configuration-dependent answers.
SET spark.sql.shuffle.partitions;
SET spark.sql.ansi.enabled = false;
SELECT 1 / 0, CAST('x' AS INT), 2147483647 + 1, element_at(array(1), 3);
RESET spark.sql.ansi.enabled;
SELECT 1 / 0;
SET spark.sql.legacy.timeParserPolicy = LEGACY;
SELECT to_date('2024-1-5', 'yyyy-M-d');
RESET spark.sql.legacy.timeParserPolicy;
SET spark.sql.session.timeZone = America/Los_Angeles;
SELECT CAST(TIMESTAMP '2024-01-01 00:00:00' AS STRING), hour(TIMESTAMP '2024-01-01 00:00:00');
SET spark.sql.session.timeZone = UTC;

-- Clean up.
DROP VIEW v_emp;
DROP VIEW v_events;
DROP VIEW nope;
DROP VIEW IF EXISTS nope;
DROP TABLE ctas2;
DROP TABLE parted;
DROP TABLE events;
DROP TABLE IF EXISTS events;
USE default;
DROP DATABASE sqltests CASCADE;
