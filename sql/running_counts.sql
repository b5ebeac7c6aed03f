-- running_counts: the release of every step of a series.

-- The horizon defaults to the length: 8 steps, 4 levels, scale 4/epsilon.
SELECT t, round(stddev::numeric, 6) AS stddev,
       round(sqrt(bit_count(t::bit(64)) * test.dlap_var(4))::numeric, 6) AS expected,
       bound > 0 AS has_bound
FROM contcount.running_counts(ARRAY[1, 0, 2, 1, 0, 0, 3, 1], 1, mechanism => 'binary');

-- Every mechanism, within its bound at beta = 1e-9.
SELECT m AS mechanism, count(*) AS steps,
       bool_and(abs(r.noisy_count - e.exact) <= r.bound) AS within_bound,
       max(r.stddev) > 0 AS noisy
FROM unnest(ARRAY['simple_i', 'simple_ii', 'two_level', 'binary', 'hybrid']) m,
     LATERAL contcount.running_counts(
         ARRAY(SELECT (i * 3) % 4 FROM generate_series(1, 200) i ORDER BY i),
         0.5, mechanism => m, beta => 1e-9) r
     JOIN (SELECT i AS t, sum((i * 3) % 4) OVER (ORDER BY i) AS exact
           FROM generate_series(1, 200) i) e USING (t)
GROUP BY m ORDER BY m;

-- From an ordered query's column.
SELECT count(*), max(t)
FROM contcount.running_counts(ARRAY(SELECT n FROM test.daily WHERE country = 'usa' ORDER BY day),
                              epsilon => 1, mechanism => 'two_level', block => 5);

-- A declared horizon longer than the series; NULL items are empty steps.
SELECT t, round(stddev::numeric, 6) AS stddev
FROM contcount.running_counts(ARRAY[NULL, 1, NULL]::bigint[], 1, horizon => 1000, mechanism => 'binary');

-- An empty series releases nothing.
SELECT count(*) FROM contcount.running_counts('{}'::bigint[], 1, mechanism => 'binary');

-- Errors: no output at all, even when the bad item comes late.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT * FROM contcount.running_counts(ARRAY[1, 2, 3, -1], 1, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1, 2, 3], 1, horizon => 2, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[[1, 2], [3, 4]], 1, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.running_counts(NULL, 1, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1], 0, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1], 1, mechanism => 'nope')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1], 1, mechanism => 'binary', block => 2)$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1, 2], 1, mechanism => 'two_level', block => 3)$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[1], 1, beta => 1.5, mechanism => 'binary')$$),
    ($$SELECT * FROM contcount.running_counts(ARRAY[9223372036854775807, 1], 1, mechanism => 'binary')$$)
) AS cases(s);
SELECT * FROM contcount.running_counts(ARRAY[1, 2, 3], 1, horizon => 2, mechanism => 'binary');
