-- Statistical tests: the noise has the variance of the formulas.
--
-- 10000 independent releases of one 64-step stream per mechanism (for
-- hybrid, with a horizon of 64, which only its bound uses).  At a few steps
-- the empirical variance of noisy - exact must match the formula of
-- docs/design.md ("Privacy invariants") or the README (with discrete
-- Laplace variance 2p/(1-p)^2, p = exp(-1/b)), within z = 5.9 standard
-- errors of the sample variance, sqrt((kappa4 + 2 var^2) / N).  Fewer than
-- forty rows of a mean and a variance check, and the independence check
-- below, at a two-sided 3.7e-9 each: a false alarm in fewer than one run in
-- three million.  A wrong scale, even one tree level off (a quarter less
-- variance), moves the variance by well over the tolerance of 8-13% (up to
-- 20% for honaker).
--
-- honaker releases its estimate rounded to an integer, at most 1/2 away:
-- that can move the variance by up to sd + 1/4, and the mean's standard
-- error by up to 1/2 / sqrt(N), which its tolerances add.

CREATE TABLE test.stream AS
SELECT i AS t, (i * 5 + 1) % 3 AS n, sum((i * 5 + 1) % 3) OVER (ORDER BY i) AS exact
FROM generate_series(1, 64) i;

-- (count, scale) of the draws in the release at t, from the table in
-- docs/design.md ("Privacy invariants") at epsilon = 0.7, T = 64,
-- sensitivity 1, for the mechanisms whose release is a plain sum of draws
CREATE FUNCTION test.noise_terms(mechanism text, t bigint)
RETURNS TABLE (draws bigint, scale float8) LANGUAGE sql IMMUTABLE AS $$
    SELECT draws, scale FROM (VALUES
        ('simple_i', 1::bigint, 64 / 0.7),
        ('simple_ii', t, 1 / 0.7),
        ('two_level', t / 8 + t % 8, 2 / 0.7),
        ('binary', bit_count(t::bit(64)), 7 / 0.7),
        ('hybrid', floor(log(2, t))::bigint + 1, 2 / 0.7),
        ('hybrid', bit_count((t - 2 ^ floor(log(2, t)))::bigint::bit(64)),
                   2 * floor(log(2, t)) / 0.7),
        -- height 8, the smallest even h with C(h, h/2) = 70 > 64: weight 4
        ('smooth_binary', 4, 4 / 0.7)
    ) v(m, draws, scale)
    WHERE m = mechanism AND draws > 0
$$;

-- Honaker's release weighs its draws (all of scale 7 / 0.7): the estimate of
-- the live node of level d weighs each of the 2^(d-j) draws of level j below
-- it by 2^j / (2^(d+1) - 1), so the variance is the sum of weight^2 times a
-- draw's variance, and the fourth cumulant that of weight^4 times a draw's.
CREATE FUNCTION test.honaker_noise(t bigint, OUT variance float8, OUT kappa4 float8)
LANGUAGE sql IMMUTABLE AS $$
    SELECT sum(2 ^ (d - j) * w ^ 2) * test.dlap_var(7 / 0.7),
           sum(2 ^ (d - j) * w ^ 4) * test.dlap_kappa4(7 / 0.7)
    FROM generate_series(0, 6) d, generate_series(0, d) j,
         LATERAL (SELECT 2 ^ j / (2 ^ (d + 1) - 1) AS w) weight
    WHERE (t >> d) & 1 = 1
$$;

-- Variance, fourth cumulant, and how far rounding may move the release
CREATE FUNCTION test.expected_noise(mechanism text, t bigint,
                                    OUT variance float8, OUT kappa4 float8, OUT rounding float8)
LANGUAGE sql IMMUTABLE AS $$
    SELECT h.variance, h.kappa4, 0.5 FROM test.honaker_noise(t) h WHERE mechanism = 'honaker'
    UNION ALL
    SELECT sum(draws * test.dlap_var(scale)), sum(draws * test.dlap_kappa4(scale)), 0
    FROM test.noise_terms(mechanism, t) WHERE mechanism <> 'honaker'
$$;

-- One window call site per mechanism, whose name is a query parameter (a
-- PL/pgSQL variable): the parameters of a call site are one value for all its
-- rows.  Each trial is a partition, a stream and a release of its own.
CREATE TABLE test.trials (mechanism text, trial int, t int, err bigint, stddev float8);
DO $$
DECLARE
    m text;
BEGIN
    FOREACH m IN ARRAY ARRAY['simple_i', 'simple_ii', 'two_level', 'binary', 'hybrid', 'honaker',
                             'smooth_binary'] LOOP
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
       abs(avg(err)) <= 5.9 * (sqrt(f.variance) + f.rounding) / sqrt(count(*)) AS mean_ok,
       abs(var_pop(err) - f.variance)
           <= 5.9 * sqrt((f.kappa4 + 2 * f.variance ^ 2) / count(*))
              + f.rounding * (2 * sqrt(f.variance) + f.rounding) AS variance_ok,
       abs(max(stddev) - sqrt(f.variance)) < 1e-9 * sqrt(f.variance) AS stddev_ok
FROM test.trials
CROSS JOIN LATERAL test.expected_noise(mechanism, t) f
GROUP BY mechanism, t, f.variance, f.kappa4, f.rounding
ORDER BY mechanism, t;

-- Two releases of the same series draw independent noise: the correlation
-- of their errors is within 5.9 / sqrt(N) of zero.  Here every trial calls
-- running_counts twice, each call a release of its own.
SELECT abs(corr(a.noisy_count - s.exact, b.noisy_count - s.exact)) <= 5.9 / sqrt(count(*)) AS independent
FROM generate_series(1, 2000) trial,
     LATERAL contcount.running_counts(ARRAY(SELECT n FROM test.stream ORDER BY t), 0.7,
                                      horizon => 64 + trial * 0, mechanism => 'binary') a
     JOIN LATERAL contcount.running_counts(ARRAY(SELECT n FROM test.stream ORDER BY t), 0.7,
                                           horizon => 64 + trial * 0, mechanism => 'binary') b USING (t)
     JOIN test.stream s USING (t)
WHERE t = 64;

-- setseed() has no part in the noise: the same seed gives other values.
CREATE TABLE test.seeded (run int, noisy bigint[]);
SELECT setseed(0.25);
INSERT INTO test.seeded
SELECT 1, array_agg(noisy_count ORDER BY t) FROM contcount.running_counts(ARRAY(SELECT n FROM test.stream ORDER BY t), 0.7, mechanism => 'binary');
SELECT setseed(0.25);
INSERT INTO test.seeded
SELECT 2, array_agg(noisy_count ORDER BY t) FROM contcount.running_counts(ARRAY(SELECT n FROM test.stream ORDER BY t), 0.7, mechanism => 'binary');
SELECT count(DISTINCT noisy) AS distinct_releases FROM test.seeded;
