-- Outputs built for people: auto is the default mechanism; running counts
-- that are non-negative and non-decreasing on request (monotone), at no
-- extra charge; running means inside [lo, hi]; a filtered release returns
-- the filtered keys only.  Run as an analyst, not a superuser.

SELECT contcount.create_ledger('outputs_team', 1000);
SELECT contcount.create_ledger('outputs_data', 1000);
CREATE ROLE regress_outputs LOGIN;
SELECT contcount.grant_ledger('outputs_team', 'regress_outputs');

-- A protected source: one row a person, in one of three countries.
CREATE TABLE test.out_signups (user_id int, country text, at timestamptz);
INSERT INTO test.out_signups
SELECT u, (ARRAY['fr', 'de', 'us'])[1 + u % 3], '2026-03-01'::timestamptz + u * interval '1 hour'
FROM generate_series(1, 90) u;
SELECT contcount.protect_table('out_src', 'test.out_signups', 'user_id', 'at', 'outputs_data',
                               max_rows => 1, max_groups => 1);
SELECT contcount.source_dimension('out_src', 'country', ARRAY['fr', 'de', 'us']);
SELECT contcount.grant_source('out_src', 'regress_outputs');

-- What the analyst's ledger has spent, as the analyst sees it.
CREATE FUNCTION test.out_spent() RETURNS numeric
LANGUAGE sql AS $$ SELECT spent FROM contcount.ledgers WHERE name = 'outputs_team' $$;
GRANT USAGE ON SCHEMA test TO regress_outputs;
GRANT EXECUTE ON FUNCTION test.out_spent() TO regress_outputs;

SET ROLE regress_outputs;

-- auto is the default: the mechanism of least variance for the horizon.
SELECT (contcount.mechanism(epsilon => 1, horizon => 365)).name AS default_mechanism;
SELECT count(*) FROM contcount.running_counts(ARRAY(SELECT 1::bigint FROM generate_series(1, 365)), 1);
-- binary and the others stay selectable
SELECT (contcount.mechanism('binary', 1, 365)).name AS named;

-- monotone: every series non-decreasing and >= 0, for every mechanism, over
-- 300 empty steps at a tiny epsilon (without it, the noise drives the raw
-- series below 0 and down again: shown, for the same parameters, as
-- raw_monotone false).
SELECT m AS mechanism,
       bool_and(noisy_count >= 0 AND noisy_count >= coalesce(previous, 0)) AS monotone,
       count(*) AS steps
FROM unnest(ARRAY['auto', 'binary', 'two_level', 'honaker', 'smooth_binary', 'hybrid']) m,
     LATERAL (SELECT noisy_count, lag(noisy_count) OVER (ORDER BY t) AS previous
              FROM contcount.running_counts(ARRAY(SELECT 0::bigint FROM generate_series(1, 300)), 0.01,
                                            mechanism => m, monotone => true)) r
GROUP BY m ORDER BY m;
-- (at t = 1, 2, 4, ..., 2048 the raw release is one node's draw, 12
-- independent draws: all >= 0 and in order with probability below 1e-12)
SELECT bool_and(noisy_count >= 0 AND noisy_count >= coalesce(previous, 0)) AS raw_monotone
FROM (SELECT noisy_count, lag(noisy_count) OVER (ORDER BY t) AS previous
      FROM contcount.running_counts(ARRAY(SELECT 0::bigint FROM generate_series(1, 2048)), 0.01,
                                    mechanism => 'binary')) r;

