-- contcount--0.4--0.5.sql
--	  Protected sources, second part: filters on public dimensions and
--	  counters that count at most max_rows rows per person (issue 11); zCDP
--	  ledgers, Gaussian releases and privacy curves (issue 13); the
--	  continual mean, open and from protected sources (issue 14); sliding
--	  windows, streaming composition and per-block budgets (issue 15).  One
--	  section each, in that order but for the privacy curves, which follow
--	  the continual mean.
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

-- A ledger accounts in pure epsilon or in rho-zCDP, for good.  Which one is
-- kept by the ledger store with the ledger's creation, not in this table (a
-- restored row waits for its import to learn it again); a zCDP ledger's
-- budget column holds rho.  delta is where the views show a zCDP ledger as
-- (epsilon, delta)-DP; NULL for a pure ledger.
ALTER TABLE contcount.ledger
    ADD COLUMN delta numeric
        CONSTRAINT ledger_delta CHECK (delta OPERATOR(pg_catalog.>) 0 AND delta OPERATOR(pg_catalog.<) 1);

-- A zCDP ledger: rho budget, and the delta it is shown at.  The pure forms
-- (name, epsilon) stay as they were, grants included.
CREATE FUNCTION contcount.create_ledger(name text, rho numeric, delta numeric)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_create_ledger'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.create_ledger(text, numeric, numeric) FROM PUBLIC;

