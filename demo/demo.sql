-- contcount demo: private running counts of sign-ups, published by an analyst who may not
-- read the table, and by an engineering team over tables it may read.
\pset footer off
\echo
\echo '== The DBA protects the sign-ups table: the account column is the privacy unit (one'
\echo '   account counts at most 5 sign-ups, in 1 country), the countries are public keys, and'
\echo '   the data has a budget of its own (epsilon = 12) that every team''s releases add up in.'
\echo '   The growth team''s analyst gets a quota of 8 from it, and no SELECT on the table.'
\echo '   First the statistics lockdown, so that PostgreSQL''s statistics show analysts no exact'
\echo '   count of the table (and no other database shows this one''s):'
CREATE EXTENSION contcount;
REVOKE CONNECT ON DATABASE template1 FROM PUBLIC;
SELECT contcount.lockdown_statistics();
SELECT count(*) AS doors_still_open FROM contcount.statistics_lockdown();
SELECT contcount.create_ledger('signups_data', 12);
SELECT contcount.create_ledger('growth', 8);
CREATE TABLE signups (id bigserial PRIMARY KEY, country text NOT NULL, at timestamptz NOT NULL,
                      account int NOT NULL);
SELECT contcount.protect_table('signups', 'signups', 'account', 'at', 'signups_data',
                               max_rows => 5, max_groups => 1);
SELECT contcount.source_dimension('signups', 'country', ARRAY['fr', 'nz', 'usa', 'de']);
CREATE ROLE analyst LOGIN;
ALTER ROLE analyst SET contcount.ledger = 'growth';
SELECT contcount.grant_source('signups', 'analyst');
SELECT * FROM contcount.ledgers;

\c - analyst
\echo
\echo '== As the analyst: the table is out of reach (SQLSTATE 42501) ...'
\set ON_ERROR_STOP 0
SELECT count(*) FROM signups;
\set ON_ERROR_STOP 1
\echo '   ... but a live counter over the protected source is not: epsilon = 1 for all 60 daily'
\echo '   steps, charged once to the team''s quota and to the data''s budget.  contcount puts a'
\echo '   trigger on the table the application already writes to; it counts each account''s'
\echo '   sign-ups up to 5 for the counter''s whole life, and the noise is calibrated for 5.'
SELECT contcount.create_counter('signups', epsilon => 1, horizon => 60, step => '1 day',
                                source => 'signups');
\echo '   The analyst asks to be told when the released count reaches 1000: an alert over released'
\echo '   values costs nothing.  The step worker NOTIFYs its channel in the step''s transaction, and'
\echo '   any client that LISTENs there hears it (so it is a channel for what the team may publish):'
SELECT contcount.create_alert('signups', 1000, channel => 'signups_dashboard') AS alert_id;
\echo '   And a live dashboard per country: a counter over the source''s country dimension releases,'
\echo '   at every step, the running count of every declared country, for one charge of epsilon = 1'
\echo '   (each account counts in at most 1 country, so the countries cannot add up):'
SELECT contcount.create_counter('signups_by_country', epsilon => 1, horizon => 60, step => '1 day',
                                source => 'signups', dimension => 'country');

\c - postgres
\echo
\echo '== The application (here the DBA''s session) records 60 days of sign-ups (real inserts, busier on weekdays, three'
\echo '   countries); at the end of each day a step of both counters closes (tick() here stands in'
\echo '   for the clock).  A dashboard listens on the alert''s channel (this session: psql shows what'
\echo '   it heard once the 60 days are in):'
LISTEN signups_dashboard;
DO $$
BEGIN
    FOR d IN 0..59 LOOP
        INSERT INTO signups (country, at, account)
        SELECT (ARRAY['fr', 'nz', 'usa'])[1 + (d * 7 + k) % 3],
               timestamptz '2026-09-01' + d * interval '1 day' + k * interval '7 minutes',
               1 + (d * 53 + k * 17) % 900
        FROM generate_series(1, 20 + (d * 37) % 11
                                + CASE WHEN extract(isodow FROM date '2026-09-01' + d) < 6 THEN 15 ELSE 0 END) k;
        COMMIT;
        PERFORM contcount.tick('signups');
        PERFORM contcount.tick('signups_by_country');
    END LOOP;
