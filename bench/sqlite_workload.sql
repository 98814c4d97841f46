-- heapprof benchmark workload for the sqlite3 CLI (run as: sqlite3 :memory: < this file).
-- Builds two tables (200k orders, 20k customers) with a recursive CTE, indexes them, and runs
-- grouping, join, ordering and string-building queries. Output is discarded by bench/run.sh.
PRAGMA cache_size = -65536;
BEGIN;
CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT, city TEXT, joined INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO customers
SELECT i, 'customer-' || i || '-' || hex(randomblob(6)),
       'city' || (i * 7919 % 97), 1600000000 + i * 3571 % 100000000
FROM n;
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, item TEXT, qty INTEGER,
                    price REAL, note TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
INSERT INTO orders
SELECT i, 1 + (i * 104729) % 20000, 'item' || (i * 31 % 1000), 1 + i % 17,
       (i % 1000) / 7.0, substr('lorem ipsum dolor sit amet consectetur', 1 + i % 20, 5 + i % 23)
FROM n;
COMMIT;
CREATE INDEX orders_customer ON orders(customer);
CREATE INDEX orders_item ON orders(item, qty);
CREATE INDEX customers_city ON customers(city);
SELECT item, count(*), sum(qty * price) FROM orders GROUP BY item ORDER BY 3 DESC LIMIT 10;
SELECT c.city, count(DISTINCT c.id), sum(o.qty), avg(o.price)
FROM customers c JOIN orders o ON o.customer = c.id
GROUP BY c.city ORDER BY 2 DESC LIMIT 10;
SELECT o.id, c.name, o.note FROM orders o JOIN customers c ON c.id = o.customer
ORDER BY o.note, c.name DESC LIMIT 20 OFFSET 1000;
SELECT customer, group_concat(item, ',') FROM orders WHERE qty > 12
GROUP BY customer ORDER BY length(group_concat(item, ',')) DESC LIMIT 5;
SELECT substr(note, 1, 3) AS k, count(*), max(price) FROM orders GROUP BY k ORDER BY k;
UPDATE orders SET note = upper(note) || '!' WHERE id % 5 = 0;
DELETE FROM orders WHERE qty = 3;
SELECT count(*), sum(length(note)) FROM orders;
