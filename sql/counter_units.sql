-- A counter over a source keeps each person by the SHA-256 digest of the
-- unit's text form: however long a unit, the application's insert never
-- fails on contcount's index, and the person is still counted at most
-- max_rows times.  The analyst and the application are not superusers.
-- The trigger that counts is the source's, the DBA's to make and drop.

CREATE TABLE test.notes (author text, at timestamptz DEFAULT now());
CREATE ROLE regress_units_app LOGIN;
CREATE ROLE regress_units_analyst LOGIN;
GRANT USAGE ON SCHEMA test TO regress_units_app, regress_units_analyst;
GRANT INSERT ON test.notes TO regress_units_app;
SELECT contcount.create_ledger('units_data', 100);
SELECT contcount.create_ledger('units_team', 100);
SELECT contcount.grant_ledger('units_team', 'regress_units_analyst');
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_units_analyst;
SELECT contcount.protect_table('notes', 'test.notes', 'author', 'at', 'units_data', max_rows => 2);
SELECT contcount.grant_source('notes', 'regress_units_analyst');

-- Units that compression cannot shrink: n bytes of hexadecimal digits.
CREATE FUNCTION test.long_unit(n int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT left(string_agg(md5(i::text), '' ORDER BY i), n) FROM generate_series(1, n / 32 + 1) i
$$;
GRANT EXECUTE ON FUNCTION test.long_unit(int) TO regress_units_app;

\c - regress_units_analyst
SELECT contcount.create_counter('notes_live', 1, horizon => 10, step => '1 day', ledger => 'units_team',
                                source => 'notes', mechanism => 'binary');

\c - regress_units_app
-- Three rows each of a 10 kB author and a 1 MB one, and of a short one.
INSERT INTO test.notes (author) SELECT test.long_unit(10000) FROM generate_series(1, 3);
INSERT INTO test.notes (author) SELECT test.long_unit(1000000) FROM generate_series(1, 3);
INSERT INTO test.notes (author) SELECT 'c' FROM generate_series(1, 3);
-- Persons that differ only far into their unit are two persons.
INSERT INTO test.notes (author) VALUES (test.long_unit(999999) || 'x');

\c - postgres
-- 2 + 2 + 2 + 1 counted of 10 rows
SELECT pending FROM contcount.counter_internals('notes_live');
-- the step bounds each person's logged rows, and keeps what it counted
SELECT contcount.tick('notes_live');
SELECT octet_length(u.unit_digest) AS digest_bytes, u.rows, count(*) AS persons
FROM contcount.counter_unit u JOIN contcount.counter c ON c.id = u.counter_id
WHERE c.name = 'notes_live' GROUP BY 1, 2 ORDER BY 2;
SELECT u.rows FROM contcount.counter_unit u JOIN contcount.counter c ON c.id = u.counter_id
WHERE c.name = 'notes_live' AND u.unit_digest = sha256(convert_to(test.long_unit(1000000), 'UTF8'));
-- The trigger's digests are PostgreSQL's sha256() of the units' text, at
-- every length around SHA-256's blocks of 64 bytes (a unit of n letters,
-- n = 1 to 200, and multibyte ones).
INSERT INTO test.notes (author) SELECT repeat('u', n) FROM generate_series(1, 200) n;
INSERT INTO test.notes (author) SELECT repeat('é', n) FROM generate_series(1, 70) n;
SELECT contcount.tick('notes_live');
SELECT count(*) AS units_of_every_length
FROM contcount.counter_unit u JOIN contcount.counter c ON c.id = u.counter_id,
     (SELECT repeat('u', n) FROM generate_series(1, 200) n
      UNION ALL SELECT repeat('é', n) FROM generate_series(1, 70) n) a(author)
WHERE c.name = 'notes_live' AND u.unit_digest = sha256(convert_to(a.author, 'UTF8')) AND u.rows = 1;

-- The source's trigger is the DBA's: protect_table made it, only a
-- superuser makes it again (feed_source), and without it no counter is
-- created over the source.  A view has no trigger to count with.
SELECT tgname LIKE 'contcount_source_%' AS source_trigger, tgfoid::regproc
FROM pg_trigger WHERE tgrelid = 'test.notes'::regclass;
CREATE VIEW test.notes_view AS SELECT * FROM test.notes;
SELECT contcount.protect_table('notes_view', 'test.notes_view', 'author', 'at', 'units_team');
SELECT contcount.grant_source('notes_view', 'regress_units_analyst');
SELECT format('DROP TRIGGER %I ON test.notes', tgname) AS drop_trigger
FROM pg_trigger WHERE tgrelid = 'test.notes'::regclass \gset
:drop_trigger;
\c - regress_units_analyst
SELECT test.error_of(s) FROM (VALUES
    ($$SELECT contcount.create_counter('notes_new', 1, horizon => 10, ledger => 'units_team', source => 'notes', mechanism => 'binary')$$),
    ($$SELECT contcount.feed_source('notes')$$),
    ($$SELECT contcount.create_counter('notes_new', 1, horizon => 10, ledger => 'units_team', source => 'notes_view', mechanism => 'binary')$$)
) AS cases(s);
\c - postgres
SELECT contcount.feed_source('notes');
SELECT contcount.feed_source('notes');
SELECT count(*) AS source_triggers FROM pg_trigger WHERE tgrelid = 'test.notes'::regclass;