-- A zCDP ledger's new rho budget, or delta, or both (NULL keeps one).
CREATE FUNCTION contcount.alter_ledger(name text, rho numeric, delta numeric)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_alter_ledger'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- The views gain each ledger's accounting and its (epsilon, delta): a pure
-- ledger's spent and budget at delta 0, a zCDP ledger's converted at its
-- delta; and each charge the ledger's accounting and the releases it paid
-- for (how many, and each one's epsilon or rho).
DROP VIEW contcount.ledgers;
DROP FUNCTION contcount.ledger_rows();
CREATE FUNCTION contcount.ledger_rows(
    OUT name text, OUT budget numeric, OUT spent numeric, OUT remaining numeric,
    OUT created_at timestamptz, OUT accounting text, OUT delta numeric,
    OUT spent_epsilon numeric, OUT budget_epsilon numeric)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_ledger_rows'
LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE VIEW contcount.ledgers AS SELECT * FROM contcount.ledger_rows();

DROP VIEW contcount.charges;
DROP FUNCTION contcount.charge_rows();
CREATE FUNCTION contcount.charge_rows(
    OUT at timestamptz, OUT role regrole, OUT ledger text, OUT epsilon numeric,
    OUT function text, OUT statement text, OUT accounting text, OUT releases bigint,
    OUT release_epsilon numeric, OUT release_rho numeric)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_charge_rows'
LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE VIEW contcount.charges AS SELECT * FROM contcount.charge_rows();
GRANT SELECT ON contcount.ledgers, contcount.charges TO PUBLIC;

-- Export version 2: each ledger's accounting and delta, each charge's units
-- (in the ledger's accounting) and its releases' accounting, number and
-- units each.  Imports read versions 1 and 2; an import never changes a
-- ledger's accounting (ZB003).  Raw primitives, for superusers only.
CREATE FUNCTION contcount.store_accounting(ledger_id bigint)
RETURNS text
AS 'MODULE_PATHNAME', 'contcount_store_accounting'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION contcount.store_accounting(bigint) FROM PUBLIC;

DROP FUNCTION contcount.store_charges();
CREATE FUNCTION contcount.store_charges(
    OUT ledger_id bigint, OUT at timestamptz, OUT role_id oid, OUT units bigint,
    OUT refund boolean, OUT function text, OUT statement text,
    OUT accounting text, OUT releases bigint, OUT release_units bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_store_charges'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION contcount.store_charges() FROM PUBLIC;

DROP FUNCTION contcount.store_import(bigint, text, timestamptz, oid, bigint,
    timestamptz[], oid[], bigint[], boolean[], text[], text[]);
CREATE FUNCTION contcount.store_import(
    ledger_id bigint, name text, created_at timestamptz, created_by oid, spent_units bigint,
    at timestamptz[], role_id oid[], units bigint[], refund boolean[],
    function text[], statement text[], accounting text,
    release_accounting text[], releases bigint[], release_units bigint[])
RETURNS text
AS 'MODULE_PATHNAME', 'contcount_store_import'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.store_import(bigint, text, timestamptz, oid, bigint,
    timestamptz[], oid[], bigint[], boolean[], text[], text[], text, text[], bigint[], bigint[])
    FROM PUBLIC;

-- True, or an error (22023) if format and version are not those of an
-- export of version 1 to newest.
DROP FUNCTION contcount.store_check_export(text, text);
CREATE FUNCTION contcount.store_check_export(format text, version text, newest integer)
RETURNS boolean
AS 'MODULE_PATHNAME', 'contcount_store_check_export'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
REVOKE ALL ON FUNCTION contcount.store_check_export(text, text, integer) FROM PUBLIC;

DROP FUNCTION contcount.export_ledgers();
CREATE FUNCTION contcount.export_ledgers()
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
    FROM contcount.store_charges() WITH ORDINALITY
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
        'accounting', contcount.store_accounting(l.id), 'delta', l.delta,
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

-- As in 0.3, with version 2's accounting: a version 1 export's ledgers
-- and charges are pure, with their releases not recorded.
DROP FUNCTION contcount.import_ledgers(jsonb);
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
    WHERE contcount.store_check_export(export OPERATOR(pg_catalog.->>) 'format',
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
    WHERE contcount.store_check_export(export OPERATOR(pg_catalog.->>) 'format',
                                       export OPERATOR(pg_catalog.->>) 'version', 2)) s
$$;
REVOKE ALL ON FUNCTION contcount.import_ledgers(jsonb) FROM PUBLIC;

-- ---------------------------------------------------------------------
-- Gaussian releases (issue 13)
-- ---------------------------------------------------------------------

-- The mechanisms with discrete Gaussian noise, gaussian_honaker and blt, are
-- charged in rho (zCDP) in place of epsilon: every function that takes a
-- mechanism takes rho, and epsilon may then be left out (a pure mechanism
-- takes epsilon alone, a zCDP one rho alone, auto either).  The composite
-- gains rho as its last field, so the aggregates that take it stay.
ALTER TYPE contcount.mechanism ADD ATTRIBUTE rho float8;

DROP FUNCTION contcount.mechanism(text, float8, bigint, bigint, bigint, float8, text, text);
CREATE FUNCTION contcount.mechanism(
    name text,
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

DROP FUNCTION contcount.running_counts(bigint[], float8, text, bigint, bigint, bigint, float8, text, text);
CREATE FUNCTION contcount.running_counts(
    items bigint[],
    epsilon float8 DEFAULT NULL,
    mechanism text DEFAULT 'binary',
    horizon bigint DEFAULT NULL,
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL,
    objective text DEFAULT NULL,
    rho float8 DEFAULT NULL)
RETURNS SETOF contcount.release
AS 'MODULE_PATHNAME', 'running_counts'
LANGUAGE C VOLATILE PARALLEL RESTRICTED ROWS 1000;

DROP FUNCTION contcount.source_running_counts(text, float8, interval, timestamptz, bigint, text, text,
    text, jsonb);
CREATE FUNCTION contcount.source_running_counts(source text, epsilon float8, step interval,
    start timestamptz, steps bigint, mechanism text DEFAULT 'binary', dimension text DEFAULT NULL,
    ledger text DEFAULT NULL, filter jsonb DEFAULT NULL, rho float8 DEFAULT NULL, OUT key text,
    OUT t bigint, OUT step_start timestamptz, OUT noisy_count bigint, OUT stddev float8,
    OUT bound float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_source_running_counts'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- A counter is charged its epsilon or, with a zCDP mechanism, its rho (at
-- its creation, and again by a copy); the row keeps the one it has.
ALTER TABLE contcount.counter
    ALTER COLUMN epsilon DROP NOT NULL,
    ADD COLUMN rho float8,
    ADD CONSTRAINT counter_epsilon_or_rho
        CHECK ((epsilon IS NULL) OPERATOR(pg_catalog.<>) (rho IS NULL));

DROP FUNCTION contcount.create_counter(text, float8, text, bigint, interval, bigint, bigint, float8,
    text, text, text);
CREATE FUNCTION contcount.create_counter(
    name text,
    epsilon float8 DEFAULT NULL,
    mechanism text DEFAULT 'binary',
    horizon bigint DEFAULT NULL,
    step interval DEFAULT '1 minute',
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL,
    objective text DEFAULT NULL,
    source text DEFAULT NULL,
    rho float8 DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_create_counter'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- The view shows each counter's accounting ('pure' or 'zcdp') and rho.
DROP VIEW contcount.counters;
DROP FUNCTION contcount.counter_rows();
CREATE FUNCTION contcount.counter_rows(
    OUT name text, OUT mechanism text, OUT epsilon float8, OUT horizon bigint,
    OUT step interval, OUT ledger text, OUT started_at timestamptz, OUT steps bigint,
    OUT finished boolean, OUT owner regrole, OUT accounting text, OUT rho float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_counter_rows'
LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE VIEW contcount.counters AS SELECT * FROM contcount.counter_rows();
GRANT SELECT ON contcount.counters TO PUBLIC;

-- ---------------------------------------------------------------------
-- Continual mean (issue 14)
-- ---------------------------------------------------------------------

-- running_mean: the mean of samples in [lo, hi], each from a privacy unit,
-- released at every row, user-level epsilon-DP (George, Ramesh, Singh and
-- Tyagi's Algorithm 6, or their naive Algorithm 2).  Its parameters, built
-- and checked by contcount.mean_mechanism().
CREATE TYPE contcount.mean_mechanism AS (
    algorithm text,         -- withhold (Algorithm 6) or naive (Algorithm 2)
    lo float8,              -- the samples' range; samples outside are clamped
    hi float8,
    epsilon float8,         -- rounded to a multiple of 1e-9, as charged
    horizon bigint,         -- most samples
    per_unit bigint,        -- most samples a unit contributes; later ones are dropped
    units bigint,           -- most distinct units
    resolution bigint,      -- grid steps across [lo, hi]
    beta float8,            -- the bound fails with at most this probability
    ledger text             -- the ledger that pays; NULL: contcount.ledger
);

-- One row's release.
CREATE TYPE contcount.mean_release AS (
    t bigint,               -- samples so far, from 1
    mean float8,            -- noisy mean of the samples it covers; NULL before any
    covered bigint,         -- samples it covers; the others are withheld or dropped
    stddev float8,          -- exact standard deviation of its noise
    bound float8            -- |mean - mu| <= bound at all t at once w.p. 1 - beta,
                            -- for independent samples of mean mu
);

CREATE FUNCTION contcount.mean_mechanism(
    lo float8,
    hi float8,
    epsilon float8,
    horizon bigint,
    per_unit bigint,
    units bigint DEFAULT NULL,
    algorithm text DEFAULT 'withhold',
    resolution bigint DEFAULT 65536,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL)
RETURNS contcount.mean_mechanism
AS 'MODULE_PATHNAME', 'contcount_mean_mechanism'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION contcount.running_mean_step(internal, float8, anyelement, contcount.mean_mechanism)
RETURNS internal
AS 'MODULE_PATHNAME', 'running_mean_step'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION contcount.running_mean_step(internal, float8, anyelement, contcount.mean_mechanism) FROM PUBLIC;

CREATE FUNCTION contcount.running_mean_step(internal, float8, anyelement, float8, float8, float8, bigint, bigint)
RETURNS internal
AS 'MODULE_PATHNAME', 'running_mean_step'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION contcount.running_mean_step(internal, float8, anyelement, float8, float8, float8, bigint, bigint) FROM PUBLIC;

CREATE FUNCTION contcount.running_mean_final(internal)
RETURNS contcount.mean_release
AS 'MODULE_PATHNAME', 'running_mean_final'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION contcount.running_mean_final(internal) FROM PUBLIC;

CREATE AGGREGATE contcount.running_mean(x float8, unit anyelement, mechanism contcount.mean_mechanism) (
    SFUNC = contcount.running_mean_step,
    STYPE = internal,
    FINALFUNC = contcount.running_mean_final,
    FINALFUNC_MODIFY = READ_ONLY,
    PARALLEL = RESTRICTED
);

CREATE AGGREGATE contcount.running_mean(x float8, unit anyelement, lo float8, hi float8,
                                        epsilon float8, horizon bigint, per_unit bigint) (
    SFUNC = contcount.running_mean_step,
    STYPE = internal,
    FINALFUNC = contcount.running_mean_final,
    FINALFUNC_MODIFY = READ_ONLY,
    PARALLEL = RESTRICTED
);

-- The running mean of a protected source's column.  Its neighbours are the
-- paper's: the same arrival pattern (which unit gave each sample, and when),
-- any values of one unit; the release shows that pattern.  So a column may
-- be averaged only once a superuser has declared it, making the source's
-- arrival pattern public.  Only the extension's owner reads the table.
CREATE TABLE contcount.source_mean_value (
    source text NOT NULL REFERENCES contcount.source (name) ON DELETE CASCADE,
    name text NOT NULL,
    attnum int2 NOT NULL,
    PRIMARY KEY (source, name)
);
REVOKE ALL ON contcount.source_mean_value FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('contcount.source_mean_value', '');

CREATE FUNCTION contcount.source_mean_value(source text, value_column text)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_source_mean_value'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.source_mean_value(text, text) FROM PUBLIC;

CREATE FUNCTION contcount.drop_source_mean_value(source text, value_column text)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_drop_source_mean_value'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.drop_source_mean_value(text, text) FROM PUBLIC;

-- Releasing: any role the source is granted to, without SELECT on the
-- table; one row per sample in time order, charged once to the caller's
-- ledger and once to the source's.
CREATE FUNCTION contcount.source_running_mean(source text, value text,
    mechanism contcount.mean_mechanism, OUT t bigint, OUT at timestamptz, OUT mean float8,
    OUT covered bigint, OUT stddev float8, OUT bound float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_source_running_mean'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- ---------------------------------------------------------------------
-- Privacy curves (issue 13)
-- ---------------------------------------------------------------------

-- The (epsilon, delta) of everything a ledger was charged, from the
-- composition of the releases the ledger store recorded (each one's
-- epsilon, or its rho and what its noise is): delta at an epsilon, and
-- epsilon at a delta, never below the truth and never above the zCDP
-- conversion that contcount.ledgers shows.  Meant for everyone, as the
-- views are: each call checks that its caller sees the ledger in
-- contcount.ledgers (42501 otherwise) and costs one scan of the ledger
-- store, kept for the rest of the statement while the ledger spends
-- nothing more; hence the planner's high cost.
CREATE FUNCTION contcount.ledger_delta(ledger text, epsilon double precision)
RETURNS double precision
AS 'MODULE_PATHNAME', 'contcount_ledger_delta'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED COST 10000;

CREATE FUNCTION contcount.ledger_epsilon(ledger text, delta double precision)
RETURNS double precision
AS 'MODULE_PATHNAME', 'contcount_ledger_epsilon'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED COST 10000;

-- contcount.ledgers gains tight_epsilon: for a zCDP ledger the least
-- epsilon at its delta from the curve (at most spent_epsilon), for a pure
-- one what it spent.
DROP VIEW contcount.ledgers;
DROP FUNCTION contcount.ledger_rows();
CREATE FUNCTION contcount.ledger_rows(
    OUT name text, OUT budget numeric, OUT spent numeric, OUT remaining numeric,
    OUT created_at timestamptz, OUT accounting text, OUT delta numeric,
    OUT spent_epsilon numeric, OUT budget_epsilon numeric, OUT tight_epsilon numeric)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_ledger_rows'
LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE VIEW contcount.ledgers AS SELECT * FROM contcount.ledger_rows();
GRANT SELECT ON contcount.ledgers TO PUBLIC;

-- ---------------------------------------------------------------------
-- Sliding windows (issue 15)
-- ---------------------------------------------------------------------

-- window_counts: at every step of a series, the count of its last width
-- steps, event-level epsilon-DP for the whole series (an event is in up to
-- width windows; one epsilon pays for all), by a dyadic tree truncated at
-- level floor(log2 width), by differences of smooth binary running counts,
-- or by whichever has the smaller mean variance (auto).  Charged once per
-- call, as running_counts is.
CREATE FUNCTION contcount.window_counts(
    items bigint[],
    width bigint,
    epsilon float8,
    construction text DEFAULT 'auto',
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL)
RETURNS SETOF contcount.release
AS 'MODULE_PATHNAME', 'contcount_window_counts'
LANGUAGE C VOLATILE PARALLEL RESTRICTED ROWS 1000;

-- ---------------------------------------------------------------------
-- Streaming composition (issue 15)
-- ---------------------------------------------------------------------

-- Seed 002's Theorem 4: a mechanism run at every step of a stream whose
-- rows are drawn independently and whose oldest rows are replaced, each
-- step (epsilon_max, delta_max) coupled-worlds private and gamma bounding
-- the influence of the rows that outlive a step, is (epsilon_max + (steps
-- - 1) gamma, steps delta_max) coupled-worlds private over steps steps.  A
-- calculator: nothing drawn, nothing charged; the ledger keeps charging
-- each release its own epsilon.  Errors 22023 for inputs outside the
-- theorem (gamma below epsilon_max among them).
CREATE FUNCTION contcount.streaming_composition(
    epsilon_max float8, delta_max float8, gamma float8, steps bigint,
    OUT epsilon float8, OUT delta float8, OUT vacuous boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'contcount_streaming_composition'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The same with the per-step guarantee of one release of a mechanism:
-- epsilon_max is the least epsilon of its privacy curve at delta_max.
CREATE FUNCTION contcount.streaming_composition(
    mechanism contcount.mechanism, delta_max float8, gamma float8, steps bigint,
    OUT epsilon float8, OUT delta float8, OUT vacuous boolean, OUT epsilon_max float8)
RETURNS record
AS 'MODULE_PATHNAME', 'contcount_streaming_composition_mechanism'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- ---------------------------------------------------------------------
-- Per-block budgets (issue 15)
-- ---------------------------------------------------------------------

-- A source's budget may be held per block of time: blocks of
-- block_length (aligned on 2000-01-01 UTC), each with block_budget (in the
-- accounting of the source's ledger), rows older than retention never
-- read.  All three or none.  What each block spent is kept by the ledger
-- store, under the source's ledger.
ALTER TABLE contcount.source
    ADD COLUMN block_length interval,
    ADD COLUMN block_budget numeric
        CONSTRAINT source_block_budget CHECK (block_budget OPERATOR(pg_catalog.>) 0),
    ADD COLUMN retention interval,
    ADD CONSTRAINT source_blocks CHECK ((block_length IS NULL) OPERATOR(pg_catalog.=) (block_budget IS NULL)
        AND (block_length IS NULL) OPERATOR(pg_catalog.=) (retention IS NULL));

-- Declaring: superusers, or roles a superuser grants EXECUTE, as for
-- protect_table.  The length is fixed once declared (55000).
CREATE FUNCTION contcount.source_blocks(source text, block_length interval, budget numeric,
    retention interval)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_source_blocks'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.source_blocks(text, interval, numeric, interval) FROM PUBLIC;

-- Rows older than the retention still in the table: an exact count, for
-- the DBA who deletes them.
CREATE FUNCTION contcount.source_expired_rows(source text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'contcount_source_expired_rows'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.source_expired_rows(text) FROM PUBLIC;

-- The blocks of the sources a role may release from or whose ledger it
-- administers (all, for superusers); and which blocks each release
-- charged, for the admins of the sources' ledgers.
CREATE FUNCTION contcount.block_rows(
    OUT source text, OUT block_start timestamptz, OUT block_end timestamptz,
    OUT budget numeric, OUT spent numeric, OUT remaining numeric, OUT accounting text,
    OUT retired boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_block_rows'
LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE VIEW contcount.blocks AS SELECT * FROM contcount.block_rows();

CREATE FUNCTION contcount.block_charge_rows(
    OUT at timestamptz, OUT role regrole, OUT source text, OUT first_block timestamptz,
    OUT blocks_end timestamptz, OUT blocks bigint, OUT spent numeric, OUT function text,
    OUT statement text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_block_charge_rows'
LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE VIEW contcount.block_charges AS SELECT * FROM contcount.block_charge_rows();
GRANT SELECT ON contcount.blocks, contcount.block_charges TO PUBLIC;

-- contcount.sources shows each source's blocks.
DROP VIEW contcount.sources;
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
       d.keys,
       s.block_length,
       s.block_budget,
       s.retention
FROM contcount.source s
LEFT JOIN contcount.source_dimension d ON d.source OPERATOR(pg_catalog.=) s.name
WHERE EXISTS (SELECT 1 FROM contcount.source_grant g
              WHERE g.source OPERATOR(pg_catalog.=) s.name
                AND pg_catalog.pg_has_role(CURRENT_USER, g.role_id, 'USAGE'))
   OR (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER);
GRANT SELECT ON contcount.sources TO PUBLIC;

-- Export and import carry the blocks: each ledger of an export lists its
-- blocks and what each spent (in units), and an import raises every block
-- of a ledger the store knows to at least that, never lowering one.  The
-- functions above are wrapped, under new names, by ones that add the
-- blocks.  Raw primitives, for superusers only.
CREATE FUNCTION contcount.store_blocks(
    OUT ledger_id bigint, OUT block_start timestamptz, OUT block_end timestamptz,
    OUT spent_units bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_store_blocks'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION contcount.store_blocks() FROM PUBLIC;

CREATE FUNCTION contcount.store_import_blocks(ledger_id bigint, block_start timestamptz[],
    block_end timestamptz[], spent_units bigint[])
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_store_import_blocks'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.store_import_blocks(bigint, timestamptz[], timestamptz[], bigint[])
    FROM PUBLIC;

ALTER FUNCTION contcount.export_ledgers() RENAME TO export_ledgers_without_blocks;
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
               FROM contcount.store_blocks() b
               WHERE b.ledger_id OPERATOR(pg_catalog.=) pg_catalog.int8(l OPERATOR(pg_catalog.->>) 'id')),
           '[]'::pg_catalog.jsonb))
           ORDER BY n)
    FROM pg_catalog.jsonb_array_elements(e OPERATOR(pg_catalog.->) 'ledgers') WITH ORDINALITY x(l, n)),
    '[]'::pg_catalog.jsonb))
FROM contcount.export_ledgers_without_blocks() e
$$;
REVOKE ALL ON FUNCTION contcount.export_ledgers() FROM PUBLIC;

ALTER FUNCTION contcount.import_ledgers(jsonb) RENAME TO import_ledgers_without_blocks;
CREATE FUNCTION contcount.import_ledgers(export jsonb)
RETURNS TABLE (ledger text, spent numeric, action text)
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- the ledgers first (RETURN QUERY runs the import now): a block is taken
    -- in only for a ledger the store knows
    RETURN QUERY SELECT * FROM contcount.import_ledgers_without_blocks(export);
    PERFORM contcount.store_import_blocks(
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
      AND contcount.store_spent(pg_catalog.int8(e OPERATOR(pg_catalog.->>) 'id')) IS NOT NULL;
END
$$;
REVOKE ALL ON FUNCTION contcount.import_ledgers(jsonb) FROM PUBLIC;

-- ---------------------------------------------------------------------
-- Counters over sources with blocks (issue 15)
-- ---------------------------------------------------------------------

-- A counter over a source with blocks pays its epsilon (or rho) to each
-- block as its clock enters it, and counts only the rows timed in the
-- blocks it paid: [blocks_from, blocks_until), both NULL for a counter of
-- any other kind.  A block that refuses stops the counter, and
-- finish_reason says why.
ALTER TABLE contcount.counter
    ADD COLUMN blocks_from timestamptz,
    ADD COLUMN blocks_until timestamptz,
    ADD COLUMN finish_reason text,
    ADD CONSTRAINT counter_blocks CHECK ((blocks_from IS NULL) OPERATOR(pg_catalog.=) (blocks_until IS NULL));

-- The view shows the blocks each counter paid, and why it finished.
DROP VIEW contcount.counters;
DROP FUNCTION contcount.counter_rows();
CREATE FUNCTION contcount.counter_rows(
    OUT name text, OUT mechanism text, OUT epsilon float8, OUT horizon bigint,
    OUT step interval, OUT ledger text, OUT started_at timestamptz, OUT steps bigint,
    OUT finished boolean, OUT owner regrole, OUT accounting text, OUT rho float8,
    OUT blocks_from timestamptz, OUT blocks_until timestamptz, OUT finish_reason text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_counter_rows'
LANGUAGE C STABLE PARALLEL RESTRICTED;
CREATE VIEW contcount.counters AS SELECT * FROM contcount.counter_rows();
GRANT SELECT ON contcount.counters TO PUBLIC;
