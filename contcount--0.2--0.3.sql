-- contcount--0.2--0.3.sql
--	  The ledger in WAL: charges replicate, survive failover, restores and
--	  upgrades (issue 10).
--
-- The store itself changed in the library (a relation under global/ written
-- through a custom WAL resource manager); a 0.2 store file is taken into it
-- at the first use.  Hardened like the install script: no CREATE OR REPLACE,
-- no IF NOT EXISTS, qualified names, pinned search_path.

\echo Use "ALTER EXTENSION contcount UPDATE TO '0.3'" to load this file. \quit

-- ---------------------------------------------------------------------
-- Ledgers: export and import, for pg_dump, pg_upgrade and a dropped and
-- created extension.
-- ---------------------------------------------------------------------

-- A statement trigger counts every committed change of the ledgers, so that
-- a backend may keep the committed row of the ledger contcount.ledger
-- chooses between charges while nothing changed it: charges then read no
-- table.  ENABLE ALWAYS: a session_replication_role of replica (pg_restore
-- --disable-triggers, logical replication) counts too.
CREATE FUNCTION contcount.ledger_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'contcount_ledger_changed'
LANGUAGE C;
REVOKE ALL ON FUNCTION contcount.ledger_changed() FROM PUBLIC;
CREATE TRIGGER ledger_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON contcount.ledger
    FOR EACH STATEMENT EXECUTE FUNCTION contcount.ledger_changed();
ALTER TABLE contcount.ledger ENABLE ALWAYS TRIGGER ledger_changed;

-- What a ledger spent lives in the store, in this cluster's WAL and a file
-- under global/, not in a table: pg_dump and pg_upgrade carry the ledgers'
-- rows but not their spending, and a restored or upgraded ledger is refused
-- until its export is imported.  Raw primitives, for superusers only.
CREATE FUNCTION contcount.store_spent(ledger_id bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'contcount_store_spent'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION contcount.store_spent(bigint) FROM PUBLIC;

CREATE FUNCTION contcount.store_charges(
    OUT ledger_id bigint, OUT at timestamptz, OUT role_id oid, OUT epsilon_units bigint,
    OUT refund boolean, OUT function text, OUT statement text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_store_charges'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION contcount.store_charges() FROM PUBLIC;

CREATE FUNCTION contcount.store_import(
    ledger_id bigint, name text, created_at timestamptz, created_by oid, spent_units bigint,
    at timestamptz[], role_id oid[], epsilon_units bigint[], refund boolean[],
    function text[], statement text[])
RETURNS text
AS 'MODULE_PATHNAME', 'contcount_store_import'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.store_import(bigint, text, timestamptz, oid, bigint,
    timestamptz[], oid[], bigint[], boolean[], text[], text[]) FROM PUBLIC;

-- True, or an error (22023) if format and version are not an export's.
CREATE FUNCTION contcount.store_check_export(format text, version text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'contcount_store_check_export'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
REVOKE ALL ON FUNCTION contcount.store_check_export(text, text) FROM PUBLIC;

-- Every ledger of this database, dropped ones too, with what it spent and
-- its audit, as a document that import_ledgers() takes back, here or in
-- another cluster.  Epsilon in exact units of 1e-9; roles by name.
CREATE FUNCTION contcount.export_ledgers()
RETURNS jsonb
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
WITH audit AS (
    SELECT c.ledger_id, pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'at', c.at, 'role', r.rolname, 'epsilon_units', c.epsilon_units,
               'refund', c.refund, 'function', c.function, 'statement', c.statement)
           ORDER BY c.n) AS charges
    FROM contcount.store_charges() WITH ORDINALITY
         AS c(ledger_id, at, role_id, epsilon_units, refund, function, statement, n)
    LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) c.role_id
    GROUP BY c.ledger_id)
