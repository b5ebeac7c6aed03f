-- contcount--0.5--0.6.sql
--	  Sealed releases: what a release runs as the extension's owner reports
--	  nothing to the caller's session, shared room is shared fairly, and
--	  every bad input is refused with its SQLSTATE.
--
-- A new database runs every script from contcount--0.1.sql on, so fresh
-- installs and upgrades end in the same objects.  Hardened like the install
-- script: no CREATE OR REPLACE, no IF NOT EXISTS, qualified names, pinned
-- search_path.

\echo Use "ALTER EXTENSION contcount UPDATE TO '0.6'" to load this file. \quit

-- ---------------------------------------------------------------------
-- Imports checked whole before anything is taken in
-- ---------------------------------------------------------------------

-- The ledger store is not transactional: an import refused at its third
-- ledger kept the first two, and a field the store did not check (a
-- negative budget, one beyond what the views show, an id of 0, an empty
-- name, a spending that is not its audit's) was taken in.  import_ledgers()
-- now checks every field of every ledger first (22023, naming the ledger
-- and the field), and whatever the store would refuse (ZB003, 55000), and
-- only then imports.
CREATE FUNCTION contcount.store_check_import(export jsonb)
RETURNS boolean
AS 'MODULE_PATHNAME', 'contcount_store_check_import'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION contcount.store_check_import(jsonb) FROM PUBLIC;
COMMENT ON FUNCTION contcount.store_check_import(jsonb) IS
    'true, or an error for the first field of an export that import_ledgers() would refuse; superusers only';

ALTER FUNCTION contcount.import_ledgers(jsonb) RENAME TO import_ledgers_unchecked;
COMMENT ON FUNCTION contcount.import_ledgers_unchecked(jsonb) IS
    'import_ledgers() without its check of the whole export first; internal';
CREATE FUNCTION contcount.import_ledgers(export jsonb)
RETURNS TABLE (ledger text, spent numeric, action text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM contcount.store_check_import(export);
    RETURN QUERY SELECT * FROM contcount.import_ledgers_unchecked(export);
END
$$;
REVOKE ALL ON FUNCTION contcount.import_ledgers(jsonb) FROM PUBLIC;
COMMENT ON FUNCTION contcount.import_ledgers(jsonb) IS
    'take in the ledgers of an export of export_ledgers(), each field checked before anything is taken in';

-- Counters over sources: no lock on the DBA's table, a fixed-size key
-- for each unit, and one source over the rows of a source with blocks
-- ---------------------------------------------------------------------

-- A counter over a source keeps each unit by the SHA-256 digest of the
-- unit's text form (in the database's encoding), 32 bytes whatever the
-- unit: a long unit can no longer make the application's insert fail on
-- the index.  The units counted so far keep their counts.
ALTER TABLE contcount.counter_unit
    ALTER COLUMN unit TYPE bytea
        USING pg_catalog.sha256(pg_catalog.convert_to(unit, pg_catalog.getdatabaseencoding()));
ALTER TABLE contcount.counter_unit RENAME COLUMN unit TO unit_digest;
ALTER TABLE contcount.counter_unit ADD CONSTRAINT counter_unit_digest_length
    CHECK (pg_catalog.octet_length(unit_digest) OPERATOR(pg_catalog.=) 32);
COMMENT ON CONSTRAINT counter_unit_digest_length ON contcount.counter_unit IS
    'a unit''s key is its SHA-256 digest: 32 bytes';
COMMENT ON COLUMN contcount.counter_unit.unit_digest IS
    'SHA-256 digest of the unit''s text form: the unit whose rows this row bounds';

-- One trigger a source feeds all of its counters, created by the DBA's
-- protect_table (or feed_source) and dropped by drop_source: an analyst's
-- create_counter and drop_counter no longer create or drop a trigger, and
-- take no lock on the source's table.
CREATE FUNCTION contcount.feed_source_counters()
RETURNS trigger
AS 'MODULE_PATHNAME', 'contcount_feed_source_counters'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.feed_source_counters() FROM PUBLIC;
COMMENT ON FUNCTION contcount.feed_source_counters() IS
    'trigger on a protected source''s table, made by protect_table: counts its inserts for the source''s counters';

CREATE FUNCTION contcount.feed_source(source text)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_feed_source'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.feed_source(text) FROM PUBLIC;
COMMENT ON FUNCTION contcount.feed_source(text) IS
    'create the trigger that feeds a protected source''s counters, if it is missing (locks the table)';

-- The triggers of 0.5, one a counter, give way to one a source.  A
-- partition's clone goes with its parent's trigger.
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT tg.tgname, tg.tgrelid FROM pg_catalog.pg_trigger tg
             WHERE tg.tgfoid OPERATOR(pg_catalog.=) 'contcount.count_source_rows()'::pg_catalog.regprocedure
               AND tg.tgparentid OPERATOR(pg_catalog.=) 0
    LOOP
        EXECUTE pg_catalog.format('DROP TRIGGER %I ON %s', t.tgname, t.tgrelid::pg_catalog.regclass);
    END LOOP;
END $$;
SELECT contcount.feed_source(s.name) FROM contcount.source s
WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) s.relid);
DROP FUNCTION contcount.count_source_rows();

-- From now on a source whose budget is held per block is the only source
-- over its rows (protect_table and source_blocks refuse the second): say
-- which pairs declared before are still there, for the DBA to drop one.
DO $$
DECLARE
    p record;
BEGIN
    FOR p IN SELECT b.name AS blocks, o.name AS other FROM contcount.source b
             JOIN contcount.source o ON o.relid OPERATOR(pg_catalog.=) b.relid
                 AND o.name OPERATOR(pg_catalog.<>) b.name
             WHERE b.block_length IS NOT NULL ORDER BY 1, 2
    LOOP
        RAISE WARNING 'protected source "%" reads the rows of protected source "%", whose budget is held per block',
            p.other, p.blocks
            USING HINT = 'Drop one of them: releases through the first do not pay the blocks.';
    END LOOP;
END $$;
