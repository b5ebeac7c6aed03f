-- contcount 0.1: differentially private running counts.
--
-- Hardened as an extension script must be: nothing is created OR REPLACEd or
-- IF NOT EXISTS, SQL-language functions pin search_path, and operators and
-- functions are schema-qualified.

\echo Use "CREATE EXTENSION contcount" to load this file. \quit

-- The parameters of a release, built and checked by contcount.mechanism().
CREATE TYPE contcount.mechanism AS (
    name text,              -- simple_i, simple_ii, two_level, binary or hybrid
    epsilon float8,         -- rounded to a multiple of 1e-9, as charged
    horizon bigint,         -- number of steps; NULL: not declared
    block bigint,           -- two_level block size
    sensitivity bigint,     -- most one protected unit adds to the stream
    beta float8             -- the bound fails with at most this probability
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
    beta float8 DEFAULT 0.05)
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
    beta float8 DEFAULT 0.05)
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