END $$;
SELECT count(*) AS signups, min(at)::date AS first_day, max(at)::date AS last_day FROM signups;
UNLISTEN signups_dashboard;


\c - analyst
\echo
\echo '== What the counter released, step by step (the analyst sees only these; an account may'
\echo '   add 5, so the noise is five times that of counting single sign-ups):'
SELECT t AS day, noisy_count, round(stddev::numeric, 1) AS stddev, round(bound::numeric, 1) AS bound_95
FROM contcount.history('signups') WHERE t IN (1, 2, 3, 7, 14, 30, 45, 60) ORDER BY t;

\echo
\echo '== The live dashboard: each country''s running count at the counter''s latest step'
\echo '   (current_by_key; a client polls it after every step).  "de" has no sign-ups and still'
\echo '   gets its row, with fresh noise, so an empty key looks like any other:'
SELECT key AS country, t AS day, noisy_count, round(stddev::numeric, 1) AS stddev,
       round(bound::numeric, 1) AS bound_95
FROM contcount.current_by_key('signups_by_country') ORDER BY key;
\echo '   and how it grew, step by step (history_by_key):'
SELECT t AS day,
       max(noisy_count) FILTER (WHERE key = 'de') AS de,
       max(noisy_count) FILTER (WHERE key = 'fr') AS fr,
       max(noisy_count) FILTER (WHERE key = 'nz') AS nz,
       max(noisy_count) FILTER (WHERE key = 'usa') AS usa
FROM contcount.history_by_key('signups_by_country') WHERE t IN (1, 7, 14, 30, 45, 60)
GROUP BY t ORDER BY t;

\echo
\echo '== The same per country as one batch release over the table (epsilon = 1 for every country'
\echo '   and day, charged once: contcount bounded each account, so the countries cannot add up),'
\echo '   a fresh charge each time it is asked, where the live counter above paid once.  The last'
\echo '   four days:'
SELECT key AS country, step_start::date AS day, noisy_count, round(stddev::numeric, 1) AS stddev
FROM contcount.source_running_counts('signups', 1, '1 day', '2026-09-01', 60, dimension => 'country')
WHERE t > 56 ORDER BY country, day;

\echo
\echo '== The running count of all sign-ups by each mechanism (epsilon = 1 each, horizon 60 days):'
SELECT t AS day,
       max(noisy_count) FILTER (WHERE m = 'simple_ii') AS simple_ii,
       max(noisy_count) FILTER (WHERE m = 'two_level') AS two_level,
       max(noisy_count) FILTER (WHERE m = 'binary') AS binary,
       max(noisy_count) FILTER (WHERE m = 'smooth_binary') AS smooth_binary
FROM unnest(ARRAY['simple_ii', 'two_level', 'binary', 'smooth_binary']) m,
     LATERAL contcount.source_running_counts('signups', 1, '1 day', '2026-09-01', 60, mechanism => m)
WHERE t IN (1, 8, 15, 22, 29, 60) GROUP BY t ORDER BY t;

\echo
\echo '== A filter on a public dimension: sign-ups in France and New Zealand (epsilon = 0.5).'
SELECT key AS country, noisy_count, round(stddev::numeric, 1) AS stddev
FROM contcount.source_counts('signups', 0.5, 'country', filter => '{"country": ["fr", "nz"]}');

\echo
\echo '== The team''s quota now: the next release that would overspend it is refused (SQLSTATE'
\echo '   ZB001), and nothing is released:'
SELECT name, budget, spent, remaining FROM contcount.ledgers;
\set ON_ERROR_STOP 0
SELECT * FROM contcount.source_counts('signups', 2, 'country');
\set ON_ERROR_STOP 1

