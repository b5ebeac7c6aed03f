-- Free previews: preview() shows the stddev and bound a release would show
-- at each step, preview_charge() what it would charge, releases_left() how
-- many releases a ledger can still pay; none reads data or charges.  Run by
-- a role that is not a superuser.

CREATE ROLE regress_preview LOGIN;
GRANT USAGE ON SCHEMA test TO regress_preview;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_preview;
SELECT contcount.create_ledger('preview_team', 10);
SELECT contcount.grant_ledger('preview_team', 'regress_preview');
SELECT contcount.create_ledger('preview_rho', 10, 1e-6);
SELECT contcount.grant_ledger('preview_rho', 'regress_preview');
SELECT contcount.create_ledger('preview_other', 10);

\c - regress_preview
-- previews charge nothing: what both ledgers spent, and the charges, are
-- the same after them
CREATE TEMP TABLE before AS
SELECT (SELECT spent FROM contcount.ledgers WHERE name = 'preview_team') AS team,
       (SELECT spent FROM contcount.ledgers WHERE name = 'tests') AS tests,
       (SELECT count(*) FROM contcount.charges) AS charges;
SELECT count(*), min(t), max(t) FROM contcount.preview(epsilon => 1, horizon => 365);
SELECT * FROM contcount.preview('binary', 1, horizon => 8) ORDER BY t;
SELECT * FROM contcount.preview_charge(epsilon => 1, horizon => 365, ledger => 'preview_team');
SELECT mechanism, ledger, accounting, charge FROM contcount.preview_charge(epsilon => 1, horizon => 365);
SELECT * FROM contcount.preview_charge(epsilon => 1, horizon => 365, ledger => 'preview_rho');
SELECT * FROM contcount.preview_charge('gaussian_honaker', rho => 0.5, horizon => 365, ledger => 'preview_rho');
SELECT contcount.releases_left(0.25, ledger => 'preview_team') AS pure_left,
       contcount.releases_left(rho => 0.5, ledger => 'preview_rho') AS rho_left,
       contcount.releases_left(1, ledger => 'preview_rho') AS pure_on_rho_left;
SELECT (SELECT spent FROM contcount.ledgers WHERE name = 'preview_team') = team AS team_unchanged,
       (SELECT spent FROM contcount.ledgers WHERE name = 'tests') = tests AS tests_unchanged,
       (SELECT count(*) FROM contcount.charges) = charges AS no_charge
FROM before;

-- a preview shows exactly what a release with the same parameters shows:
-- auto (which picks the same mechanism for both), named ones, zCDP
SELECT count(*) AS steps, bool_and(p.stddev = r.stddev AND p.bound = r.bound) AS same
FROM contcount.preview('auto', 1, horizon => 365) p
JOIN contcount.running_counts(array_fill(3::bigint, ARRAY[365]), 1, 'auto', ledger => 'preview_team') r
USING (t);
SELECT m, count(*) AS steps, bool_and(p.stddev = r.stddev AND p.bound = r.bound) AS same
FROM unnest(ARRAY['binary', 'two_level', 'hybrid', 'honaker', 'simple_i']) m,
LATERAL contcount.preview(m, 0.5, horizon => 40, sensitivity => 3, beta => 0.01) p
JOIN LATERAL contcount.running_counts(array_fill(1::bigint, ARRAY[40]), 0.5, m, sensitivity => 3,
    beta => 0.01, ledger => 'preview_team') r USING (t)
GROUP BY m ORDER BY m;
SELECT count(*) AS steps, bool_and(p.stddev = r.stddev AND p.bound = r.bound) AS same
FROM contcount.preview('gaussian_honaker', rho => 0.5, horizon => 50) p
JOIN contcount.running_counts(array_fill(2::bigint, ARRAY[50]), mechanism => 'gaussian_honaker',
    rho => 0.5, ledger => 'preview_rho') r USING (t);
-- the first steps of a longer horizon
SELECT count(*) AS steps, bool_and(p.stddev = r.stddev AND p.bound = r.bound) AS same
FROM contcount.preview('binary', 1, horizon => 1000, steps => 5) p
JOIN contcount.running_counts(ARRAY[1, 2, 3, 4, 5]::bigint[], 1, 'binary', horizon => 1000,
    ledger => 'preview_team') r USING (t);

-- releases_left reads the budget fresh: 10 - 1 - 5 * 0.5 - 1 spent = 5.5
SELECT spent, remaining FROM contcount.ledgers WHERE name = 'preview_team';
SELECT contcount.releases_left(0.25, ledger => 'preview_team') AS left_at_025,
       contcount.releases_left(5.5, ledger => 'preview_team') AS left_at_55,
       contcount.releases_left(5.6, ledger => 'preview_team') AS left_at_56;

-- refusals
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.releases_left(1, ledger => 'preview_other')$$),
    ($$SELECT contcount.releases_left(1, ledger => 'no_such_ledger')$$),
    ($$SELECT contcount.releases_left(1, 0.5, 'preview_team')$$),
    ($$SELECT contcount.releases_left(ledger => 'preview_team')$$),
    ($$SELECT contcount.releases_left(0, ledger => 'preview_team')$$),
    ($$SELECT contcount.releases_left(rho => 0.5, ledger => 'preview_team')$$),
    ($$SELECT * FROM contcount.preview_charge(epsilon => 1, horizon => 10, ledger => 'preview_other')$$),
    ($$SELECT * FROM contcount.preview_charge('gaussian_honaker', rho => 0.5, horizon => 10, ledger => 'preview_team')$$),
    ($$SELECT * FROM contcount.preview(epsilon => 1)$$),
    ($$SELECT * FROM contcount.preview('hybrid', 1, steps => 2000000)$$),
    ($$SELECT * FROM contcount.preview('binary', 1, horizon => 10, steps => 11)$$),
    ($$SELECT * FROM contcount.preview('binary', 1, horizon => 10, steps => 0)$$),
    ($$SELECT * FROM contcount.preview('binary', horizon => 10)$$),
    ($$SELECT * FROM contcount.preview('nope', 1, horizon => 10)$$),
    ($$SELECT * FROM contcount.preview('binary', 1, horizon => 10, beta => 1)$$)
) AS v(s);

\c - postgres
SELECT contcount.drop_ledger('preview_team');
SELECT contcount.drop_ledger('preview_rho');
SELECT contcount.drop_ledger('preview_other');
DROP OWNED BY regress_preview;
DROP ROLE regress_preview;
