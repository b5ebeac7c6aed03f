-- Alerts on the keys of a counter over a source's dimension: an alert
-- watches one declared key's released running count and fires, in the
-- step's transaction, when it crosses the threshold upwards.
CREATE TABLE test.ka_visits (person int, country text, at timestamptz DEFAULT now());
SELECT contcount.create_ledger('ka_data', 5000);
SELECT contcount.create_ledger('ka_team', 5000);
SELECT contcount.protect_table('ka_visits', 'test.ka_visits', 'person', 'at', 'ka_data',
                               max_rows => 3, max_groups => 2);
SELECT contcount.source_dimension('ka_visits', 'country', ARRAY['it', 'de', 'fr']);
CREATE ROLE regress_ka_analyst LOGIN;
CREATE ROLE regress_ka_outsider LOGIN;
CREATE ROLE regress_ka_app LOGIN;
ALTER ROLE regress_ka_analyst SET contcount.ledger = 'ka_team';
GRANT USAGE ON SCHEMA test TO regress_ka_analyst, regress_ka_outsider, regress_ka_app;
GRANT INSERT ON test.ka_visits TO regress_ka_app;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_ka_analyst, regress_ka_outsider;
SELECT contcount.grant_source('ka_visits', 'regress_ka_analyst');

\c - regress_ka_analyst
SELECT contcount.create_counter('ka_exact', 1000, horizon => 8, step => '1 day', beta => 1e-9,
                                source => 'ka_visits', dimension => 'country', mechanism => 'binary');
SELECT contcount.create_counter('ka_noisy', 0.5, horizon => 8, step => '1 day',
                                source => 'ka_visits', dimension => 'country', mechanism => 'binary');
SELECT contcount.create_counter('ka_plain', 1, horizon => 8, step => '1 day', source => 'ka_visits',
                                mechanism => 'binary');
SELECT spent AS spent_before FROM contcount.ledgers WHERE name = 'ka_team' \gset
-- Bad calls: no key on a counter over a dimension, a key it does not
-- declare, a key on a counter without keys.
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.create_alert('ka_exact', 5, 'ka_channel')$$),
    ($$SELECT contcount.create_alert('ka_exact', 5, 'ka_channel', 'es')$$),
    ($$SELECT contcount.create_alert('ka_exact', 5, 'ka_channel', '')$$),
    ($$SELECT contcount.create_alert('ka_plain', 5, 'ka_channel', 'de')$$),
    ($$SELECT contcount.create_alert('ka_nope', 5, 'ka_channel', 'de')$$),
    ($$SELECT contcount.create_alert('ka_exact', 'NaN', 'ka_channel', 'de')$$)
) AS cases(s);
-- Alerts on each key at thresholds crossed surely, surely not, and
-- perhaps; one on the plain counter, without a key, as before.
SELECT count(contcount.create_alert(c.counter, th.threshold, 'ka_channel', k.key)) AS created
FROM (VALUES ('ka_exact'), ('ka_noisy')) AS c(counter),
     (VALUES ('it'), ('de'), ('fr')) AS k(key),
     (VALUES (-1000::numeric), (1e9), (2), (3.5)) AS th(threshold);
SELECT contcount.create_alert('ka_plain', 2, 'ka_channel') IS NOT NULL AS created;
SELECT counter, key, threshold, fired_step FROM contcount.alerts
WHERE counter = 'ka_exact' ORDER BY key, threshold;

\c - regress_ka_outsider
-- A role that may not read the counter sets no alert on its keys.
SELECT test.error_of($$SELECT contcount.create_alert('ka_exact', 5, 'ka_channel', 'de')$$);
SELECT count(*) AS alerts_seen FROM contcount.alerts;

\c - regress_ka_app
-- Step 1: de 2 rows, it 1.  Step 2: de 1, fr 4.  Step 3: it 3.
INSERT INTO test.ka_visits (person, country) VALUES (1, 'de'), (1, 'de'), (2, 'it');
\c - regress_ka_analyst
SELECT contcount.tick('ka_exact'), contcount.tick('ka_noisy'), contcount.tick('ka_plain');
\c - regress_ka_app
INSERT INTO test.ka_visits (person, country) VALUES (3, 'de'), (4, 'fr'), (4, 'fr'), (5, 'fr'), (6, 'fr');
\c - regress_ka_analyst
SELECT contcount.tick('ka_exact'), contcount.tick('ka_noisy'), contcount.tick('ka_plain');
\c - regress_ka_app
INSERT INTO test.ka_visits (person, country) VALUES (7, 'it'), (8, 'it'), (9, 'it');
\c - regress_ka_analyst
SELECT contcount.tick('ka_exact'), contcount.tick('ka_noisy'), contcount.tick('ka_plain');
SELECT contcount.tick('ka_exact'), contcount.tick('ka_noisy'), contcount.tick('ka_plain');
SELECT key, t, noisy_count FROM contcount.history_by_key('ka_exact') ORDER BY key, t;
-- The exact counter's alerts: de reaches 2 at step 1 and 3.5 never, fr
-- both at step 2, it both at step 3; -1000 at step 1, 1e9 never.
SELECT counter, key, threshold, fired_step, fired_value FROM contcount.alerts
WHERE counter = 'ka_exact' ORDER BY key, threshold;
-- Every alert on a key last fired exactly at the last upward crossing of
-- its key's released values (at or above, the step before below or none),
-- with the value released there; the plain counter's alert, at its own.
WITH released AS (
    SELECT 'ka_exact' AS counter, key, t, noisy_count FROM contcount.history_by_key('ka_exact')
    UNION ALL SELECT 'ka_noisy', key, t, noisy_count FROM contcount.history_by_key('ka_noisy')
), expected AS (
    SELECT a.id, (SELECT max(r.t) FROM released r
                  WHERE r.counter = a.counter AND r.key = a.key AND r.noisy_count >= a.threshold
                  AND NOT EXISTS (SELECT 1 FROM released p
                                  WHERE p.counter = r.counter AND p.key = r.key
                                  AND p.t = r.t - 1 AND p.noisy_count >= a.threshold)) AS fired_step
    FROM contcount.alerts a WHERE a.key IS NOT NULL
)
SELECT count(*) AS alerts,
       bool_and(a.fired_step IS NOT DISTINCT FROM e.fired_step) AS fired_where_released_values_cross,
       bool_and(a.fired_value IS NOT DISTINCT FROM r.noisy_count) AS with_the_released_value
FROM contcount.alerts a JOIN expected e USING (id)
LEFT JOIN released r ON r.counter = a.counter AND r.key = a.key AND r.t = a.fired_step;
SELECT counter, key, fired_step IS NOT NULL AS fired FROM contcount.alerts WHERE counter = 'ka_plain';
-- Alerts charge nothing.
SELECT spent = :spent_before AS nothing_charged FROM contcount.ledgers WHERE name = 'ka_team';

SELECT contcount.drop_counter('ka_exact');
SELECT contcount.drop_counter('ka_noisy');
SELECT contcount.drop_counter('ka_plain');
SELECT count(*) AS alerts_left FROM contcount.alerts;
\c - postgres
SELECT contcount.drop_source('ka_visits');
DROP TABLE test.ka_visits;
DROP OWNED BY regress_ka_analyst, regress_ka_outsider, regress_ka_app;
DROP ROLE regress_ka_analyst, regress_ka_outsider, regress_ka_app;
