-- running_mean: the continual mean under user-level privacy (issue 14).

-- The parameters, with their defaults filled in and epsilon as charged.
SELECT contcount.mean_mechanism(0, 1, 0.5, 1000, 16);
SELECT contcount.mean_mechanism(-1, 1, 1.0000000004, 1000, 16, units => 10, algorithm => 'naive',
                                resolution => 2, beta => 0.01, ledger => 'tests');

-- 25 samples from 5 units, 5 each, in a mixed order; each is lo or hi.
CREATE TABLE test.samples (t int, unit text, x float8);
INSERT INTO test.samples
SELECT t, 'u' || ((t * 7) % 25) / 5, CASE WHEN (t * t) % 3 = 0 THEN 3 ELSE -2 END
FROM generate_series(1, 25) t;

-- What each algorithm covers after each sample, counted here: a unit's
-- first 2^floor(log2 c) samples of its c so far (Algorithm 6, at most 4 a
-- unit with per_unit = 4), or all its first 4 (naive).  At epsilon 1000 with
-- one grid step (samples are lo or hi) every noise scale is below 0.02, so
-- the noise is 0 but with probability below 1e-20 and the mean is that of
-- the samples covered, exactly.
CREATE FUNCTION test.covered(algorithm text)
RETURNS TABLE (t int, covered bigint, mean float8)
LANGUAGE sql AS $$
    SELECT s.t, count(*), avg(c.x)
    FROM test.samples s
    CROSS JOIN (SELECT DISTINCT unit FROM test.samples) u
    JOIN LATERAL (
        SELECT o.x, row_number() OVER (ORDER BY o.t) AS rank, count(*) OVER () AS seen
        FROM test.samples o WHERE o.unit = u.unit AND o.t <= s.t
    ) c ON c.rank <= CASE WHEN algorithm = 'naive' THEN least(c.seen, 4)
                          ELSE 2 ^ floor(log(2, least(c.seen, 4)::numeric)) END
    GROUP BY s.t
$$;
CREATE FUNCTION test.released(algorithm text)
RETURNS TABLE (t int, r contcount.mean_release)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    SELECT s.t, contcount.running_mean(s.x, s.unit,
                                       contcount.mean_mechanism(-2, 3, 1000, 25, 4, units => 5,
                                                                algorithm => algorithm, resolution => 1))
                    OVER (ORDER BY s.t ROWS UNBOUNDED PRECEDING)
    FROM test.samples s;
END $$;
SELECT a.algorithm, count(*) AS rows,
       bool_and((s.r).t = s.t) AS t_is_the_sample,
       bool_and((s.r).covered = c.covered) AS covered_as_counted,
       bool_and(abs((s.r).mean - c.mean) < 1e-9) AS mean_of_the_covered,
       string_agg((s.r).covered::text, ' ' ORDER BY s.t) AS covered
FROM unnest(ARRAY['withhold', 'naive']) a(algorithm)
CROSS JOIN LATERAL test.released(a.algorithm) s
JOIN test.covered(a.algorithm) c ON c.t = s.t
GROUP BY a.algorithm ORDER BY a.algorithm;

-- The noise at epsilon 1: three levels of trees of depth 3 over 5 units,
-- each spending 1/3, of scales 3 * {1, 1, 2} * 3 grid steps of 5; at the end
-- each holds 5 elements, popcount 2 draws.
SELECT (r).covered, round((r).stddev::numeric, 9) AS stddev,
       round((5 * sqrt(2 * (2 * test.dlap_var(9) + test.dlap_var(18))) / 20)::numeric, 9) AS expected,
       (r).bound > (r).stddev AS bound_above
FROM (SELECT contcount.running_mean(x, unit, contcount.mean_mechanism(-2, 3, 1, 25, 4, units => 5, resolution => 1)) AS r
      FROM test.samples) s;

-- Noise is drawn afresh by each query: two releases of the same stream at
-- epsilon 0.001 (node scales of 9000 grid steps and more) agree at every row
-- with probability below 1e-12.
CREATE FUNCTION test.means() RETURNS float8[]
LANGUAGE sql AS $$
    SELECT array_agg((r).mean ORDER BY t)
    FROM (SELECT t, contcount.running_mean(x, unit, contcount.mean_mechanism(-2, 3, 0.001, 25, 4, resolution => 1))
                        OVER (ORDER BY t ROWS UNBOUNDED PRECEDING) AS r
          FROM test.samples) s
$$;
SELECT test.means() IS DISTINCT FROM test.means() AS fresh_noise;

-- Ten units of 2048 samples, one after the other, at epsilon 1000: the
-- plan clamps levels 9, 10 and 11 (blocks of 256, 512 and 1024 samples)
-- around medians of two arrays each.  Unit 0 alone cannot fill two arrays,
-- so after its 2048 samples only its first 256 are covered; its elements of
-- those levels wait until unit 1 has given 256, 512 and 1024 samples, and
-- enter then.
SELECT i, (r).t, (r).covered
FROM (SELECT i, contcount.running_mean(x, 'u' || (i - 1) / 2048,
                                       contcount.mean_mechanism(0, 1, 1000, 20480, 2048, units => 10))
                    OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) AS r
      FROM (SELECT i, (i % 7) / 6.0 AS x FROM generate_series(1, 20480) i) s) q
