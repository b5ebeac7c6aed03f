-- contcount--0.4--0.5.sql
--	  Protected sources, second part: filters on public dimensions and
--	  counters that count at most max_rows rows per person (issue 11); zCDP
--	  ledgers (issue 13).
--
-- A new database runs every script from contcount--0.1.sql on, so fresh
-- installs and upgrades end in the same objects.  Hardened like the install
-- script: no CREATE OR REPLACE, no IF NOT EXISTS, qualified names, pinned
-- search_path.

\echo Use "ALTER EXTENSION contcount UPDATE TO '0.5'" to load this file. \quit

-- ---------------------------------------------------------------------
-- Protected sources (issue 11)
-- ---------------------------------------------------------------------

-- The bounding rule becomes one ordered aggregate over each unit's rows in
-- time order (then key), in place of a window function and the grouping
-- after it: one sort and one pass.  It takes its bounds and keys from the
-- release that runs it and refuses to run otherwise; only the extension's
-- own queries call it.
DROP FUNCTION contcount.bounded_keep(text, integer, integer);

CREATE FUNCTION contcount.bounded_counts_step(internal, anyelement, text, timestamptz)
RETURNS internal
AS 'MODULE_PATHNAME', 'contcount_bounded_counts_step'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.bounded_counts_step(internal, anyelement, text, timestamptz) FROM PUBLIC;

CREATE FUNCTION contcount.bounded_counts_final(internal)
RETURNS bigint
AS 'MODULE_PATHNAME', 'contcount_bounded_counts_final'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.bounded_counts_final(internal) FROM PUBLIC;

CREATE AGGREGATE contcount.bounded_counts(unit anyelement, key text, t timestamptz) (
    SFUNC = contcount.bounded_counts_step,
    STYPE = internal,
    FINALFUNC = contcount.bounded_counts_final
);
REVOKE ALL ON FUNCTION contcount.bounded_counts(anyelement, text, timestamptz) FROM PUBLIC;

-- Releases take a filter on public dimensions: a JSON object mapping
-- dimensions to the declared keys whose rows count, such as
-- '{"country": ["FR", "DE"]}'.  Rows that fail it are left out before
-- bounding.
DROP FUNCTION contcount.source_counts(text, float8, text, text);
CREATE FUNCTION contcount.source_counts(source text, epsilon float8, dimension text DEFAULT NULL,
    ledger text DEFAULT NULL, filter jsonb DEFAULT NULL,
    OUT key text, OUT noisy_count bigint, OUT stddev float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_source_counts'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

DROP FUNCTION contcount.source_running_counts(text, float8, interval, timestamptz, bigint, text, text, text);
CREATE FUNCTION contcount.source_running_counts(source text, epsilon float8, step interval,
    start timestamptz, steps bigint, mechanism text DEFAULT 'binary', dimension text DEFAULT NULL,
    ledger text DEFAULT NULL, filter jsonb DEFAULT NULL, OUT key text, OUT t bigint,
    OUT step_start timestamptz, OUT noisy_count bigint, OUT stddev float8, OUT bound float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_source_running_counts'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Counters over protected sources: a counter created with source => s
-- counts the inserts into s's table through a row trigger that contcount
-- creates, at most max_rows rows a unit for the counter's whole life, and
-- is calibrated and charged as a release from s.  counter_unit holds each
-- unit's counted rows (by the unit's text form), written in the inserting
-- transaction with the counts themselves.
ALTER TABLE contcount.counter ADD COLUMN source text;
CREATE TABLE contcount.counter_unit (
    counter_id bigint NOT NULL,
    unit text NOT NULL,
    rows integer NOT NULL,
    PRIMARY KEY (counter_id, unit)
);
REVOKE ALL ON contcount.counter_unit FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('contcount.counter_unit', '');

-- Only contcount creates these triggers: PostgreSQL checks EXECUTE on a
-- trigger's function when the trigger is created.
CREATE FUNCTION contcount.count_source_rows()
RETURNS trigger
AS 'MODULE_PATHNAME', 'contcount_count_source_rows'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.count_source_rows() FROM PUBLIC;

DROP FUNCTION contcount.create_counter(text, float8, text, bigint, interval, bigint, bigint, float8, text, text);
CREATE FUNCTION contcount.create_counter(
    name text,
    epsilon float8,
    mechanism text DEFAULT 'binary',
    horizon bigint DEFAULT NULL,
    step interval DEFAULT '1 minute',
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL,
    objective text DEFAULT NULL,
    source text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_create_counter'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- ---------------------------------------------------------------------
-- zCDP ledgers (issue 13)
-- ---------------------------------------------------------------------
