-- Sparse vector alerts over counters over a protected source, and on one
-- key of a counter over a dimension: the query is the count of the
-- counter's (or the key's) rows over its last window_steps steps, each
-- person's rows bounded by the source's max_rows; the charge goes to the
-- caller's ledger and to the source's, once, at creation; only the
-- counter's owner, granted the source, may create one.  Every role but
-- postgres (the DBA) is not a superuser.
SET DateStyle = ISO;
-- The rows carry the step that takes them (step), so that the bounded
-- counts can be computed here from the rows alone, apart from contcount.
CREATE TABLE test.ss_visits (person int, country text, step int, at timestamptz DEFAULT now());
SELECT contcount.create_ledger('ss_data', 10000);
SELECT contcount.create_ledger('ss_team', 10000);
SELECT contcount.create_ledger('ss_poor', 1);
SELECT contcount.protect_table('ss_visits', 'test.ss_visits', 'person', 'at', 'ss_data',
                               max_rows => 3, max_groups => 2);
SELECT contcount.source_dimension('ss_visits', 'country', ARRAY['it', 'de', 'fr']);
-- A source whose budget is held per block.
CREATE TABLE test.ss_blocked (person int, at timestamptz);
SELECT contcount.create_ledger('ss_blocked_data', 100);
SELECT contcount.protect_table('ss_blocked', 'test.ss_blocked', 'person', 'at', 'ss_blocked_data');
SELECT contcount.source_blocks('ss_blocked', '1 day', 10, '30 days');
CREATE ROLE regress_ss_analyst LOGIN;
CREATE ROLE regress_ss_revoked LOGIN;
CREATE ROLE regress_ss_reader LOGIN;
CREATE ROLE regress_ss_app LOGIN;
ALTER ROLE regress_ss_analyst SET contcount.ledger = 'ss_team';
ALTER ROLE regress_ss_revoked SET contcount.ledger = 'ss_team';
ALTER ROLE regress_ss_reader SET contcount.ledger = 'ss_team';
GRANT USAGE ON SCHEMA test TO regress_ss_analyst, regress_ss_revoked, regress_ss_reader, regress_ss_app;
GRANT INSERT ON test.ss_visits TO regress_ss_app;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_ss_analyst, regress_ss_revoked, regress_ss_reader;
SELECT contcount.grant_ledger('ss_team', 'regress_ss_analyst');
SELECT contcount.grant_ledger('ss_team', 'regress_ss_revoked');
SELECT contcount.grant_ledger('ss_team', 'regress_ss_reader');
SELECT contcount.grant_ledger('ss_poor', 'regress_ss_analyst');
SELECT contcount.grant_source('ss_visits', 'regress_ss_analyst');
SELECT contcount.grant_source('ss_visits', 'regress_ss_revoked');
SELECT contcount.grant_source('ss_visits', 'regress_ss_reader');
SELECT contcount.grant_source('ss_blocked', 'regress_ss_analyst');

\c - regress_ss_analyst
SELECT contcount.create_counter('ss_rows', 1, horizon => 10, step => '1 day', source => 'ss_visits',
                                mechanism => 'binary');
SELECT contcount.create_counter('ss_keys', 1, horizon => 10, step => '1 day', source => 'ss_visits',
                                dimension => 'country', mechanism => 'binary');
SELECT contcount.create_counter('ss_blocks', 1, horizon => 10, step => '1 day', source => 'ss_blocked',
                                mechanism => 'binary');
SELECT contcount.grant_counter('ss_rows', 'regress_ss_reader');
SELECT contcount.grant_counter('ss_keys', 'regress_ss_reader');
\c - regress_ss_revoked
SELECT contcount.create_counter('ss_revoked', 1, horizon => 10, step => '1 day', source => 'ss_visits',
                                mechanism => 'binary');
\c - postgres
SELECT contcount.revoke_source('ss_visits', 'regress_ss_revoked');
SELECT name, spent AS spent_before FROM contcount.ledgers WHERE name IN ('ss_data', 'ss_team') ORDER BY name;
SELECT spent AS data_before FROM contcount.ledgers WHERE name = 'ss_data' \gset
SELECT spent AS team_before FROM contcount.ledgers WHERE name = 'ss_team' \gset

