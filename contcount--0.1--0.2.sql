-- contcount--0.1--0.2.sql
--	  Soundness: nothing an untrusted role does in SQL may escalate, crash the
--	  server or release for less epsilon than it reveals (issue 9).
--
-- A new database runs contcount--0.1.sql and then this script, so fresh
-- installs and upgrades end in the same objects.  Hardened like the install
-- script: no CREATE OR REPLACE, no IF NOT EXISTS, qualified names, pinned
-- search_path.

\echo Use "ALTER EXTENSION contcount UPDATE TO '0.2'" to load this file. \quit

-- Aggregate support functions run only inside contcount's own aggregates,
-- which PostgreSQL calls with the aggregate owner's rights: nobody else may
-- build an aggregate from them (and each checks where it runs, too).
REVOKE ALL ON FUNCTION contcount.running_count_step(internal, bigint, contcount.mechanism) FROM PUBLIC;
REVOKE ALL ON FUNCTION contcount.running_count_step(internal, bigint, float8, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION contcount.running_count_final(internal) FROM PUBLIC;
REVOKE ALL ON FUNCTION contcount.noisy_count_step(bigint, float8, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION contcount.noisy_count_final(bigint) FROM PUBLIC;

-- Budget changes belong in the audit: who changed which ledger's budget,
-- when, from what to what.  Written in the transaction that makes the
-- change, so it is there exactly when the change is.
CREATE TABLE contcount.budget_change (
    at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    role_id oid NOT NULL,
    ledger_id bigint NOT NULL REFERENCES contcount.ledger (id),
    action text NOT NULL,           -- create, alter, drop; upgrade: as found
    old_budget numeric,             -- NULL: created (or found at upgrade)
    new_budget numeric              -- NULL: dropped
);
REVOKE ALL ON contcount.budget_change FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('contcount.budget_change', '');

-- 0.1 kept no history of budgets: what the upgrade found, recorded as the
-- upgrading role's, is where it starts.
INSERT INTO contcount.budget_change (role_id, ledger_id, action, old_budget, new_budget)
SELECT r.oid, l.id, 'upgrade', NULL, l.budget
FROM contcount.ledger l, pg_catalog.pg_roles r
WHERE l.dropped_at IS NULL AND r.rolname OPERATOR(pg_catalog.=) CURRENT_USER;

CREATE FUNCTION contcount.budget_change_rows(
    OUT at timestamptz, OUT role regrole, OUT ledger text, OUT action text,
    OUT old_budget numeric, OUT new_budget numeric)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_budget_change_rows'
LANGUAGE C STABLE PARALLEL RESTRICTED;

-- Every budget change of a ledger the current role manages.
CREATE VIEW contcount.budget_changes AS SELECT * FROM contcount.budget_change_rows();
GRANT SELECT ON contcount.budget_changes TO PUBLIC;

-- Counters: only the counter's owner, or a role it allowed, feeds it.  A
-- table feeds a counter when its owner has the rights of the counter's
-- owner, or of a role granted feed; grant_counter gives that right.
ALTER TABLE contcount.counter_grant ADD COLUMN feed boolean NOT NULL DEFAULT false;

DROP FUNCTION contcount.grant_counter(text, regrole);
CREATE FUNCTION contcount.grant_counter(name text, role regrole, feed boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_grant_counter'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Mechanism "auto" (issue 12) picks the mechanism of least variance for the
-- horizon; objective says which: 'mean' (NULL) or 'worst' over the steps.
-- The composite contcount.mechanism is unchanged, so the aggregates that
-- take it stay: it holds the mechanism picked.
DROP FUNCTION contcount.mechanism(text, float8, bigint, bigint, bigint, float8, text);
CREATE FUNCTION contcount.mechanism(
    name text,
    epsilon float8,
    horizon bigint DEFAULT NULL,
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL,
    objective text DEFAULT NULL)
RETURNS contcount.mechanism
AS 'MODULE_PATHNAME', 'contcount_mechanism'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

DROP FUNCTION contcount.running_counts(bigint[], float8, text, bigint, bigint, bigint, float8, text);
CREATE FUNCTION contcount.running_counts(
    items bigint[],
    epsilon float8,
    mechanism text DEFAULT 'binary',
    horizon bigint DEFAULT NULL,
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL,
    objective text DEFAULT NULL)
RETURNS SETOF contcount.release
AS 'MODULE_PATHNAME', 'running_counts'
LANGUAGE C VOLATILE PARALLEL RESTRICTED ROWS 1000;

DROP FUNCTION contcount.create_counter(text, float8, text, bigint, interval, bigint, bigint, float8, text);
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
    objective text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_create_counter'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
