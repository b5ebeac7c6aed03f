/*
 * shard_counters.c
 *		Counters fed by many servers: the coordinator's side.  A step of a
 *		counter over a sharded source reads each shard's new counts and
 *		records how far it read, in the step's own transaction.
 *
 * A counter over a source whose table is hash-partitioned by the unit, with
 * partitions on shards that run contcount (src/sources/shards.c), counts the
 * rows inserted on the shards: each shard logs and bounds its own rows and
 * seals them into numbered batches (src/sources/shard_feed.c, where the
 * reason for batches sealed one at a time is given).  Rows inserted through
 * the coordinator into a shard's partition are the shard's too: the
 * coordinator's trigger leaves them to the shard (source_counter.c).
 *
 * Closing a step, the worker asks every shard, through the foreign server
 * and the extension owner's user mapping as a release does (all shards
 * first, then each answer, so that they seal at the same time), for the
 * batches after the last one it read (contcount.counter_shard.read_upto),
 * adds their exact bounded counts to the step's count, and records the new
 * watermark, in the step's transaction: both commit or neither does, so a
 * batch is counted once across a crash of either side or a lost
 * connection (the shard deletes a batch only once a later call shows that
 * its reading committed).  A shard that cannot be reached, or that errs,
 * costs the step nothing but its counts: each shard is asked in a
 * subtransaction, its error is recorded (contcount.counter_shards shows
 * it) and its batches wait for a later step, never lost, never doubled.
 *
 * A counter's rows of contcount.counter_shard (one a shard partition,
 * noted when the worker opens its feeds) outlive the counter: after
 * drop_counter, the worker asks each of their shards to drop the feed and
 * deletes a row only once its shard answered, so that a shard down at the
 * drop is asked again at a later load (shard_counters_forget).
 *
 * IDENTIFICATION
 *	  src/counters/shard_counters.c
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "common/owner_spi.h"
#include "counters/key_rows.h"
#include "counters/shard_counters.h"
#include "sources/shards.h"

#define TAKE_SQL "SELECT upto, rows, key_names, key_rows FROM contcount.shard_feed_take($1, $2, $3, " \
	"$4, $5::pg_catalog.int4, $6::pg_catalog.int8, $7, $8::pg_catalog.text[], " \
	"$9::pg_catalog.int4, $10::pg_catalog.bool)"

/* The counter's sharded source, if it has one. */
typedef struct ShardedSource
{
	Oid			relid;
	AttrNumber	unit;
	int32		max_rows;		/* a person's rows in all: sensitivity counting persons */
	bool		keyed;			/* a counter over a dimension */
	AttrNumber	key;			/* its column */
	char	   *keys;			/* the declared keys, a text[] as text */
	int32		max_groups;
	bool		persons;
} ShardedSource;

/* What one shard answered a step, or why it did not. */
typedef struct ShardRead
{
	int64		after;			/* the watermark before the step */
	int64		upto;			/* after the step */
	int64		rows;
	KeyTaken	keys;			/* over a dimension: each key's rows */
	char	   *error;			/* NULL: read */
} ShardRead;

/*
 * The counter's source, if it is one (SPI connected, as the owner), and
 * its dimension if it has one.  A counter whose dimension is gone has no
 * keys to count: none of its shards is asked.
 */