\c - postgres
\echo
\echo '== Open SQL, the other path: an engineering team that may read the table releases over it'
\echo '   with contcount''s aggregates.  contcount charges each release, but cannot know how many'
\echo '   rows one account has here: every group pays for itself.'
SELECT contcount.create_ledger('engineering', 16);
CREATE ROLE engineer LOGIN;
ALTER ROLE engineer SET contcount.ledger = 'engineering';
\echo
\echo '== Sign-ups per day, every day present (a missing day would be a step lost).'
CREATE VIEW daily AS
SELECT day::date, count(s.id) AS n
FROM generate_series(date '2026-09-01', date '2026-10-30', interval '1 day') day
LEFT JOIN signups s ON s.at >= day AND s.at < day + interval '1 day'
GROUP BY day ORDER BY day;
GRANT SELECT ON signups, daily TO engineer;
SELECT * FROM daily LIMIT 3;

\echo
\echo '== From here on, the engineer: every release is charged to the ledger "engineering".'
\c - engineer

\echo
\echo '== The running count released every day at epsilon = 1 by each mechanism (horizon 60 days).'
\echo '   Each column is one release of the whole series; exact is shown here only to compare.'
SELECT day, exact,
       (r[1]).noisy_count AS simple_i, (r[2]).noisy_count AS simple_ii,
       (r[3]).noisy_count AS two_level, (r[4]).noisy_count AS binary,
       (r[5]).noisy_count AS hybrid
FROM (
    SELECT day, sum(n) OVER w AS exact,
           ARRAY[contcount.running_count(n, contcount.mechanism('simple_i', 1, horizon => 60)) OVER w,
                 contcount.running_count(n, contcount.mechanism('simple_ii', 1, horizon => 60)) OVER w,
                 contcount.running_count(n, contcount.mechanism('two_level', 1, horizon => 60)) OVER w,
                 contcount.running_count(n, contcount.mechanism('binary', 1, horizon => 60)) OVER w,
                 contcount.running_count(n, contcount.mechanism('hybrid', 1)) OVER w] AS r
    FROM daily
    WINDOW w AS (ORDER BY day ROWS UNBOUNDED PRECEDING)
) s
WHERE extract(day FROM day) IN (1, 8, 15, 22, 29) ORDER BY day;

\echo
\echo '== Their error bars on the last day: stddev, and a bound holding for all 60 days at once (95%).'
SELECT m AS mechanism, round(stddev::numeric, 1) AS stddev, round(bound::numeric, 1) AS bound_95
FROM unnest(ARRAY['simple_i', 'simple_ii', 'two_level', 'binary', 'hybrid']) WITH ORDINALITY AS u(m, o),
     LATERAL contcount.running_counts(ARRAY(SELECT n FROM daily), 1, mechanism => m)
WHERE t = 60 ORDER BY o;

\echo
\echo '== Per country (PARTITION BY): the last week of the binary release.  Each country is a'
\echo '   release of its own and pays epsilon = 1: three countries, epsilon = 3 in all.'
SELECT country, day, (r).noisy_count, exact, round((r).stddev::numeric, 1) AS stddev
FROM (
    SELECT country, day,
           contcount.running_count(n, 1, 60) OVER w AS r, sum(n) OVER w AS exact
    FROM (SELECT c.country, d.day::date, count(s.id) AS n
          FROM unnest(ARRAY['fr', 'nz', 'usa']) c(country)
          CROSS JOIN generate_series(date '2026-09-01', date '2026-10-30', interval '1 day') d(day)
          LEFT JOIN signups s ON s.country = c.country AND s.at >= d.day AND s.at < d.day + interval '1 day'
          GROUP BY c.country, d.day) per_country
    WINDOW w AS (PARTITION BY country ORDER BY day ROWS UNBOUNDED PRECEDING)
) s
WHERE day > date '2026-10-27' ORDER BY country, day;

