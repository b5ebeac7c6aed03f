-- source_running_mean: the continual mean of a protected source's declared
-- column (issue 14, item 2), released by an analyst who cannot read the
-- table, charged once to the team's ledger and once to the data's.

-- 25 ratings from 5 users, 5 each, in a mixed order, each 1 or 5 (the
-- range's ends), one an hour; and rows that are no samples: without a
-- user, a time or a rating.
CREATE TABLE test.ratings (user_id text, at timestamptz, rating numeric, score float8, note text);
INSERT INTO test.ratings
SELECT 'u' || ((t * 7) % 25) / 5, '2026-01-01 00:00+00'::timestamptz + t * interval '1 hour',
       CASE WHEN (t * t) % 3 = 0 THEN 5 ELSE 1 END,
       CASE t WHEN 1 THEN 'NaN' WHEN 2 THEN '-Infinity' WHEN 3 THEN 'Infinity' ELSE t % 3 - 0.5 END,
       'n' || t
FROM generate_series(1, 25) t;
INSERT INTO test.ratings VALUES
    (NULL, '2026-01-01 03:30+00', 5, 1, 'no user'),
    ('u1', NULL, 5, 1, 'no time'),
    ('u1', '2026-01-01 03:30+00', NULL, NULL, 'no rating');

SELECT contcount.create_ledger('ratings_data', 3000);
SELECT contcount.create_ledger('ratings_team', 2500);
SELECT contcount.protect_table('ratings', 'test.ratings', 'user_id', 'at', 'ratings_data', max_rows => 5);
CREATE ROLE regress_mean_analyst LOGIN;
ALTER ROLE regress_mean_analyst SET contcount.ledger = 'ratings_team';
GRANT USAGE ON SCHEMA test TO regress_mean_analyst;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_mean_analyst;
SELECT contcount.grant_source('ratings', 'regress_mean_analyst');

-- The DBA declares the columns a running mean may average (and with them,
-- makes the source's arrival pattern public).  Bad declarations, each with
-- its SQLSTATE: no such source or column, a type whose cast could fail.
SELECT contcount.source_mean_value('ratings', 'rating');
SELECT contcount.source_mean_value('ratings', 'score');
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.source_mean_value('nope', 'rating')$$),
    ($$SELECT contcount.source_mean_value('ratings', 'nope')$$),
    ($$SELECT contcount.source_mean_value('ratings', 'note')$$),
    ($$SELECT contcount.source_mean_value('ratings', NULL)$$),
    ($$SELECT contcount.drop_source_mean_value('ratings', 'note')$$)
) AS cases(s);

-- The open path's release of the same samples, read by the superuser, who
-- may: at epsilon 1000 with one grid step every noise scale is below 0.02,
-- so the noise is 0 but with probability below 1e-20.
-- Scores are clamped to [0, 1] as there, NaN (which the open path refuses)
-- to the top of the range.
CREATE TABLE test.ratings_open AS
SELECT (r).t, at, (r).mean, (r).covered, (q).mean AS score_mean, (q).covered AS score_covered
FROM (SELECT at, contcount.running_mean(rating::float8, user_id,
                                        contcount.mean_mechanism(1, 5, 1000, 25, 4, units => 5, resolution => 1))
                     OVER w AS r,
             contcount.running_mean(CASE WHEN score = 'NaN' THEN 1 ELSE score END, user_id,
                                    contcount.mean_mechanism(0, 1, 1000, 25, 4, units => 5, resolution => 1))
                     OVER w AS q
      FROM test.ratings WHERE user_id IS NOT NULL AND at IS NOT NULL AND rating IS NOT NULL
      WINDOW w AS (ORDER BY at ROWS UNBOUNDED PRECEDING)) s;
GRANT SELECT ON test.ratings_open TO regress_mean_analyst;
SELECT spent AS data_before FROM contcount.ledgers WHERE name = 'ratings_data' \gset

\c - regress_mean_analyst
SELECT test.error_of('SELECT count(*) FROM test.ratings');
-- The same release from the source: every sample a row in time order, the
-- same samples covered, the same mean.
SELECT count(*) AS rows,
       bool_and(s.t = o.t AND s.at = o.at) AS same_samples,
       bool_and(s.covered = o.covered) AS same_covered,
       bool_and(abs(s.mean - o.mean) < 1e-9 OR (s.mean IS NULL AND o.mean IS NULL)) AS same_mean,
       string_agg(s.covered::text, ' ' ORDER BY s.t) AS covered
FROM contcount.source_running_mean('ratings', 'rating',
                                   contcount.mean_mechanism(1, 5, 1000, 25, 4, units => 5, resolution => 1)) s
JOIN test.ratings_open o ON o.t = s.t;
-- Charged once, 1000, to the team's ledger (the data's, below).
SELECT name, spent FROM contcount.ledgers ORDER BY name;
-- The noise at epsilon 1 is the open path's: three trees of depth 3 over 5
-- units, each spending 1/3, of scales 3 * {1, 1, 2} * 3 grid steps of 4.
SELECT t, covered, round(stddev::numeric, 9) AS stddev,
       round((4 * sqrt(2 * (2 * test.dlap_var(9) + test.dlap_var(18))) / 20)::numeric, 9) AS expected,
       bound > stddev AS bound_above
FROM contcount.source_running_mean('ratings', 'rating',
                                   contcount.mean_mechanism(1, 5, 1, 25, 4, units => 5, resolution => 1))
WHERE t = 25;
-- A float column: values outside the range are clamped, NaN and the
-- infinities too, never an error; as the open path's.
SELECT count(*) AS rows,
       bool_and(s.covered = o.score_covered) AS same_covered,
       bool_and(abs(s.mean - o.score_mean) < 1e-9 OR (s.mean IS NULL AND o.score_mean IS NULL)) AS same_mean,
       string_agg(round(s.mean::numeric, 3)::text, ' ' ORDER BY s.t) AS means