WHERE i IN (2048, 2303, 2304, 2559, 2560, 3071, 3072, 4096, 20480) ORDER BY i;

-- Each partition is a stream of its own and pays epsilon once; a plain
-- aggregate is the release after its last row; a row without a sample adds
-- none; units of any type with hashing.
SELECT spent AS spent_before FROM contcount.ledgers WHERE name = 'tests' \gset
SELECT unit, count(*) AS rows, max((r).t) AS samples
FROM (SELECT unit, contcount.running_mean(x, t, contcount.mean_mechanism(-2, 3, 1.5, 25, 4, ledger => 'tests'))
                       OVER (PARTITION BY unit ORDER BY t ROWS UNBOUNDED PRECEDING) AS r
      FROM test.samples WHERE unit IN ('u0', 'u1', 'u2')) s
GROUP BY unit ORDER BY unit;
SELECT spent - :spent_before AS spent FROM contcount.ledgers WHERE name = 'tests';
SELECT (contcount.running_mean(x, unit, -2, 3, 1, 25, 4)).t FROM test.samples;
SELECT contcount.running_mean(x, unit, -2, 3, 1, 25, 4) IS NULL AS no_release FROM test.samples WHERE false;
SELECT i, (r).t, (r).covered, (r).mean IS NULL AS no_mean
FROM (SELECT i, contcount.running_mean(x, 7, 0, 1, 1, 10, 4) OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) AS r
      FROM (VALUES (1, NULL::float8), (2, 0.5), (3, NULL)) v(i, x)) s ORDER BY i;
SELECT (contcount.running_mean(x, u, 0, 1, 1, 10, 4)).covered
FROM (VALUES (0.5, ARRAY[1, 2]), (0.5, ARRAY[2, 1]), (0.5, ARRAY[1, 2])) v(x, u);
CREATE AGGREGATE test.own_mean(float8, text, contcount.mean_mechanism) (
    SFUNC = contcount_internal.running_mean_step, STYPE = internal, FINALFUNC = contcount_internal.running_mean_final);

-- Errors.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.mean_mechanism(0, 1, 1, 10, 4, algorithm => 'median')$$),
    ($$SELECT contcount.mean_mechanism(1, 1, 1, 10, 4)$$),
    ($$SELECT contcount.mean_mechanism(0, 'infinity', 1, 10, 4)$$),
    ($$SELECT contcount.mean_mechanism(0, 1, 0, 10, 4)$$),
    ($$SELECT contcount.mean_mechanism(0, 1, 1, 0, 4)$$),
    ($$SELECT contcount.mean_mechanism(0, 1, 1, 10, 0)$$),
    ($$SELECT contcount.mean_mechanism(0, 1, 1, 10, 11)$$),
    ($$SELECT contcount.mean_mechanism(0, 1, 1, 10, 4, units => 11)$$),
    ($$SELECT contcount.mean_mechanism(0, 1, 1, 10, 4, resolution => 0)$$),
    ($$SELECT contcount.mean_mechanism(0, 1, 1, 10, 4, beta => 1)$$),
    ($$SELECT contcount.mean_mechanism(0, 1, NULL, 10, 4)$$),
    ($$SELECT contcount.mean_mechanism(0, 1, 1, 10, 4, algorithm => NULL)$$),
    -- a composite written by hand is checked as well
    ($$SELECT contcount.running_mean(x, unit, ROW('withhold', 0, 1, 1, 10, 40, NULL, NULL, NULL, NULL)::contcount.mean_mechanism) FROM test.samples$$),
    -- a moving frame would restart the stream and redraw its noise
    ($$SELECT contcount.running_mean(x, unit, -2, 3, 1, 25, 4) OVER (ORDER BY t ROWS 3 PRECEDING) FROM test.samples$$),
    -- parameters must be one value for every row
    ($$SELECT contcount.running_mean(x, unit, -2, 3, t, 25, 4) OVER (ORDER BY t ROWS UNBOUNDED PRECEDING) FROM test.samples$$),
    -- more samples than the horizon, more units than declared
    ($$SELECT contcount.running_mean(x, unit, -2, 3, 1, 24, 4) OVER (ORDER BY t ROWS UNBOUNDED PRECEDING) FROM test.samples$$),
    ($$SELECT contcount.running_mean(x, unit, contcount.mean_mechanism(-2, 3, 1, 25, 4, units => 4)) OVER (ORDER BY t ROWS UNBOUNDED PRECEDING) FROM test.samples$$),
    ($$SELECT contcount.running_mean(x, NULL::text, -2, 3, 1, 25, 4) FROM test.samples$$),
    ($$SELECT contcount.running_mean('NaN', unit, -2, 3, 1, 25, 4) FROM test.samples$$),
    -- units need hashing and equality
    ($$SELECT contcount.running_mean(x, point(t, t), -2, 3, 1, 25, 4) FROM test.samples$$),
    -- the support functions are not for anyone's aggregate
    ($$SELECT test.own_mean(x, unit, contcount.mean_mechanism(-2, 3, 1, 25, 4)) FROM test.samples$$)
) v(s);
DROP AGGREGATE test.own_mean(float8, text, contcount.mean_mechanism);
