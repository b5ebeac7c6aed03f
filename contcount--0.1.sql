-- contcount 0.1: differentially private running counts.
--
-- Hardened as an extension script must be: nothing is created OR REPLACEd or
-- IF NOT EXISTS, SQL-language functions pin search_path, and operators and
-- functions are schema-qualified.

\echo Use "CREATE EXTENSION contcount" to load this file. \quit

-- Anyone may call the release functions; what they may spend is the
-- ledgers' business.
GRANT USAGE ON SCHEMA contcount TO PUBLIC;

-- The parameters of a release, built and checked by contcount.mechanism().
CREATE TYPE contcount.mechanism AS (
    name text,              -- simple_i, simple_ii, two_level, binary or hybrid
    epsilon float8,         -- rounded to a multiple of 1e-9, as charged
    horizon bigint,         -- number of steps; NULL: not declared
    block bigint,           -- two_level block size
    sensitivity bigint,     -- most one protected unit adds to the stream
    beta float8,            -- the bound fails with at most this probability
    ledger text             -- the ledger that pays; NULL: contcount.ledger
);

-- One step's release.
CREATE TYPE contcount.release AS (
    t bigint,               -- step, from 1
    noisy_count bigint,     -- noisy running count at step t
    stddev float8,          -- exact standard deviation of its noise
    bound float8            -- |noise| <= bound at all steps at once, w.p. 1 - beta
);

CREATE FUNCTION contcount.mechanism(
    name text,
    epsilon float8,
    horizon bigint DEFAULT NULL,
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL)
RETURNS contcount.mechanism
AS 'MODULE_PATHNAME', 'contcount_mechanism'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- running_count: a window (or plain) aggregate, one stream step per row.
CREATE FUNCTION contcount.running_count_step(internal, bigint, contcount.mechanism)
RETURNS internal
AS 'MODULE_PATHNAME', 'running_count_step'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE FUNCTION contcount.running_count_step(internal, bigint, float8, bigint)
RETURNS internal
AS 'MODULE_PATHNAME', 'running_count_step'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE FUNCTION contcount.running_count_final(internal)
RETURNS contcount.release
AS 'MODULE_PATHNAME', 'running_count_final'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE AGGREGATE contcount.running_count(item bigint, mechanism contcount.mechanism) (
    SFUNC = contcount.running_count_step,
    STYPE = internal,
    FINALFUNC = contcount.running_count_final,
    FINALFUNC_MODIFY = READ_ONLY,
    PARALLEL = RESTRICTED
);

CREATE AGGREGATE contcount.running_count(item bigint, epsilon float8, horizon bigint) (
    SFUNC = contcount.running_count_step,
    STYPE = internal,
    FINALFUNC = contcount.running_count_final,
    FINALFUNC_MODIFY = READ_ONLY,
    PARALLEL = RESTRICTED
);

-- running_counts: the release of every step of a whole series.
CREATE FUNCTION contcount.running_counts(
    items bigint[],
    epsilon float8,
    mechanism text DEFAULT 'binary',
    horizon bigint DEFAULT NULL,
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL)
RETURNS SETOF contcount.release
AS 'MODULE_PATHNAME', 'running_counts'
LANGUAGE C VOLATILE PARALLEL RESTRICTED ROWS 1000;