-- The bound still holds at every step (beta 1e-12: the projection moves no
-- output farther than the series' largest bound, plus 1/2 for rounding),
-- and stddev is the raw release's.
SELECT m AS mechanism,
       bool_and(abs(r.noisy_count - e.exact) <= r.bound) AS within_bound,
       bool_and(r.bound = max_bound) AS one_bound,
       bool_and(r.noisy_count >= 0 AND r.noisy_count >= coalesce(r.previous, 0)) AS monotone
FROM unnest(ARRAY['binary', 'two_level']) m,
     LATERAL (SELECT *, lag(noisy_count) OVER (ORDER BY t) AS previous, max(bound) OVER () AS max_bound
              FROM contcount.running_counts(ARRAY(SELECT (i * 7) % 3 FROM generate_series(1, 200) i ORDER BY i),
                                            0.5, mechanism => m, beta => 1e-12, monotone => true)) r
     JOIN (SELECT i AS t, sum((i * 7) % 3) OVER (ORDER BY i) AS exact
           FROM generate_series(1, 200) i) e USING (t)
GROUP BY m ORDER BY m;
SELECT t, round(stddev::numeric, 6) AS stddev
FROM contcount.running_counts(ARRAY[1, 0, 2, 1], 1, mechanism => 'binary', monotone => true);

-- window_counts, nonnegative: every window's count >= 0 over 300 empty
-- steps at a tiny epsilon (without it, about half are below 0); a window's
-- count may go down, so it has no monotone.
SELECT count(*) AS windows, bool_and(noisy_count >= 0) AS nonnegative, bool_and(bound > 0) AS bounded
FROM contcount.window_counts(ARRAY(SELECT 0::bigint FROM generate_series(1, 300)), 8, 0.01,
                             construction => 'tree', ledger => 'outputs_team', nonnegative => true);

-- monotone charges nothing more: the ledger spends the same with it as
-- without it, for running_counts and source_running_counts.
CREATE TEMP TABLE spent_at (step int, spent numeric);
INSERT INTO spent_at SELECT 0, test.out_spent();
SELECT count(*) FROM contcount.running_counts(ARRAY[3, 1, 4, 1, 5], 0.25, mechanism => 'binary',
                                              ledger => 'outputs_team');
INSERT INTO spent_at SELECT 1, test.out_spent();
SELECT count(*) FROM contcount.running_counts(ARRAY[3, 1, 4, 1, 5], 0.25, mechanism => 'binary',
                                              ledger => 'outputs_team', monotone => true);
INSERT INTO spent_at SELECT 2, test.out_spent();
SELECT count(*) FROM contcount.source_running_counts('out_src', 0.5, '1 day', '2026-03-01', 5,
                                                     dimension => 'country', ledger => 'outputs_team');
INSERT INTO spent_at SELECT 3, test.out_spent();
SELECT count(*) FROM contcount.source_running_counts('out_src', 0.5, '1 day', '2026-03-01', 5,
                                                     dimension => 'country', ledger => 'outputs_team',
                                                     monotone => true);
INSERT INTO spent_at SELECT 4, test.out_spent();
SELECT s1.spent - s0.spent AS raw, s2.spent - s1.spent AS monotone,
       s3.spent - s2.spent AS source_raw, s4.spent - s3.spent AS source_monotone
FROM spent_at s0, spent_at s1, spent_at s2, spent_at s3, spent_at s4
WHERE (s0.step, s1.step, s2.step, s3.step, s4.step) = (0, 1, 2, 3, 4);

-- source_running_counts, monotone: every key's series non-decreasing, >= 0
-- (at a tiny epsilon, 40 steps of an hour, mostly empty).
SELECT key, bool_and(noisy_count >= 0 AND noisy_count >= coalesce(previous, 0)) AS monotone,
       count(*) AS steps
FROM (SELECT key, noisy_count, lag(noisy_count) OVER (PARTITION BY key ORDER BY t) AS previous
      FROM contcount.source_running_counts('out_src', 0.01, '1 hour', '2026-03-01', 40,
                                           dimension => 'country', monotone => true)) r
GROUP BY key ORDER BY key;

-- A filter on the released dimension: its keys only, in declared order.
SELECT key FROM contcount.source_counts('out_src', 0.5, 'country', filter => '{"country": ["us", "fr"]}');
SELECT DISTINCT key FROM contcount.source_running_counts('out_src', 0.5, '1 day', '2026-03-01', 3,
                                                         dimension => 'country',
                                                         filter => '{"country": ["de"]}')
ORDER BY key;
-- without a filter, every declared key
SELECT key FROM contcount.source_counts('out_src', 0.5, 'country');

-- Running means stay inside [lo, hi], even at a tiny epsilon (0/1 samples):
-- without the clamp, the noise puts most of them far outside.
SELECT count(*) AS rows, bool_and(mean BETWEEN 0 AND 1) AS within_range
FROM (SELECT (contcount.running_mean(x, i, contcount.mean_mechanism(0, 1, 0.01, 500, 1)) OVER (ORDER BY i)).mean
      FROM (SELECT i, (i % 2)::float8 AS x FROM generate_series(1, 500) i) s) r
WHERE mean IS NOT NULL;

-- A monotone counter: current() and history() show the running maximum
-- of its releases, clamped at 0, so what it showed never changes; charged
-- as the same counter without the option.  Nothing is fed: every step is
-- empty, and its raw releases are noise around 0 (seen below as a superuser).
INSERT INTO spent_at SELECT 5, test.out_spent();
SELECT contcount.create_counter('out_plain', 0.01, mechanism => 'binary', horizon => 30, step => '1 day',
                                ledger => 'outputs_team');
INSERT INTO spent_at SELECT 6, test.out_spent();
SELECT contcount.create_counter('out_monotone', 0.01, mechanism => 'binary', horizon => 30, step => '1 day',
                                ledger => 'outputs_team', monotone => true);
INSERT INTO spent_at SELECT 7, test.out_spent();
SELECT s6.spent - s5.spent AS plain, s7.spent - s6.spent AS monotone
FROM spent_at s5, spent_at s6, spent_at s7 WHERE (s5.step, s6.step, s7.step) = (5, 6, 7);
SELECT count(contcount.tick('out_monotone')) AS steps FROM generate_series(1, 20);
SELECT count(*) AS steps,
       bool_and(noisy_count >= 0 AND noisy_count >= coalesce(previous, 0)) AS monotone,
       bool_and(bound >= coalesce(previous_bound, 0)) AS bound_kept
FROM (SELECT noisy_count, bound, lag(noisy_count) OVER (ORDER BY t) AS previous,
             lag(bound) OVER (ORDER BY t) AS previous_bound
      FROM contcount.history('out_monotone')) h;
SELECT c.t = 20 AS last, c.noisy_count = h.noisy_count AS same
FROM contcount.current('out_monotone') c JOIN contcount.history('out_monotone') h USING (t);

RESET ROLE;
-- what history() shows is, at every step, the largest raw release so far,
-- or 0 (the raw releases are readable by superusers only)
SELECT count(*) AS steps, bool_and(h.noisy_count = r.running_max) AS running_max
FROM (SELECT t, greatest(0, max(noisy_count) OVER (ORDER BY t)) AS running_max
      FROM contcount.counter_release JOIN contcount.counter c ON c.id = counter_id
      WHERE c.name = 'out_monotone') r
     JOIN contcount.history('out_monotone') h USING (t);
SELECT name, monotone FROM contcount.counter WHERE name LIKE 'out\_%' ORDER BY name;
SELECT contcount.drop_counter('out_plain');
SELECT contcount.drop_counter('out_monotone');
