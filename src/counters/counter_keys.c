/*
 * counter_keys.c
 *		The steps of counters over a source's dimension: a running count of
 *		every declared key, for one charge.
 *
 * create_counter(..., source => s, dimension => d) records d with the
 * counter.  The source's trigger logs each row with its person and its key
 * (a row whose key is null or not declared is left out, as releases leave
 * it out), and the step takes the log (unit_log_key_rows): each person
 * keeps at most max_groups keys and max_rows rows in all, over all the
 * counter's steps, so adding or removing all of one person's rows moves the
 * keys' streams by at most max_rows in all (L1).  Each key's stream is then
 * released by its own copy of the counter's mechanism, calibrated, as the
 * counter itself is, for sensitivity max_rows at the counter's full epsilon
 * (or rho): a person who gives c_k rows to key k costs that key's stream
 * c_k / max_rows of the budget (Laplace noise: linearly; Gaussian noise: its
 * square, which is less), and the keys together at most the whole, once
 * (parallel composition, the rule source_running_counts calibrates by).
 * Counting distinct persons (count => 'persons'), a person gives each key
 * at most one row, in at most the counter's sensitivity keys (the least of
 * max_rows, max_groups and the keys declared at its creation), which is
 * what its mechanism is calibrated for in place of max_rows.
 *
 * Each key's state is a row of contcount.counter_key_state, each key's
 * release a row of contcount.counter_key_release, all written in the
 * step's one transaction with the log it consumed: exactly once, as the
 * counter's own step.  No foreign key ties them (nor counter_unit_key) to
 * contcount.counter: the step holds its counter's row FOR UPDATE, and
 * drop_counter deletes them (counter_keys_forget).  The counter's own
 * state stays its clock (its steps, horizon and copies), pushed what plain
 * counts it has (none) and released nowhere.
 *
 * Over a sharded source, each shard logs and bounds its own persons (their
 * rows are all on it) across the keys declared here, which the step names
 * when it asks (shard_counters.c), and the step adds each shard's rows of
 * each key to the key's, in its transaction, with the shard's watermark:
 * exactly once, as plain counts from shards.
 *
 * Keys with no rows in a step get their 0.  A key the DBA declares later
 * joins at the counter's next step, its state new then: the rows logged
 * before were left out (not declared when the trigger saw them), and the
 * bound of each person is unchanged, so the argument above holds.  A key
 * no longer declared is no longer released; its state is kept, and goes on
 * if it is declared again.
 *
 * IDENTIFICATION
 *	  src/counters/counter_keys.c
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "common/owner_spi.h"
#include "common/random.h"
#include "core/mechanism.h"
#include "counters/counter_keys.h"
#include "counters/shard_counters.h"
#include "sources/unit_log.h"

/* Keys whose states are read and written at once. */
#define KEY_CHUNK 1024

/* The keys' rows and states of one step of one counter. */
typedef struct KeyStep
{
	int64		id;
	const char *name;
	const cc_params *params;
	int64		t;
	KeyTaken   *taken;
} KeyStep;

static int
by_key(const void *a, const void *b)
{
	return strcmp(((const KeyRows *) a)->key, ((const KeyRows *) b)->key);
}

static int
by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * The declared keys of the counter's dimension, sorted, into keys; false if
 * the counter has no dimension.
 */
static bool
declared_keys(int64 id, char ***keys, int *nkeys)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(id)};
	bool		isnull;
	Datum	   *elems;
	Datum		array;

	*nkeys = 0;
	if (!contcount_has_column("counter", "dimension"))
		return false;
	if (SPI_execute_with_args("SELECT c.dimension, d.keys FROM contcount.counter c "
							  "LEFT JOIN contcount.source_dimension d "
							  "ON d.source OPERATOR(pg_catalog.=) c.source "
							  "AND d.name OPERATOR(pg_catalog.=) c.dimension "
							  "WHERE c.id OPERATOR(pg_catalog.=) $1",
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the dimension of counter " INT64_FORMAT, id);
	if (SPI_processed == 0)
		return false;
	(void) SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return false;
	array = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	if (isnull)
		return true;
	deconstruct_array(DatumGetArrayTypeP(array), TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL,
					  nkeys);
	*keys = palloc(sizeof(char *) * Max(1, *nkeys));
	for (int k = 0; k < *nkeys; k++)
		(*keys)[k] = TextDatumGetCString(elems[k]);
	qsort(*keys, *nkeys, sizeof(char *), by_text);
	return true;
}

/*
 * Add the rows of a sharded source's shards (shard_counters.c: each shard
 * bounds its own persons, whose rows are all there) to the step's, and
 * sort them by key, each key once.
 */
static void
add_shard_rows(KeyStep *step)
{
	KeyTaken   *taken = step->taken;
	KeyTaken	shards;
	int			n = 0;

	(void) shard_counters_collect(step->id, &shards);
	if (shards.n > 0)
	{
		taken->rows = repalloc(taken->rows, sizeof(KeyRows) * (taken->n + shards.n));
		memcpy(taken->rows + taken->n, shards.rows, sizeof(KeyRows) * shards.n);
		taken->n += shards.n;
	}
	qsort(taken->rows, taken->n, sizeof(KeyRows), by_key);
	for (int i = 0; i < taken->n; i++)
	{
		if (n > 0 && strcmp(taken->rows[n - 1].key, taken->rows[i].key) == 0)
		{
			if (__builtin_add_overflow(taken->rows[n - 1].rows, taken->rows[i].rows,
									   &taken->rows[n - 1].rows))
				elog(ERROR, "the step of counter \"%s\" overflows", step->name);
			continue;
		}
		taken->rows[n++] = taken->rows[i];
	}
	taken->n = n;
}

/*
 * Take the step's logged rows, bounded, by key, and the shards' (sorted,
 * each key once).
 */
static void
take_rows(KeyStep *step)
{
	KeyTaken   *taken = step->taken;
	bool		isnull;

	unit_log_key_rows(step->id);
	taken->n = (int) SPI_processed;
	taken->rows = palloc(sizeof(KeyRows) * Max(1, taken->n));
	for (int i = 0; i < taken->n; i++)
	{
		taken->rows[i].key = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		taken->rows[i].rows = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i],
														   SPI_tuptable->tupdesc, 2, &isnull));
	}
	add_shard_rows(step);
}