static bool
counter_source(int64 counter, ShardedSource *source)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(counter)};
	bool		isnull;
	HeapTuple	tuple;
	TupleDesc	desc;

	if (SPI_execute_with_args("SELECT s.relid, s.unit_attnum, CASE WHEN c.count OPERATOR(pg_catalog.=) 'persons' "
							  "THEN c.sensitivity ELSE s.max_rows END, c.dimension IS NOT NULL, d.attnum, "
							  "d.keys::pg_catalog.text, s.max_groups, c.count OPERATOR(pg_catalog.=) 'persons' "
							  "FROM contcount.counter c "
							  "JOIN contcount.source s ON s.name OPERATOR(pg_catalog.=) c.source "
							  "LEFT JOIN contcount.source_dimension d ON d.source OPERATOR(pg_catalog.=) c.source "
							  "AND d.name OPERATOR(pg_catalog.=) c.dimension "
							  "WHERE c.id OPERATOR(pg_catalog.=) $1",
							  1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the source of counter " INT64_FORMAT, counter);
	if (SPI_processed == 0)
		return false;
	tuple = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	source->relid = DatumGetObjectId(SPI_getbinval(tuple, desc, 1, &isnull));
	source->unit = DatumGetInt16(SPI_getbinval(tuple, desc, 2, &isnull));
	source->max_rows = DatumGetInt32(SPI_getbinval(tuple, desc, 3, &isnull));
	source->keyed = DatumGetBool(SPI_getbinval(tuple, desc, 4, &isnull));
	source->key = DatumGetInt16(SPI_getbinval(tuple, desc, 5, &isnull));
	if (source->keyed && isnull)
		return false;
	source->keys = SPI_getvalue(tuple, desc, 6);
	source->max_groups = DatumGetInt32(SPI_getbinval(tuple, desc, 7, &isnull));
	source->persons = DatumGetBool(SPI_getbinval(tuple, desc, 8, &isnull));
	return get_rel_relkind(source->relid) != '\0';
}

/* The last batch of the shard's partition the counter read: 0 before any. */
static int64
watermark(int64 counter, Oid partition)
{
	Oid			types[2] = {INT8OID, OIDOID};
	Datum		values[2] = {Int64GetDatum(counter), ObjectIdGetDatum(partition)};
	bool		isnull;

	if (SPI_execute_with_args("SELECT read_upto FROM contcount.counter_shard "
							  "WHERE counter_id OPERATOR(pg_catalog.=) $1 "
							  "AND partition OPERATOR(pg_catalog.=) $2",
							  2, types, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the watermarks of counter " INT64_FORMAT, counter);
	return SPI_processed == 0 ? 0 :
		DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * The feed's name on the shard: this counter of this database of this
 * cluster, through this partition (a server may hold several partitions,
 * each its own table and feed), so that a copy of the counter elsewhere
 * (which pays again) is fed afresh, not from the original's batches.
 */
static char *
feed_name(int64 counter, Oid partition)
{
	return psprintf(UINT64_FORMAT ":%u:" INT64_FORMAT ":%u", GetSystemIdentifier(), MyDatabaseId,
					counter, partition);
}

/* Send the shard of call->partition the call for its batches after read->after. */
static void
send_ask(ShardCall *call, int64 counter, const ShardedSource *source, ShardRead *read)
{
	const char *params[10] = {NULL};
	char	   *schema;
	char	   *table;
	char	   *unit;

	shards_remote_names(source->relid, call->partition, source->unit, &schema, &table, &unit);
	params[0] = feed_name(counter, call->partition);
	params[1] = schema;
	params[2] = table;
	params[3] = unit;
	params[4] = psprintf("%d", source->max_rows);
	params[5] = psprintf(INT64_FORMAT, read->after);
	if (source->keyed)
	{
		/* the shard's name of the dimension's column */
		shards_remote_names(source->relid, call->partition, source->key, &schema, &table,
							(char **) &params[6]);
		params[7] = source->keys;
		params[8] = psprintf("%d", source->max_groups);
	}
	params[9] = source->keyed && source->persons ? "true" : "false";
	shards_open(call);
	shards_send_sql(call, TAKE_SQL, 10, params);
}

/*
 * The keys' rows a shard answered (two arrays as text, NULL: none) into
 * read->keys; false if they do not pair up or a count is negative.
 */
static bool
answer_keys(const char *names, const char *rows, ShardRead *read)
{
	Datum	   *keys;
	Datum	   *counts;
	int			n = 0;
	int			m = 0;

	read->keys.n = 0;
	if (names == NULL || rows == NULL)
		return names == rows;
	deconstruct_array(DatumGetArrayTypeP(OidInputFunctionCall(F_ARRAY_IN, (char *) names, TEXTOID, -1)),
					  TEXTOID, -1, false, TYPALIGN_INT, &keys, NULL, &n);
	deconstruct_array(DatumGetArrayTypeP(OidInputFunctionCall(F_ARRAY_IN, (char *) rows, INT8OID, -1)),
					  INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &counts, NULL, &m);
	if (n != m)
		return false;
	read->keys.rows = palloc(sizeof(KeyRows) * Max(1, n));
	for (int i = 0; i < n; i++)
	{
		read->keys.rows[i].key = TextDatumGetCString(keys[i]);
		read->keys.rows[i].rows = DatumGetInt64(counts[i]);
		if (read->keys.rows[i].rows < 0)
			return false;
	}
	read->keys.n = n;
	return true;
}

/*
 * The shard's answer, (last batch, rows, keys, keys' rows), once its
 * transaction has committed.
 */
static void
take_answer(ShardCall *call, int64 counter, const ShardedSource *source, ShardRead *read)
{
	char	  **row = shards_collect_row(call, 4);
	bool		valid = row[0] != NULL && row[1] != NULL;

	(void) counter;
	if (valid)
	{
		read->upto = DatumGetInt64(DirectFunctionCall1(int8in, CStringGetDatum(row[0])));
		read->rows = DatumGetInt64(DirectFunctionCall1(int8in, CStringGetDatum(row[1])));
		valid = read->upto >= read->after && read->rows >= 0 &&
			answer_keys(row[2], row[3], read) && (source->keyed || read->keys.n == 0);
	}
	if (!valid)
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("shard \"%s\" answered no batches of counts", call->server)));
	shards_close(call);
}

typedef void (*ShardStage) (ShardCall *call, int64 counter, const ShardedSource *source,
							ShardRead *read);

/*
 * One stage of a shard's call in a subtransaction: an error (the shard
 * down, the connection lost, the shard's refusal) closes the call and is
 * kept in read->error, and undoes nothing of the step's but that shard's
 * reading.
 */
static void
guarded(ShardStage stage, ShardCall *call, int64 counter, const ShardedSource *source,
		ShardRead *read)
{
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(context);
	PG_TRY();
	{
		stage(call, counter, source, read);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(context);
		edata = CopyErrorData();
		FlushErrorState();
		shards_close(call);
		RollbackAndReleaseCurrentSubTransaction();
		read->error = edata->message;
		read->rows = 0;
		read->keys.n = 0;
		read->upto = read->after;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(context);
	CurrentResourceOwner = owner;
}

/*
 * Ask every shard of the counter's source for its batches after its
 * watermark, all first, so that they seal at the same time, then read each
 * answer: what each said, or why it did not, a ShardRead per shard (*n of
 * them, server names in calls).  An error that escapes ends the worker,
 * whose exit closes the connections.
 */
static ShardRead *
read_shards(int64 counter, const ShardedSource *source, ShardCall **calls, int *n)
{
	List	   *partitions = shards_partitions(source->relid, source->unit);
	ShardRead  *reads = palloc0_array(ShardRead, list_length(partitions));
	ListCell   *lc;

	*calls = palloc0_array(ShardCall, list_length(partitions));
	*n = 0;
	foreach(lc, partitions)
	{
		ShardCall  *call = &(*calls)[*n];

		if (!shards_is_shard(lfirst_oid(lc)))
			continue;
		call->partition = lfirst_oid(lc);
		call->watchful = true;
		call->server = GetForeignServer(GetForeignTable(call->partition)->serverid)->servername;
		reads[*n].after = watermark(counter, call->partition);
		guarded(send_ask, call, counter, source, &reads[(*n)++]);
	}
	for (int i = 0; i < *n; i++)
		if ((*calls)[i].conn != NULL)
			guarded(take_answer, &(*calls)[i], counter, source, &reads[i]);
	return reads;
}

/* Record what a step read of a shard's partition, or why it read nothing. */
static void
record_read(int64 counter, const ShardCall *call, const ShardRead *read)
{
	Oid			types[6] = {INT8OID, TEXTOID, INT8OID, INT8OID, TEXTOID, OIDOID};
	Datum		values[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', read->error ? ' ' : 'n', ' '};

	values[0] = Int64GetDatum(counter);
	values[1] = CStringGetTextDatum(call->server);
	values[2] = Int64GetDatum(read->upto);
	values[3] = Int64GetDatum(read->rows);
	values[4] = read->error ? CStringGetTextDatum(read->error) : (Datum) 0;
	values[5] = ObjectIdGetDatum(call->partition);
	if (SPI_execute_with_args("INSERT INTO contcount.counter_shard AS s "
							  "(counter_id, partition, server, read_upto, rows, tried_at, read_at, error) "
							  "VALUES ($1, $6, $2, $3, $4, pg_catalog.now(), "
							  "CASE WHEN $5 IS NULL THEN pg_catalog.now() END, $5) "
							  "ON CONFLICT (counter_id, partition) DO UPDATE SET server = excluded.server, "
							  "read_upto = excluded.read_upto, "
							  "rows = s.rows OPERATOR(pg_catalog.+) excluded.rows, "
							  "tried_at = excluded.tried_at, "
							  "read_at = coalesce(excluded.read_at, s.read_at), error = excluded.error",
							  6, types, values, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the shards read by counter " INT64_FORMAT, counter);
}

bool
shard_counters_sharded(Oid relid, AttrNumber unit)
{
	ListCell   *lc;

	foreach(lc, shards_partitions(relid, unit))
		if (shards_is_shard(lfirst_oid(lc)))
			return true;
	return false;
}

/*
 * Note that the counter may have a feed on the shard of call->partition
 * (unless a step noted it first), so that its drop reaches the feed
 * (shard_counters_forget): nothing read yet, or why it could not be.
 */
static void
record_opened(int64 counter, const ShardCall *call, const ShardRead *read)
{
	Oid			types[4] = {INT8OID, OIDOID, TEXTOID, TEXTOID};
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', read->error ? ' ' : 'n'};

	values[0] = Int64GetDatum(counter);
	values[1] = ObjectIdGetDatum(call->partition);
	values[2] = CStringGetTextDatum(call->server);
	values[3] = read->error ? CStringGetTextDatum(read->error) : (Datum) 0;
	if (SPI_execute_with_args("INSERT INTO contcount.counter_shard "
							  "(counter_id, partition, server, read_upto, rows, tried_at, error) "
							  "VALUES ($1, $2, $3, 0, 0, pg_catalog.now(), $4) "
							  "ON CONFLICT (counter_id, partition) DO NOTHING",
							  4, types, values, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the shards of counter " INT64_FORMAT, counter);
}

void
shard_counters_open(int64 counter)
{
	ShardedSource source;
	OwnerScope	scope;
	ShardCall  *calls;
	ShardRead  *reads;
	int			n = 0;

	if (!contcount_has_column("counter_shard", "read_upto"))
		return;
	owner_begin(&scope);
	/* what they answer waits for the step, which asks again */
	if (counter_source(counter, &source))
	{
		reads = read_shards(counter, &source, &calls, &n);
		for (int i = 0; i < n; i++)
			record_opened(counter, &calls[i], &reads[i]);
	}
	owner_end(&scope);
}

/* Ask the shard of call->server to drop the counter's feed of call->partition. */
static void
drop_feed(ShardCall *call, int64 counter, const ShardedSource *source, ShardRead *read)
{
	const char *params[1] = {feed_name(counter, call->partition)};
	ForeignServer *server = GetForeignServerByName(call->server, false);

	(void) source;
	(void) read;
	shards_open_server(call, server->serverid);
	shards_send_sql(call, "SELECT contcount.shard_feed_drop($1)", 1, params);
	(void) shards_collect_row(call, 1);
	shards_close(call);
}

/* Delete the row of counter_shard of a feed dropped, or whose server is gone. */
static void
forget_shard(int64 counter, Oid partition)
{
	Oid			types[2] = {INT8OID, OIDOID};
	Datum		values[2] = {Int64GetDatum(counter), ObjectIdGetDatum(partition)};

	if (SPI_execute_with_args("DELETE FROM contcount.counter_shard "
							  "WHERE counter_id OPERATOR(pg_catalog.=) $1 "
							  "AND partition OPERATOR(pg_catalog.=) $2",
							  2, types, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not forget a shard of counter " INT64_FORMAT, counter);
}

/* The rows of counter_shard whose counter is gone, copied out of SPI's memory. */
static ShardCall *
gone_feeds(int64 **counters, int *n)
{
	ShardCall  *calls;

	if (SPI_execute("SELECT s.counter_id, s.partition, s.server FROM contcount.counter_shard s "
					"WHERE NOT EXISTS (SELECT 1 FROM contcount.counter c "
					"WHERE c.id OPERATOR(pg_catalog.=) s.counter_id)", false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the shards of dropped counters");
	*n = (int) SPI_processed;
	calls = SPI_palloc(sizeof(ShardCall) * Max(1, *n));
	*counters = SPI_palloc(sizeof(int64) * Max(1, *n));
	for (int i = 0; i < *n; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		bool		isnull;

		memset(&calls[i], 0, sizeof(ShardCall));
		(*counters)[i] = DatumGetInt64(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 1, &isnull));
		calls[i].partition = DatumGetObjectId(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 2, &isnull));
		calls[i].server = SPI_getvalue(tuple, SPI_tuptable->tupdesc, 3);
		calls[i].watchful = true;
	}
	return calls;
}

void
shard_counters_forget(void)
{
	OwnerScope	scope;
	ShardCall  *calls;
	int64	   *counters;
	int			n;

	if (!contcount_has_column("counter_shard", "read_upto"))
		return;
	owner_begin(&scope);
	calls = gone_feeds(&counters, &n);
	for (int i = 0; i < n; i++)
	{
		ShardRead	read = {0};

		if (GetForeignServerByName(calls[i].server, true) == NULL)
			ereport(LOG,
					(errmsg("the shard \"%s\" of dropped counter " INT64_FORMAT " is gone",
							calls[i].server, counters[i]),
					 errhint("Its DBA drops the feed with contcount.shard_feed_drop('%s').",
							 feed_name(counters[i], calls[i].partition))));
		else
			guarded(drop_feed, &calls[i], counters[i], NULL, &read);
		if (read.error == NULL)
			forget_shard(counters[i], calls[i].partition);
		else
			ereport(LOG,
					(errmsg("could not drop the feed of dropped counter " INT64_FORMAT " on shard \"%s\": %s",
							counters[i], calls[i].server, read.error),
					 errdetail("The worker asks again at a later round.")));
	}
	owner_end(&scope);
}

/*
 * Add what a shard answered for each key to keys (unsorted, a key may
 * repeat), in cxt: the answer is in SPI's memory, which owner_end frees.
 */
static void
add_keys(KeyTaken *keys, const KeyTaken *more, MemoryContext cxt)
{
	MemoryContext old;

	if (more->n == 0)
		return;
	old = MemoryContextSwitchTo(cxt);
	keys->rows = keys->n == 0 ? palloc(sizeof(KeyRows) * more->n) :
		repalloc(keys->rows, sizeof(KeyRows) * (keys->n + more->n));
	for (int i = 0; i < more->n; i++)
	{
		keys->rows[keys->n + i].key = pstrdup(more->rows[i].key);
		keys->rows[keys->n + i].rows = more->rows[i].rows;
	}
	keys->n += more->n;
	MemoryContextSwitchTo(old);
}

int64
shard_counters_collect(int64 counter, KeyTaken *keys)
{
	ShardedSource source;
	OwnerScope	scope;
	ShardCall  *calls;
	ShardRead  *reads = NULL;
	int			n = 0;
	int64		items = 0;
	MemoryContext cxt = CurrentMemoryContext;

	if (keys != NULL)
		keys->n = 0;
	if (!contcount_has_column("counter_shard", "read_upto"))
		return 0;
	owner_begin(&scope);
	/* a counter over a dimension reads its shards where it steps its keys */
	if (counter_source(counter, &source) && source.keyed == (keys != NULL))
		reads = read_shards(counter, &source, &calls, &n);
	for (int i = 0; i < n; i++)
	{
		record_read(counter, &calls[i], &reads[i]);
		if (reads[i].error != NULL)
			ereport(LOG,
					(errmsg("a step of counter " INT64_FORMAT " could not read shard \"%s\": %s",
							counter, calls[i].server, reads[i].error),
					 errdetail("The shard's counts wait for a later step.")));
		if (keys != NULL)
			add_keys(keys, &reads[i].keys, cxt);
		else if (__builtin_add_overflow(items, reads[i].rows, &items))
			elog(ERROR, "the step of counter " INT64_FORMAT " overflows", counter);
	}
	owner_end(&scope);
	return items;
}
