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

-- Statistics lockdown: PostgreSQL shows every role exact counts of every
-- table (row estimates in pg_class, tuple and block counters per table, per
-- index, per database and for the server, sizes on disk, and the counters of
-- pg_stat_statements).  Of a protected table they are the counts its
-- releases protect; of contcount's own tables (counter_unit holds a row per
-- person a counter counted) the counts behind the counters.  A release's own
-- query moves them too: it reads the window's rows, so the database's
-- tup_fetched grows by their number.  The lockdown takes each of these doors
-- from PUBLIC and gives it to pg_read_all_stats, PostgreSQL's role for
-- monitoring; a superuser keeps everything.
-- ---------------------------------------------------------------------

-- Every door, with the privilege that opens it and who holds that privilege
-- now (PostgreSQL's default when the object has no ACL): the columns of
-- pg_class that estimate a relation's rows and pages; the statistics
-- functions of one relation, index, function or database (their argument
-- an oid) and of the server's I/O (no argument); the size functions; the
-- members of pg_stat_statements that read its counters; the views over any
-- of these functions (in pg_catalog or pg_stat_statements'); and the other
-- databases a role may connect to, where pg_stat_database shows this one's
-- counters and pg_stat_statements (shared by all databases) its statements'.
-- PARALLEL RESTRICTED, as pg_get_viewdef is.
CREATE FUNCTION contcount.statistics_doors()
RETURNS TABLE (kind text, door text, privilege text, acl aclitem[])
LANGUAGE sql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
WITH RECURSIVE functions AS (
    SELECT p.oid, p.proname, p.pronamespace, p.proargtypes, p.proowner, p.proacl
    FROM pg_catalog.pg_proc p
    WHERE p.pronamespace OPERATOR(pg_catalog.=) 'pg_catalog'::pg_catalog.regnamespace
      AND ((p.proname OPERATOR(pg_catalog.~~) 'pg\_stat\_get\_%'
            AND (p.proargtypes OPERATOR(pg_catalog.=) '26'::pg_catalog.oidvector
                 OR (p.pronargs OPERATOR(pg_catalog.=) 0
                     AND p.proname OPERATOR(pg_catalog.~) '^pg_stat_get_(wal|slru|bgwriter_.*|buf_.*|checkpoint_.*)$')))
           OR p.proname OPERATOR(pg_catalog.=) ANY (ARRAY['pg_relation_size', 'pg_table_size',
                  'pg_indexes_size', 'pg_total_relation_size', 'pg_database_size',
                  'pg_tablespace_size']::pg_catalog.name[]))
    UNION
    SELECT p.oid, p.proname, p.pronamespace, p.proargtypes, p.proowner, p.proacl
    FROM pg_catalog.pg_extension e
    JOIN pg_catalog.pg_depend d
      ON d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
     AND d.refobjid OPERATOR(pg_catalog.=) e.oid
     AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
     AND d.deptype OPERATOR(pg_catalog.=) 'e'
    JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) d.objid
    WHERE e.extname OPERATOR(pg_catalog.=) 'pg_stat_statements'
      AND p.proname OPERATOR(pg_catalog.!~~) '%reset%'
),
-- the views of pg_catalog and of pg_stat_statements whose definition calls
-- one of these functions or reads one of these views (found by name: initdb
-- records no dependency on pinned objects)
candidates AS MATERIALIZED (
    SELECT c.oid, c.relname, pg_catalog.pg_get_viewdef(c.oid) AS definition
    FROM pg_catalog.pg_class c
    WHERE c.relkind OPERATOR(pg_catalog.=) 'v'
      AND (c.relnamespace OPERATOR(pg_catalog.=) 'pg_catalog'::pg_catalog.regnamespace
           OR EXISTS (SELECT FROM pg_catalog.pg_depend d
                      JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
                      WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                        AND d.objid OPERATOR(pg_catalog.=) c.oid
                        AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                        AND d.deptype OPERATOR(pg_catalog.=) 'e'
                        AND e.extname OPERATOR(pg_catalog.=) 'pg_stat_statements'))
),
views(oid, relname) AS (
    SELECT c.oid, c.relname FROM candidates c
    WHERE c.definition OPERATOR(pg_catalog.~) (
              SELECT pg_catalog.format('\m(%s)\(', pg_catalog.string_agg(DISTINCT f.proname, '|'))
              FROM functions f)
    UNION
    SELECT c.oid, c.relname FROM candidates c, views v
    WHERE c.definition OPERATOR(pg_catalog.~) pg_catalog.format('\m%s\M', v.relname)
)
SELECT 'column', pg_catalog.format('pg_catalog.pg_class.%I', a.attname), 'SELECT',
       pg_catalog.array_cat(c.relacl, a.attacl)
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) c.oid
WHERE c.oid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
  AND a.attname OPERATOR(pg_catalog.=) ANY (ARRAY['reltuples', 'relpages', 'relallvisible']::pg_catalog.name[])
UNION ALL
SELECT 'function',
       pg_catalog.format('%I.%I(%s)', n.nspname, f.proname, pg_catalog.oidvectortypes(f.proargtypes)),
       'EXECUTE', COALESCE(f.proacl, pg_catalog.acldefault('f', f.proowner))
FROM functions f
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) f.pronamespace
UNION ALL
SELECT 'view', pg_catalog.format('%I.%I', n.nspname, c.relname), 'SELECT',
       COALESCE(c.relacl, pg_catalog.acldefault('r', c.relowner))
FROM (SELECT DISTINCT oid FROM views) v
JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) v.oid
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
UNION ALL
SELECT 'database', pg_catalog.quote_ident(d.datname), 'CONNECT',
       COALESCE(d.datacl, pg_catalog.acldefault('d', d.datdba))
