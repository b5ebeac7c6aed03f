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

-- ---------------------------------------------------------------------
-- Comments in psql, support functions out of the user's way, and
-- PostgreSQL's own catalog checks
-- ---------------------------------------------------------------------

-- The functions no user calls move to a schema of their own, so that
-- \df contcount.* lists what a user calls: the transition and final
-- functions of the aggregates and the trigger functions that contcount
-- itself attaches.  PostgreSQL checks EXECUTE on an aggregate's support
-- functions against the aggregate's owner, not its caller, and looks them
-- up by oid, not by name: the caller needs no USAGE on this schema, and
-- PUBLIC gets none.  A trigger's function is checked (EXECUTE, and USAGE
-- to name it) only when the trigger is created, and contcount creates
-- these as the extension's owner.  Functions that the C library or other
-- SQL functions name as contcount.* stay here for now (ledger_granted and
-- counter_granted; the aggregate bounded_counts, which a 0.6 library also
-- finds in a database still at 0.5; the store_* primitives move below,
-- with the SQL functions that name them), and so does count_inserts, the
-- trigger users attach themselves.
CREATE SCHEMA contcount_internal;
REVOKE ALL ON SCHEMA contcount_internal FROM PUBLIC;
COMMENT ON SCHEMA contcount_internal IS
    'contcount''s support functions: aggregate steps and trigger functions that no user calls';

ALTER FUNCTION contcount.running_count_step(internal, bigint, contcount.mechanism) SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.running_count_step(internal, bigint, float8, bigint) SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.running_count_final(internal) SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.noisy_count_step(bigint, float8, text) SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.noisy_count_final(bigint) SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.bounded_counts_step(internal, anyelement, text, timestamptz) SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.bounded_counts_final(internal) SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.running_mean_step(internal, float8, anyelement, contcount.mean_mechanism)
    SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.running_mean_step(internal, float8, anyelement, float8, float8, float8, bigint, bigint)
    SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.running_mean_final(internal) SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.ledger_changed() SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.feed_source_counters() SET SCHEMA contcount_internal;

-- bounded_counts reads the bounds and keys of the release that runs it,
-- in that backend's memory: PARALLEL RESTRICTED, PostgreSQL's word for a
-- function that may run in a parallel plan only in the leader, because it
-- uses the backend's own state.  (Every aggregate is IMMUTABLE in pg_proc;
-- its volatility is its support functions'.)  An aggregate's parallel
-- label is set only by CREATE AGGREGATE: made again, as 0.5 had it.
DROP AGGREGATE contcount.bounded_counts(anyelement, text, timestamptz);
CREATE AGGREGATE contcount.bounded_counts(unit anyelement, key text, t timestamptz) (
    SFUNC = contcount_internal.bounded_counts_step,
    STYPE = internal,
    FINALFUNC = contcount_internal.bounded_counts_final,
    PARALLEL = RESTRICTED
);
REVOKE ALL ON FUNCTION contcount.bounded_counts(anyelement, text, timestamptz) FROM PUBLIC;

-- Every object of the extension says what it is for in \df+, \dv+, \dT+
-- and \dt+.
COMMENT ON TYPE contcount.mechanism IS
    'the parameters of a running count''s mechanism, built and checked by contcount.mechanism()';
COMMENT ON TYPE contcount.release IS
    'one step of a running count: the step, its noisy count, the noise''s standard deviation and its error bound';
COMMENT ON TYPE contcount.mean_mechanism IS
    'the parameters of a running mean''s mechanism, built and checked by contcount.mean_mechanism()';
COMMENT ON TYPE contcount.mean_release IS
    'one row of a running mean: the step, its noisy mean, how many units it covers, and its error';

COMMENT ON FUNCTION contcount.mechanism(text, float8, bigint, bigint, bigint, float8, text, text, float8) IS
    'build and check a running count''s mechanism (binary, smooth_binary, blt, honaker, ...) for running_count';
COMMENT ON FUNCTION contcount.mean_mechanism(float8, float8, float8, bigint, bigint, bigint, text, bigint, float8, text) IS
    'build and check a running mean''s mechanism (range, epsilon, units, steps) for running_mean';
COMMENT ON AGGREGATE contcount.running_count(bigint, contcount.mechanism) IS
    'differentially private running count: one noisy release per row, as a window or ordered aggregate; charges the session''s ledger once';
COMMENT ON AGGREGATE contcount.running_count(bigint, float8, bigint) IS
    'running_count with the binary mechanism at epsilon over horizon steps; charges the session''s ledger once';
COMMENT ON FUNCTION contcount.running_counts(bigint[], float8, text, bigint, bigint, bigint, float8, text, text, float8) IS
    'the noisy running counts of a whole series of per-step counts, one row per step; charged once';
COMMENT ON AGGREGATE contcount.noisy_count(float8) IS
    'count(*) with discrete Laplace noise at epsilon, charged to the session''s ledger';
COMMENT ON AGGREGATE contcount.noisy_count(float8, text) IS
    'count(*) with discrete Laplace noise at epsilon, charged to the named ledger';
COMMENT ON AGGREGATE contcount.running_mean(float8, anyelement, contcount.mean_mechanism) IS
    'user-level private running mean of samples in a range, one release per row; charges the session''s ledger once';
COMMENT ON AGGREGATE contcount.running_mean(float8, anyelement, float8, float8, float8, bigint, bigint) IS
    'running_mean with its mechanism given as lo, hi, epsilon, units and steps';
COMMENT ON FUNCTION contcount.window_counts(bigint[], bigint, float8, text, bigint, float8, text) IS
    'noisy counts over sliding windows of width steps of a series, one epsilon for all of them; charged once';
COMMENT ON FUNCTION contcount.streaming_composition(float8, float8, float8, bigint) IS
    'calculator: the (epsilon, delta) of streaming composition of steps releases; draws nothing, charges nothing';
COMMENT ON FUNCTION contcount.streaming_composition(contcount.mechanism, float8, float8, bigint) IS
    'calculator: streaming composition of steps releases of a mechanism; draws nothing, charges nothing';

COMMENT ON FUNCTION contcount.create_ledger(text, numeric) IS
    'create a pure (epsilon) privacy budget ledger; superusers only';
COMMENT ON FUNCTION contcount.create_ledger(text, numeric, numeric) IS
    'create a zCDP (rho) privacy budget ledger, shown at delta; superusers only';
COMMENT ON FUNCTION contcount.alter_ledger(text, numeric) IS
    'change a pure ledger''s epsilon budget (recorded in contcount.budget_changes); ledger admins';
COMMENT ON FUNCTION contcount.alter_ledger(text, numeric, numeric) IS
    'change a zCDP ledger''s rho budget or delta (NULL keeps one); ledger admins';
COMMENT ON FUNCTION contcount.drop_ledger(text) IS
    'drop a ledger; what it spent stays in the ledger store; ledger admins';
COMMENT ON FUNCTION contcount.grant_ledger(text, regrole, boolean) IS
    'let a role (and its members) spend from a ledger, or administer it with admin => true';
COMMENT ON FUNCTION contcount.revoke_ledger(text, regrole) IS
    'take back a role''s right to spend from or administer a ledger';
COMMENT ON FUNCTION contcount.ledger_rows() IS
    'the rows of the view contcount.ledgers: the ledgers the current role may spend from or manage';
COMMENT ON FUNCTION contcount.charge_rows() IS
    'the rows of the view contcount.charges: every charge to a ledger the current role manages';
COMMENT ON FUNCTION contcount.budget_change_rows() IS
    'the rows of the view contcount.budget_changes: every budget change of a ledger the current role manages';
COMMENT ON FUNCTION contcount.ledger_delta(text, float8) IS
    'the delta a ledger''s spending so far amounts to at this epsilon (from its privacy curve)';
COMMENT ON FUNCTION contcount.ledger_epsilon(text, float8) IS
    'the epsilon a ledger''s spending so far amounts to at this delta (from its privacy curve)';
COMMENT ON FUNCTION contcount.export_ledgers() IS
    'every ledger of this database with what it spent and its audit, as a document for import_ledgers(); superusers only';
COMMENT ON FUNCTION contcount.export_ledgers_without_blocks() IS
    'internal: export_ledgers() without the source blocks, wrapped by export_ledgers()';
COMMENT ON FUNCTION contcount.import_ledgers_without_blocks(jsonb) IS
    'internal: the import of ledgers without their source blocks, wrapped by import_ledgers()';
COMMENT ON FUNCTION contcount.accept_ledger_store() IS
    'after recovery to a target, accept the ledger store once what was spent since is imported; superusers only';
COMMENT ON FUNCTION contcount.ledger_granted(bigint, oid, boolean) IS
    'internal: may the role spend from (or administer) the ledger; run by contcount as the extension''s owner';
COMMENT ON FUNCTION contcount.store_spent(bigint) IS
    'internal: what the ledger store says a ledger spent, in units; superusers only';
COMMENT ON FUNCTION contcount.store_accounting(bigint) IS
    'internal: a ledger''s accounting (pure or zcdp) in the ledger store; superusers only';
COMMENT ON FUNCTION contcount.store_charges() IS
    'internal: every charge in the ledger store, for export_ledgers(); superusers only';
COMMENT ON FUNCTION contcount.store_blocks() IS
    'internal: every source block in the ledger store and what it spent, for export_ledgers(); superusers only';
COMMENT ON FUNCTION contcount.store_import(bigint, text, timestamptz, oid, bigint, timestamptz[], oid[], bigint[],
                                           boolean[], text[], text[], text, text[], bigint[], bigint[]) IS
    'internal: write one ledger of an export into the ledger store, for import_ledgers(); superusers only';
COMMENT ON FUNCTION contcount.store_import_blocks(bigint, timestamptz[], timestamptz[], bigint[]) IS
    'internal: raise a ledger''s source blocks in the store to an export''s, for import_ledgers(); superusers only';
COMMENT ON FUNCTION contcount.store_check_export(text, text, integer) IS
    'internal: true, or an error (22023) if format and version are not those of an export import_ledgers() reads';

