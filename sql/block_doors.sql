-- Blocks belong to the data: a source whose budget is held per block is the
-- only source over its rows.  A second source over the same table (or a
-- table above or below it in a partition or inheritance tree) would release
-- the block's rows without paying the block, so the second declaration is
-- refused, whichever comes first.  The DBA here is not a superuser: a role
-- granted the declaring functions; the analyst neither.

CREATE TABLE test.door_visits (user_id int, at timestamptz);
INSERT INTO test.door_visits SELECT u, now() - interval '1 hour' FROM generate_series(1, 20) u;
CREATE TABLE test.door_parted (user_id int, at timestamptz) PARTITION BY RANGE (at);
CREATE TABLE test.door_2026 PARTITION OF test.door_parted FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
CREATE TABLE test.door_parent (user_id int, at timestamptz);
CREATE TABLE test.door_child () INHERITS (test.door_parent);
SELECT contcount.create_ledger('door_data', 100);
SELECT contcount.create_ledger('door_team', 1000);
CREATE ROLE regress_door_dba LOGIN;
CREATE ROLE regress_door_analyst LOGIN;
ALTER ROLE regress_door_analyst SET contcount.ledger = 'door_team';
SELECT contcount.grant_ledger('door_team', 'regress_door_analyst');
GRANT USAGE ON SCHEMA test TO regress_door_dba, regress_door_analyst;
GRANT EXECUTE ON FUNCTION test.error_of(text) TO regress_door_dba, regress_door_analyst;
GRANT EXECUTE ON FUNCTION contcount.protect_table(text, regclass, text, text, text, integer, integer),
    contcount.source_blocks(text, interval, numeric, interval), contcount.grant_source(text, regrole),
    contcount.drop_source(text) TO regress_door_dba;

\c - regress_door_dba
-- Daily blocks of budget 1 over the table.
SELECT contcount.protect_table('door_daily', 'test.door_visits', 'user_id', 'at', 'door_data');
SELECT contcount.source_blocks('door_daily', '1 day', 1, '30 days');
SELECT contcount.grant_source('door_daily', 'regress_door_analyst');

\c - regress_door_analyst
-- The analyst spends today's block.
SELECT count(*) AS keys FROM contcount.source_counts('door_daily', 1);
SELECT test.error_of($$SELECT * FROM contcount.source_counts('door_daily', 1)$$) LIKE
       'ZB001: privacy budget of block % would be overspent' AS block_spent;

\c - regress_door_dba
-- A second source over the same rows, without blocks, is refused, whatever
-- its ledger; so is one over the table renamed (a table is its oid).
SELECT test.error_of($$SELECT contcount.protect_table('door_open', 'test.door_visits', 'user_id', 'at', 'door_data')$$);
SELECT test.error_of($$SELECT contcount.protect_table('door_open', 'test.door_visits', 'user_id', 'at', 'door_team')$$);
\c - postgres
ALTER TABLE test.door_visits RENAME TO door_visits_renamed;
\c - regress_door_dba
SELECT test.error_of($$SELECT contcount.protect_table('door_open', 'test.door_visits_renamed', 'user_id', 'at', 'door_data')$$);
SELECT test.error_of($$SELECT contcount.grant_source('door_open', 'regress_door_analyst')$$);

\c - regress_door_analyst
-- So no release reads the block's rows again without paying it.
SELECT test.error_of($$SELECT * FROM contcount.source_counts('door_open', 1)$$);
SELECT spent FROM contcount.blocks WHERE source = 'door_daily' AND block_start <= now() ORDER BY block_start DESC LIMIT 1;

\c - regress_door_dba
-- Two sources over one table, then blocks on one of them: refused, naming
-- the other.  Dropping the other lets the blocks be declared.
SELECT contcount.protect_table('door_parted_a', 'test.door_parted', 'user_id', 'at', 'door_data');
SELECT contcount.protect_table('door_parted_b', 'test.door_parted', 'user_id', 'at', 'door_data');
SELECT test.error_of($$SELECT contcount.source_blocks('door_parted_a', '1 day', 1, '30 days')$$);
SELECT contcount.drop_source('door_parted_b');
SELECT contcount.source_blocks('door_parted_a', '1 day', 1, '30 days');
-- A partition's rows are its parent's: no source over it either.
SELECT test.error_of($$SELECT contcount.protect_table('door_2026', 'test.door_2026', 'user_id', 'at', 'door_data')$$);
-- Nor over a parent whose child has blocks, in an inheritance tree.
SELECT contcount.protect_table('door_child', 'test.door_child', 'user_id', 'at', 'door_data');
SELECT contcount.source_blocks('door_child', '1 day', 1, '30 days');
SELECT test.error_of($$SELECT contcount.protect_table('door_parent', 'test.door_parent', 'user_id', 'at', 'door_data')$$);
-- The budget of the one source with blocks still changes.
SELECT contcount.source_blocks('door_daily', '1 day', 2, '30 days');

\c - postgres
SELECT contcount.drop_source(name) FROM contcount.sources WHERE name LIKE 'door%' ORDER BY name;
DROP TABLE test.door_visits_renamed, test.door_parted, test.door_parent CASCADE;
REVOKE EXECUTE ON FUNCTION contcount.protect_table(text, regclass, text, text, text, integer, integer),
    contcount.source_blocks(text, interval, numeric, interval), contcount.grant_source(text, regrole),
    contcount.drop_source(text) FROM regress_door_dba;
DROP OWNED BY regress_door_dba, regress_door_analyst;
DROP ROLE regress_door_dba, regress_door_analyst;
