-- noisy_count: count(*) released once.

CREATE TABLE test.events AS
SELECT i AS id, (ARRAY['fr', 'nz', 'usa'])[1 + i % 3] AS country
FROM generate_series(1, 30000) i;
ANALYZE test.events;

-- Laplace(1/epsilon) noise: at epsilon = 1, beyond 30 with probability e^-30.
SELECT abs(contcount.noisy_count(1) - 30000) <= 30 AS close FROM test.events;
SELECT country, abs(contcount.noisy_count(1) - 10000) <= 30 AS close
FROM test.events GROUP BY country ORDER BY country;
SELECT abs(contcount.noisy_count(1) FILTER (WHERE id % 2 = 0) - 15000) <= 30 AS close
FROM test.events;

-- An empty set gets noise too: neither NULL nor an error tells it is empty.
SELECT contcount.noisy_count(1) IS NOT NULL AS released,
       abs(contcount.noisy_count(1)) <= 30 AS close
FROM test.events WHERE false;

-- A forced parallel plan: partial counts in the workers, noise once at the end.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET force_parallel_mode = on;
EXPLAIN (COSTS OFF) SELECT contcount.noisy_count(1) FROM test.events;
SELECT abs(contcount.noisy_count(1) - 30000) <= 30 AS close FROM test.events;
SELECT abs(contcount.noisy_count(1) - 30000) <= 30 AS close FROM test.events WHERE id < 0 OR true;
SELECT abs(contcount.noisy_count(1)) <= 30 AS close FROM test.events WHERE id < 0;
EXPLAIN (COSTS OFF)
SELECT country, contcount.noisy_count(0.5) FROM test.events GROUP BY country;
SELECT country, abs(contcount.noisy_count(0.5) - 10000) <= 60 AS close
FROM test.events GROUP BY country ORDER BY country;
-- a query parameter is an epsilon like a constant, in a generic plan too
SET plan_cache_mode = force_generic_plan;
PREPARE noisy(float8) AS SELECT abs(contcount.noisy_count($1) - 30000) <= 30 AS close FROM test.events;
EXECUTE noisy(1);
EXECUTE noisy(0);
DEALLOCATE noisy;
RESET plan_cache_mode;
RESET force_parallel_mode;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

-- Errors.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.noisy_count(id / 1000.0) FROM test.events$$),
    ($$SELECT contcount.noisy_count(random() + 1) FROM test.events$$),
    ($$SELECT contcount.noisy_count(NULL) FROM test.events$$),
    ($$SELECT contcount.noisy_count(0) FROM test.events$$),
    ($$SELECT contcount.noisy_count(1) OVER () FROM test.events$$)
) AS cases(s);