\c - regress_units_analyst
SELECT contcount.drop_counter('notes_live');
\c - postgres
SELECT contcount.drop_source('notes_view');
DROP VIEW test.notes_view;
SELECT contcount.drop_source('notes');
SELECT count(*) AS source_triggers FROM pg_trigger WHERE tgrelid = 'test.notes'::regclass;
DROP TABLE test.notes;
DROP FUNCTION test.long_unit(int);
DROP OWNED BY regress_units_app, regress_units_analyst;
DROP ROLE regress_units_app, regress_units_analyst;

-- An update from 0.5 keeps what each person has counted: its rows in
-- counter_unit become digests of its text form, the trigger of each
-- counter gives way to one of its source, made by the update, which a
-- dump carries with the table (no member of the extension).  In a
-- database of its own, since the one of the tests is at 0.6; its counter
-- is written as 0.5's create_counter wrote it (the step worker runs in the
-- tests' database only).
SELECT current_database() AS regress_db \gset
CREATE DATABASE contcount_units_upgrade;
\c contcount_units_upgrade
CREATE EXTENSION contcount VERSION '0.5';
CREATE TABLE posts (author text, at timestamptz DEFAULT now());
SELECT contcount.create_ledger('posts_data', 100);
SELECT contcount.protect_table('posts', 'posts', 'author', 'at', 'posts_data', max_rows => 3);
INSERT INTO contcount.counter (id, name, mechanism, epsilon, sensitivity, beta, step, started_at, owner, state, source)
VALUES (7, 'posts_live', 'binary', 1, 3, 0.05, '1 day', now(), 10, '\x00', 'posts');
CREATE TRIGGER contcount_counter_7 AFTER INSERT ON posts FOR EACH ROW
    EXECUTE FUNCTION contcount.count_source_rows('posts_live');
-- A second source over the table, with blocks, as 0.5 let a DBA declare it
-- (the 0.6 library refuses it): the update warns of the pair.
INSERT INTO contcount.source (name, relid, unit_attnum, time_attnum, ledger_id, max_rows, max_groups,
                              created_by, block_length, block_budget, retention)
SELECT 'posts_daily', 'posts'::regclass, 1, 2, id, 1, 1, 10, '1 day', 1, '30 days'
FROM contcount.ledger WHERE name = 'posts_data';
-- Before the update, the library feeds 0.5's trigger by the text form.
INSERT INTO posts (author) VALUES ('ann'), ('ann'), ('bob'), (repeat('é', 100));
SELECT unit, rows FROM contcount.counter_unit ORDER BY unit;
ALTER EXTENSION contcount UPDATE TO '0.6';
SELECT u.rows, u.unit_digest = sha256(convert_to(p.author, getdatabaseencoding())) AS digest_of_its_text
FROM contcount.counter_unit u, (VALUES ('ann'), ('bob'), (repeat('é', 100))) p(author)
WHERE u.unit_digest = sha256(convert_to(p.author, getdatabaseencoding())) ORDER BY p.author;
SELECT tgname LIKE 'contcount_source_%' AS source_trigger, tgfoid::regproc,
       EXISTS (SELECT FROM pg_depend WHERE classid = 'pg_trigger'::regclass AND objid = t.oid
               AND deptype = 'e') AS extension_member
FROM pg_trigger t WHERE tgrelid = 'posts'::regclass;
SELECT to_regprocedure('contcount.count_source_rows()') AS legacy_function;
-- The counts go on from where they were: ann has one row of her bound
-- left, bob two.  From 0.6 the rows are logged, and the step bounds them
-- against counter_unit (no worker here: what it would count, by hand).
INSERT INTO posts (author) VALUES ('ann'), ('ann'), ('bob'), ('bob'), ('bob');
SELECT (SELECT sum(n) FROM contcount.counter_delta WHERE counter_id = 7)
       + sum(LEAST(l.rows, 3 - coalesce(u.rows, 0))) AS counted
FROM (SELECT u.unit_digest, sum(u.rows) AS rows
      FROM contcount.counter_unit_log, unnest(unit_digests, unit_rows) AS u(unit_digest, rows)
      WHERE counter_id = 7 GROUP BY 1) l
LEFT JOIN contcount.counter_unit u ON u.counter_id = 7 AND u.unit_digest = l.unit_digest;
-- counter_unit keeps what was bounded until a step takes the log
SELECT u.rows FROM contcount.counter_unit u, (VALUES ('ann'), ('bob')) p(author)
WHERE u.unit_digest = sha256(convert_to(p.author, getdatabaseencoding())) ORDER BY p.author;
\c :regress_db
DROP DATABASE contcount_units_upgrade;
