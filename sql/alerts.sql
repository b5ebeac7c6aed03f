-- Alerts over released values: a NOTIFY when a counter's released running
-- count crosses a threshold, for a role that may read the counter, charging
-- nothing (test/t/019_alerts.pl listens for them).

SELECT contcount.create_ledger('alerts', 10);
SET contcount.ledger = 'alerts';
CREATE TABLE test.alerted_rows (n int);
SELECT contcount.create_counter('alerted', 1, horizon => 100, step => '1 day', mechanism => 'binary');
SELECT contcount.create_counter('alerted_monotone', 1, horizon => 100, step => '1 day',
    mechanism => 'binary', monotone => true);
SELECT contcount.attach_counter('alerted', 'test.alerted_rows');
SELECT contcount.attach_counter('alerted_monotone', 'test.alerted_rows');
RESET contcount.ledger;

CREATE ROLE regress_alert_reader LOGIN;
CREATE ROLE regress_alert_outsider LOGIN;
GRANT USAGE ON SCHEMA test TO regress_alert_reader, regress_alert_outsider;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_alert_reader, regress_alert_outsider;
SELECT contcount.grant_counter('alerted', 'regress_alert_reader');
SELECT contcount.grant_counter('alerted_monotone', 'regress_alert_reader');

SELECT spent AS spent_before FROM contcount.ledgers WHERE name = 'alerts' \gset

-- Bad input, and a counter the caller may not read.
\c - regress_alert_outsider
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.create_alert('alerted', 10)$$),
    ($$SELECT contcount.create_alert('nope', 10)$$),
    ($$SELECT contcount.create_alert('alerted', 'ten')$$),
    ($$SELECT * FROM contcount.current('alerted')$$)
) AS cases(s);
\c - regress_alert_reader
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.create_alert('alerted', 'ten')$$),
    ($$SELECT contcount.create_alert('alerted', 'NaN')$$),
    ($$SELECT contcount.create_alert('alerted', 'Infinity')$$),
    ($$SELECT contcount.create_alert('alerted', NULL)$$),
    ($$SELECT contcount.create_alert(NULL, 10)$$),
    ($$SELECT contcount.create_alert('alerted', 10, channel => '')$$),
    ($$SELECT contcount.create_alert('alerted', 10, channel => repeat('c', 64))$$),
    ($$SELECT contcount.create_alert('alerted', 10, channel => NULL)$$),
    ($$SELECT contcount.create_alert('alerted', 10, key => 'fr')$$),
    ($$SELECT contcount.drop_alert(NULL)$$),
    ($$SELECT contcount.drop_alert(-1)$$),
    ($$SELECT * FROM contcount.counter_alert$$)
) AS cases(s);

-- Alerts at thresholds the released values cross surely, surely not, and
-- perhaps, on a counter and on a monotone one.  They charge nothing.
SELECT count(contcount.create_alert(c.counter, th.threshold)) AS created
FROM (VALUES ('alerted'), ('alerted_monotone')) AS c(counter),
     (VALUES (-1000::numeric), (1e9), (20), (45.5), (60)) AS th(threshold);
SELECT contcount.create_alert('alerted', 0, channel => 'other_channel') IS NOT NULL AS created;
SELECT counter, threshold, channel, owner, fired_step, fired_value FROM contcount.alerts ORDER BY id;
SELECT min(id) AS first_id FROM contcount.alerts \gset
\c - regress_alert_outsider
SELECT count(*) AS alerts_of_others FROM contcount.alerts;
SELECT test.error_of('SELECT contcount.drop_alert(' || :first_id || ')');
\c - postgres
SELECT spent = :spent_before AS nothing_charged FROM contcount.ledgers WHERE name = 'alerts';
SELECT count(*) AS all_alerts_to_a_superuser FROM contcount.alerts;

-- Steps: counts that go up, and a released series that may go down.
INSERT INTO test.alerted_rows SELECT 1 FROM generate_series(1, 30);
SELECT contcount.tick('alerted'), contcount.tick('alerted_monotone');
SELECT contcount.tick('alerted'), contcount.tick('alerted_monotone');
INSERT INTO test.alerted_rows SELECT 1 FROM generate_series(1, 25);
SELECT contcount.tick('alerted'), contcount.tick('alerted_monotone');
SELECT contcount.tick('alerted'), contcount.tick('alerted_monotone');
INSERT INTO test.alerted_rows SELECT 1 FROM generate_series(1, 10);
SELECT contcount.tick('alerted'), contcount.tick('alerted_monotone');

-- As the reader: each alert last fired exactly where the released values
-- (what history() shows) last reached its threshold from below, or first
-- reached it, with the released value of that step.
\c - regress_alert_reader
CREATE TEMP TABLE released AS
SELECT 'alerted' AS counter, t, noisy_count FROM contcount.history('alerted')
UNION ALL
SELECT 'alerted_monotone', t, noisy_count FROM contcount.history('alerted_monotone');
CREATE TEMP VIEW expected AS
SELECT a.id, a.counter, a.threshold,
       (SELECT max(r.t) FROM released r
        WHERE r.counter = a.counter AND r.noisy_count >= a.threshold
          AND NOT EXISTS (SELECT 1 FROM released p WHERE p.counter = a.counter
                          AND p.t = r.t - 1 AND p.noisy_count >= a.threshold)) AS fired_step
FROM contcount.alerts a WHERE a.channel = 'contcount_alert';
SELECT e.counter, e.threshold,
       a.fired_step IS NOT DISTINCT FROM e.fired_step AS fired_where_released_values_cross,
       a.fired_value IS NOT DISTINCT FROM r.noisy_count AS with_the_released_value
FROM expected e JOIN contcount.alerts a USING (id)
LEFT JOIN released r ON r.counter = e.counter AND r.t = e.fired_step
ORDER BY e.counter, e.threshold;
-- The sure ones fired at the first step, and never again; the others never.
SELECT counter, threshold, fired_step FROM contcount.alerts
WHERE threshold IN (-1000, 1e9) ORDER BY counter, threshold;

-- A reader whose grant is revoked hears nothing more; granted again, it does.
SELECT contcount.create_alert('alerted', -1000, channel => 'revoked') AS revoked_id \gset
\c - postgres
SELECT contcount.revoke_counter('alerted', 'regress_alert_reader');
SELECT contcount.tick('alerted');
SELECT fired_step FROM contcount.alerts WHERE channel = 'revoked';
SELECT contcount.grant_counter('alerted', 'regress_alert_reader');
SELECT contcount.tick('alerted');
SELECT fired_step = (SELECT max(t) FROM contcount.history('alerted')) AS fired_once_granted
FROM contcount.alerts WHERE channel = 'revoked';

-- Dropping: the creator's alert, and every alert of a dropped counter.
\c - regress_alert_reader
SELECT contcount.drop_alert(:revoked_id);
SELECT count(*) FROM contcount.alerts WHERE channel = 'revoked';
\c - postgres
SELECT contcount.drop_counter('alerted_monotone');
SELECT counter, count(*) FROM contcount.alerts GROUP BY counter;

-- A role holds at most 100 alerts.
\c - regress_alert_reader
SELECT count(contcount.create_alert('alerted', i)) FROM generate_series(1, 100 - 6) i;
SELECT test.error_of($$SELECT contcount.create_alert('alerted', 1)$$);
\c - postgres
SELECT contcount.drop_counter('alerted');
DROP TABLE test.alerted_rows;
DROP OWNED BY regress_alert_reader, regress_alert_outsider;
DROP ROLE regress_alert_reader, regress_alert_outsider;