int64
counter_keys_taken(const KeyTaken *taken, const char *key)
{
	KeyRows		probe = {(char *) key, 0};
	KeyRows    *found = bsearch(&probe, taken->rows, taken->n, sizeof(KeyRows), by_key);

	return found ? found->rows : 0;
}

/* The states of keys (n, sorted) that have one, as SPI's result, sorted by key. */
static void
read_states(const KeyStep *step, char **keys, int n)
{
	Oid			types[2] = {INT8OID, TEXTARRAYOID};
	Datum		args[2];
	Datum	   *texts = palloc(sizeof(Datum) * n);

	for (int k = 0; k < n; k++)
		texts[k] = CStringGetTextDatum(keys[k]);
	args[0] = Int64GetDatum(step->id);
	args[1] = PointerGetDatum(construct_array(texts, n, TEXTOID, -1, false, TYPALIGN_INT));
	/* a probe of the index a key (= ANY would scan every key of the counter) */
	if (SPI_execute_with_args("SELECT s.key, s.state FROM pg_catalog.unnest($2) k(key) "
							  "JOIN contcount.counter_key_state s "
							  "ON s.counter_id OPERATOR(pg_catalog.=) $1 "
							  "AND s.key OPERATOR(pg_catalog.=) k.key ORDER BY s.key COLLATE \"C\"",
							  2, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the keys' states of counter \"%s\"", step->name);
}

/*
 * The key's state before this step (row of SPI's sorted result at *row, if
 * it is the key's, else new), in state.
 */
static void
key_state(const KeyStep *step, const char *key, uint64 *row, cc_state *state)
{
	bool		isnull;
	bytea	   *stored;

	if (*row >= SPI_processed ||
		strcmp(SPI_getvalue(SPI_tuptable->vals[*row], SPI_tuptable->tupdesc, 1), key) != 0)
	{
		cc_state_init(state, step->params);
		return;
	}
	stored = DatumGetByteaPP(SPI_getbinval(SPI_tuptable->vals[*row], SPI_tuptable->tupdesc, 2,
										   &isnull));
	(*row)++;
	if (VARSIZE_ANY_EXHDR(stored) > cc_state_size(step->params) ||
		!cc_state_valid(VARDATA_ANY(stored), VARSIZE_ANY_EXHDR(stored)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the state of key \"%s\" of counter \"%s\" is damaged", key, step->name)));
	memcpy(state, VARDATA_ANY(stored), VARSIZE_ANY_EXHDR(stored));
}

/* What a chunk of keys releases, column by column, for one statement. */
typedef struct KeyReleases
{
	Datum	   *keys;
	Datum	   *states;
	Datum	   *noisy;
	Datum	   *stddev;
	Datum	   *bound;
} KeyReleases;

/* Push the key's rows into its state and keep what it releases, as entry k. */
static void
push_key(const KeyStep *step, char *key, cc_state *state, KeyReleases *out, int k)
{
	cc_release	release;
	bytea	   *blob;
	cc_status	status = cc_push(state, counter_keys_taken(step->taken, key), strong_rng());

	if (status != CC_OK)
		elog(ERROR, "key \"%s\" of counter \"%s\" cannot take its step (status %d)", key,
			 step->name, (int) status);
	cc_read(state, &release);
	blob = palloc(VARHDRSZ + cc_state_bytes(state));
	SET_VARSIZE(blob, VARHDRSZ + cc_state_bytes(state));
	memcpy(VARDATA(blob), state, cc_state_bytes(state));
	out->keys[k] = CStringGetTextDatum(key);
	out->states[k] = PointerGetDatum(blob);
	out->noisy[k] = Int64GetDatum(release.noisy);
	out->stddev[k] = Float8GetDatum(sqrt(release.variance));
	out->bound[k] = Float8GetDatum(release.bound);
}

#define ARRAY_OF(values, n, type, len, byval, align) \
	PointerGetDatum(construct_array(values, n, type, len, byval, align))

/* Store the chunk's n states and releases, at the counter's step t. */
static void
store_keys(const KeyStep *step, const KeyReleases *out, int n)
{
	Oid			types[7] = {INT8OID, TEXTARRAYOID, BYTEAARRAYOID, INT8OID, INT8ARRAYOID,
	FLOAT8ARRAYOID, FLOAT8ARRAYOID};
	Datum		args[7];

	args[0] = Int64GetDatum(step->id);
	args[1] = ARRAY_OF(out->keys, n, TEXTOID, -1, false, TYPALIGN_INT);
	args[2] = ARRAY_OF(out->states, n, BYTEAOID, -1, false, TYPALIGN_INT);
	args[3] = Int64GetDatum(step->t);
	args[4] = ARRAY_OF(out->noisy, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	args[5] = ARRAY_OF(out->stddev, n, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	args[6] = ARRAY_OF(out->bound, n, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	if (SPI_execute_with_args("WITH s AS (INSERT INTO contcount.counter_key_state "
							  "(counter_id, key, state) SELECT $1, k, s "
							  "FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3)) u(k, s) "
							  "ON CONFLICT (counter_id, key) DO UPDATE SET state = excluded.state) "
							  "INSERT INTO contcount.counter_key_release "
							  "(counter_id, key, t, noisy_count, stddev, bound, released_at) "
							  "SELECT $1, k, $4, n, d, b, pg_catalog.now() "
							  "FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($5), "
							  "pg_catalog.unnest($6), pg_catalog.unnest($7)) u(k, n, d, b)",
							  7, types, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not store the keys' step of counter \"%s\"", step->name);
}

/* One chunk of keys (n, sorted): read, push, store, in memory of its own. */
static void
step_chunk(const KeyStep *step, char **keys, int n, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	cc_state   *state = palloc(cc_state_size(step->params));
	KeyReleases out;
	uint64		row = 0;

	out.keys = palloc(sizeof(Datum) * n);
	out.states = palloc(sizeof(Datum) * n);
	out.noisy = palloc(sizeof(Datum) * n);
	out.stddev = palloc(sizeof(Datum) * n);
	out.bound = palloc(sizeof(Datum) * n);
	read_states(step, keys, n);
	for (int k = 0; k < n; k++)
	{
		key_state(step, keys[k], &row, state);
		push_key(step, keys[k], state, &out, k);
	}
	SPI_freetuptable(SPI_tuptable);
	store_keys(step, &out, n);
	MemoryContextSwitchTo(old);
	MemoryContextReset(cxt);
}

bool
counter_keys_step(int64 id, const char *name, const cc_state *clock, int64 t, KeyTaken *taken)
{
	KeyStep		step;
	char	  **keys = NULL;
	int			nkeys;
	MemoryContext cxt;

	if (!declared_keys(id, &keys, &nkeys))
		return false;
	step.id = id;
	step.name = name;
	step.params = cc_state_params(clock);
	step.t = t;
	step.taken = taken;
	take_rows(&step);
	cxt = AllocSetContextCreate(CurrentMemoryContext, "contcount key step", ALLOCSET_DEFAULT_SIZES);
	for (int start = 0; start < nkeys; start += KEY_CHUNK)
		step_chunk(&step, keys + start, Min(KEY_CHUNK, nkeys - start), cxt);
	MemoryContextDelete(cxt);
	return true;
}

/*
 * No foreign key ties the three tables to contcount.counter (its check was
 * a query a row the step wrote): the counter's rows go here, in place of a
 * cascade.  Run after the counter's row is deleted, in a statement of its
 * own, it sees what a step that held the row wrote before it committed.
 */
void
counter_keys_forget(int64 id)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(id)};

	if (!contcount_has_column("counter", "dimension"))
		return;
	if (SPI_execute_with_args("WITH k AS (DELETE FROM contcount.counter_unit_key "
							  "WHERE counter_id OPERATOR(pg_catalog.=) $1), "
							  "s AS (DELETE FROM contcount.counter_key_state "
							  "WHERE counter_id OPERATOR(pg_catalog.=) $1) "
							  "DELETE FROM contcount.counter_key_release "
							  "WHERE counter_id OPERATOR(pg_catalog.=) $1",
							  1, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not forget the keys of counter " INT64_FORMAT, id);
}
