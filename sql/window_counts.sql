-- window_counts: the count of the last width steps, at every step.

-- The tree at width 3: floor(log2 3) + 1 = 2 levels, scale 2/epsilon a
-- node; the window at t is 1 or 2 nodes (t = 1: [1]; t = 2: [1, 2]; t = 3:
-- [1, 2] + [3]; t = 4: [2] + [3, 4]; ...).
SELECT t, round(stddev::numeric, 6) AS stddev,
       round((stddev ^ 2 / test.dlap_var(2))::numeric, 9) AS draws
FROM contcount.window_counts(ARRAY[1, 0, 2, 1, 0, 0, 3, 1], 3, 1, 'tree');

-- Differences of smooth binary running counts over 8 steps: height 6
-- (C(4, 2) = 6 <= 8 < C(6, 3) = 20), k = 3 draws of scale 3/epsilon up to
-- t = width, then those of the nodes c_t and c_(t-W) do not share.
SELECT t, round((stddev ^ 2 / test.dlap_var(3))::numeric, 9) AS draws
FROM contcount.window_counts(ARRAY[1, 0, 2, 1, 0, 0, 3, 1], 3, 1, 'difference');

-- Honaker's estimates on the same tree: a node of level d has 2^d / (2^(d+1)
-- - 1) of a draw's variance (t = 1: [1], level 0; t = 2: [1, 2], level 1,
-- 2/3; then a node of each level, 1 + 2/3).
SELECT t, round((stddev ^ 2 / test.dlap_var(2))::numeric, 9) AS draws
FROM contcount.window_counts(ARRAY[1, 0, 2, 1, 0, 0, 3, 1], 3, 1, 'honaker');

-- All within their bound at every step, at beta = 1e-9.
SELECT c AS construction, count(*) AS steps,
       count(*) FILTER (WHERE abs(r.noisy_count - e.exact) > r.bound) AS outside
FROM (VALUES ('tree'), ('honaker'), ('difference')) v(c),
     LATERAL contcount.window_counts(
         ARRAY(SELECT (i * 3) % 4 FROM generate_series(1, 300) i ORDER BY i),
         30, 0.5, c, beta => 1e-9) r
     JOIN (SELECT i AS t, sum((i * 3) % 4) OVER (ORDER BY i ROWS 29 PRECEDING) AS exact
           FROM generate_series(1, 300) i) e USING (t)
GROUP BY c ORDER BY c;

-- auto: kary, the k-ary tree with negative digits, for short windows; for a
-- window as long as a series of 2^16 steps (then every window is a running
-- count) blocks, whose three levels' least-squares estimates beat kary's
-- there (mean variance 506.0 against 611.4).
SELECT count(*) FROM contcount.window_counts(ARRAY(SELECT 1::bigint FROM generate_series(1, 1000)), 7, 1);
SELECT count(*) FROM contcount.window_counts(ARRAY(SELECT 1::bigint FROM generate_series(1, 65536)), 65536, 1);

-- NULL items are empty steps; an empty series releases nothing.
SELECT t, noisy_count IS NOT NULL AS released
FROM contcount.window_counts(ARRAY[NULL, 1, NULL]::bigint[], 2, 1, 'tree');
SELECT count(*) FROM contcount.window_counts('{}'::bigint[], 2, 1, 'tree');

-- Fresh noise at every call.
SELECT count(*) FILTER (WHERE a.noisy_count <> b.noisy_count) > 0 AS fresh
FROM contcount.window_counts(ARRAY(SELECT 5::bigint FROM generate_series(1, 100)), 10, 1, 'tree') a
JOIN contcount.window_counts(ARRAY(SELECT 5::bigint FROM generate_series(1, 100)), 10, 1, 'tree') b
USING (t);

-- One charge of epsilon a call, to the named ledger.
SELECT contcount.create_ledger('windows', 10);
SELECT count(*) FROM contcount.window_counts(ARRAY[1, 2, 3, 4], 2, 0.75, 'tree', ledger => 'windows');
SELECT count(*) FROM contcount.window_counts(ARRAY[1, 2, 3, 4], 2, 0.5, 'difference', ledger => 'windows');
SELECT spent FROM contcount.ledgers WHERE name = 'windows';

-- Errors: nothing released, nothing charged, even when the bad item comes
-- late.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT * FROM contcount.window_counts(ARRAY[1, 2, 3, -1], 2, 1, ledger => 'windows')$$),
    ($$SELECT * FROM contcount.window_counts(ARRAY[[1, 2], [3, 4]], 2, 1)$$),
    ($$SELECT * FROM contcount.window_counts(NULL, 2, 1)$$),
    ($$SELECT * FROM contcount.window_counts(ARRAY[1, 2], NULL, 1)$$),
    ($$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 0, 1)$$),
    ($$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 2, 0)$$),
    ($$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 2, 1, 'binary')$$),
    ($$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 2, 1, sensitivity => 0)$$),
    ($$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 2, 1, beta => 1)$$),
    ($$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 2, 1, ledger => 'no such ledger')$$),
    ($$SELECT * FROM contcount.window_counts(ARRAY[1, 2], 2, 100, ledger => 'windows')$$)
) v(s);
SELECT spent FROM contcount.ledgers WHERE name = 'windows';
SELECT contcount.drop_ledger('windows');
