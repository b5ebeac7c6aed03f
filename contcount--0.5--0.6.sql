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
