-- window_counts with the kary construction: the k-ary tree with negative
-- digits truncated at the levels the width needs, each window the
-- difference of two prefixes whose common blocks cancel.

-- Width 3 over 8 steps: k = 7 gives h = 1 level ((7 - 1) / 2 >= 3), so
-- every step is a block of its own with one draw of scale 1/epsilon and the
-- window at t sums min(t, 3) of them.
SELECT t, round((stddev ^ 2 / test.dlap_var(1))::numeric, 9) AS draws
FROM contcount.window_counts(ARRAY[1, 0, 2, 1, 0, 0, 3, 1], 3, 1, 'kary');

-- Width 100 over 1000 steps: k = 15, h = 2 levels ((15^2 - 1) / 2
-- >= 100), scale 2/epsilon a block; the window at t <= 100 is prefix(t),
-- sum |d_j| draws: t = 7 is seven blocks of 1, t = 8 = 15 - 7 one block
-- of 15 minus seven of 1, t = 15 one block, t = 23 = 2 * 15 - 7 nine.
SELECT t, round((stddev ^ 2 / test.dlap_var(2))::numeric, 9) AS draws
FROM contcount.window_counts(ARRAY(SELECT 1::bigint FROM generate_series(1, 1000)), 100, 1, 'kary')
WHERE t IN (1, 7, 8, 15, 23, 100, 101, 500, 1000)
ORDER BY t;

-- Within the bound at every step, at beta = 1e-12.
SELECT count(*) AS steps,
       count(*) FILTER (WHERE abs(r.noisy_count - e.exact) > r.bound) AS outside
FROM contcount.window_counts(
         ARRAY(SELECT (i * 3) % 4 FROM generate_series(1, 1000) i ORDER BY i),
         100, 0.5, 'kary', beta => 1e-12) r
     JOIN (SELECT i AS t, sum((i * 3) % 4) OVER (ORDER BY i ROWS 99 PRECEDING) AS exact
           FROM generate_series(1, 1000) i) e USING (t);

-- auto picks kary for a week's window over ten years of days (for a year's,
-- blocks: sql/window_blocks.sql).
SELECT count(*) FROM contcount.window_counts(ARRAY(SELECT 1::bigint FROM generate_series(1, 3650)), 7, 1);

-- Width above the series: clamped to it, every window a running count.
SELECT count(*) AS steps, bool_and(stddev > 0) AS noisy
FROM contcount.window_counts(ARRAY[1, 2, 3], 10, 1, 'kary');