SELECT pg_catalog.jsonb_build_object(
    'format', 'contcount ledgers',
    'version', 1,
    'exported_at', pg_catalog.now(),
    'system_identifier', (SELECT s.system_identifier::pg_catalog.text
                          FROM pg_catalog.pg_control_system() s),
    'ledgers', COALESCE(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
        'id', l.id, 'name', l.name, 'budget', l.budget,
        'created_at', l.created_at, 'created_by', r.rolname, 'dropped_at', l.dropped_at,
        'spent_units', contcount.store_spent(l.id),
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
REVOKE ALL ON FUNCTION contcount.export_ledgers() FROM PUBLIC;

-- Take back an export: each ledger's row unless this database has it (a
-- restored dump or an upgrade brings the rows, a dropped extension does
-- not), and its spending: a ledger the store does not know is created with
-- the export's audit; one it knows is raised to what the export spent if
-- that is more.  Nothing is ever lowered, so importing twice, or an older
-- export, changes nothing.  Roles go by name: rows the import creates get
-- the export's creator and grants; an export from another cluster (where
-- the role oids a restored dump brought mean nothing) also replaces the
-- creator and grants of rows that were there.  A live ledger of the same
-- name under another id is a unique violation (23505).
CREATE FUNCTION contcount.import_ledgers(export jsonb)
RETURNS TABLE (ledger text, spent numeric, action text)
LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
-- an export from another cluster: forget the restored rows' role oids
WITH foreign_export AS (
    SELECT e
    FROM pg_catalog.jsonb_array_elements(export OPERATOR(pg_catalog.->) 'ledgers') e
    WHERE contcount.store_check_export(export OPERATOR(pg_catalog.->>) 'format',
                                       export OPERATOR(pg_catalog.->>) 'version')
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
    INSERT INTO contcount.ledger (id, name, budget, created_at, created_by, dropped_at)
    SELECT l.id,
           l.e OPERATOR(pg_catalog.->>) 'name',
           pg_catalog.numeric(l.e OPERATOR(pg_catalog.->>) 'budget'),
           pg_catalog.timestamptz(l.e OPERATOR(pg_catalog.->>) 'created_at'),
           COALESCE((SELECT r.oid FROM pg_catalog.pg_roles r
                     WHERE r.rolname OPERATOR(pg_catalog.=) (l.e OPERATOR(pg_catalog.->>) 'created_by')),
                    (SELECT i.oid FROM importer i)),
           pg_catalog.timestamptz(l.e OPERATOR(pg_catalog.->>) 'dropped_at')
    FROM ledgers l
    WHERE contcount.store_check_export(export OPERATOR(pg_catalog.->>) 'format',
                                       export OPERATOR(pg_catalog.->>) 'version')
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

SELECT s.name, pg_catalog.trim_scale(pg_catalog.numeric(contcount.store_spent(s.id))
                                     OPERATOR(pg_catalog./) 1000000000), s.action
FROM (
    SELECT pg_catalog.int8(e OPERATOR(pg_catalog.->>) 'id') AS id,
           e OPERATOR(pg_catalog.->>) 'name' AS name,
           CASE WHEN e OPERATOR(pg_catalog.->>) 'spent_units' IS NULL
                THEN 'spending unknown: refused'
                ELSE contcount.store_import(
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
                    ARRAY(SELECT pg_catalog.int8(c OPERATOR(pg_catalog.->>) 'epsilon_units')
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
                               WITH ORDINALITY x(c, n) ORDER BY n))
           END AS action
    FROM pg_catalog.jsonb_array_elements(export OPERATOR(pg_catalog.->) 'ledgers') e
    WHERE contcount.store_check_export(export OPERATOR(pg_catalog.->>) 'format',
                                       export OPERATOR(pg_catalog.->>) 'version')) s
$$;
REVOKE ALL ON FUNCTION contcount.import_ledgers(jsonb) FROM PUBLIC;

-- After recovery stopped at a target (point-in-time recovery), charges made
-- after it may be missing, and releases are refused (55000) until a
-- superuser, having imported what was spent since, accepts the store.
CREATE FUNCTION contcount.accept_ledger_store()
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_accept_ledger_store'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.accept_ledger_store() FROM PUBLIC;


-- ---------------------------------------------------------------------
-- Counters: a copied counter pays again before it releases.
-- ---------------------------------------------------------------------

-- Where a counter's state lives: the cluster (its system identifier, as
-- pg_control_system() shows it), the database and the table holding it.
-- pg_dump and pg_restore, and pg_upgrade, carry the state elsewhere; the
-- copy's steps would draw again tree nodes that the original draws, so a
-- step that finds its counter elsewhere first charges the counter's ledger
-- its epsilon again and records the new place, in the step's transaction.
-- NULL: not known to be here (restored from an older dump), so a copy.
-- charged_ledger is the ledger create_counter charged (ledger, or the
-- creator's contcount.ledger), which a copy pays again.
ALTER TABLE contcount.counter
    ADD COLUMN place_system bigint,
    ADD COLUMN place_database oid,
    ADD COLUMN place_table oid,
    ADD COLUMN charged_ledger text;

-- The counters of a database being updated are taken to be where they are.
UPDATE contcount.counter SET
    place_system = (SELECT s.system_identifier FROM pg_catalog.pg_control_system() s),
    place_database = (SELECT d.oid FROM pg_catalog.pg_database d
                      WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()),
    place_table = 'contcount.counter'::pg_catalog.regclass;