-- Refused, each before anything is charged: bad keys (as create_alert
-- refuses them), a source whose budget is held per block, a team ledger
-- that cannot pay.
\c - regress_ss_analyst
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.create_sparse_alert('ss_rows', 5, 2, 1, key => 'de')$$),
    ($$SELECT contcount.create_sparse_alert('ss_keys', 5, 2, 1)$$),
    ($$SELECT contcount.create_sparse_alert('ss_keys', 5, 2, 1, key => 'es')$$),
    ($$SELECT contcount.create_sparse_alert('ss_keys', 5, 2, 1, key => '')$$),
    ($$SELECT contcount.create_sparse_alert('ss_nope', 5, 2, 1, key => 'de')$$),
    ($$SELECT contcount.create_sparse_alert('ss_blocks', 5, 2, 1)$$),
    ($$SELECT contcount.create_sparse_alert('ss_rows', 5, 2, 2, ledger => 'ss_poor')$$),
    ($$SELECT contcount.create_sparse_alert('ss_keys', 5, 2, 2, ledger => 'ss_poor', key => 'de')$$)
) AS cases(s);

-- Who may not: a reader of the counters, granted the source too, does not
-- own them; an owner whose grant of the source was revoked spends no more
-- of its budget.
\c - regress_ss_reader
SELECT test.error_of($$SELECT contcount.create_sparse_alert('ss_rows', 5, 2, 1)$$);
SELECT test.error_of($$SELECT contcount.create_sparse_alert('ss_keys', 5, 2, 1, key => 'de')$$);
\c - regress_ss_revoked
SELECT test.error_of($$SELECT contcount.create_sparse_alert('ss_revoked', 5, 2, 1)$$);
SELECT count(*) AS alerts FROM contcount.alerts;
\c - postgres
SELECT name, spent - :data_before AS charged FROM contcount.ledgers WHERE name = 'ss_data'
UNION ALL SELECT name, spent - :team_before FROM contcount.ledgers WHERE name = 'ss_team'
UNION ALL SELECT name, spent FROM contcount.ledgers WHERE name = 'ss_poor';
SELECT count(*) AS alerts FROM contcount.counter_sparse_alert;

-- Created: epsilon 1000 (the most a ledger charges) makes the noise
-- negligible: the query noise has scale 4 * max_positives * 3 / 1000 (at
-- most 0.024), the threshold's half that, and a discrete Laplace draw of
-- scale b is nonzero with probability below 2 e^(-1/b) < 2e-18; this file
-- draws fewer than 50, so every answer is the exact comparison (window sum
-- at or above the threshold) with probability above 1 - 1e-16.
\c - regress_ss_analyst
SELECT contcount.create_sparse_alert('ss_rows', 7, 2, 1000, channel => 'ss') AS rows_once \gset
SELECT contcount.create_sparse_alert('ss_rows', 6, 2, 1000, max_positives => 2, channel => 'ss') AS rows_twice \gset
SELECT contcount.create_sparse_alert('ss_keys', 4, 2, 1000, channel => 'ss', key => 'de') AS de_alert \gset
SELECT contcount.create_sparse_alert('ss_keys', 4, 2, 1000, channel => 'ss', key => 'fr') AS fr_alert \gset
SELECT kind, counter, key, threshold, window_steps, epsilon, max_positives, positives, fired_step
FROM contcount.alerts ORDER BY id;
-- Each charged epsilon once, to both ledgers: 4 x 1000, one charge each.
\c - postgres
SELECT name, spent - :data_before AS charged FROM contcount.ledgers WHERE name = 'ss_data'
UNION ALL SELECT name, spent - :team_before FROM contcount.ledgers WHERE name = 'ss_team';
SELECT ledger, role, function, count(*) AS charges, sum(epsilon) AS epsilon
FROM contcount.charges WHERE function = 'create_sparse_alert' AND ledger IN ('ss_data', 'ss_team')
GROUP BY 1, 2, 3 ORDER BY 1;

-- The state is the extension owner's alone: neither the alert's creator
-- nor a reader of the counter reads it.
\c - regress_ss_analyst
SELECT test.error_of($$SELECT state FROM contcount.counter_sparse_alert$$);
SELECT test.error_of($$SELECT count(*) FROM contcount.counter_sparse_alert$$);
\c - regress_ss_reader
SELECT test.error_of($$SELECT state FROM contcount.counter_sparse_alert$$);
SELECT count(*) AS alerts_seen FROM contcount.alerts;

