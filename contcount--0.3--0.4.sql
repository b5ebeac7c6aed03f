-- contcount--0.3--0.4.sql
--	  Protected sources: roles without SELECT on a table publish noisy counts
--	  from it, each person's contribution bounded (issue 11, first part).
--
-- A new database runs every script from contcount--0.1.sql on, so fresh
-- installs and upgrades end in the same objects.  Hardened like the install
-- script: no CREATE OR REPLACE, no IF NOT EXISTS, qualified names, pinned
-- search_path.

\echo Use "ALTER EXTENSION contcount UPDATE TO '0.4'" to load this file. \quit

-- A protected source: a table, the column naming each row's privacy unit
-- (a person), its time column, how much one unit may contribute, and the
-- ledger holding the data's budget.  Columns by number, so that renaming
-- one does not break the source.  Only the extension's owner reads these
-- tables: the functions check the caller's rights themselves.
CREATE TABLE contcount.source (
    name text PRIMARY KEY,
    relid oid NOT NULL,
    unit_attnum int2 NOT NULL,
    time_attnum int2 NOT NULL,
    ledger_id bigint NOT NULL REFERENCES contcount.ledger (id),
    max_rows int NOT NULL CHECK (max_rows OPERATOR(pg_catalog.>=) 1),
    max_groups int NOT NULL CHECK (max_groups OPERATOR(pg_catalog.>=) 1),
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    created_by oid NOT NULL
);

-- A public dimension of a source and its declared keys: every release per
-- key has a row for each of them, and only them.
CREATE TABLE contcount.source_dimension (
    source text NOT NULL REFERENCES contcount.source (name) ON DELETE CASCADE,
    name text NOT NULL,
    attnum int2 NOT NULL,
    keys text[] NOT NULL,
    PRIMARY KEY (source, name)
);

-- The roles that may release from a source (and their members).
CREATE TABLE contcount.source_grant (
    source text NOT NULL REFERENCES contcount.source (name) ON DELETE CASCADE,
    role_id oid NOT NULL,
    PRIMARY KEY (source, role_id)
);

REVOKE ALL ON contcount.source, contcount.source_dimension, contcount.source_grant FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('contcount.source', '');
SELECT pg_catalog.pg_extension_config_dump('contcount.source_dimension', '');
SELECT pg_catalog.pg_extension_config_dump('contcount.source_grant', '');

-- The bounding rule, as a window function over a unit's rows in time order
-- (then key): whether the row is kept.  Only the extension's own queries
-- call it.
CREATE FUNCTION contcount.bounded_keep(key text, max_rows integer, max_groups integer)
RETURNS boolean
AS 'MODULE_PATHNAME', 'contcount_bounded_keep'
LANGUAGE C WINDOW VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION contcount.bounded_keep(text, integer, integer) FROM PUBLIC;

-- Declaring: superusers, or roles a superuser grants EXECUTE.
CREATE FUNCTION contcount.protect_table(name text, relation regclass, unit_column text,
    time_column text, ledger text, max_rows integer DEFAULT 1, max_groups integer DEFAULT 1)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_protect_table'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.protect_table(text, regclass, text, text, text, integer, integer) FROM PUBLIC;

CREATE FUNCTION contcount.source_dimension(source text, dimension text, keys text[])
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_source_dimension'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.source_dimension(text, text, text[]) FROM PUBLIC;

-- Dropping a source drops its dimensions and grants; the table and the
-- ledgers stay, and so does what was spent.
CREATE FUNCTION contcount.drop_source(source text)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_drop_source'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.drop_source(text) FROM PUBLIC;

CREATE FUNCTION contcount.grant_source(source text, role regrole)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_grant_source'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.grant_source(text, regrole) FROM PUBLIC;

CREATE FUNCTION contcount.revoke_source(source text, role regrole)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_revoke_source'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.revoke_source(text, regrole) FROM PUBLIC;

-- Releasing: any role the source is granted to, without SELECT on the table.
-- One noisy count of the bounded rows per declared key of the dimension
-- (or one of all rows without one), charged once to the caller's ledger and
-- once to the source's.
CREATE FUNCTION contcount.source_counts(source text, epsilon float8, dimension text DEFAULT NULL,
    ledger text DEFAULT NULL, OUT key text, OUT noisy_count bigint, OUT stddev float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_source_counts'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Running counts from a source: per declared key (or for all rows), the
-- bounded rows counted per step of fixed length from start, each step fed
-- to the mechanism (horizon steps), its noise scaled to max_rows; charged
-- once for every key and step.
CREATE FUNCTION contcount.source_running_counts(source text, epsilon float8, step interval,
    start timestamptz, steps bigint, mechanism text DEFAULT 'binary', dimension text DEFAULT NULL,
    ledger text DEFAULT NULL, OUT key text, OUT t bigint, OUT step_start timestamptz,
    OUT noisy_count bigint, OUT stddev float8, OUT bound float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_source_running_counts'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- The sources the current role may release from (all, for superusers), one
-- row per declared dimension with its keys: what a release can ask for.
-- security_barrier: a function of the caller's in a WHERE clause sees only
-- the rows the view lets through.
CREATE VIEW contcount.sources WITH (security_barrier) AS
SELECT s.name,
       s.relid::pg_catalog.regclass AS relation,
       (SELECT a.attname FROM pg_catalog.pg_attribute a
        WHERE a.attrelid OPERATOR(pg_catalog.=) s.relid
          AND a.attnum OPERATOR(pg_catalog.=) s.unit_attnum) AS unit_column,
       (SELECT a.attname FROM pg_catalog.pg_attribute a
        WHERE a.attrelid OPERATOR(pg_catalog.=) s.relid
          AND a.attnum OPERATOR(pg_catalog.=) s.time_attnum) AS time_column,
       s.max_rows,
       s.max_groups,
       (SELECT l.name FROM contcount.ledger l WHERE l.id OPERATOR(pg_catalog.=) s.ledger_id) AS ledger,
       d.name AS dimension,
       d.keys
FROM contcount.source s
LEFT JOIN contcount.source_dimension d ON d.source OPERATOR(pg_catalog.=) s.name
WHERE EXISTS (SELECT 1 FROM contcount.source_grant g
              WHERE g.source OPERATOR(pg_catalog.=) s.name
                AND pg_catalog.pg_has_role(CURRENT_USER, g.role_id, 'USAGE'))
   OR (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER);
GRANT SELECT ON contcount.sources TO PUBLIC;