COMMENT ON FUNCTION contcount.create_counter(text, float8, text, bigint, interval, bigint, bigint, float8, text, text,
                                             text, float8) IS
    'create a named counter, fed by insert triggers and released every step by the step worker';
COMMENT ON FUNCTION contcount.drop_counter(text) IS
    'drop a counter and its releases; its owner or a superuser';
COMMENT ON FUNCTION contcount.grant_counter(text, regrole, boolean) IS
    'let a role read a counter''s releases, or feed it with feed => true; the counter''s owner';
COMMENT ON FUNCTION contcount.revoke_counter(text, regrole) IS
    'take back a role''s right to read or feed a counter; the counter''s owner';
COMMENT ON FUNCTION contcount.tick(text) IS
    'release a counter''s next step now, as the step worker would; returns the step';
COMMENT ON FUNCTION contcount.current(text) IS
    'a counter''s latest release: its step, noisy count, standard deviation and error bound';
COMMENT ON FUNCTION contcount.history(text) IS
    'every release of a counter so far, one row per step';
COMMENT ON FUNCTION contcount.counter_rows() IS
    'the rows of the view contcount.counters: the counters the current role may read';
COMMENT ON FUNCTION contcount.counter_internals(text) IS
    'a counter''s raw state: exact count released, pending committed counts and its noise; superusers only';
COMMENT ON FUNCTION contcount.counter_granted(bigint, oid) IS
    'internal: may the role read the counter; run by contcount as the extension''s owner';
COMMENT ON FUNCTION contcount.count_inserts() IS
    'trigger for AFTER INSERT (per row, per statement, or with a transition table): feeds the counter it names';

COMMENT ON FUNCTION contcount.protect_table(text, regclass, text, text, text, integer, integer) IS
    'declare a protected source over a table: its privacy unit, time, per-unit bounds and ledger; superusers';
COMMENT ON FUNCTION contcount.source_dimension(text, text, text[]) IS
    'declare a public dimension of a source and its keys, the only keys a release shows; superusers';
COMMENT ON FUNCTION contcount.drop_source(text) IS
    'drop a protected source with its dimensions and grants; the table and ledgers stay; superusers';
COMMENT ON FUNCTION contcount.grant_source(text, regrole) IS
    'let a role release from a protected source without SELECT on its table; superusers';
COMMENT ON FUNCTION contcount.revoke_source(text, regrole) IS
    'take back a role''s right to release from a protected source; superusers';
COMMENT ON FUNCTION contcount.source_counts(text, float8, text, text, jsonb) IS
    'noisy counts of a protected source''s bounded rows, per declared key; charges the caller''s and the source''s ledgers';
COMMENT ON FUNCTION contcount.source_running_counts(text, float8, interval, timestamptz, bigint, text, text, text, jsonb,
                                                    float8) IS
    'noisy running counts of a protected source per step of time, per declared key; charges both ledgers';
COMMENT ON FUNCTION contcount.source_mean_value(text, text) IS
    'declare a column of a protected source that source_running_mean may average; superusers';
COMMENT ON FUNCTION contcount.drop_source_mean_value(text, text) IS
    'withdraw a column''s declaration for source_running_mean; superusers';
COMMENT ON FUNCTION contcount.source_running_mean(text, text, contcount.mean_mechanism) IS
    'user-level private running mean of a declared column of a protected source; charges both ledgers';
COMMENT ON FUNCTION contcount.source_blocks(text, interval, numeric, interval) IS
    'give a protected source time blocks, each with a budget of its own and a retention; superusers';
COMMENT ON FUNCTION contcount.source_expired_rows(text) IS
    'the exact number of a source''s rows older than its retention, for the DBA who deletes them; superusers';
COMMENT ON FUNCTION contcount.block_rows() IS
    'the rows of the view contcount.blocks: the blocks of the sources the current role may see';
COMMENT ON FUNCTION contcount.block_charge_rows() IS
    'the rows of the view contcount.block_charges: what each release charged each block';
COMMENT ON AGGREGATE contcount.bounded_counts(anyelement, text, timestamptz) IS
    'internal: the bounding rule of a release from a protected source; only contcount''s own queries call it';

COMMENT ON FUNCTION contcount_internal.running_count_step(internal, bigint, contcount.mechanism) IS
    'internal: transition function of running_count(item, mechanism)';
COMMENT ON FUNCTION contcount_internal.running_count_step(internal, bigint, float8, bigint) IS
    'internal: transition function of running_count(item, epsilon, horizon)';
COMMENT ON FUNCTION contcount_internal.running_count_final(internal) IS
    'internal: final function of running_count';
COMMENT ON FUNCTION contcount_internal.noisy_count_step(bigint, float8, text) IS
    'internal: transition function of noisy_count(epsilon, ledger)';
COMMENT ON FUNCTION contcount_internal.noisy_count_final(bigint) IS
    'internal: final function of noisy_count: adds the noise and charges the ledger';
COMMENT ON FUNCTION contcount_internal.bounded_counts_step(internal, anyelement, text, timestamptz) IS
    'internal: transition function of bounded_counts';
COMMENT ON FUNCTION contcount_internal.bounded_counts_final(internal) IS
    'internal: final function of bounded_counts';
COMMENT ON FUNCTION contcount_internal.running_mean_step(internal, float8, anyelement, contcount.mean_mechanism) IS
    'internal: transition function of running_mean(x, unit, mechanism)';
COMMENT ON FUNCTION contcount_internal.running_mean_step(internal, float8, anyelement, float8, float8, float8, bigint,
                                                         bigint) IS
    'internal: transition function of running_mean(x, unit, lo, hi, epsilon, units, steps)';
COMMENT ON FUNCTION contcount_internal.running_mean_final(internal) IS
    'internal: final function of running_mean';
COMMENT ON FUNCTION contcount_internal.ledger_changed() IS
    'internal: trigger on contcount.ledger that tells every backend a ledger changed';
COMMENT ON FUNCTION contcount_internal.feed_source_counters() IS
    'internal: trigger on a protected source''s table, made by protect_table: counts its inserts for the source''s counters';

COMMENT ON VIEW contcount.ledgers IS
    'the ledgers the current role may spend from or manage: budget, spent, remaining, accounting';
COMMENT ON VIEW contcount.charges IS
    'every charge to a ledger the current role manages: when, who, how much, for which statement';
COMMENT ON VIEW contcount.budget_changes IS
    'every budget change of a ledger the current role manages: who, when, from what to what';
COMMENT ON VIEW contcount.counters IS
    'the counters the current role may read, with their mechanism, steps and ledger';
COMMENT ON VIEW contcount.sources IS
    'the protected sources the current role may release from, one row per dimension with its keys and blocks';
COMMENT ON VIEW contcount.blocks IS
    'the time blocks of the sources the current role may see: budget, spent and remaining per block';
COMMENT ON VIEW contcount.block_charges IS
    'which blocks each release from a source charged, for the admins of the source''s ledger';

COMMENT ON TABLE contcount.ledger IS
    'internal: the ledgers'' definitions (what they spent is in the ledger store); read through contcount.ledgers';
COMMENT ON TABLE contcount.ledger_grant IS
    'internal: the roles granted each ledger; read by contcount as the extension''s owner';
COMMENT ON TABLE contcount.budget_change IS
    'internal: the audit of budget changes; read through contcount.budget_changes';
COMMENT ON TABLE contcount.counter IS
    'internal: the counters'' definitions and mechanism states (exact counts and noise); extension owner only';
COMMENT ON TABLE contcount.counter_release IS
    'internal: every release of every counter; read through contcount.current() and contcount.history()';
COMMENT ON TABLE contcount.counter_delta IS
    'internal: the committed counts of each transaction not yet in a step; extension owner only';
COMMENT ON TABLE contcount.counter_grant IS
    'internal: the roles granted each counter; extension owner only';
COMMENT ON TABLE contcount.counter_unit IS
    'internal: the rows each privacy unit gave a counter over a source; extension owner only';
COMMENT ON TABLE contcount.source IS
    'internal: the protected sources'' definitions; read through contcount.sources';
COMMENT ON TABLE contcount.source_dimension IS
    'internal: the declared dimensions and keys of each protected source; read through contcount.sources';
COMMENT ON TABLE contcount.source_grant IS
    'internal: the roles granted each protected source; extension owner only';
COMMENT ON TABLE contcount.source_mean_value IS
    'internal: the columns of each protected source that source_running_mean may average';

