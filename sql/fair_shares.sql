-- Fair shares of the server-wide room: no role (or ledger) takes the room
-- every database shares, a dropped ledger gives its room back, and each
-- refusal (53400) says who holds the room as far as the caller may see.
-- Every attack is run by roles that are not superusers.

CREATE ROLE regress_fair_a LOGIN;
CREATE ROLE regress_fair_b LOGIN;
GRANT USAGE ON SCHEMA test TO regress_fair_a, regress_fair_b;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_fair_a, regress_fair_b;
GRANT EXECUTE ON FUNCTION contcount.create_ledger(text, numeric) TO regress_fair_a, regress_fair_b;

-- Ledgers: a role holds at most contcount.max_ledgers_per_role live
-- ledgers (here 2); a dropped one, or one whose creation rolled back, gives
-- its room back.
ALTER ROLE regress_fair_a SET contcount.max_ledgers_per_role = 2;
\c - regress_fair_a
SHOW contcount.max_ledgers_per_role;
SELECT test.error_of($$SET contcount.max_ledgers_per_role = 1000$$);
SELECT contcount.create_ledger('fair_a1', 1);
SELECT contcount.create_ledger('fair_a2', 1);
SELECT test.error_of($$SELECT contcount.create_ledger('fair_a3', 1)$$);
SELECT contcount.create_ledger('fair_a3', 1);
-- create and drop, again and again: each drop gives the room back
SELECT contcount.drop_ledger('fair_a2');
SELECT contcount.create_ledger('fair_a2', 1);
SELECT contcount.drop_ledger('fair_a2');
SELECT contcount.create_ledger('fair_a2', 1);
-- one that spent, then dropped
SELECT contcount.noisy_count(0.25, 'fair_a2') IS NOT NULL FROM generate_series(1, 3);
SELECT contcount.drop_ledger('fair_a2');
-- a creation rolled back, whole or to a savepoint, takes no room
BEGIN;
SELECT contcount.create_ledger('fair_a3', 1);
ROLLBACK;
BEGIN;
SAVEPOINT s;
SELECT contcount.create_ledger('fair_a3', 1);
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT contcount.create_ledger('fair_a3', 1);
-- a drop rolled back keeps the ledger, and its room
BEGIN;
SELECT contcount.drop_ledger('fair_a3');
ROLLBACK;
SELECT test.error_of($$SELECT contcount.create_ledger('fair_a4', 1)$$);
SELECT contcount.drop_ledger('fair_a3');
SELECT contcount.create_ledger('fair_a4', 1);
SELECT name FROM contcount.ledgers WHERE name LIKE 'fair_a%' ORDER BY name;
-- another role still creates ledgers
\c - regress_fair_b
SELECT contcount.create_ledger('fair_b1', 1);
\c - postgres
SELECT name, budget, spent FROM contcount.ledgers WHERE name LIKE 'fair_%' ORDER BY name;
SELECT count(*) AS audited_drops FROM contcount.budget_changes
WHERE ledger LIKE 'fair_a%' AND action = 'drop';
-- the dropped ledger's charges are still in the audit, and in the export
SELECT role, ledger, epsilon, accounting FROM contcount.charges WHERE ledger = 'fair_a2';
SELECT l ->> 'name' AS name, l ->> 'spent_units' AS spent_units, l ->> 'accounting' AS accounting,
       l ->> 'dropped_at' IS NOT NULL AS dropped
FROM jsonb_array_elements(contcount.export_ledgers() -> 'ledgers') l
WHERE l ->> 'name' = 'fair_a2' ORDER BY l ->> 'created_at';

-- Counters: a role owns at most contcount.max_counters_per_role counters
-- (here 2); the refusal says how many it owns, and no other role's.
ALTER ROLE regress_fair_a SET contcount.max_counters_per_role = 2;
\c - regress_fair_a
SELECT contcount.create_counter('fair_c1', 0.000001, mechanism => 'hybrid', step => '1 day');
SELECT contcount.create_counter('fair_c2', 0.000001, mechanism => 'hybrid', step => '1 day');
SELECT test.error_of($$SELECT contcount.create_counter('fair_c3', 0.000001, mechanism => 'hybrid', step => '1 day')$$);
SELECT contcount.create_counter('fair_c3', 0.000001, mechanism => 'hybrid', step => '1 day');
SELECT contcount.drop_counter('fair_c2');
SELECT contcount.create_counter('fair_c3', 0.000001, mechanism => 'hybrid', step => '1 day');
-- another role still creates counters
\c - regress_fair_b
SELECT contcount.create_counter('fair_c4', 0.000001, mechanism => 'hybrid', step => '1 day');
\c - postgres
SELECT name, owner FROM contcount.counters WHERE name LIKE 'fair_%' ORDER BY name;