FROM contcount.source_running_mean('ratings', 'score',
                                   contcount.mean_mechanism(0, 1, 1000, 25, 4, units => 5, resolution => 1)) s
JOIN test.ratings_open o ON o.t = s.t;
-- Refusals, each before any charge: no such source or value column (not
-- declared, or SQL text), bad parameters; and a stream past its horizon or
-- its declared units, after the charge (the pattern is public: the
-- release's own rows show how many samples there are).
SELECT spent AS team_before FROM contcount.ledgers WHERE name = 'ratings_team' \gset
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT * FROM contcount.source_running_mean('nope', 'rating', contcount.mean_mechanism(1, 5, 1, 25, 4))$$),
    ($$SELECT * FROM contcount.source_running_mean('ratings', 'note', contcount.mean_mechanism(1, 5, 1, 25, 4))$$),
    ($$SELECT * FROM contcount.source_running_mean('ratings', 'rating) FROM test.ratings --', contcount.mean_mechanism(1, 5, 1, 25, 4))$$),
    ($$SELECT * FROM contcount.source_running_mean('ratings', NULL, contcount.mean_mechanism(1, 5, 1, 25, 4))$$),
    ($$SELECT * FROM contcount.source_running_mean('ratings', 'rating', NULL)$$),
    ($$SELECT * FROM contcount.source_running_mean('ratings', 'rating', ROW('withhold', 1, 5, 0, 25, 4, NULL, NULL, NULL, NULL)::contcount.mean_mechanism)$$),
    ($$SELECT * FROM contcount.source_running_mean('ratings', 'rating', contcount.mean_mechanism(1, 5, 1, 25, 4, ledger => 'ratings_data'))$$),
    ($$SELECT * FROM contcount.source_running_mean('ratings', 'rating', contcount.mean_mechanism(1, 5, 2000, 25, 4))$$)
) AS cases(s);
SELECT spent - :team_before AS spent_on_refusals FROM contcount.ledgers WHERE name = 'ratings_team';
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT * FROM contcount.source_running_mean('ratings', 'rating', contcount.mean_mechanism(1, 5, 0.5, 24, 4))$$),
    ($$SELECT * FROM contcount.source_running_mean('ratings', 'rating', contcount.mean_mechanism(1, 5, 0.25, 25, 4, units => 4))$$)
) AS cases(s);
SELECT spent - :team_before AS spent_on_streams_too_long FROM contcount.ledgers WHERE name = 'ratings_team';
-- the declarations are the DBA's
SELECT test.error_of($$SELECT contcount.source_mean_value('ratings', 'note')$$);
SELECT test.error_of($$SELECT contcount.drop_source_mean_value('ratings', 'rating')$$);

\c - postgres
-- The data's ledger paid what the team did, each release by its name.
SELECT spent - :data_before AS data_spent FROM contcount.ledgers WHERE name = 'ratings_data';
SELECT ledger, function, count(*) AS charges, sum(epsilon) AS epsilon
FROM contcount.charges WHERE ledger IN ('ratings_team', 'ratings_data')
GROUP BY ledger, function ORDER BY ledger, function;
-- A team whose quota is spent spends nothing of the data's.
SELECT contcount.create_ledger('ratings_small', 0.5);
ALTER ROLE regress_mean_analyst SET contcount.ledger = 'ratings_small';
\c - regress_mean_analyst
SELECT test.error_of($$SELECT * FROM contcount.source_running_mean('ratings', 'rating', contcount.mean_mechanism(1, 5, 0.75, 25, 4))$$);
\c - postgres
SELECT name, spent FROM contcount.ledgers WHERE name IN ('ratings_small', 'ratings_data') ORDER BY name;
-- The grant revoked, the value column dropped, the declaration dropped,
-- the time column dropped: refused, before any charge.
ALTER TABLE test.ratings DROP COLUMN score;
SELECT contcount.revoke_source('ratings', 'regress_mean_analyst');
ALTER ROLE regress_mean_analyst SET contcount.ledger = 'ratings_team';
\c - regress_mean_analyst
SELECT test.error_of($$SELECT * FROM contcount.source_running_mean('ratings', 'rating', contcount.mean_mechanism(1, 5, 1, 25, 4))$$);
\c - postgres
SELECT contcount.grant_source('ratings', 'regress_mean_analyst');
\c - regress_mean_analyst
SELECT test.error_of($$SELECT * FROM contcount.source_running_mean('ratings', 'score', contcount.mean_mechanism(1, 5, 1, 25, 4))$$);
\c - postgres
SELECT contcount.drop_source_mean_value('ratings', 'rating');
SELECT contcount.drop_source_mean_value('ratings', 'score');
\c - regress_mean_analyst
SELECT test.error_of($$SELECT * FROM contcount.source_running_mean('ratings', 'rating', contcount.mean_mechanism(1, 5, 1, 25, 4))$$);
\c - postgres
SELECT contcount.source_mean_value('ratings', 'rating');
ALTER TABLE test.ratings DROP COLUMN at;
\c - regress_mean_analyst
SELECT test.error_of($$SELECT * FROM contcount.source_running_mean('ratings', 'rating', contcount.mean_mechanism(1, 5, 1, 25, 4))$$);
\c - postgres
SELECT name, spent FROM contcount.ledgers WHERE name IN ('ratings_team', 'ratings_data') ORDER BY name;

SELECT contcount.drop_source('ratings');
SELECT count(*) AS declarations_left FROM contcount.source_mean_value;
DROP TABLE test.ratings, test.ratings_open;
DROP OWNED BY regress_mean_analyst;
DROP ROLE regress_mean_analyst;