-- One's own spending: contcount.charges shows every role its own charges to
-- any ledger (what it spent through contcount.ledger, a team's ledger or a
-- source's), besides every charge to the ledgers it administers, as before.
-- The function and view are unchanged; only what they show a non-admin is.
COMMENT ON FUNCTION contcount.charge_rows() IS
    'the rows of the view contcount.charges: every charge to a ledger the current role manages, and the current role''s own charges to any ledger';
COMMENT ON VIEW contcount.charges IS
    'every charge to a ledger the current role manages, and the current role''s own charges to any ledger: when, who, how much, for which statement';

-- Free previews: what a release would show at each step (stddev, bound)
-- and what it would charge, from its public parameters alone, reading no
-- data and charging nothing; and how many releases of a cost a ledger the
-- caller may see can still pay.  Parameters as running_counts takes them.
CREATE FUNCTION contcount.preview(
    mechanism text DEFAULT 'auto',
    epsilon float8 DEFAULT NULL,
    horizon bigint DEFAULT NULL,
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    objective text DEFAULT NULL,
    rho float8 DEFAULT NULL,
    steps bigint DEFAULT NULL,
    OUT t bigint, OUT stddev float8, OUT bound float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_preview'
LANGUAGE C STABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION contcount.preview_charge(
    mechanism text DEFAULT 'auto',
    epsilon float8 DEFAULT NULL,
    horizon bigint DEFAULT NULL,
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    objective text DEFAULT NULL,
    rho float8 DEFAULT NULL,
    ledger text DEFAULT NULL,
    OUT mechanism text, OUT epsilon float8, OUT rho float8, OUT ledger text,
    OUT accounting text, OUT charge numeric, OUT releases_left bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'contcount_preview_charge'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION contcount.releases_left(epsilon float8 DEFAULT NULL, rho float8 DEFAULT NULL,
    ledger text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'contcount_releases_left'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION contcount.preview(text, float8, bigint, bigint, bigint, float8, text, float8, bigint) IS
    'the stddev and bound a running count with these parameters would show at each step; reads no data, charges nothing';
COMMENT ON FUNCTION contcount.preview_charge(text, float8, bigint, bigint, bigint, float8, text, float8, text) IS
    'the mechanism, epsilon or rho a release with these parameters would use, what it would charge the ledger that pays and how many such releases that ledger can still pay; charges nothing';
COMMENT ON FUNCTION contcount.releases_left(float8, float8, text) IS
    'how many releases of this epsilon or rho a ledger the current role may see can still pay; charges nothing';

-- Free previews of releases from protected sources: calibrated to the
-- source's max_rows, for a role the source is granted to; what
-- source_running_counts would show at each step and what it would charge
-- the caller's ledger and the source's (or its blocks).  No table is read,
-- nothing is charged.
CREATE FUNCTION contcount.source_preview(source text, epsilon float8 DEFAULT NULL,
    steps bigint DEFAULT NULL, mechanism text DEFAULT 'auto', rho float8 DEFAULT NULL,
    OUT t bigint, OUT stddev float8, OUT bound float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_source_preview'
LANGUAGE C VOLATILE PARALLEL RESTRICTED ROWS 1000;
CREATE FUNCTION contcount.source_preview_charge(source text, epsilon float8 DEFAULT NULL,
    steps bigint DEFAULT NULL, mechanism text DEFAULT 'auto', rho float8 DEFAULT NULL,
    ledger text DEFAULT NULL,
    OUT mechanism text, OUT epsilon float8, OUT rho float8, OUT ledger text,
    OUT accounting text, OUT charge numeric, OUT releases_left bigint,
    OUT source_ledger text, OUT source_accounting text, OUT source_charge numeric,
    OUT source_releases_left bigint, OUT per_block boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'contcount_source_preview_charge'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION contcount.source_preview(text, float8, bigint, text, float8) IS
    'the stddev and bound source_running_counts would show at each step, calibrated to the source''s max_rows; reads no data, charges nothing';
COMMENT ON FUNCTION contcount.source_preview_charge(text, float8, bigint, text, float8, text) IS
    'what a release from a protected source would charge the caller''s ledger and the source''s ledger (or each block), and how many such releases they can still pay; charges nothing';

-- ====================================================================
-- auto is the default mechanism: running_counts, source_running_counts
-- and create_counter default to mechanism 'auto' (the mechanism of least
-- variance for the horizon, chosen from public parameters only) instead of
-- 'binary', which never has the least.  A call that names its mechanism is
-- unchanged; a counter already created keeps the mechanism it was created
-- with.  The short form running_count(item, epsilon, horizon) uses auto
-- too (in C).  The functions are re-created with their grants (EXECUTE to
-- PUBLIC, as at creation) and comments.
--
-- Outputs that look like counts: running_counts and source_running_counts
-- take monotone (default false), which post-processes each released series
-- into the nearest non-negative non-decreasing one (isotonic regression,
-- src/core/monotone.c); create_counter takes it too, kept with the counter,
-- and current() and history() then show the running maximum of its
-- releases, clamped at 0.  Both read only released values and charge
-- nothing more; window_counts takes nonnegative.  (Running means are
-- clamped to [lo, hi], and a filter on the released dimension keeps its
-- keys only: both in C, no SQL change.)
-- ====================================================================

DROP FUNCTION contcount.running_counts(bigint[], float8, text, bigint, bigint, bigint, float8, text, text,
    float8);
CREATE FUNCTION contcount.running_counts(
    items bigint[],
    epsilon float8 DEFAULT NULL,
    mechanism text DEFAULT 'auto',
    horizon bigint DEFAULT NULL,
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL,
    objective text DEFAULT NULL,
    rho float8 DEFAULT NULL,
    monotone boolean DEFAULT false)
RETURNS SETOF contcount.release
AS 'MODULE_PATHNAME', 'running_counts'
LANGUAGE C VOLATILE PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION contcount.running_counts(bigint[], float8, text, bigint, bigint, bigint, float8, text, text,
                                             float8, boolean) IS
    'the noisy running counts of a whole series of per-step counts, one row per step; charged once';

DROP FUNCTION contcount.source_running_counts(text, float8, interval, timestamptz, bigint, text, text, text,
    jsonb, float8);
CREATE FUNCTION contcount.source_running_counts(source text, epsilon float8, step interval,
    start timestamptz, steps bigint, mechanism text DEFAULT 'auto', dimension text DEFAULT NULL,
    ledger text DEFAULT NULL, filter jsonb DEFAULT NULL, rho float8 DEFAULT NULL,
    monotone boolean DEFAULT false, OUT key text,
    OUT t bigint, OUT step_start timestamptz, OUT noisy_count bigint, OUT stddev float8,
    OUT bound float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_source_running_counts'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION contcount.source_running_counts(text, float8, interval, timestamptz, bigint, text, text, text, jsonb,
                                                    float8, boolean) IS
    'noisy running counts of a protected source per step of time, per declared key; charges both ledgers';

-- A monotone counter: current() and history() show the running maximum of
-- its releases, clamped at 0 (what it showed never changes).
ALTER TABLE contcount.counter ADD COLUMN monotone boolean NOT NULL DEFAULT false;

DROP FUNCTION contcount.create_counter(text, float8, text, bigint, interval, bigint, bigint, float8, text, text,
    text, float8);
CREATE FUNCTION contcount.create_counter(
    name text,
    epsilon float8 DEFAULT NULL,
    mechanism text DEFAULT 'auto',
    horizon bigint DEFAULT NULL,
    step interval DEFAULT '1 minute',
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL,
    objective text DEFAULT NULL,
    source text DEFAULT NULL,
    rho float8 DEFAULT NULL,
    monotone boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_create_counter'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION contcount.create_counter(text, float8, text, bigint, interval, bigint, bigint, float8, text, text,
                                             text, float8, boolean) IS
    'create a named counter, fed by insert triggers and released every step by the step worker';

-- window_counts takes nonnegative (default false): each window's count
-- clamped at 0, a post-processing of released values, charged as without it
-- (a window's count may go down, so there is no monotone here).
DROP FUNCTION contcount.window_counts(bigint[], bigint, float8, text, bigint, float8, text);
CREATE FUNCTION contcount.window_counts(
    items bigint[],
    width bigint,
    epsilon float8,
    construction text DEFAULT 'auto',
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL,
    nonnegative boolean DEFAULT false)
RETURNS SETOF contcount.release
AS 'MODULE_PATHNAME', 'contcount_window_counts'
LANGUAGE C VOLATILE PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION contcount.window_counts(bigint[], bigint, float8, text, bigint, float8, text, boolean) IS
    'noisy counts over sliding windows of width steps of a series, one epsilon for all of them; charged once';

-- contcount.mechanism(), the parameters the aggregates take, names auto
-- when no name is given: contcount.mechanism(epsilon => 1, horizon => 365).
DROP FUNCTION contcount.mechanism(text, float8, bigint, bigint, bigint, float8, text, text, float8);
CREATE FUNCTION contcount.mechanism(
    name text DEFAULT 'auto',
    epsilon float8 DEFAULT NULL,
    horizon bigint DEFAULT NULL,
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL,
    objective text DEFAULT NULL,
    rho float8 DEFAULT NULL)
RETURNS contcount.mechanism
AS 'MODULE_PATHNAME', 'contcount_mechanism'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION contcount.mechanism(text, float8, bigint, bigint, bigint, float8, text, text, float8) IS
    'build and check a running count''s mechanism (auto by default, or binary, smooth_binary, blt, honaker, ...) for running_count';

COMMENT ON AGGREGATE contcount.running_count(bigint, float8, bigint) IS
    'running_count with mechanism auto at epsilon over horizon steps; charges the session''s ledger once';

-- ---------------------------------------------------------------------
-- Counters that never break inserts, and a view that shows their schedule
-- ---------------------------------------------------------------------

-- attach_counter() creates a count_inserts trigger on a table, as the
-- calling role (who must be allowed to create triggers on it), for a
-- counter the table's owner may feed, and records it here, so that
-- drop_counter() and detach_counter() drop what contcount attached.  Not a
-- configuration table: its oids name nothing in a restored copy, where the
-- triggers come back with their tables and, their counter gone, count
-- nothing.
CREATE TABLE contcount.counter_attachment (
    counter_id bigint NOT NULL,
    table_id oid NOT NULL,
    trigger_name name NOT NULL,
    PRIMARY KEY (counter_id, table_id)
);
REVOKE ALL ON contcount.counter_attachment FROM PUBLIC;
COMMENT ON TABLE contcount.counter_attachment IS
    'internal: the triggers attach_counter() made, which drop_counter() drops; extension owner only';

CREATE FUNCTION contcount.attach_counter(counter text, tbl regclass, for_each text DEFAULT 'statement')
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_attach_counter'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION contcount.attach_counter(text, regclass, text) IS
    'create an AFTER INSERT trigger on a table that feeds a counter, for each row or statement; dropped with the counter';

CREATE FUNCTION contcount.detach_counter(counter text, tbl regclass)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_detach_counter'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION contcount.detach_counter(text, regclass) IS
    'drop the trigger attach_counter() made on a table for a counter';

-- contcount.counters: the ledger that paid (the one named, or the creator's
-- contcount.ledger, which create_counter recorded), when the next step is
-- due, the last release, when a bounded counter's horizon ends, and how
-- late the next step is if the step worker has not closed it yet.
DROP VIEW contcount.counters;
DROP FUNCTION contcount.counter_rows();
CREATE FUNCTION contcount.counter_rows(
    OUT name text, OUT mechanism text, OUT epsilon float8, OUT horizon bigint,
    OUT step interval, OUT ledger text, OUT started_at timestamptz, OUT steps bigint,
    OUT finished boolean, OUT owner regrole, OUT accounting text, OUT rho float8,
    OUT blocks_from timestamptz, OUT blocks_until timestamptz, OUT finish_reason text,
    OUT next_step_at timestamptz, OUT last_release_at timestamptz,
    OUT horizon_ends_at timestamptz, OUT late_by interval)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_counter_rows'
LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE VIEW contcount.counters AS SELECT * FROM contcount.counter_rows();
GRANT SELECT ON contcount.counters TO PUBLIC;
COMMENT ON FUNCTION contcount.counter_rows() IS
    'the rows of the view contcount.counters: the counters the current role may read';
COMMENT ON VIEW contcount.counters IS
    'the counters the current role may read, with their mechanism, the ledger that paid, their schedule and how late it is';

-- ====================================================================
-- Distinct persons: releases from protected sources take count => 'rows'
-- (the default, as before) or 'persons', which counts each person once in
-- each group, at their first row there in time order (ties by key), within
-- the source's bounds: the running number of distinct persons per key.  A
-- person then moves at most min(max_rows, max_groups, the dimension's
-- declared keys) counts, each by 1 (1 without a dimension), the
-- sensitivity the noise is scaled to; the previews take count and the
-- release's dimension to show the same figures.  The functions are
-- re-created with their comments (EXECUTE to PUBLIC, as at creation).
-- ====================================================================

DROP FUNCTION contcount.source_counts(text, float8, text, text, jsonb);
CREATE FUNCTION contcount.source_counts(source text, epsilon float8, dimension text DEFAULT NULL,
    ledger text DEFAULT NULL, filter jsonb DEFAULT NULL, count text DEFAULT 'rows',
    OUT key text, OUT noisy_count bigint, OUT stddev float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_source_counts'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION contcount.source_counts(text, float8, text, text, jsonb, text) IS
    'noisy counts of a protected source''s bounded rows, or distinct persons, per declared key; charges the caller''s and the source''s ledgers';

DROP FUNCTION contcount.source_running_counts(text, float8, interval, timestamptz, bigint, text, text, text,
    jsonb, float8, boolean);
CREATE FUNCTION contcount.source_running_counts(source text, epsilon float8, step interval,
    start timestamptz, steps bigint, mechanism text DEFAULT 'auto', dimension text DEFAULT NULL,
    ledger text DEFAULT NULL, filter jsonb DEFAULT NULL, rho float8 DEFAULT NULL,
    monotone boolean DEFAULT false, count text DEFAULT 'rows', OUT key text,
    OUT t bigint, OUT step_start timestamptz, OUT noisy_count bigint, OUT stddev float8,
    OUT bound float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_source_running_counts'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION contcount.source_running_counts(text, float8, interval, timestamptz, bigint, text, text, text, jsonb,
                                                    float8, boolean, text) IS
    'noisy running counts of a protected source''s rows, or distinct persons, per step of time, per declared key; charges both ledgers';

DROP FUNCTION contcount.source_preview(text, float8, bigint, text, float8);
CREATE FUNCTION contcount.source_preview(source text, epsilon float8 DEFAULT NULL,
    steps bigint DEFAULT NULL, mechanism text DEFAULT 'auto', rho float8 DEFAULT NULL,
    count text DEFAULT 'rows', dimension text DEFAULT NULL,
    OUT t bigint, OUT stddev float8, OUT bound float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_source_preview'
LANGUAGE C VOLATILE PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION contcount.source_preview(text, float8, bigint, text, float8, text, text) IS
    'the stddev and bound source_running_counts would show at each step, calibrated to its sensitivity (the source''s max_rows, or for distinct persons the least of max_rows, max_groups and the keys); reads no data, charges nothing';

DROP FUNCTION contcount.source_preview_charge(text, float8, bigint, text, float8, text);
CREATE FUNCTION contcount.source_preview_charge(source text, epsilon float8 DEFAULT NULL,
    steps bigint DEFAULT NULL, mechanism text DEFAULT 'auto', rho float8 DEFAULT NULL,
    ledger text DEFAULT NULL, count text DEFAULT 'rows', dimension text DEFAULT NULL,
    OUT mechanism text, OUT epsilon float8, OUT rho float8, OUT ledger text,
    OUT accounting text, OUT charge numeric, OUT releases_left bigint,
    OUT source_ledger text, OUT source_accounting text, OUT source_charge numeric,
    OUT source_releases_left bigint, OUT per_block boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'contcount_source_preview_charge'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION contcount.source_preview_charge(text, float8, bigint, text, float8, text, text, text) IS
    'what a release from a protected source (of rows or distinct persons) would charge the caller''s ledger and the source''s ledger (or each block), and how many such releases they can still pay; charges nothing';
-- Releases over sharded sources: what a shard runs for its coordinator.
-- A source's table hash-partitioned by its unit column, whose partitions
-- are postgres_fdw foreign tables on servers listing contcount in their
-- `extensions` option, is bounded on each shard by this function, called by
-- the coordinator as the user of its user mapping, which gets the exact
-- bounded counts of one table and adds them up before drawing the noise.
-- Not PUBLIC: the shard's DBA grants it to that user alone (which also needs
-- SELECT on the table); everyone else gets 42501.  No noise, no charge.
CREATE FUNCTION contcount.shard_bounded_counts(
    schema_name text, table_name text, unit_column text, time_column text,
    key_column text, keys text[], max_rows integer, max_groups integer,
    start timestamptz, step interval, steps bigint, filter jsonb,
    window_start timestamptz, window_end timestamptz, persons boolean DEFAULT false)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'contcount_shard_bounded_counts'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.shard_bounded_counts(text, text, text, text, text, text[],
    integer, integer, timestamptz, interval, bigint, jsonb, timestamptz, timestamptz, boolean) FROM PUBLIC;
COMMENT ON FUNCTION contcount.shard_bounded_counts(text, text, text, text, text, text[],
    integer, integer, timestamptz, interval, bigint, jsonb, timestamptz, timestamptz, boolean) IS
    'a shard''s exact bounded counts of one table, per key and step, for the coordinator''s connection user only: no noise, no charge';
-- ---------------------------------------------------------------------
-- Alerts over released values: a NOTIFY when a counter's released running
-- count crosses a threshold (docs/alerts.md)
-- ---------------------------------------------------------------------

-- An alert asks the step worker to NOTIFY a channel, in the transaction of
-- the step whose released value (as current() shows it) crosses threshold
-- upwards: at or above it, where the release before was below it (or there
-- was none).  Post-processing of released values: it charges nothing.  The
-- last crossing is kept with the alert.  A configuration table, dropped with
-- its counter; only the extension's owner reads it.
CREATE SEQUENCE contcount.counter_alert_id;
CREATE TABLE contcount.counter_alert (
    id bigint PRIMARY KEY DEFAULT pg_catalog.nextval('contcount.counter_alert_id'),
    counter_id bigint NOT NULL REFERENCES contcount.counter (id) ON DELETE CASCADE,
    key text,
    threshold numeric NOT NULL,
    channel text NOT NULL,
    owner oid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    fired_step bigint,
    fired_value bigint
);
CREATE INDEX counter_alert_counter ON contcount.counter_alert (counter_id);
ALTER SEQUENCE contcount.counter_alert_id OWNED BY contcount.counter_alert.id;
REVOKE ALL ON contcount.counter_alert, contcount.counter_alert_id FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('contcount.counter_alert', '');
SELECT pg_catalog.pg_extension_config_dump('contcount.counter_alert_id', '');
COMMENT ON SEQUENCE contcount.counter_alert_id IS
    'internal: the ids of alerts';
COMMENT ON TABLE contcount.counter_alert IS
    'internal: the alerts over counters'' released values, with their last crossing; extension owner only';
COMMENT ON INDEX contcount.counter_alert_counter IS
    'internal: a step finds its counter''s alerts';

CREATE FUNCTION contcount.create_alert(
    counter text,
    threshold numeric,
    channel text DEFAULT 'contcount_alert',
    key text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'contcount_create_alert'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION contcount.create_alert(text, numeric, text, text) IS
    'NOTIFY a channel when a counter''s released running count crosses a threshold; for a role that may read the counter; charges nothing';

-- An alert over a quantity that is not released: the sparse vector technique
-- (Dwork and Roth's Sparse, src/core/sparse_vector.c) over the sum of a
-- counter's exact increments in its last window_steps steps, compared at
-- each step with a noisy threshold; create_sparse_alert charges epsilon
-- once for up to max_positives answers above it, after which it stops.  Its
-- state holds the threshold's noise and the window's exact increments:
-- only the extension's owner reads it.  Not a configuration table: a copy
-- of its state would answer with the same noise, unpaid, so pg_dump leaves
-- it out and a restored counter has no sparse alert; a copy that travels
-- otherwise (pg_upgrade) is found away from the place it recorded, as a
-- counter's is, and dropped at its counter's next step.
CREATE TABLE contcount.counter_sparse_alert (
    id bigint PRIMARY KEY DEFAULT pg_catalog.nextval('contcount.counter_alert_id'),
    counter_id bigint NOT NULL REFERENCES contcount.counter (id) ON DELETE CASCADE,
    threshold bigint NOT NULL,
    window_steps integer NOT NULL,
    epsilon float8 NOT NULL,
    max_positives integer NOT NULL,
    channel text NOT NULL,
    owner oid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    state bytea NOT NULL,
    positives integer NOT NULL DEFAULT 0,
    fired_step bigint,
    place_system bigint NOT NULL,
    place_database oid NOT NULL,
    place_table oid NOT NULL
);
CREATE INDEX counter_sparse_alert_counter ON contcount.counter_sparse_alert (counter_id);
REVOKE ALL ON contcount.counter_sparse_alert FROM PUBLIC;
COMMENT ON TABLE contcount.counter_sparse_alert IS
    'internal: the sparse vector alerts over counters'' exact window counts, with their noisy state; extension owner only';
COMMENT ON INDEX contcount.counter_sparse_alert_counter IS
    'internal: a step finds its counter''s sparse vector alerts';

CREATE FUNCTION contcount.create_sparse_alert(
    counter text,
    threshold bigint,
    window_steps integer,
    epsilon float8,
    max_positives integer DEFAULT 1,
    channel text DEFAULT 'contcount_alert',
    ledger text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'contcount_create_sparse_alert'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION contcount.create_sparse_alert(text, bigint, integer, float8, integer, text, text) IS
    'NOTIFY a channel when a counter''s count of its last window_steps steps is above a threshold, by the sparse vector technique; for its owner; charges epsilon once for up to max_positives';

CREATE FUNCTION contcount.drop_alert(id bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_drop_alert'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION contcount.drop_alert(bigint) IS
    'drop an alert the current role (or a role it is a member of) created';

CREATE FUNCTION contcount.alert_rows(
    OUT id bigint, OUT kind text, OUT counter text, OUT key text, OUT threshold numeric,
    OUT channel text, OUT owner regrole, OUT created_at timestamptz, OUT fired_step bigint,
    OUT fired_value bigint, OUT window_steps integer, OUT epsilon float8,
    OUT max_positives integer, OUT positives integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_alert_rows'
LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE VIEW contcount.alerts AS SELECT * FROM contcount.alert_rows();
GRANT SELECT ON contcount.alerts TO PUBLIC;
COMMENT ON FUNCTION contcount.alert_rows() IS
    'the rows of the view contcount.alerts: the alerts of the current role';
COMMENT ON VIEW contcount.alerts IS
    'the alerts the current role created (a superuser: all), released or sparse_vector, with their last firing';
-- ---------------------------------------------------------------------
-- A monotone window: the option monotone on contcount.mechanism()
-- ---------------------------------------------------------------------

-- running_count, as a window function or per group, shows with
-- monotone => true the running maximum of its releases, clamped at 0, with
-- the largest bound so far, as a monotone counter's reads; it reads only
-- released values, so the charge is unchanged.  The composite gains
-- monotone as its last field, so the aggregates that take it stay; a value
-- made before (without the field) is not monotone.
ALTER TYPE contcount.mechanism ADD ATTRIBUTE monotone boolean;

DROP FUNCTION contcount.mechanism(text, float8, bigint, bigint, bigint, float8, text, text, float8);
CREATE FUNCTION contcount.mechanism(
    name text DEFAULT 'auto',
    epsilon float8 DEFAULT NULL,
    horizon bigint DEFAULT NULL,
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL,
    objective text DEFAULT NULL,
    rho float8 DEFAULT NULL,
    monotone boolean DEFAULT false)
RETURNS contcount.mechanism
AS 'MODULE_PATHNAME', 'contcount_mechanism'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION contcount.mechanism(text, float8, bigint, bigint, bigint, float8, text, text, float8, boolean) IS
    'build and check a running count''s mechanism (auto by default, or binary, smooth_binary, blt, honaker, ...) for running_count; monotone: non-negative, non-decreasing values';

-- ---------------------------------------------------------------------
-- The ledger store's primitives out of the user's way
-- ---------------------------------------------------------------------

-- The store's primitives (store_*) and the three SQL functions that
-- export_ledgers() and import_ledgers() wrap move to contcount_internal,
-- with the support functions.  Their callers name them in their bodies,
-- which ALTER FUNCTION ... SET SCHEMA does not rewrite: the five SQL
-- functions are made again, their bodies as before with the new schema.
-- The C library names none of them, so a database still at an earlier
-- version keeps its own; all stay superuser-only (and PUBLIC has no USAGE
-- on the schema).
DROP FUNCTION contcount.import_ledgers(jsonb);
DROP FUNCTION contcount.import_ledgers_unchecked(jsonb);
DROP FUNCTION contcount.import_ledgers_without_blocks(jsonb);
DROP FUNCTION contcount.export_ledgers();
DROP FUNCTION contcount.export_ledgers_without_blocks();
ALTER FUNCTION contcount.store_spent(bigint) SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.store_accounting(bigint) SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.store_charges() SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.store_blocks() SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.store_import(bigint, text, timestamptz, oid, bigint, timestamptz[], oid[], bigint[],
                                      boolean[], text[], text[], text, text[], bigint[], bigint[])
    SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.store_import_blocks(bigint, timestamptz[], timestamptz[], bigint[])
    SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.store_check_export(text, text, integer) SET SCHEMA contcount_internal;
ALTER FUNCTION contcount.store_check_import(jsonb) SET SCHEMA contcount_internal;
COMMENT ON FUNCTION contcount_internal.store_check_import(jsonb) IS
    'internal: true, or an error for the first field of an export that import_ledgers() would refuse; superusers only';

CREATE FUNCTION contcount_internal.export_ledgers_without_blocks()
RETURNS jsonb
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
WITH audit AS (
    SELECT c.ledger_id, pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'at', c.at, 'role', r.rolname, 'units', c.units, 'refund', c.refund,
               'accounting', c.accounting, 'releases', c.releases, 'release_units', c.release_units,
               'function', c.function, 'statement', c.statement)
           ORDER BY c.n) AS charges
    FROM contcount_internal.store_charges() WITH ORDINALITY
         AS c(ledger_id, at, role_id, units, refund, function, statement,
              accounting, releases, release_units, n)
    LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) c.role_id
    GROUP BY c.ledger_id)
SELECT pg_catalog.jsonb_build_object(
    'format', 'contcount ledgers',
    'version', 2,
    'exported_at', pg_catalog.now(),
    'system_identifier', (SELECT s.system_identifier::pg_catalog.text
                          FROM pg_catalog.pg_control_system() s),
    'ledgers', COALESCE(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
        'id', l.id, 'name', l.name, 'budget', l.budget,
        'accounting', contcount_internal.store_accounting(l.id), 'delta', l.delta,
        'created_at', l.created_at, 'created_by', r.rolname, 'dropped_at', l.dropped_at,
        'spent_units', contcount_internal.store_spent(l.id),
        'grants', COALESCE((
            SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                       'role', gr.rolname, 'admin', g.admin) ORDER BY gr.rolname)
            FROM contcount.ledger_grant g
            JOIN pg_catalog.pg_roles gr ON gr.oid OPERATOR(pg_catalog.=) g.role_id
            WHERE g.ledger_id OPERATOR(pg_catalog.=) l.id), '[]'::pg_catalog.jsonb),
        'charges', COALESCE(a.charges, '[]'::pg_catalog.jsonb))
        ORDER BY l.created_at, l.id), '[]'::pg_catalog.jsonb))
FROM contcount.ledger l
LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) l.created_by
LEFT JOIN audit a ON a.ledger_id OPERATOR(pg_catalog.=) l.id
$$;
REVOKE ALL ON FUNCTION contcount_internal.export_ledgers_without_blocks() FROM PUBLIC;
COMMENT ON FUNCTION contcount_internal.export_ledgers_without_blocks() IS
    'internal: export_ledgers() without the source blocks, wrapped by export_ledgers()';

CREATE FUNCTION contcount.export_ledgers()
RETURNS jsonb
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT e OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('ledgers', COALESCE((
    SELECT pg_catalog.jsonb_agg(l OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('blocks', COALESCE((
               SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                          'start', b.block_start, 'end', b.block_end, 'spent_units', b.spent_units)
                      ORDER BY b.block_start)
               FROM contcount_internal.store_blocks() b
               WHERE b.ledger_id OPERATOR(pg_catalog.=) pg_catalog.int8(l OPERATOR(pg_catalog.->>) 'id')),
           '[]'::pg_catalog.jsonb))
           ORDER BY n)
    FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'ledgers') WITH ORDINALITY x(l, n)),
    '[]'::pg_catalog.jsonb))
FROM contcount_internal.export_ledgers_without_blocks() e
$$;
REVOKE ALL ON FUNCTION contcount.export_ledgers() FROM PUBLIC;
COMMENT ON FUNCTION contcount.export_ledgers() IS
    'every ledger of this database with what it spent and its audit, as a document for import_ledgers(); superusers only';

CREATE FUNCTION contcount_internal.import_ledgers_without_blocks(export jsonb)
RETURNS TABLE (ledger text, spent numeric, action text)
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
-- an export from another cluster: forget the restored rows' role oids
WITH foreign_export AS (
    SELECT e
    FROM pg_catalog.jsonb_array_elements(export OPERATOR(pg_catalog.->) 'ledgers') e
    WHERE contcount_internal.store_check_export(export OPERATOR(pg_catalog.->>) 'format',
                                       export OPERATOR(pg_catalog.->>) 'version', 2)
      AND (export OPERATOR(pg_catalog.->>) 'system_identifier') IS DISTINCT FROM
          (SELECT s.system_identifier::pg_catalog.text FROM pg_catalog.pg_control_system() s)),
revoked AS (
    DELETE FROM contcount.ledger_grant g
    USING foreign_export f
    WHERE g.ledger_id OPERATOR(pg_catalog.=) pg_catalog.int8(f.e OPERATOR(pg_catalog.->>) 'id'))
UPDATE contcount.ledger l
SET created_by = r.oid
FROM foreign_export f, pg_catalog.pg_roles r
WHERE l.id OPERATOR(pg_catalog.=) pg_catalog.int8(f.e OPERATOR(pg_catalog.->>) 'id')
  AND r.rolname OPERATOR(pg_catalog.=) (f.e OPERATOR(pg_catalog.->>) 'created_by');

WITH ledgers AS (
    SELECT e, pg_catalog.int8(e OPERATOR(pg_catalog.->>) 'id') AS id
    FROM pg_catalog.jsonb_array_elements(export OPERATOR(pg_catalog.->) 'ledgers') e),
importer AS (
    SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER),
inserted AS (
    INSERT INTO contcount.ledger (id, name, budget, delta, created_at, created_by, dropped_at)
    SELECT l.id,
           l.e OPERATOR(pg_catalog.->>) 'name',
           pg_catalog.numeric(l.e OPERATOR(pg_catalog.->>) 'budget'),
           pg_catalog.numeric(l.e OPERATOR(pg_catalog.->>) 'delta'),
           pg_catalog.timestamptz(l.e OPERATOR(pg_catalog.->>) 'created_at'),
           COALESCE((SELECT r.oid FROM pg_catalog.pg_roles r
                     WHERE r.rolname OPERATOR(pg_catalog.=) (l.e OPERATOR(pg_catalog.->>) 'created_by')),
                    (SELECT i.oid FROM importer i)),
           pg_catalog.timestamptz(l.e OPERATOR(pg_catalog.->>) 'dropped_at')
    FROM ledgers l
    WHERE contcount_internal.store_check_export(export OPERATOR(pg_catalog.->>) 'format',
                                       export OPERATOR(pg_catalog.->>) 'version', 2)
    ON CONFLICT (id) DO NOTHING
    RETURNING id, budget),
changes AS (
    INSERT INTO contcount.budget_change (role_id, ledger_id, action, old_budget, new_budget)
    SELECT (SELECT i.oid FROM importer i), n.id, 'import', NULL, n.budget FROM inserted n)
INSERT INTO contcount.ledger_grant (ledger_id, role_id, admin)
SELECT l.id, r.oid, pg_catalog.bool(g OPERATOR(pg_catalog.->) 'admin')
FROM ledgers l,
     pg_catalog.jsonb_array_elements(l.e OPERATOR(pg_catalog.->) 'grants') g,
     pg_catalog.pg_roles r
WHERE r.rolname OPERATOR(pg_catalog.=) (g OPERATOR(pg_catalog.->>) 'role')
  AND (l.id IN (SELECT n.id FROM inserted n)
       OR (export OPERATOR(pg_catalog.->>) 'system_identifier') IS DISTINCT FROM
          (SELECT s.system_identifier::pg_catalog.text FROM pg_catalog.pg_control_system() s))
ON CONFLICT (ledger_id, role_id) DO NOTHING;

SELECT s.name, pg_catalog.trim_scale(pg_catalog.numeric(contcount_internal.store_spent(s.id))
                                     OPERATOR(pg_catalog./) 1000000000), s.action
FROM (
    SELECT pg_catalog.int8(e OPERATOR(pg_catalog.->>) 'id') AS id,
           e OPERATOR(pg_catalog.->>) 'name' AS name,
           CASE WHEN e OPERATOR(pg_catalog.->>) 'spent_units' IS NULL
                THEN 'spending unknown: refused'
                ELSE contcount_internal.store_import(
                    pg_catalog.int8(e OPERATOR(pg_catalog.->>) 'id'),
                    e OPERATOR(pg_catalog.->>) 'name',
                    pg_catalog.timestamptz(e OPERATOR(pg_catalog.->>) 'created_at'),
                    COALESCE((SELECT r.oid FROM pg_catalog.pg_roles r
                              WHERE r.rolname OPERATOR(pg_catalog.=) (e OPERATOR(pg_catalog.->>) 'created_by')),
                             0::pg_catalog.oid),
                    pg_catalog.int8(e OPERATOR(pg_catalog.->>) 'spent_units'),
                    ARRAY(SELECT pg_catalog.timestamptz(c OPERATOR(pg_catalog.->>) 'at')
                          FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'charges')
                               WITH ORDINALITY x(c, n) ORDER BY n),
                    ARRAY(SELECT COALESCE((SELECT r.oid FROM pg_catalog.pg_roles r
                                           WHERE r.rolname OPERATOR(pg_catalog.=) (c OPERATOR(pg_catalog.->>) 'role')),
                                          0::pg_catalog.oid)
                          FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'charges')
                               WITH ORDINALITY x(c, n) ORDER BY n),
                    ARRAY(SELECT pg_catalog.int8(COALESCE(c OPERATOR(pg_catalog.->>) 'units',
                                                          c OPERATOR(pg_catalog.->>) 'epsilon_units'))
                          FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'charges')
                               WITH ORDINALITY x(c, n) ORDER BY n),
                    ARRAY(SELECT pg_catalog.bool(c OPERATOR(pg_catalog.->) 'refund')
                          FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'charges')
                               WITH ORDINALITY x(c, n) ORDER BY n),
                    ARRAY(SELECT c OPERATOR(pg_catalog.->>) 'function'
                          FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'charges')
                               WITH ORDINALITY x(c, n) ORDER BY n),
                    ARRAY(SELECT c OPERATOR(pg_catalog.->>) 'statement'
                          FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'charges')
                               WITH ORDINALITY x(c, n) ORDER BY n),
                    COALESCE(e OPERATOR(pg_catalog.->>) 'accounting', 'pure'),
                    ARRAY(SELECT COALESCE(c OPERATOR(pg_catalog.->>) 'accounting', 'pure')
                          FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'charges')
                               WITH ORDINALITY x(c, n) ORDER BY n),
                    -- not recorded: 0 releases, and the charge's units
                    ARRAY(SELECT COALESCE(pg_catalog.int8(c OPERATOR(pg_catalog.->>) 'releases'), 0)
                          FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'charges')
                               WITH ORDINALITY x(c, n) ORDER BY n),
                    ARRAY(SELECT pg_catalog.int8(COALESCE(c OPERATOR(pg_catalog.->>) 'release_units',
                                                          c OPERATOR(pg_catalog.->>) 'units',
                                                          c OPERATOR(pg_catalog.->>) 'epsilon_units'))
                          FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'charges')
                               WITH ORDINALITY x(c, n) ORDER BY n))
           END AS action
    FROM pg_catalog.jsonb_array_elements(export OPERATOR(pg_catalog.->) 'ledgers') e
    WHERE contcount_internal.store_check_export(export OPERATOR(pg_catalog.->>) 'format',
                                       export OPERATOR(pg_catalog.->>) 'version', 2)) s
