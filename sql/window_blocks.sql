-- window_counts with the blocks construction: every step and every aligned
-- block of K steps get their own draw of scale 2/epsilon (an event is in
-- two nodes), and each window is the least-squares estimate from both
-- levels: a block holding q of the window's steps adds q (K + 1 - q) / (K + 1)
-- draws' variance.  For longer windows, a third level of superblocks of K2
-- blocks (scale 3/epsilon) where it has the less mean variance.

-- Width 30 over 300 steps: K = 9 (the least mean variance over the series).
-- The variance at every step, in draws, against that sum counted here from
-- the window's steps grouped by block.
WITH r AS (
    SELECT t, stddev ^ 2 / test.dlap_var(2) AS draws
    FROM contcount.window_counts(ARRAY(SELECT 1::bigint FROM generate_series(1, 300)), 30, 1, 'blocks')),
q AS (
    SELECT t, (s - 1) / 9 AS b, count(*) AS q
    FROM generate_series(1, 300) t, generate_series(greatest(1, t - 29), t) s
    GROUP BY t, (s - 1) / 9),
e AS (SELECT t, sum(q * (10 - q) / 10.0) AS draws FROM q GROUP BY t)
SELECT count(*) AS steps,
       count(*) FILTER (WHERE abs(r.draws - e.draws) > 1e-9) AS other_than_the_sum,
       round(min(r.draws)::numeric, 6) AS least, round(max(r.draws)::numeric, 6) AS most
FROM r JOIN e USING (t);

-- A few steps: t = 1 one step of a block (9/10 of a draw), t = 9 a whole
-- block (9/10), t = 30 three blocks and 3 steps, then windows of 30 steps.
SELECT t, round((stddev ^ 2 / test.dlap_var(2))::numeric, 6) AS draws
FROM contcount.window_counts(ARRAY(SELECT 1::bigint FROM generate_series(1, 300)), 30, 1, 'blocks')
WHERE t IN (1, 5, 9, 10, 30, 31, 36, 300)
ORDER BY t;

-- Within the bound at every step, at beta = 1e-12.
SELECT count(*) AS steps,
       count(*) FILTER (WHERE abs(r.noisy_count - e.exact) > r.bound) AS outside
FROM contcount.window_counts(
         ARRAY(SELECT (i * 3) % 4 FROM generate_series(1, 1000) i ORDER BY i),
         100, 0.5, 'blocks', beta => 1e-12) r
     JOIN (SELECT i AS t, sum((i * 3) % 4) OVER (ORDER BY i ROWS 99 PRECEDING) AS exact
           FROM generate_series(1, 1000) i) e USING (t);

-- auto picks blocks for a year's window over ten years of days, and its
-- mean variance is below the kary window's (three levels: 152.8; two
-- levels gave 159.3).
SELECT count(*) FROM contcount.window_counts(ARRAY(SELECT 1::bigint FROM generate_series(1, 3650)), 365, 1);
SELECT round(avg(b.stddev ^ 2)::numeric, 1) AS blocks, round(avg(k.stddev ^ 2)::numeric, 1) AS kary
FROM contcount.window_counts(ARRAY(SELECT 1::bigint FROM generate_series(1, 3650)), 365, 1, 'blocks') b
     JOIN contcount.window_counts(ARRAY(SELECT 1::bigint FROM generate_series(1, 3650)), 365, 1, 'kary') k
     USING (t);

-- There blocks has three levels: K1 = 9, K2 = 10 (superblocks of 90 steps),
-- draws of scale 3/epsilon (an event is in three nodes).  The variance at
-- every step, in draws, against the blocks' q (10 - q) / 10 less each
-- superblock's P^2 / (D1 D2), D1 = 10, D2 = 90 + 9 + 1, counted here from
-- the window's steps.
WITH r AS (
    SELECT t, stddev ^ 2 / test.dlap_var(3) AS draws
    FROM contcount.window_counts(ARRAY(SELECT 1::bigint FROM generate_series(1, 3650)), 365, 1, 'blocks')),
s AS (SELECT t, s FROM generate_series(1, 3650) t, generate_series(greatest(1, t - 364), t) s),
q AS (SELECT t, sum(q * (10 - q) / 10.0) AS shares
      FROM (SELECT t, count(*) AS q FROM s GROUP BY t, (s - 1) / 9) b GROUP BY t),
p AS (SELECT t, sum(p * p / 1000.0) AS squares
      FROM (SELECT t, count(*) AS p FROM s GROUP BY t, (s - 1) / 90) b GROUP BY t)
SELECT count(*) AS steps,
       count(*) FILTER (WHERE abs(r.draws - (q.shares - p.squares)) > 1e-9) AS other_than_the_sum,
       round(min(r.draws)::numeric, 6) AS least, round(max(r.draws)::numeric, 6) AS most
FROM r JOIN q USING (t) JOIN p USING (t);

-- Width above the series: clamped to it, every window a running count.
SELECT count(*) AS steps, bool_and(stddev > 0) AS noisy
FROM contcount.window_counts(ARRAY[1, 2, 3], 10, 1, 'blocks');