FROM pg_catalog.pg_database d
WHERE d.datallowconn AND d.datname OPERATOR(pg_catalog.<>) pg_catalog.current_database()
ORDER BY 1, 2
$$;
COMMENT ON FUNCTION contcount.statistics_doors() IS
    'every door to exact counts that contcount.lockdown_statistics() closes (or, for other databases, names), '
    'the privilege that opens it and its ACL';

-- The doors still open: one row per door and per grantee that may use it,
-- PUBLIC or a role that is neither a superuser nor a member of
-- pg_read_all_stats.  No row: the lockdown is in force.  Anyone may read it.
CREATE FUNCTION contcount.statistics_lockdown()
RETURNS TABLE (kind text, door text, open_to text)
LANGUAGE sql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
SELECT d.kind, d.door, CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC' ELSE r.rolname::pg_catalog.text END
FROM contcount.statistics_doors() d
CROSS JOIN LATERAL pg_catalog.aclexplode(d.acl) a
LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) a.grantee
WHERE a.privilege_type OPERATOR(pg_catalog.=) d.privilege
  AND (a.grantee OPERATOR(pg_catalog.=) 0
       OR NOT (r.rolsuper OR pg_catalog.pg_has_role(a.grantee, 'pg_read_all_stats', 'MEMBER')))
GROUP BY 1, 2, 3
UNION ALL
-- Two settings of preloaded modules that only a superuser sets and that
-- would show every role what contcount's own statements did: no lockdown
-- closes them, the DBA's configuration does (docs/sealed-releases.md).
SELECT 'setting', s.door, 'PUBLIC'
FROM (VALUES
    ('pg_stat_statements.track = all',
     pg_catalog.current_setting('pg_stat_statements.track', true) OPERATOR(pg_catalog.=) 'all'),
    ('auto_explain.log_nested_statements with a log_level that reaches the client',
     pg_catalog.current_setting('auto_explain.log_nested_statements', true) OPERATOR(pg_catalog.=) 'on'
     AND pg_catalog.current_setting('auto_explain.log_level', true) OPERATOR(pg_catalog.=) ANY ('{info,notice,warning}'))
) s(door, open)
WHERE s.open
ORDER BY 1, 2, 3
$$;
COMMENT ON FUNCTION contcount.statistics_lockdown() IS
    'the doors to exact counts still open, and to whom (PUBLIC or a role that is neither a superuser '
    'nor a member of pg_read_all_stats); no row: the statistics lockdown is in force';

-- Close the doors of this database: each function and view from PUBLIC to
-- pg_read_all_stats; pg_class's SELECT from PUBLIC to every other column
-- (pg_read_all_stats keeps the whole table).  Other databases are named,
-- not changed: closing them takes their CONNECT from PUBLIC, which is the
-- DBA's call.  Idempotent: run it again after installing pg_stat_statements.
CREATE FUNCTION contcount.lockdown_statistics()
RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    d record;
    columns text;
    elsewhere text;
BEGIN
    IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r
            WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER) THEN
        RAISE EXCEPTION 'only a superuser may lock down the statistics'
            USING ERRCODE = '42501';
    END IF;
    SELECT pg_catalog.string_agg(pg_catalog.quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO columns
    FROM pg_catalog.pg_attribute a
    WHERE a.attrelid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
      AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
      AND a.attname OPERATOR(pg_catalog.<>) ALL (
              SELECT pg_catalog.split_part(s.door, '.', 3) FROM contcount.statistics_doors() s
              WHERE s.kind OPERATOR(pg_catalog.=) 'column');
    -- revoking the table's SELECT revokes its columns' too
    REVOKE SELECT ON pg_catalog.pg_class FROM PUBLIC;
    EXECUTE pg_catalog.format('GRANT SELECT (%s) ON pg_catalog.pg_class TO PUBLIC', columns);
    GRANT SELECT ON pg_catalog.pg_class TO pg_read_all_stats;
    FOR d IN SELECT s.kind, s.door FROM contcount.statistics_doors() s
             WHERE s.kind OPERATOR(pg_catalog.=) ANY (ARRAY['function', 'view']) LOOP
        EXECUTE pg_catalog.format('REVOKE %s ON %s %s FROM PUBLIC',
                                  CASE d.kind WHEN 'function' THEN 'EXECUTE' ELSE 'SELECT' END,
                                  CASE d.kind WHEN 'function' THEN 'FUNCTION' ELSE 'TABLE' END, d.door);
        EXECUTE pg_catalog.format('GRANT %s ON %s %s TO pg_read_all_stats',
                                  CASE d.kind WHEN 'function' THEN 'EXECUTE' ELSE 'SELECT' END,
                                  CASE d.kind WHEN 'function' THEN 'FUNCTION' ELSE 'TABLE' END, d.door);
    END LOOP;
    SELECT pg_catalog.string_agg(DISTINCT s.door, ', ') INTO elsewhere
    FROM contcount.statistics_lockdown() s WHERE s.kind OPERATOR(pg_catalog.=) 'database';
    IF elsewhere IS NOT NULL THEN
        RAISE NOTICE 'other databases are still open: %', elsewhere
            USING DETAIL = 'Their pg_stat_database shows the counters of this one.',
                  HINT = 'Revoke CONNECT on them from the roles that release, or from PUBLIC.';
    END IF;
END
$$;
REVOKE ALL ON FUNCTION contcount.lockdown_statistics() FROM PUBLIC;
COMMENT ON FUNCTION contcount.lockdown_statistics() IS
    'close this database''s doors to exact counts (contcount.statistics_doors()) to every role but '
    'superusers and pg_read_all_stats; superusers only';