$$;
REVOKE ALL ON FUNCTION contcount_internal.import_ledgers_without_blocks(jsonb) FROM PUBLIC;
COMMENT ON FUNCTION contcount_internal.import_ledgers_without_blocks(jsonb) IS
    'internal: the import of ledgers without their source blocks, wrapped by import_ledgers()';

CREATE FUNCTION contcount_internal.import_ledgers_unchecked(export jsonb)
RETURNS TABLE (ledger text, spent numeric, action text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- the ledgers first (RETURN QUERY runs the import now): a block is taken
    -- in only for a ledger the store knows
    RETURN QUERY SELECT * FROM contcount_internal.import_ledgers_without_blocks(export);
    PERFORM contcount_internal.store_import_blocks(
                pg_catalog.int8(e OPERATOR(pg_catalog.->>) 'id'),
                ARRAY(SELECT pg_catalog.timestamptz(b OPERATOR(pg_catalog.->>) 'start')
                      FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'blocks')
                           WITH ORDINALITY x(b, n) ORDER BY n),
                ARRAY(SELECT pg_catalog.timestamptz(b OPERATOR(pg_catalog.->>) 'end')
                      FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'blocks')
                           WITH ORDINALITY x(b, n) ORDER BY n),
                ARRAY(SELECT pg_catalog.int8(b OPERATOR(pg_catalog.->>) 'spent_units')
                      FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'blocks')
                           WITH ORDINALITY x(b, n) ORDER BY n))
    FROM pg_catalog.jsonb_array_elements(export OPERATOR(pg_catalog.->) 'ledgers') e
    WHERE pg_catalog.jsonb_array_length(COALESCE(e OPERATOR(pg_catalog.->) 'blocks', '[]'::pg_catalog.jsonb))
              OPERATOR(pg_catalog.>) 0
      AND contcount_internal.store_spent(pg_catalog.int8(e OPERATOR(pg_catalog.->>) 'id')) IS NOT NULL;