-- Blocks: one release of 9998 daily steps from the year 3000 made 9998
-- blocks in the future, which never retire, and held the server's room
-- for good.  No window reaches past the end of today's block now.
CREATE TABLE test.fair_visits (user_id int, at timestamptz);
INSERT INTO test.fair_visits SELECT u, now() - u * interval '1 hour' FROM generate_series(1, 200) u;
INSERT INTO test.fair_visits VALUES (201, '3000-01-02');
SELECT contcount.create_ledger('fair_data', 1000);
SELECT contcount.protect_table('fair_visits', 'test.fair_visits', 'user_id', 'at', 'fair_data');
SELECT contcount.source_blocks('fair_visits', '1 day', 1000, '30 days');
SELECT contcount.grant_source('fair_visits', 'regress_fair_a');
SELECT contcount.grant_source('fair_visits', 'regress_fair_b');
SELECT contcount.create_ledger('fair_other_data', 1000);
CREATE TABLE test.fair_other_visits AS TABLE test.fair_visits;
SELECT contcount.protect_table('fair_other', 'test.fair_other_visits', 'user_id', 'at', 'fair_other_data');
SELECT contcount.source_blocks('fair_other', '1 day', 1000, '30 days');
SELECT contcount.grant_source('fair_other', 'regress_fair_b');
\c - regress_fair_a
SELECT count(*) AS steps, sum(noisy_count) AS rows_read
FROM contcount.source_running_counts('fair_visits', 1000, '1 day', '3000-01-01', 9998);
SELECT count(*) AS blocks, count(*) FILTER (WHERE block_start > now()) AS future_blocks
FROM contcount.blocks WHERE source = 'fair_visits';
-- A ledger holds at most contcount.max_blocks_per_ledger blocks (here 5, for
-- this role's sessions): a release that would make more is refused before
-- any charge, the team's included.
\c - postgres
ALTER ROLE regress_fair_a SET contcount.max_blocks_per_ledger = 5;
\c - regress_fair_a
SELECT spent AS team_before FROM contcount.ledgers WHERE name = 'tests' \gset
SELECT test.error_of($$SELECT count(*) FROM contcount.source_running_counts('fair_visits', 1, '1 day',
    date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '9 days', 10)$$);
SELECT count(*) FROM contcount.source_running_counts('fair_visits', 1, '1 day',
    date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '9 days', 10);
SELECT spent = :team_before AS team_unchanged FROM contcount.ledgers WHERE name = 'tests';
SELECT count(*) AS blocks FROM contcount.blocks WHERE source = 'fair_visits';
-- within the share: the blocks it holds, and up to 5 in all
SELECT count(*) AS steps FROM contcount.source_running_counts('fair_visits', 1, '1 day',
    date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '3 days', 4);
SELECT count(*) AS blocks FROM contcount.blocks WHERE source = 'fair_visits';
-- another ledger's blocks are another share
\c - regress_fair_b
SELECT count(*) AS steps FROM contcount.source_running_counts('fair_other', 1, '1 day',
    date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '9 days', 10);
SELECT count(*) AS blocks FROM contcount.blocks WHERE source = 'fair_other';

-- Cleanup.
\c - postgres
SELECT contcount.drop_counter(name) FROM contcount.counters WHERE name LIKE 'fair_%' ORDER BY name;
SELECT contcount.drop_source('fair_visits');
SELECT contcount.drop_source('fair_other');
SELECT contcount.drop_ledger(name) FROM contcount.ledgers WHERE name LIKE 'fair_%' ORDER BY name;
DROP TABLE test.fair_visits, test.fair_other_visits;
REVOKE ALL ON SCHEMA test FROM regress_fair_a, regress_fair_b;
REVOKE ALL ON FUNCTION test.error_of(text) FROM regress_fair_a, regress_fair_b;
REVOKE ALL ON FUNCTION contcount.create_ledger(text, numeric) FROM regress_fair_a, regress_fair_b;
DROP ROLE regress_fair_a;
DROP ROLE regress_fair_b;
