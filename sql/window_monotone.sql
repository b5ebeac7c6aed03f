-- The option monotone of contcount.mechanism(): running_count, as a
-- window function, shows the running maximum of its releases clamped at
-- 0, with the largest bound so far, as a monotone counter's reads (each
-- row is shown before the next exists, so no later release may revise
-- it); at no extra charge.  Run as an analyst, not a superuser.

SELECT contcount.create_ledger('wmono_team', 1000);
CREATE ROLE regress_wmono LOGIN;
SELECT contcount.grant_ledger('wmono_team', 'regress_wmono');
SET ROLE regress_wmono;

-- the composite says whether it is monotone: false unless asked
SELECT (contcount.mechanism('binary', 1, 10)).monotone AS by_default,
       (contcount.mechanism('binary', 1, 10, monotone => true)).monotone AS asked,
       (contcount.mechanism('binary', 1, 10, monotone => NULL)).monotone AS null_is_false;

-- every row non-decreasing and >= 0 over 2048 empty steps at a tiny
-- epsilon, in each of three partitions (each a stream of its own)
SELECT p, count(*) AS steps,
       bool_and((r).noisy_count >= 0 AND (r).noisy_count >= coalesce(previous, 0)) AS monotone,
       bool_and((r).bound >= coalesce(previous_bound, 0)) AS bound_grows
FROM (SELECT p, r, lag((r).noisy_count) OVER (PARTITION BY p ORDER BY i) AS previous,
             lag((r).bound) OVER (PARTITION BY p ORDER BY i) AS previous_bound
      FROM (SELECT p, i, contcount.running_count(0, contcount.mechanism('binary', 0.01, 2048,
                                                     ledger => 'wmono_team', monotone => true))
                             OVER (PARTITION BY p ORDER BY i) AS r
            FROM generate_series(1, 3) p, generate_series(1, 2048) i) w) s
GROUP BY p ORDER BY p;
-- without it the same stream goes below 0 and down again (at t = 1, 2, 4,
-- ..., 2048 the release is one node's draw, 12 independent draws: all >= 0
-- and in order with probability below 1e-12)
SELECT bool_and((r).noisy_count >= 0 AND (r).noisy_count >= coalesce(previous, 0)) AS raw_monotone
FROM (SELECT r, lag((r).noisy_count) OVER (ORDER BY i) AS previous
      FROM (SELECT i, contcount.running_count(0, contcount.mechanism('binary', 0.01, 2048,
                                                  ledger => 'wmono_team')) OVER (ORDER BY i) AS r
            FROM generate_series(1, 2048) i) w) s;

-- the bound shown holds at every step (beta 1e-12), for every mechanism
-- of pure noise (a function, so that the mechanism is one value for each
-- call), and peers (one ORDER BY value for two rows) show one value
RESET ROLE;
CREATE FUNCTION test.wmono_within(m text) RETURNS TABLE (within_bound boolean, nonnegative boolean)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    SELECT bool_and(abs((w.r).noisy_count - w.exact) <= (w.r).bound), bool_and((w.r).noisy_count >= 0)
    FROM (SELECT contcount.running_count((i * 7) % 3,
                     contcount.mechanism(m, 0.5, 200, beta => 1e-12, ledger => 'wmono_team',
                                         monotone => true)) OVER (ORDER BY i) AS r,
                 sum((i * 7) % 3) OVER (ORDER BY i) AS exact
          FROM generate_series(1, 200) i) w;
END $$;
GRANT USAGE ON SCHEMA test TO regress_wmono;
SET ROLE regress_wmono;
SELECT m AS mechanism, w.*
FROM unnest(ARRAY['binary', 'two_level', 'honaker', 'smooth_binary', 'hybrid']) m,
     LATERAL test.wmono_within(m) w
ORDER BY m;
SELECT count(DISTINCT r) AS peers_show_one
FROM (SELECT contcount.running_count(1, contcount.mechanism('binary', 1, 10, ledger => 'wmono_team',
                                                           monotone => true)) OVER (ORDER BY k) AS r
      FROM (VALUES (1), (1)) v(k)) w;

-- as a plain aggregate: one value, >= 0
SELECT bool_and((r).noisy_count >= 0) AS nonnegative
FROM (SELECT g, contcount.running_count(0, contcount.mechanism('binary', 0.01, 10, ledger => 'wmono_team',
                                                              monotone => true)) AS r
      FROM generate_series(1, 20) g GROUP BY g) s;

-- monotone charges nothing more: one epsilon a stream either way
CREATE TEMP TABLE wmono_spent (step int, spent numeric);
INSERT INTO wmono_spent SELECT 0, spent FROM contcount.ledgers WHERE name = 'wmono_team';
SELECT count(r) FROM (SELECT contcount.running_count(1, contcount.mechanism('binary', 0.25, 5,
                          ledger => 'wmono_team')) OVER (PARTITION BY p ORDER BY i) AS r
                      FROM generate_series(1, 2) p, generate_series(1, 5) i) w;
INSERT INTO wmono_spent SELECT 1, spent FROM contcount.ledgers WHERE name = 'wmono_team';
SELECT count(r) FROM (SELECT contcount.running_count(1, contcount.mechanism('binary', 0.25, 5,
                          ledger => 'wmono_team', monotone => true)) OVER (PARTITION BY p ORDER BY i) AS r
                      FROM generate_series(1, 2) p, generate_series(1, 5) i) w;
INSERT INTO wmono_spent SELECT 2, spent FROM contcount.ledgers WHERE name = 'wmono_team';
SELECT s1.spent - s0.spent AS raw, s2.spent - s1.spent AS monotone
FROM wmono_spent s0, wmono_spent s1, wmono_spent s2
WHERE (s0.step, s1.step, s2.step) = (0, 1, 2);

RESET ROLE;
DROP FUNCTION test.wmono_within(text);
SELECT contcount.drop_ledger('wmono_team');
DROP OWNED BY regress_wmono;
DROP ROLE regress_wmono;