END
$$;
REVOKE ALL ON FUNCTION contcount_internal.import_ledgers_unchecked(jsonb) FROM PUBLIC;
COMMENT ON FUNCTION contcount_internal.import_ledgers_unchecked(jsonb) IS
    'internal: import_ledgers() without its check of the whole export first';

CREATE FUNCTION contcount.import_ledgers(export jsonb)
RETURNS TABLE (ledger text, spent numeric, action text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM contcount_internal.store_check_import(export);
    RETURN QUERY SELECT * FROM contcount_internal.import_ledgers_unchecked(export);
END
$$;
REVOKE ALL ON FUNCTION contcount.import_ledgers(jsonb) FROM PUBLIC;
COMMENT ON FUNCTION contcount.import_ledgers(jsonb) IS
    'take in the ledgers of an export of export_ledgers(), each field checked before anything is taken in';
-- ---------------------------------------------------------------------
-- The write path of counters over sources: the trigger appends, the step
-- bounds.  The source's trigger no longer upserts a person's row of
-- counter_unit for every inserted row: it adds the row to the person's
-- entry in backend memory, and the transaction appends one row per counter
-- here just before it commits, its persons' digests and rows as two arrays.
-- The step worker takes a counter's rows in the transaction of its step,
-- bounds each person by what max_rows leaves in counter_unit, and deletes
-- what it took: each logged row is counted exactly once, and no insert
-- waits on another.  No index: only a step reads it, all of a counter's
-- rows at once.  The digests do not compress; the default storage tries
-- once and keeps them as they are (a column set to EXTERNAL is what
-- PostgreSQL's type_sanity check reports in a user's table too).
-- ---------------------------------------------------------------------
CREATE TABLE contcount.counter_unit_log (
    counter_id bigint NOT NULL,
    unit_digests bytea[] NOT NULL,
    unit_rows bigint[] NOT NULL
);
REVOKE ALL ON contcount.counter_unit_log FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('contcount.counter_unit_log', '');
COMMENT ON TABLE contcount.counter_unit_log IS
    'internal: the rows each person gave a counter over a source since its last step, a row a transaction, bounded by the next step; extension owner only';
COMMENT ON COLUMN contcount.counter_unit_log.unit_digests IS
    'SHA-256 digests of the units'' text forms, as in counter_unit';
COMMENT ON COLUMN contcount.counter_unit_log.unit_rows IS
    'rows each unit of unit_digests inserted in the transaction, before the bound';
-- ---------------------------------------------------------------------
-- Counters over a source's dimension: create_counter(..., source => s,
-- dimension => d) releases at every step the running count of every
-- declared key of d, for one charge.  The trigger logs each row's key with
-- the person (unit_keys, parallel to unit_digests; NULL for a counter
-- without a dimension); the step bounds each person across keys (at most
-- max_groups keys, remembered in counter_unit_key, and max_rows rows in
-- all, in counter_unit) and pushes each key's count into that key's state,
-- a row of counter_key_state, all keys in the step's one transaction.
-- ---------------------------------------------------------------------
ALTER TABLE contcount.counter ADD COLUMN dimension text;
COMMENT ON COLUMN contcount.counter.dimension IS
    'the dimension of the source whose declared keys the counter releases a running count each of, or NULL';