-- Four steps.  Person 1 gives 5 rows to de at step 1 and 2 more at step 2,
-- of which max_rows = 3 count; every other person gives one key 1 to 3
-- rows.  Bounded, the steps count 4, 2, 3, 6 (windows of two steps: 4, 6,
-- 5, 9); unbounded they would count 6, 4, 3, 6 (windows 6, 10, 7, 9).  By
-- key, bounded: de 3, 0, 0, 0 (windows 3, 3, 0, 0; unbounded 5, 7, 2, 0),
-- fr 1, 2, 0, 6 (windows 1, 3, 2, 6), it 0, 0, 3, 0.  So the alert at 7
-- answers above at step 4 (unbounded: at step 2), the one at 6 with two
-- positives at steps 2 and 4 (unbounded: 1 and 2), the one on de never
-- (unbounded: at step 1), the one on fr at step 4 (on the counter's count
-- it would at step 1).
\c - regress_ss_app
INSERT INTO test.ss_visits (person, country, step)
SELECT 1, 'de', 1 FROM generate_series(1, 5) UNION ALL SELECT 2, 'fr', 1;
\c - regress_ss_analyst
SELECT contcount.tick('ss_rows'), contcount.tick('ss_keys');
SELECT id = :rows_once AS rows_once, positives, fired_step FROM contcount.alerts ORDER BY id;
\c - regress_ss_app
INSERT INTO test.ss_visits (person, country, step)
SELECT 1, 'de', 2 FROM generate_series(1, 2) UNION ALL SELECT 3, 'fr', 2 FROM generate_series(1, 2);
\c - regress_ss_analyst
SELECT contcount.tick('ss_rows'), contcount.tick('ss_keys');
SELECT id = :rows_once AS rows_once, positives, fired_step FROM contcount.alerts ORDER BY id;
\c - regress_ss_app
INSERT INTO test.ss_visits (person, country, step) SELECT 4, 'it', 3 FROM generate_series(1, 3);
\c - regress_ss_analyst
SELECT contcount.tick('ss_rows'), contcount.tick('ss_keys');
SELECT id = :rows_once AS rows_once, positives, fired_step FROM contcount.alerts ORDER BY id;
\c - regress_ss_app
INSERT INTO test.ss_visits (person, country, step)
SELECT 5, 'fr', 4 FROM generate_series(1, 3) UNION ALL SELECT 6, 'fr', 4 FROM generate_series(1, 3);
\c - regress_ss_analyst
SELECT contcount.tick('ss_rows'), contcount.tick('ss_keys');
SELECT kind, counter, key, threshold, max_positives, positives, fired_step
FROM contcount.alerts ORDER BY id;