\echo
\echo '== One noisy total (epsilon = 0.5), computed with a parallel plan when the table is large.'
SELECT contcount.noisy_count(0.5) AS noisy_total FROM signups;

\echo
\echo '== Bad input is refused with an error (SQLSTATE 54000 here), and nothing is released:'
\set ON_ERROR_STOP 0
SELECT * FROM contcount.running_counts(ARRAY(SELECT n FROM daily), epsilon => 1, horizon => 30);

\echo
\echo '== Every release above was charged to the ledger before its first value left the server:'
SELECT * FROM contcount.ledgers;
\echo
\echo '== So the next release that would overspend it is refused (SQLSTATE ZB001), nothing released:'
SELECT * FROM contcount.running_counts(ARRAY(SELECT n FROM daily), epsilon => 8);
\set ON_ERROR_STOP 1

\echo
\echo '== The DBA sees who spent what, on what:'
\c - postgres
SELECT role, ledger, epsilon, function, left(regexp_replace(statement, '\s+', ' ', 'g'), 60) AS statement
FROM contcount.charges ORDER BY at;
\echo
\echo '== And every ledger: each team''s quota, and the data''s budget that the analyst''s releases'
\echo '   from the source paid into as well:'
SELECT name, budget, spent, remaining FROM contcount.ledgers ORDER BY name;



\echo
\echo '== Data with a lifetime: page visits are kept 90 days.  The DBA holds their budget per day'
\echo '   of data: each day''s rows have epsilon = 1 of their own, rows older than 90 days are'
\echo '   never read, and every new day comes with a fresh budget (120 days of visits so far).'
CREATE TABLE visits (visitor int NOT NULL, at timestamptz NOT NULL);
INSERT INTO visits
SELECT 1 + (d * 7919 + k * 31) % 60000, date_trunc('day', now()) - d * interval '1 day' + k * interval '40 seconds'
FROM generate_series(0, 119) d, generate_series(1, 1500 + (d * 37) % 400) k;
SELECT contcount.create_ledger('visits_data', 1);
SELECT contcount.protect_table('visits', 'visits', 'visitor', 'at', 'visits_data', max_rows => 3);
SELECT contcount.source_blocks('visits', '1 day', 1, '90 days');
SELECT contcount.create_ledger('web', 10);
SELECT contcount.grant_ledger('web', 'analyst');
SELECT contcount.grant_source('visits', 'analyst');

\c - analyst
\echo
\echo '== Every day of the last 60 the analyst published that week''s daily visits (epsilon = 0.1'
\echo '   on each of its seven days): 60 releases, epsilon = 6 from a data budget of 1 that one'
\echo '   ledger could not give more than ten times.  Each day''s block paid 0.1 for every release'
\echo '   that read it, seven at most.  The last one:'
DO $$
BEGIN
    FOR d IN REVERSE 59..1 LOOP
        PERFORM count(*) FROM contcount.source_running_counts('visits', 0.1, '1 day',
            date_trunc('day', now()) - (d + 6) * interval '1 day', 7, ledger => 'web');
    END LOOP;
END $$;
SELECT t AS day, noisy_count AS visits_this_week, round(bound::numeric, 1) AS bound_95
FROM contcount.source_running_counts('visits', 0.1, '1 day', date_trunc('day', now()) - interval '6 days', 7,
                                     ledger => 'web');
SELECT count(*) AS blocks, max(spent) AS most_spent, min(remaining) AS least_left,
       min(block_start)::date AS oldest_block
FROM contcount.blocks WHERE source = 'visits';

\c - postgres
\echo
\echo '== The DBA: rows older than the retention are never read, and are the DBA''s to delete:'
SELECT contcount.source_expired_rows('visits') AS expired_rows;
DELETE FROM visits WHERE at < now() - interval '90 days';
SELECT contcount.source_expired_rows('visits') AS expired_rows;