ALTER TABLE contcount.counter_unit_log ADD COLUMN unit_keys text[];
COMMENT ON COLUMN contcount.counter_unit_log.unit_keys IS
    'the key of the dimension each unit of unit_digests inserted its rows in, or NULL for a counter without a dimension';

CREATE TABLE contcount.counter_unit_key (
    counter_id bigint NOT NULL REFERENCES contcount.counter (id) ON DELETE CASCADE,
    unit_digest bytea NOT NULL,
    key text NOT NULL,
    PRIMARY KEY (counter_id, unit_digest, key)
);
REVOKE ALL ON contcount.counter_unit_key FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('contcount.counter_unit_key', '');
COMMENT ON TABLE contcount.counter_unit_key IS
    'internal: the keys each person has counted in, for a counter over a dimension, at most the source''s max_groups; extension owner only';

CREATE TABLE contcount.counter_key_state (
    counter_id bigint NOT NULL REFERENCES contcount.counter (id) ON DELETE CASCADE,
    key text NOT NULL,
    state bytea NOT NULL,
    PRIMARY KEY (counter_id, key)
);
REVOKE ALL ON contcount.counter_key_state FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('contcount.counter_key_state', '');
COMMENT ON TABLE contcount.counter_key_state IS
    'internal: the mechanism state of each key of a counter over a dimension, with its noise; extension owner only';