-- The same, computed from the rows in plain SQL: each person's rows
-- counted up to max_rows in all, in step order (each person here gives
-- one key only, so max_groups = 2 binds nobody and a person's bounded
-- rows are their key's); the window sums of the last two steps, by key
-- and for all keys; each alert's answers above at the steps where the
-- window reaches its threshold, its first max_positives of them.
\c - postgres
WITH per_step AS (
    SELECT person, country, step, count(*) AS n FROM test.ss_visits GROUP BY person, country, step
), bounded AS (
    SELECT country, step,
           LEAST(sum(n) OVER w, 3) - LEAST(coalesce(sum(n) OVER w - n, 0), 3) AS rows
    FROM per_step WINDOW w AS (PARTITION BY person ORDER BY step)
), steps AS (
    SELECT s AS step FROM generate_series(1, 4) s
), by_query AS (
    SELECT NULL::text AS key, st.step, coalesce(sum(b.rows), 0) AS rows
    FROM steps st LEFT JOIN bounded b ON b.step = st.step GROUP BY st.step
    UNION ALL
    SELECT k.key, st.step, coalesce(sum(b.rows), 0)
    FROM (VALUES ('de'), ('fr'), ('it')) k(key) CROSS JOIN steps st
    LEFT JOIN bounded b ON b.step = st.step AND b.country = k.key GROUP BY k.key, st.step
), windows AS (
    SELECT key, step, sum(rows) OVER (PARTITION BY key ORDER BY step ROWS 1 PRECEDING) AS window_sum
    FROM by_query
), answers AS (
    SELECT a.id, w.step, row_number() OVER (PARTITION BY a.id ORDER BY w.step) AS nth
    FROM contcount.counter_sparse_alert a JOIN windows w ON w.key IS NOT DISTINCT FROM a.key
    WHERE w.window_sum >= a.threshold
), expected AS (
    SELECT a.id, (SELECT count(*) FROM answers x WHERE x.id = a.id AND x.nth <= a.max_positives) AS positives,
           (SELECT max(x.step) FROM answers x WHERE x.id = a.id AND x.nth <= a.max_positives) AS fired_step
    FROM contcount.counter_sparse_alert a
)
SELECT a.id = :rows_once AS rows_once, a.key, a.threshold, e.positives AS expected_positives, e.fired_step AS expected_fired_step,
       a.positives = e.positives AND a.fired_step IS NOT DISTINCT FROM e.fired_step AS as_expected
FROM contcount.counter_sparse_alert a JOIN expected e USING (id) ORDER BY a.id;
-- The windows themselves, as the plain SQL sees them (what no role but the
-- DBA here may see), for the reader of this file.
WITH per_step AS (
    SELECT person, country, step, count(*) AS n FROM test.ss_visits GROUP BY person, country, step
)
SELECT step, country, sum(n) AS unbounded,
       sum(LEAST(n + had, 3) - LEAST(had, 3)) AS bounded
FROM (SELECT *, coalesce(sum(n) OVER (PARTITION BY person ORDER BY step
                                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS had
      FROM per_step) p
GROUP BY step, country ORDER BY step, country;

-- The steps charged nothing more.
SELECT name, spent - :data_before AS charged FROM contcount.ledgers WHERE name = 'ss_data'
UNION ALL SELECT name, spent - :team_before FROM contcount.ledgers WHERE name = 'ss_team';

-- The source's ledger refuses what it cannot pay (ZB001), and no alert is
-- left.  As for every release from a source, the team's ledger was
-- charged first, and a release the data's budget refuses still costs the
-- team's quota (docs/sources.md): here 1 for the counter, 2 for the
-- refused alert, 1 for the one created.
SELECT spent AS team_before FROM contcount.ledgers WHERE name = 'ss_team' \gset
SELECT contcount.create_ledger('ss_thin', 2);
CREATE TABLE test.ss_thin (person int, at timestamptz);
SELECT contcount.protect_table('ss_thin', 'test.ss_thin', 'person', 'at', 'ss_thin');
SELECT contcount.grant_source('ss_thin', 'regress_ss_analyst');
\c - regress_ss_analyst
SELECT contcount.create_counter('ss_thin_rows', 1, horizon => 10, step => '1 day', source => 'ss_thin',
                                mechanism => 'binary');
SELECT test.error_of($$SELECT contcount.create_sparse_alert('ss_thin_rows', 5, 2, 2)$$);
SELECT count(*) AS alerts FROM contcount.alerts WHERE counter = 'ss_thin_rows';
SELECT contcount.create_sparse_alert('ss_thin_rows', 5, 2, 1) IS NOT NULL AS created;
\c - postgres
SELECT name, spent, remaining FROM contcount.ledgers WHERE name = 'ss_thin';
SELECT name, spent - :team_before AS charged FROM contcount.ledgers WHERE name = 'ss_team';

\c - regress_ss_analyst
SELECT contcount.drop_counter('ss_rows');
SELECT contcount.drop_counter('ss_keys');
SELECT contcount.drop_counter('ss_blocks');
SELECT contcount.drop_counter('ss_thin_rows');
\c - regress_ss_revoked
SELECT contcount.drop_counter('ss_revoked');
\c - postgres
SELECT count(*) AS alerts_left FROM contcount.counter_sparse_alert;
SELECT contcount.drop_source('ss_visits');
SELECT contcount.drop_source('ss_blocked');
SELECT contcount.drop_source('ss_thin');
DROP TABLE test.ss_visits, test.ss_blocked, test.ss_thin;
DROP OWNED BY regress_ss_analyst, regress_ss_revoked, regress_ss_reader, regress_ss_app;
DROP ROLE regress_ss_analyst, regress_ss_revoked, regress_ss_reader, regress_ss_app;
