-- running_count: the window aggregate.

CREATE TABLE test.daily (day int, country text, n bigint);
INSERT INTO test.daily
SELECT d, c, (d * 7 + length(c)) % 5
FROM generate_series(1, 40) d, unnest(ARRAY['fr', 'nz', 'usa']) c;

-- One release per row: t counts the rows; stddev is that of the binary
-- mechanism with 6 levels (horizon 40), popcount(t) draws of scale 6/0.5.
-- With beta = 1e-9 the bound fails with probability 1e-9.
SELECT (r).t, round((r).stddev::numeric, 6) AS stddev,
       round(sqrt(bit_count((r).t::bit(64)) * test.dlap_var(12))::numeric, 6) AS expected,
       abs((r).noisy_count - exact) <= (r).bound AS within_bound
FROM (
    SELECT day,
           contcount.running_count(n, contcount.mechanism('binary', 0.5, horizon => 40, beta => 1e-9))
               OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) AS r,
           sum(n) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) AS exact
    FROM test.daily WHERE country = 'fr'
) s
ORDER BY day LIMIT 8;

-- Every mechanism, per country: each partition is its own stream.  The
-- mechanism is a query parameter, here a PL/pgSQL variable: a call site's
-- parameters are one value for all its rows.
CREATE FUNCTION test.per_country(mechanism text)
RETURNS TABLE (country_ text, steps bigint, last_t bigint, within_bound boolean)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    SELECT s.country, count(*), max((s.r).t), bool_and(abs((s.r).noisy_count - s.exact) <= (s.r).bound)
    FROM (
        SELECT d.country,
               contcount.running_count(d.n, contcount.mechanism(mechanism, 1, horizon => 40, beta => 1e-9))
                   OVER (PARTITION BY d.country ORDER BY d.day ROWS UNBOUNDED PRECEDING) AS r,
               sum(d.n) OVER (PARTITION BY d.country ORDER BY d.day ROWS UNBOUNDED PRECEDING) AS exact
        FROM test.daily d
    ) s
    GROUP BY s.country;
END $$;
SELECT m.name, c.country_ AS country, c.steps, c.last_t, c.within_bound
FROM unnest(ARRAY['simple_i', 'simple_ii', 'two_level', 'binary', 'hybrid']) AS m(name),
     test.per_country(m.name) c
ORDER BY name, country;

-- The short form is mechanism auto: simple_ii over these 40 steps at epsilon 0.5.
SELECT (r).t, round((r).stddev::numeric, 6) AS stddev
FROM (
    SELECT day, contcount.running_count(n, 0.5, 40) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) AS r
    FROM test.daily WHERE country = 'nz'
) s ORDER BY day LIMIT 3;

-- Under the default RANGE framing, peers (rows with equal ORDER BY values)
-- all show the release after the last of them.  ROWS gives every row its own.
SELECT day, (contcount.running_count(n, 1, 120) OVER (ORDER BY day)).t AS range_t,
       (contcount.running_count(n, 1, 120) OVER (ORDER BY day, country ROWS UNBOUNDED PRECEDING)).t AS rows_t
FROM test.daily ORDER BY day, country LIMIT 6;

-- A frame covering the whole partition: every row gets the last release.
SELECT DISTINCT (contcount.running_count(n, 1, 40)
    OVER (ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)).t
FROM test.daily WHERE country = 'fr';

-- As a plain aggregate: the release at the last step.  No rows, no steps.
SELECT (contcount.running_count(n, contcount.mechanism('hybrid', 1))).t FROM test.daily;
SELECT contcount.running_count(n, contcount.mechanism('hybrid', 1)) IS NULL AS no_release
FROM test.daily WHERE false;

-- NULL is an empty step.
SELECT (r).t, (r).bound > 0 AS has_bound
FROM (SELECT contcount.running_count(x, 1, 3) OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) AS r, i
      FROM (VALUES (1, 2::bigint), (2, NULL), (3, 1)) v(i, x)) s ORDER BY i;

-- Errors.
SELECT s, test.error_of(s) FROM (VALUES
    -- a moving frame would restart the stream and redraw its noise
    ($$SELECT contcount.running_count(n, 1, 40) OVER (ORDER BY day ROWS 3 PRECEDING) FROM test.daily$$),
    ($$SELECT contcount.running_count(n, 1, 40) OVER (ORDER BY day ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) FROM test.daily$$),
    ($$SELECT contcount.running_count(n, 1, 40) OVER (ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE CURRENT ROW) FROM test.daily$$),
    -- the stream is longer than its horizon (120 rows)
    ($$SELECT contcount.running_count(n, 1, 100) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) FROM test.daily$$),
    ($$SELECT contcount.running_count(n, 1, 100) FROM test.daily$$),
    -- a negative item
    ($$SELECT contcount.running_count(n - 3, 1, 200) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) FROM test.daily$$),
    -- parameters that change from row to row
    ($$SELECT contcount.running_count(n, day / 10.0, 200) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) FROM test.daily$$),
    ($$SELECT contcount.running_count(n, contcount.mechanism('hybrid', day)) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) FROM test.daily$$),
    -- bad parameters
    ($$SELECT contcount.running_count(n, NULL::contcount.mechanism) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) FROM test.daily$$),
    ($$SELECT contcount.running_count(n, 0, 200) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) FROM test.daily$$),
    ($$SELECT contcount.running_count(n, 1, NULL) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) FROM test.daily$$),
    ($$SELECT contcount.running_count(n, ROW('binary', 1, NULL, NULL, 1, 0.05, NULL, NULL, NULL)::contcount.mechanism) FROM test.daily$$),
    ($$SELECT contcount.running_count(n, ROW('binary', 1, 200, NULL, 1, 2, NULL, NULL, NULL)::contcount.mechanism) FROM test.daily$$),
    -- a sum beyond bigint
    ($$SELECT contcount.running_count(x, 1, 3) FROM (VALUES (9223372036854775807), (1)) v(x)$$)
) AS cases(s);

-- The hints.
SELECT contcount.running_count(n, 1, 40) OVER (ORDER BY day ROWS 3 PRECEDING) FROM test.daily;
SELECT contcount.running_count(n, 1, 100) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) FROM test.daily;
SELECT contcount.running_count(n - 3, 1, 200) OVER (ORDER BY day ROWS UNBOUNDED PRECEDING) FROM test.daily;
