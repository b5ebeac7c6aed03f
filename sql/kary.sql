-- Mechanism kary, the k-ary tree with negative digits: its arity k chosen
-- from the horizon or given as block, and its releases through the window
-- aggregate, running_counts, a counter and a source.  At epsilon 1000 the
-- noise is 0 but with probability about 2e^-300, so the counts show what
-- the mechanism read; the stddevs are public: sum |d_j| draws of scale
-- h / epsilon at t, t's balanced base-k digits d_j.

-- the draws at t in balanced base k, computed apart from the extension
CREATE FUNCTION test.kary_draws(t bigint, k bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    n bigint := 0;
    r bigint;
BEGIN
    WHILE t <> 0 LOOP
        r := ((t % k) + k) % k;
        IF r > (k - 1) / 2 THEN r := r - k; END IF;
        n := n + abs(r);
        t := (t - r) / k;
    END LOOP;
    RETURN n;
END $$;

-- The constructor: the k of least mean variance, or the one given.
SELECT name, horizon, block FROM contcount.mechanism('kary', 1, horizon => 1000);
SELECT name, horizon, block FROM contcount.mechanism('kary', 1, horizon => 1048576);
SELECT name, horizon, block FROM contcount.mechanism('kary', 1, horizon => 13, block => 3);
-- auto picks it where it has the least mean variance
SELECT name, block FROM contcount.mechanism('auto', 1, horizon => 1000);
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.mechanism('kary', 1, horizon => 100, block => 4)$$),
    ($$SELECT contcount.mechanism('kary', 1, horizon => 100, block => 1)$$),
    ($$SELECT contcount.mechanism('kary', 1, horizon => 100, block => 255)$$),
    ($$SELECT contcount.mechanism('kary', 1, horizon => 4611686018427387904, block => 11)$$),
    ($$SELECT contcount.mechanism('kary', 1)$$),
    ($$SELECT contcount.mechanism('kary', rho => 0.5, horizon => 100)$$)
) AS cases(s);

-- running_counts, k = 3 over 13 steps (h = 3 levels, scale 3): the exact
-- counts, and each step's variance is its draws' (5 = 9 - 3 - 1: three).
SELECT t, noisy_count, x AS "items summed"
FROM contcount.running_counts(ARRAY[3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9], 1000,
                              mechanism => 'kary', horizon => 13, block => 3) r
JOIN LATERAL (SELECT sum(v) AS x FROM unnest(ARRAY[3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9])
              WITH ORDINALITY u(v, i) WHERE i <= r.t) s ON true
ORDER BY t;
SELECT t, test.kary_draws(t, 3) AS draws,
       round((stddev ^ 2 / test.dlap_var(3))::numeric, 9) AS "variance / one draw's"
FROM contcount.running_counts(array_fill(0::bigint, ARRAY[13]), 1,
                              mechanism => 'kary', horizon => 13, block => 3)
ORDER BY t;
-- at 1000 steps every variance is its draws' at the chosen k = 13 (h = 3)
SELECT count(*) AS steps,
       count(*) FILTER (WHERE abs(stddev ^ 2 - test.kary_draws(t, 13) * test.dlap_var(3)) < 1e-9)
           AS "as its draws",
       round(avg(stddev ^ 2)::numeric, 2) AS mean_variance
FROM contcount.running_counts(array_fill(0::bigint, ARRAY[1000]), 1, mechanism => 'kary');

-- The window aggregate: the mechanism's value carries its k.
SELECT t, x, (contcount.running_count(x, contcount.mechanism('kary', 1000, horizon => 6, block => 5))
              OVER (ORDER BY t)).noisy_count
FROM (VALUES (1, 3), (2, 1), (3, 4), (4, 1), (5, 5), (6, 9)) v(t, x) ORDER BY t;

-- Counters: fed by a trigger, stepped by tick.  kary_c's history is the
-- exact counts; kary_v's (k = 5 for 30 steps: h = 3, scale 3 at epsilon 1)
-- has the stddevs of its draws.
SELECT contcount.create_ledger('kary', 10000);
SET contcount.ledger = 'kary';
CREATE TABLE test.kary_rows (id int);
SELECT contcount.create_counter('kary_c', 1000, mechanism => 'kary', horizon => 30, step => '1 day', beta => 1e-9);
SELECT contcount.create_counter('kary_v', 1, mechanism => 'kary', horizon => 30, step => '1 day', block => 5);
SELECT name, mechanism, horizon FROM contcount.counters WHERE name LIKE 'kary%' ORDER BY name;
CREATE TRIGGER count_kary AFTER INSERT ON test.kary_rows
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('kary_c');
CREATE TRIGGER count_kary_v AFTER INSERT ON test.kary_rows
    FOR EACH ROW EXECUTE FUNCTION contcount.count_inserts('kary_v');
CREATE FUNCTION test.kary_tick() RETURNS void LANGUAGE sql AS $$
    SELECT contcount.tick('kary_c'); SELECT contcount.tick('kary_v') $$;
INSERT INTO test.kary_rows SELECT g FROM generate_series(1, 4) g;
SELECT test.kary_tick();
INSERT INTO test.kary_rows SELECT g FROM generate_series(1, 3) g;
SELECT test.kary_tick();
SELECT test.kary_tick();
INSERT INTO test.kary_rows VALUES (1);
SELECT test.kary_tick();
SELECT test.kary_tick();
SELECT c.t, c.noisy_count, test.kary_draws(c.t, 5) AS draws,
       round((v.stddev ^ 2 / test.dlap_var(3))::numeric, 9) AS "variance / one draw's"
FROM contcount.history('kary_c') c JOIN contcount.history('kary_v') v USING (t) ORDER BY t;
SELECT contcount.drop_counter('kary_c');
SELECT contcount.drop_counter('kary_v');

-- A source release: three days of a protected table, one person's rows
-- capped at max_rows = 2, the noise calibrated to it.
CREATE TABLE test.kary_visits (person int, at timestamptz);
INSERT INTO test.kary_visits VALUES (1, '2026-01-01 10:00+00'), (2, '2026-01-01 11:00+00'),
    (1, '2026-01-02 10:00+00'), (1, '2026-01-02 12:00+00'), (3, '2026-01-03 09:00+00');
SELECT contcount.protect_table('kary_visits', 'test.kary_visits', 'person', 'at', 'kary', max_rows => 2);
SELECT t, noisy_count
FROM contcount.source_running_counts('kary_visits', 1000, '1 day', '2026-01-01 00:00+00', 3,
                                     mechanism => 'kary')
ORDER BY t;
-- at epsilon 1: k = 7, one level (3 <= (7 - 1) / 2), t draws of scale 2
SELECT t, round((stddev ^ 2 / test.dlap_var(2))::numeric, 9) AS "variance / one draw's"
FROM contcount.source_preview('kary_visits', 1, 3, mechanism => 'kary') ORDER BY t;
SELECT contcount.drop_source('kary_visits');
RESET contcount.ledger;