-- noisy_count: count(*) released once.  count(*)'s own transition and
-- combine functions, so it runs in parallel as count(*) does.
CREATE FUNCTION contcount.noisy_count_final(bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'noisy_count_final'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE AGGREGATE contcount.noisy_count(epsilon float8) (
    SFUNC = pg_catalog.int8inc_any,
    STYPE = bigint,
    INITCOND = '0',
    COMBINEFUNC = pg_catalog.int8pl,
    FINALFUNC = contcount.noisy_count_final,
    PARALLEL = SAFE
);

CREATE FUNCTION contcount.noisy_count_step(bigint, float8, text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'noisy_count_step'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE contcount.noisy_count(epsilon float8, ledger text) (
    SFUNC = contcount.noisy_count_step,
    STYPE = bigint,
    INITCOND = '0',
    COMBINEFUNC = pg_catalog.int8pl,
    FINALFUNC = contcount.noisy_count_final,
    PARALLEL = SAFE
);

-- The privacy budget ledgers.  Names, budgets and grants are tables, so
-- managing them is transactional; what was spent is in the ledger store
-- under the data directory, which no transaction can undo.  Only the
-- extension's owner reads the tables: the functions below check the calling
-- role's rights themselves.
CREATE TABLE contcount.ledger (
    id bigint PRIMARY KEY,          -- random: never reused, here or elsewhere
    name text NOT NULL,
    budget numeric NOT NULL,        -- total epsilon (pure differential privacy)
    created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    created_by oid NOT NULL,
    dropped_at timestamptz          -- kept after a drop, for the audit
);
CREATE UNIQUE INDEX ledger_live_name ON contcount.ledger (name) WHERE dropped_at IS NULL;

CREATE TABLE contcount.ledger_grant (
    ledger_id bigint NOT NULL REFERENCES contcount.ledger (id),
    role_id oid NOT NULL,
    admin boolean NOT NULL,         -- may change the budget, drop, grant
    PRIMARY KEY (ledger_id, role_id)
);

REVOKE ALL ON contcount.ledger, contcount.ledger_grant FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('contcount.ledger', '');
SELECT pg_catalog.pg_extension_config_dump('contcount.ledger_grant', '');

-- Is the role a superuser, or a member of a role granted the ledger (as
-- admin, if need_admin)?  Used by the C functions, as the owner.
CREATE FUNCTION contcount.ledger_granted(bigint, oid, boolean)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.oid = $2 AND r.rolsuper)
        OR EXISTS (SELECT 1
                   FROM contcount.ledger_grant g
                   JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) g.role_id
                   WHERE g.ledger_id OPERATOR(pg_catalog.=) $1
                     AND (g.admin OR NOT $3)
                     AND pg_catalog.pg_has_role($2, g.role_id, 'USAGE'))
$$;
REVOKE ALL ON FUNCTION contcount.ledger_granted(bigint, oid, boolean) FROM PUBLIC;

CREATE FUNCTION contcount.create_ledger(name text, epsilon numeric)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_create_ledger'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION contcount.create_ledger(text, numeric) FROM PUBLIC;

