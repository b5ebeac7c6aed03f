-- Counters over protected sources (issue 11, item 3): an analyst without
-- SELECT on a table counts its inserts continually, each person's rows
-- counted up to the source's max_rows for the counter's whole life.

CREATE TABLE test.entries (person int, region text, at timestamptz DEFAULT now());
CREATE TABLE test.entries_by_amount (amount numeric, at timestamptz);
CREATE TABLE test.entries_parted (person bigint, at timestamptz) PARTITION BY RANGE (at);
CREATE TABLE test.entries_2026 PARTITION OF test.entries_parted
    FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
SELECT contcount.create_ledger('entries_data', 10);
SELECT contcount.create_ledger('entries_team', 5);
SELECT contcount.protect_table('entries', 'test.entries', 'person', 'at', 'entries_data', max_rows => 3);
SELECT contcount.protect_table('entries_amounts', 'test.entries_by_amount', 'amount', 'at', 'entries_data');
SELECT contcount.protect_table('entries_parted', 'test.entries_parted', 'person', 'at', 'entries_data', max_rows => 2);
CREATE ROLE regress_sc_analyst LOGIN;
ALTER ROLE regress_sc_analyst SET contcount.ledger = 'entries_team';
GRANT USAGE ON SCHEMA test TO regress_sc_analyst;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_sc_analyst;
SELECT contcount.grant_source('entries', 'regress_sc_analyst');
SELECT contcount.grant_source('entries_amounts', 'regress_sc_analyst');
SELECT contcount.grant_source('entries_parted', 'regress_sc_analyst');

\c - regress_sc_analyst
-- The analyst creates a counter over the source: noise for max_rows = 3,
-- charged to the team's ledger and to the data's.
SELECT contcount.create_counter('entries_user', 1, horizon => 10, step => '1 day', beta => 1e-9,
                                source => 'entries', mechanism => 'binary');
SELECT contcount.create_counter('entries_parted_user', 0.5, horizon => 10, step => '1 day', source => 'entries_parted', mechanism => 'binary');
SELECT name, spent FROM contcount.ledgers ORDER BY name;
SELECT s, test.error_of(s) FROM (VALUES
    ($$SELECT contcount.create_counter('x', 1, horizon => 10, sensitivity => 5, source => 'entries', mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('x', 1, horizon => 10, sensitivity => NULL, source => 'entries', mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('x', 1, horizon => 10, source => 'nope', mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('x', 1, horizon => 10, source => 'entries_amounts', mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('x', 1, horizon => 10, source => 'entries', ledger => 'entries_data', mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('x', 10, horizon => 10, source => 'entries', mechanism => 'binary')$$),
    ($$SELECT contcount.create_counter('entries_user', 1, horizon => 10, source => 'entries', mechanism => 'binary')$$),
    ($$INSERT INTO test.entries VALUES (1, 'north')$$),
    ($$SELECT count(*) FROM contcount.counter_unit$$),
    ($$CREATE TABLE public.mine (person int)$$)
) AS cases(s);
-- nothing was charged by the refusals
SELECT name, spent FROM contcount.ledgers ORDER BY name;

\c - postgres
SELECT name, spent FROM contcount.ledgers WHERE name LIKE 'entries%' ORDER BY name;
-- The table's writers insert as before.  Person 1 makes 10 rows, person 2
-- two, a row without a person none; an aborted transaction and a
-- rolled-back savepoint count nothing and keep nothing of their units.
INSERT INTO test.entries (person, region) SELECT 1, 'north' FROM generate_series(1, 10);
INSERT INTO test.entries (person, region) VALUES (2, 'south'), (2, 'south'), (NULL, 'south');
BEGIN;
INSERT INTO test.entries (person, region) SELECT 3, 'north' FROM generate_series(1, 5);
ROLLBACK;
BEGIN;
INSERT INTO test.entries (person, region) VALUES (4, 'north');
SAVEPOINT a;
INSERT INTO test.entries (person, region) SELECT 4, 'north' FROM generate_series(1, 5);
ROLLBACK TO SAVEPOINT a;
INSERT INTO test.entries (person, region) VALUES (4, 'north');
COMMIT;
COPY test.entries (person, region) FROM stdin;
5	north
5	north
5	north
5	north
\.
-- 3 + 2 + 2 + 3 counted of 22 rows; what each person has used of its bound
SELECT steps, exact_released, pending FROM contcount.counter_internals('entries_user');
-- A step releases exactly them, and keeps what each used of its bound
-- (each person is kept by the SHA-256 digest of its text form); a person
-- at its bound adds nothing later.
SELECT contcount.tick('entries_user');
SELECT p.person::text AS unit, u.rows FROM contcount.counter_unit u
JOIN contcount.counter c ON c.id = u.counter_id
JOIN generate_series(1, 8) p(person) ON u.unit_digest = sha256(convert_to(p.person::text, 'UTF8'))
WHERE c.name = 'entries_user' ORDER BY p.person;
INSERT INTO test.entries (person, region) SELECT 1, 'north' FROM generate_series(1, 4);
INSERT INTO test.entries (person, region) VALUES (6, 'south');
SELECT contcount.tick('entries_user');
SELECT steps, exact_released, pending FROM contcount.counter_internals('entries_user');
SELECT name, mechanism, epsilon, horizon, steps FROM contcount.counters WHERE name = 'entries_user';
-- its noise is that of a counter of sensitivity max_rows = 3
SELECT contcount.create_counter('same_noise', 1, horizon => 10, step => '1 day', beta => 1e-9,
                                sensitivity => 3, ledger => 'entries_data', mechanism => 'binary');
SELECT contcount.tick('same_noise');
SELECT contcount.tick('same_noise');
SELECT s.t, s.stddev = c.stddev AS same_stddev, s.bound = c.bound AS same_bound
FROM contcount.current('entries_user') s, contcount.current('same_noise') c;
SELECT contcount.drop_counter('same_noise');
-- A partitioned source: its partitions count with the same bounds.
INSERT INTO test.entries_2026 VALUES (7, '2026-03-01'), (7, '2026-03-02'), (7, '2026-03-03');
INSERT INTO test.entries_parted VALUES (7, '2026-04-01'), (8, '2026-04-01');
SELECT pending FROM contcount.counter_internals('entries_parted_user');

-- A source is not dropped under its counters; dropping a counter leaves the
-- source's trigger, and the step worker forgets its units.
SELECT test.error_of($$SELECT contcount.drop_source('entries')$$);
\c - regress_sc_analyst
SELECT contcount.drop_counter('entries_user');
SELECT contcount.drop_counter('entries_parted_user');
\c - postgres
SELECT count(*) AS triggers FROM pg_trigger WHERE tgname LIKE 'contcount_counter_%';
CREATE FUNCTION test.wait_for(query text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    done boolean;
BEGIN
    FOR i IN 1 .. 600 LOOP
        EXECUTE query INTO done;
        EXIT WHEN done;
        PERFORM pg_sleep(0.1);
    END LOOP;
    RETURN done;
END $$;
SELECT test.wait_for($$SELECT NOT EXISTS (SELECT FROM contcount.counter_unit)$$) AS units_swept;
DROP FUNCTION test.wait_for(text);
INSERT INTO test.entries (person, region) VALUES (1, 'north');
SELECT contcount.drop_source('entries');
DROP OWNED BY regress_sc_analyst;
DROP ROLE regress_sc_analyst;
DROP TABLE test.entries, test.entries_by_amount, test.entries_parted;
