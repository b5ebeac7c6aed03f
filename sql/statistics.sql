-- Statistical tests: the noise has the variance of the formulas.
--
-- 10000 independent releases of one 64-step stream per mechanism (for
-- hybrid, with a horizon of 64, which only its bound uses).  At a few
-- steps the empirical variance of noisy - exact must match the formula of
-- DESIGN.md (with discrete Laplace variance 2p/(1-p)^2, p = exp(-1/b)),
-- within z = 5.6 standard errors of the sample variance, sqrt((kappa4 +
-- 2 var^2) / N).  Forty checks at a two-sided 2e-8 each: a false alarm in
-- fewer than one run in a million.  A wrong scale, even one tree level off,
-- moves the variance by well over the tolerance of about 6%.

CREATE TABLE test.stream AS
SELECT i AS t, (i * 5 + 1) % 3 AS n, sum((i * 5 + 1) % 3) OVER (ORDER BY i) AS exact
FROM generate_series(1, 64) i;

-- (count, scale) of the draws in the release at t, from the table in DESIGN.md
-- at epsilon = 0.7, T = 64, sensitivity 1
CREATE FUNCTION test.noise_terms(mechanism text, t bigint)
RETURNS TABLE (draws bigint, scale float8) LANGUAGE sql IMMUTABLE AS $$
    SELECT draws, scale FROM (VALUES
        ('simple_i', 1::bigint, 64 / 0.7),
        ('simple_ii', t, 1 / 0.7),
        ('two_level', t / 8 + t % 8, 2 / 0.7),
        ('binary', bit_count(t::bit(64)), 7 / 0.7),
        ('hybrid', floor(log(2, t))::bigint + 1, 2 / 0.7),
        ('hybrid', bit_count((t - 2 ^ floor(log(2, t)))::bigint::bit(64)),
                   2 * floor(log(2, t)) / 0.7)
    ) v(m, draws, scale)
    WHERE m = mechanism AND draws > 0
$$;

-- One window call site per mechanism, whose name is a query parameter (a
-- PL/pgSQL variable): the parameters of a call site are one value for all its
-- rows.  Each trial is a partition, a stream and a release of its own.
CREATE TABLE test.trials (mechanism text, trial int, t int, err bigint, stddev float8);
DO $$
DECLARE
    m text;
BEGIN
    FOREACH m IN ARRAY ARRAY['simple_i', 'simple_ii', 'two_level', 'binary', 'hybrid'] LOOP
        INSERT INTO test.trials
        SELECT m, trial, t, (r).noisy_count - exact, (r).stddev
        FROM (
            SELECT trial, s.t, s.exact,
                   contcount.running_count(s.n, contcount.mechanism(m, 0.7, horizon => 64))
                       OVER (PARTITION BY trial ORDER BY s.t ROWS UNBOUNDED PRECEDING) AS r
            FROM generate_series(1, 10000) trial, test.stream s
        ) releases
        WHERE t IN (1, 5, 31, 48, 64);
    END LOOP;
END $$;

SELECT mechanism, t,
       abs(avg(err)) <= 5.6 * sqrt(expected_var / count(*)) AS mean_ok,
       abs(var_pop(err) - expected_var)
           <= 5.6 * sqrt((expected_kappa4 + 2 * expected_var ^ 2) / count(*)) AS variance_ok,
       abs(max(stddev) - sqrt(expected_var)) < 1e-9 * sqrt(expected_var) AS stddev_ok
FROM test.trials
JOIN LATERAL (SELECT sum(draws * test.dlap_var(scale)) AS expected_var,
                     sum(draws * test.dlap_kappa4(scale)) AS expected_kappa4
              FROM test.noise_terms(mechanism, t)) f ON true
GROUP BY mechanism, t, expected_var, expected_kappa4
ORDER BY mechanism, t;

-- Two releases of the same series draw independent noise: the correlation
-- of their errors is within 5.6 / sqrt(N) of zero.  Here every trial calls
-- running_counts twice, each call a release of its own.
SELECT abs(corr(a.noisy_count - s.exact, b.noisy_count - s.exact)) <= 5.6 / sqrt(count(*)) AS independent
FROM generate_series(1, 2000) trial,
     LATERAL contcount.running_counts(ARRAY(SELECT n FROM test.stream ORDER BY t), 0.7,
                                      horizon => 64 + trial * 0) a
     JOIN LATERAL contcount.running_counts(ARRAY(SELECT n FROM test.stream ORDER BY t), 0.7,
                                           horizon => 64 + trial * 0) b USING (t)
     JOIN test.stream s USING (t)
WHERE t = 64;

-- setseed() has no part in the noise: the same seed gives other values.
CREATE TABLE test.seeded (run int, noisy bigint[]);
SELECT setseed(0.25);
INSERT INTO test.seeded
SELECT 1, array_agg(noisy_count ORDER BY t) FROM contcount.running_counts(ARRAY(SELECT n FROM test.stream ORDER BY t), 0.7);
SELECT setseed(0.25);
INSERT INTO test.seeded
SELECT 2, array_agg(noisy_count ORDER BY t) FROM contcount.running_counts(ARRAY(SELECT n FROM test.stream ORDER BY t), 0.7);
SELECT count(DISTINCT noisy) AS distinct_releases FROM test.seeded;