CREATE FUNCTION contcount.alter_ledger(name text, epsilon numeric)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_alter_ledger'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION contcount.drop_ledger(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_drop_ledger'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION contcount.grant_ledger(ledger text, role regrole, admin boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_grant_ledger'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION contcount.revoke_ledger(ledger text, role regrole)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_revoke_ledger'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION contcount.ledger_rows(
    OUT name text, OUT budget numeric, OUT spent numeric, OUT remaining numeric,
    OUT created_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_ledger_rows'
LANGUAGE C STABLE PARALLEL RESTRICTED;

CREATE FUNCTION contcount.charge_rows(
    OUT at timestamptz, OUT role regrole, OUT ledger text, OUT epsilon numeric,
    OUT function text, OUT statement text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_charge_rows'
LANGUAGE C STABLE PARALLEL RESTRICTED;

-- The ledgers the current role may spend from or manage.
CREATE VIEW contcount.ledgers AS SELECT * FROM contcount.ledger_rows();
-- Every charge to a ledger the current role manages.
CREATE VIEW contcount.charges AS SELECT * FROM contcount.charge_rows();
GRANT SELECT ON contcount.ledgers, contcount.charges TO PUBLIC;

-- Named counters, fed by insert triggers, stepped by the step worker in the
-- database contcount.database.  Definitions, mechanism states (exact counts
-- and noise: raw data), releases and the committed counts not yet in a step
-- are tables only the extension's owner reads.
CREATE TABLE contcount.counter (
    id bigint PRIMARY KEY,          -- random, never reused
    name text NOT NULL UNIQUE,
    mechanism text NOT NULL,
    epsilon float8 NOT NULL,
    horizon bigint,                 -- NULL: unbounded (hybrid)
    block bigint,
    sensitivity bigint NOT NULL,
    beta float8 NOT NULL,
    ledger text,                    -- NULL: the creator's contcount.ledger paid
    step interval NOT NULL,
    started_at timestamptz NOT NULL,    -- step k closes at started_at + k * step
    owner oid NOT NULL,
    steps bigint NOT NULL DEFAULT 0,    -- steps closed
    finished boolean NOT NULL DEFAULT false,    -- past its horizon
    state bytea NOT NULL            -- the mechanism's state
);

CREATE TABLE contcount.counter_release (
    counter_id bigint NOT NULL REFERENCES contcount.counter (id) ON DELETE CASCADE,
    t bigint NOT NULL,
    noisy_count bigint NOT NULL,
    stddev float8 NOT NULL,
    bound float8 NOT NULL,
    released_at timestamptz NOT NULL,
    PRIMARY KEY (counter_id, t)
);

-- One row per counter per committed transaction that fed it; no index, so
-- that writing it costs a trigger as little as possible.
CREATE TABLE contcount.counter_delta (
    counter_id bigint NOT NULL,
    n bigint NOT NULL
);

CREATE TABLE contcount.counter_grant (
    counter_id bigint NOT NULL REFERENCES contcount.counter (id) ON DELETE CASCADE,
    role_id oid NOT NULL,
    PRIMARY KEY (counter_id, role_id)
);

REVOKE ALL ON contcount.counter, contcount.counter_release, contcount.counter_delta,
    contcount.counter_grant FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('contcount.counter', '');
SELECT pg_catalog.pg_extension_config_dump('contcount.counter_release', '');
SELECT pg_catalog.pg_extension_config_dump('contcount.counter_delta', '');
SELECT pg_catalog.pg_extension_config_dump('contcount.counter_grant', '');

-- May the role read the counter: its owner, a superuser, or a member of a
-- role it was granted to?
CREATE FUNCTION contcount.counter_granted(bigint, oid)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.oid = $2 AND r.rolsuper)
        OR EXISTS (SELECT 1 FROM contcount.counter c
                   WHERE c.id OPERATOR(pg_catalog.=) $1 AND c.owner OPERATOR(pg_catalog.=) $2)
        OR EXISTS (SELECT 1
                   FROM contcount.counter_grant g
                   JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) g.role_id
                   WHERE g.counter_id OPERATOR(pg_catalog.=) $1
                     AND pg_catalog.pg_has_role($2, g.role_id, 'USAGE'))
$$;
REVOKE ALL ON FUNCTION contcount.counter_granted(bigint, oid) FROM PUBLIC;

CREATE FUNCTION contcount.create_counter(
    name text,
    epsilon float8,
    mechanism text DEFAULT 'binary',
    horizon bigint DEFAULT NULL,
    step interval DEFAULT '1 minute',
    block bigint DEFAULT NULL,
    sensitivity bigint DEFAULT 1,
    beta float8 DEFAULT 0.05,
    ledger text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_create_counter'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION contcount.drop_counter(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_drop_counter'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION contcount.grant_counter(name text, role regrole)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_grant_counter'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION contcount.revoke_counter(name text, role regrole)
RETURNS void
AS 'MODULE_PATHNAME', 'contcount_revoke_counter'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION contcount.tick(name text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'contcount_tick'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION contcount.current(name text,
    OUT t bigint, OUT noisy_count bigint, OUT stddev float8, OUT bound float8,
    OUT released_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_current'
LANGUAGE C STABLE PARALLEL RESTRICTED ROWS 1;

CREATE FUNCTION contcount.history(name text,
    OUT t bigint, OUT noisy_count bigint, OUT stddev float8, OUT bound float8,
    OUT released_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_history'
LANGUAGE C STABLE PARALLEL RESTRICTED;

CREATE FUNCTION contcount.counter_rows(
    OUT name text, OUT mechanism text, OUT epsilon float8, OUT horizon bigint,
    OUT step interval, OUT ledger text, OUT started_at timestamptz, OUT steps bigint,
    OUT finished boolean, OUT owner regrole)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'contcount_counter_rows'
LANGUAGE C STABLE PARALLEL RESTRICTED;

-- The counters the current role may read.
CREATE VIEW contcount.counters AS SELECT * FROM contcount.counter_rows();
GRANT SELECT ON contcount.counters TO PUBLIC;

-- Raw state: the exact count released so far, the committed counts not yet
-- in a step, and the state with every node's noise.  Superusers only.
CREATE FUNCTION contcount.counter_internals(name text,
    OUT steps bigint, OUT exact_released bigint, OUT pending bigint, OUT state bytea)
RETURNS record
AS 'MODULE_PATHNAME', 'contcount_counter_internals'
LANGUAGE C STABLE PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION contcount.counter_internals(text) FROM PUBLIC;

-- The trigger: AFTER INSERT, FOR EACH STATEMENT (the statement's row count),
-- FOR EACH STATEMENT with REFERENCING NEW TABLE (the rows captured), or FOR
-- EACH ROW (with WHEN for a predicate); its argument names the counter.
CREATE FUNCTION contcount.count_inserts()
RETURNS trigger
AS 'MODULE_PATHNAME', 'contcount_count_inserts'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