CREATE TABLE contcount.counter_key_release (
    counter_id bigint NOT NULL REFERENCES contcount.counter (id) ON DELETE CASCADE,
    key text NOT NULL,
    t bigint NOT NULL,
    noisy_count bigint NOT NULL,
    stddev float8 NOT NULL,
    bound float8 NOT NULL,
    released_at timestamptz NOT NULL,
    PRIMARY KEY (counter_id, key, t)
);
REVOKE ALL ON contcount.counter_key_release FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('contcount.counter_key_release', '');
COMMENT ON TABLE contcount.counter_key_release IS
    'internal: the released running count of each key of a counter over a dimension at each step; read through current_by_key and history_by_key';

DROP FUNCTION contcount.create_counter(text, float8, text, bigint, interval, bigint, bigint, float8, text, text,
    text, float8, boolean);
CREATE FUNCTION contcount.create_counter(
    name text,
    epsilon float8 DEFAULT NULL,
    mechanism text DEFAULT 'auto',
    horizon bigint DEFAULT NULL,
    step interval DEFAULT '1 minute',
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL,
    objective text DEFAULT NULL,
    source text DEFAULT NULL,
    rho float8 DEFAULT NULL,
    monotone boolean DEFAULT false,
    dimension text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_create_counter'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION contcount.create_counter(text, float8, text, bigint, interval, bigint, bigint, float8, text, text,
                                             text, float8, boolean, text) IS
    'create a named counter, fed by insert triggers and released every step by the step worker; over a source''s dimension, one running count per declared key for one charge';

CREATE FUNCTION contcount.current_by_key(name text,
    OUT key text, OUT t bigint, OUT noisy_count bigint, OUT stddev float8, OUT bound float8,
    OUT released_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_current_by_key'
LANGUAGE C STABLE PARALLEL RESTRICTED;
COMMENT ON FUNCTION contcount.current_by_key(text) IS
    'the latest release of each key of a counter over a dimension';

CREATE FUNCTION contcount.history_by_key(name text,
    OUT key text, OUT t bigint, OUT noisy_count bigint, OUT stddev float8, OUT bound float8,
    OUT released_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_history_by_key'
LANGUAGE C STABLE PARALLEL RESTRICTED;
COMMENT ON FUNCTION contcount.history_by_key(text) IS
    'every release of each key of a counter over a dimension, by key and step';

-- contcount.counters shows the dimension of a counter over one (NULL
-- without), beside what counter_rows() shows.
DROP VIEW contcount.counters;
CREATE VIEW contcount.counters AS
SELECT r.*, c.dimension
FROM contcount.counter_rows() r
LEFT JOIN contcount.counter c ON c.name OPERATOR(pg_catalog.=) r.name;
GRANT SELECT ON contcount.counters TO PUBLIC;
COMMENT ON VIEW contcount.counters IS
    'the counters the current role may read, with their mechanism, the ledger that paid, their schedule, how late it is and the dimension they release per key of';

-- ---------------------------------------------------------------------
-- Sparse vector alerts over sources and on keys
-- ---------------------------------------------------------------------

-- create_sparse_alert takes counters over a protected source (the query is
-- the count of the counter's rows over its last window_steps steps, each
-- person's bounded by max_rows, and the charge goes to the caller's ledger
-- and to the source's, as a release from the source's does), and, with
-- key, one declared key of a counter over a dimension (the key's bounded
-- rows over the window).  The state table records the key an alert
-- watches; the view contcount.alerts shows it.  Like every function of the
-- extension that checks its caller's rights itself, anyone may call it (no
-- GRANT or REVOKE): it refuses a role that does not own the counter.
ALTER TABLE contcount.counter_sparse_alert ADD COLUMN key text;
COMMENT ON COLUMN contcount.counter_sparse_alert.key IS
    'internal: the key of the counter''s dimension whose bounded rows the alert counts, or NULL for the counter''s own count';

DROP FUNCTION contcount.create_sparse_alert(text, bigint, integer, float8, integer, text, text);
CREATE FUNCTION contcount.create_sparse_alert(
    counter text,
    threshold bigint,
    window_steps integer,
    epsilon float8,
    max_positives integer DEFAULT 1,
    channel text DEFAULT 'contcount_alert',
    ledger text DEFAULT NULL,
    key text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'contcount_create_sparse_alert'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION contcount.create_sparse_alert(text, bigint, integer, float8, integer, text, text, text) IS
    'NOTIFY a channel when a counter''s (or one key''s) count of its last window_steps steps is above a threshold, by the sparse vector technique; for its owner, granted its source if it counts one; charges epsilon once for up to max_positives, over a source to the source''s ledger too';
-- Distinct persons on counters over sources: create_counter(...,
-- source => s, count => 'persons') releases the running number of distinct
-- persons (with dimension => d, of each declared key): a person counts once
-- (once a key), at the step of their first row, in at most max_groups keys.
-- The counter keeps the option in count; its step gives each person (each
-- person and key) a room of one row, and its sensitivity is the least of
-- max_rows, max_groups and the dimension's declared keys (1 without one),
-- recorded when it is created: keys declared later never widen a person's
-- reach past it.
-- ---------------------------------------------------------------------
ALTER TABLE contcount.counter ADD COLUMN count text NOT NULL DEFAULT 'rows'
    CONSTRAINT counter_count CHECK (count OPERATOR(pg_catalog.=) ANY (ARRAY['rows', 'persons']));
COMMENT ON COLUMN contcount.counter.count IS
    'what a counter over a source counts: rows (each person''s, up to max_rows) or persons (each once, once a key)';

DROP FUNCTION contcount.create_counter(text, float8, text, bigint, interval, bigint, bigint, float8, text, text,
    text, float8, boolean, text);
CREATE FUNCTION contcount.create_counter(
    name text,
    epsilon float8 DEFAULT NULL,
    mechanism text DEFAULT 'auto',
    horizon bigint DEFAULT NULL,
    step interval DEFAULT '1 minute',
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL,
    objective text DEFAULT NULL,
    source text DEFAULT NULL,
    rho float8 DEFAULT NULL,
    monotone boolean DEFAULT false,
    dimension text DEFAULT NULL,
    count text DEFAULT 'rows')
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_create_counter'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION contcount.create_counter(text, float8, text, bigint, interval, bigint, bigint, float8, text, text,
                                             text, float8, boolean, text, text) IS
    'create a named counter, fed by insert triggers and released every step by the step worker; over a source''s dimension, one running count per declared key for one charge; over a source, of rows or of distinct persons';

-- contcount.counters shows what a counter counts, beside its dimension.
DROP VIEW contcount.counters;
CREATE VIEW contcount.counters AS
SELECT r.*, c.dimension, c.count
FROM contcount.counter_rows() r
LEFT JOIN contcount.counter c ON c.name OPERATOR(pg_catalog.=) r.name;
GRANT SELECT ON contcount.counters TO PUBLIC;
COMMENT ON VIEW contcount.counters IS
    'the counters the current role may read, with their mechanism, the ledger that paid, their schedule, how late it is, the dimension they release per key of and what they count (rows or persons)';
-- Counters fed by many servers (docs/scale-out.md).  A counter over a
-- source hash-partitioned by the unit with partitions on shards that run
-- contcount counts the rows inserted on the shards.  On each shard, the
-- trigger that contcount.feed_shard puts on the shard's table logs each
-- row in counter_unit_log under the negative id of each feed of the table
-- (a feed: one counter of the coordinator); the coordinator's step calls
-- contcount.shard_feed_take, which seals the feed's log into a numbered
-- batch of exact bounded counts (each person bounded by max_rows in
-- counter_unit, under the feed's negative id), one seal at a time under
-- the feed's row lock, and returns the batches after the coordinator's
-- watermark.  On the coordinator, counter_shard holds each shard's
-- watermark, written in the step's transaction: a batch counts once.
-- ---------------------------------------------------------------------
CREATE SEQUENCE contcount.shard_feed_id;
CREATE TABLE contcount.shard_feed (
    id bigint PRIMARY KEY DEFAULT pg_catalog.nextval('contcount.shard_feed_id'),
    name text NOT NULL UNIQUE,
    relid regclass NOT NULL,            -- by name in a dump: the table after a restore
    max_rows integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
ALTER SEQUENCE contcount.shard_feed_id OWNED BY contcount.shard_feed.id;
CREATE SEQUENCE contcount.shard_feed_batch_id;
CREATE TABLE contcount.shard_feed_batch (
    id bigint PRIMARY KEY DEFAULT pg_catalog.nextval('contcount.shard_feed_batch_id'),
    feed_id bigint NOT NULL REFERENCES contcount.shard_feed (id) ON DELETE CASCADE,
    rows bigint NOT NULL,
    sealed_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
CREATE INDEX shard_feed_batch_feed ON contcount.shard_feed_batch (feed_id, id);
ALTER SEQUENCE contcount.shard_feed_batch_id OWNED BY contcount.shard_feed_batch.id;
REVOKE ALL ON contcount.shard_feed, contcount.shard_feed_id, contcount.shard_feed_batch,
    contcount.shard_feed_batch_id FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('contcount.shard_feed', '');
SELECT pg_catalog.pg_extension_config_dump('contcount.shard_feed_id', '');
SELECT pg_catalog.pg_extension_config_dump('contcount.shard_feed_batch', '');
SELECT pg_catalog.pg_extension_config_dump('contcount.shard_feed_batch_id', '');
COMMENT ON SEQUENCE contcount.shard_feed_id IS
    'internal: the ids of a shard''s feeds (their log rows go under the negative id)';
COMMENT ON TABLE contcount.shard_feed IS
    'internal, on a shard: each counter of the coordinator that the shard''s table feeds; extension owner only';
COMMENT ON SEQUENCE contcount.shard_feed_batch_id IS
    'internal: the ids of a shard''s sealed batches, in the order they commit';
COMMENT ON TABLE contcount.shard_feed_batch IS
    'internal, on a shard: exact bounded counts sealed for the coordinator, kept until it has read them; extension owner only';
COMMENT ON INDEX contcount.shard_feed_batch_feed IS
    'internal: a feed''s batches after the coordinator''s watermark';

CREATE FUNCTION contcount_internal.feed_shard_counters()
RETURNS trigger
AS 'MODULE_PATHNAME', 'contcount_feed_shard_counters'
LANGUAGE C;
REVOKE ALL ON FUNCTION contcount_internal.feed_shard_counters() FROM PUBLIC;
COMMENT ON FUNCTION contcount_internal.feed_shard_counters() IS
    'internal: on a shard, the row trigger that logs each row of a person for the coordinator''s counters';

CREATE FUNCTION contcount.feed_shard(table_name regclass, unit_column name)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_feed_shard'
LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION contcount.feed_shard(regclass, name) FROM PUBLIC;
COMMENT ON FUNCTION contcount.feed_shard(regclass, name) IS
    'on a shard: let the table''s inserts feed the coordinator''s counters, each person by unit_column (superuser)';

CREATE FUNCTION contcount.shard_feed_take(feed text, schema_name text, table_name text,
    unit_column text, max_rows integer, after bigint)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'contcount_shard_feed_take'
LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION contcount.shard_feed_take(text, text, text, text, integer, bigint) FROM PUBLIC;
COMMENT ON FUNCTION contcount.shard_feed_take(text, text, text, text, integer, bigint) IS
    'on a shard, for the coordinator''s connection user: seal the feed''s new rows, each person bounded, and return {last batch, exact bounded rows after after}';

CREATE TABLE contcount.counter_shard (
    counter_id bigint NOT NULL REFERENCES contcount.counter (id) ON DELETE CASCADE,
    partition oid NOT NULL,
    server text NOT NULL,
    read_upto bigint NOT NULL,
    rows bigint NOT NULL,
    tried_at timestamptz NOT NULL,
    read_at timestamptz,
    error text,
    PRIMARY KEY (counter_id, partition)
);
REVOKE ALL ON contcount.counter_shard FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('contcount.counter_shard', '');
COMMENT ON TABLE contcount.counter_shard IS
    'internal, on the coordinator: the last batch each counter''s step read of each shard''s partition (its watermark), the exact rows read so far, and why the last step could not read it; extension owner only';

CREATE VIEW contcount.counter_shards AS
SELECT c.name AS counter, s.server, s.partition::pg_catalog.regclass AS partition, s.read_upto,
       s.read_at, s.tried_at,
       s.error IS NOT NULL AS delayed, s.error
FROM contcount.counter_shard s
JOIN contcount.counter c ON c.id OPERATOR(pg_catalog.=) s.counter_id
WHERE EXISTS (SELECT 1 FROM contcount.counter_rows() r WHERE r.name OPERATOR(pg_catalog.=) c.name);
GRANT SELECT ON contcount.counter_shards TO PUBLIC;
COMMENT ON VIEW contcount.counter_shards IS
    'the shards that feed the counters the current role may read, a row per partition: the last batch read, when, and whether the last step could not read it (its counts then come in a later step)';
-- The steps of counters over a dimension without a foreign-key check a
-- row: counter_unit_key, counter_key_state and counter_key_release no
-- longer reference contcount.counter.  Each row the step wrote ran the
-- check's query (a person's new key, a key's state and its release: 10^5
-- queries for 10^5 persons, most of the step's time); the step holds its
-- counter's row FOR UPDATE until it commits, which is what the check's
-- lock made sure of, and drop_counter deletes the three tables' rows of
-- the counter after the counter's row, in place of the cascade.  And each
-- step rewrites every key's state: with room left on its page (fillfactor
-- 50) the new version is a heap-only tuple, with no new entry in the key
-- index, which otherwise grew by every key at every step until a vacuum.
-- ---------------------------------------------------------------------
ALTER TABLE contcount.counter_unit_key DROP CONSTRAINT counter_unit_key_counter_id_fkey;
ALTER TABLE contcount.counter_key_state DROP CONSTRAINT counter_key_state_counter_id_fkey;
ALTER TABLE contcount.counter_key_release DROP CONSTRAINT counter_key_release_counter_id_fkey;
ALTER TABLE contcount.counter_key_state SET (fillfactor = 50);
-- Counters over a dimension of a sharded source (docs/scale-out.md).  A
-- shard's feed of such a counter logs each row with its key (the column
-- the coordinator names), and contcount.shard_feed_take, given the key
-- column, the keys declared on the coordinator, max_groups and whether
-- the counter counts persons, keeps only the declared keys, bounds each
-- person across them (max_groups keys, max_rows rows, in
-- counter_unit_key and counter_unit under the feed's negative id) and
-- seals the keys' counts into the batch as two arrays; it answers the
-- keys' sums after the coordinator's watermark beside the plain sum.  A
-- feed keeps the bounds it was made with (shard_feed's new columns).
-- ---------------------------------------------------------------------
ALTER TABLE contcount.shard_feed ADD COLUMN key_column text;
ALTER TABLE contcount.shard_feed ADD COLUMN max_groups integer;
ALTER TABLE contcount.shard_feed ADD COLUMN persons boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN contcount.shard_feed.key_column IS
    'the column of the shard''s table holding the key of the counter''s dimension (null: a counter of all rows)';
COMMENT ON COLUMN contcount.shard_feed.max_groups IS
    'the keys a person may count in, over a dimension (null otherwise)';
COMMENT ON COLUMN contcount.shard_feed.persons IS
    'over a dimension: does the counter count persons (a row a person and key)?';
ALTER TABLE contcount.shard_feed_batch ADD COLUMN keys text[];
ALTER TABLE contcount.shard_feed_batch ADD COLUMN key_rows bigint[];
COMMENT ON COLUMN contcount.shard_feed_batch.keys IS
    'over a dimension: the declared keys the batch counted rows in';
COMMENT ON COLUMN contcount.shard_feed_batch.key_rows IS
    'over a dimension: the exact bounded rows of each of keys, in its order';

DROP FUNCTION contcount.shard_feed_take(text, text, text, text, integer, bigint);
CREATE FUNCTION contcount.shard_feed_take(feed text, schema_name text, table_name text,
    unit_column text, max_rows integer, after bigint, key_column text DEFAULT NULL,
    keys text[] DEFAULT NULL, max_groups integer DEFAULT NULL, persons boolean DEFAULT false,
    OUT upto bigint, OUT rows bigint, OUT key_names text[], OUT key_rows bigint[])
RETURNS record
AS 'MODULE_PATHNAME', 'contcount_shard_feed_take'
LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION contcount.shard_feed_take(text, text, text, text, integer, bigint, text,
    text[], integer, boolean) FROM PUBLIC;
COMMENT ON FUNCTION contcount.shard_feed_take(text, text, text, text, integer, bigint, text,
    text[], integer, boolean) IS
    'on a shard, for the coordinator''s connection user: seal the feed''s new rows, each person bounded (over a dimension: across the declared keys), and return the last batch and the exact bounded rows after after (and each key''s)';
-- ---------------------------------------------------------------------
-- A dropped counter's feeds on its shards (docs/scale-out.md): the
-- coordinator's step worker calls contcount.shard_feed_drop on each shard
-- of a counter that is gone, which deletes the feed's row, its batches
-- (ON DELETE CASCADE) and everything under its negative id (counter_unit,
-- counter_unit_key, counter_unit_log), in one transaction; a feed that is
-- gone already is no error, so that a call whose answer was lost is
-- asked again.  For the coordinator's connection user only, as
-- shard_feed_take: granted EXECUTE by the shard's DBA.
-- ---------------------------------------------------------------------
CREATE FUNCTION contcount.shard_feed_drop(feed text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'contcount_shard_feed_drop'
LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION contcount.shard_feed_drop(text) FROM PUBLIC;
COMMENT ON FUNCTION contcount.shard_feed_drop(text) IS
    'on a shard, for the coordinator''s connection user: delete the feed of a dropped counter, its batches and its persons'' rows and log; true if it was there';
-- The coordinator's side: a row of counter_shard outlives its counter
-- until the step worker has had the shard drop the counter's feed (the
-- foreign key that deleted it with the counter is gone); the worker notes
-- a row as soon as it opens a feed, before the first step.
ALTER TABLE contcount.counter_shard DROP CONSTRAINT counter_shard_counter_id_fkey;
COMMENT ON TABLE contcount.counter_shard IS
    'internal, on the coordinator: the last batch each counter''s step read of each shard''s partition (its watermark), the exact rows read so far, and why the last step could not read it; a dropped counter''s rows stay until its shards have dropped its feeds; extension owner only';
