/*
 * shard_feed.c
 *		Counters fed by many servers: the shard's side.  The shard logs the
 *		rows of its table for each counter of the coordinator, bounds each
 *		person, and hands the coordinator sealed batches of exact bounded
 *		counts that it reads exactly once.
 *
 * A coordinator's counter over a source whose table is hash-partitioned by
 * the unit, with partitions on shards that run contcount (shards.c), counts
 * the rows inserted on the shards.  Each shard counts its own: a person's
 * rows are all on one shard, so the shard bounds them by max_rows as the
 * coordinator would, and only counts travel.
 *
 * - The trigger (contcount_internal.feed_shard_counters, created on the
 *   shard's table by contcount.feed_shard) adds each row to its person's
 *   entry of the transaction's unit log (unit_log.c), under the negative id
 *   of each feed of the table (a feed: one coordinator counter; a counter's
 *   id is never negative), appended to contcount.counter_unit_log with the
 *   insert, before it commits.  Nothing else: no lock, no query a row.
 *
 * - contcount.shard_feed_take(feed, ..., after), called by the coordinator's
 *   step worker over libpq, in one shard transaction: makes the feed if it
 *   is new, locks its row, seals the log into a batch (takes the feed's log
 *   rows its snapshot sees, bounds each person against their row of
 *   counter_unit, under the feed's id, and inserts the sum as a row of
 *   contcount.shard_feed_batch with the next id), deletes the batches up to
 *   after (the coordinator has committed that it read them) and returns the
 *   last id and the sum of the batches after after.
 *
 * - contcount.shard_feed_drop(feed), called by the coordinator's step
 *   worker once the feed's counter is dropped there: deletes the feed and
 *   everything under its id in one transaction; a feed gone already is no
 *   error, so that a call whose answer was lost can be made again.
 *
 * - A counter over a dimension: the coordinator names the key column when
 *   it makes the feed, and the trigger logs each row's key text with it
 *   (every key: the declared keys live on the coordinator and change
 *   there).  At each seal the coordinator names the keys declared now,
 *   max_groups and whether it counts persons; the seal drops the rows of
 *   other keys first, so that an undeclared key never takes one of a
 *   person's max_groups keys, bounds each person across the declared keys
 *   as the coordinator's own step does (unit_log_take_key_bounded, against
 *   counter_unit_key and counter_unit under the feed's id), and the batch
 *   holds each key's rows; the answer adds their sums by key.
 *
 * Why batches sealed under the feed's lock, and not the log read by id: a
 * reader that reads "every row with an id above my watermark" misses a row
 * whose id was drawn before the last one read but that committed after the
 * read (ids are drawn in one order, commits come in another), and then
 * skips it for ever.  Here the log is taken by a DELETE, which takes what
 * is committed and leaves the rest for the next seal, and batches are
 * sealed one at a time: each seal holds the feed's row lock until it
 * commits and draws its batch id under it, so batch ids commit in their
 * order, and a reader that sees batch n sees every batch before it.  The
 * watermark (the last batch read) is the coordinator's, recorded in its
 * step's transaction (src/counters/shard_counters.c), so a batch is counted
 * once whatever crashes or drops: a batch read by a step that did not
 * commit is read again by the next, one whose reading the coordinator did
 * not see commit (the connection lost at the end) is read by a later step
 * too, and one is deleted only when a later call shows that its reading
 * committed.
 *
 * A shard releases nothing: no noise, no ledger, no charge.  The counts are
 * exact, so the function answers only a role that has EXECUTE on it (not
 * PUBLIC) and SELECT on the table with no row level security, as
 * shard_bounded_counts does (shard_counts.c): the coordinator's connection
 * user.
 *
 * IDENTIFICATION
 *	  src/sources/shard_feed.c
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "common/hashfn.h"
#include "funcapi.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "common/args.h"
#include "common/owner_spi.h"
#include "sources/feed_cache.h"
#include "sources/shards.h"
#include "sources/unit_log.h"

/* The trigger's name on a shard's table: one a table. */
#define SHARD_FEED_TRIGGER "contcount_shard_feed"

/* A feed of the table: its log's id and the key column of its dimension. */
typedef struct ShardFeed
{
	int64		log_id;			/* the feed's negative id */
	bool		keyed;			/* a counter over a dimension */
	AttrNumber	key;			/* its column here (none: dropped, no row counts) */
	Oid			key_out_fn;
} ShardFeed;

/*
 * The feeds of a table, as the trigger looked them up (kept by feed_cache.c
 * until contcount's counters change, which registering a feed announces).
 */
typedef struct ShardFeeds
{
	AttrNumber	unit;
	Oid			unit_out_fn;
	int			nfeeds;
	ShardFeed	feeds[FLEXIBLE_ARRAY_MEMBER];
} ShardFeeds;

#define FEEDS_SIZE(n) (offsetof(ShardFeeds, feeds) + sizeof(ShardFeed) * (n))

/* Feed i of the lookup, from SPI's row i (id, key_column). */
static void
read_feed(ShardFeed *feed, Relation rel, int i)
{
	bool		isnull;
	bool		varlena;
	char	   *column = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);

	feed->log_id = -DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1,
												&isnull));
	feed->keyed = column != NULL;
	feed->key = column ? get_attnum(RelationGetRelid(rel), column) : InvalidAttrNumber;
	if (feed->key != InvalidAttrNumber)
		getTypeOutputInfo(TupleDescAttr(RelationGetDescr(rel), feed->key - 1)->atttypid,
						  &feed->key_out_fn, &varlena);
}

/* The feeds of the trigger's table, one query as the extension's owner. */
static ShardFeeds *
look_up_feeds(TriggerData *trigdata, MemoryContext cxt)
{
	static SPIPlanPtr plan;
	Relation	rel = trigdata->tg_relation;
	const char *column = trigdata->tg_trigger->tgargs[0];
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(RelationGetRelid(rel))};
	OwnerScope	scope;
	ShardFeeds *feeds;
	bool		varlena;

	owner_begin(&scope);
	owner_run(&plan, "SELECT id, key_column FROM contcount.shard_feed "
			  "WHERE relid OPERATOR(pg_catalog.=) $1", 1, types, values, NULL, SPI_OK_SELECT);
	feeds = MemoryContextAllocZero(cxt, FEEDS_SIZE(SPI_processed));
	feeds->nfeeds = (int) SPI_processed;
	for (int i = 0; i < feeds->nfeeds; i++)
		read_feed(&feeds->feeds[i], rel, i);
	owner_end(&scope);
	feeds->unit = get_attnum(RelationGetRelid(rel), column);
	if (feeds->unit == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("the unit column \"%s\" of the shard's table \"%s\" is gone", column,
						RelationGetRelationName(rel))));
	getTypeOutputInfo(TupleDescAttr(RelationGetDescr(rel), feeds->unit - 1)->atttypid,
					  &feeds->unit_out_fn, &varlena);
	return feeds;
}

/* The trigger's feeds: kept by the backend, or looked up and kept. */
static ShardFeeds *
shard_feeds(TriggerData *trigdata, MemoryContext cxt)
{
	Oid			relid = RelationGetRelid(trigdata->tg_relation);
	ShardFeeds *feeds = feed_cache_get(SHARD_FEED_TRIGGER, false, relid, cxt);

	if (feeds == NULL)
	{
		feeds = look_up_feeds(trigdata, cxt);
		feed_cache_put(SHARD_FEED_TRIGGER, false, relid, relid, feeds, FEEDS_SIZE(feeds->nfeeds));
	}
	return feeds;
}

/* Hash and compare keys by their text, as the table below holds them. */
static uint32
key_text_hash(const void *key, Size keysize)
{
	const char *text = *(const char *const *) key;

	(void) keysize;
	return hash_bytes((const unsigned char *) text, (int) strlen(text));
}

static int
key_text_match(const void *a, const void *b, Size keysize)
{
	(void) keysize;
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/*
 * The transaction's one copy of a key's text: the unit log names a row's
 * key by address until the transaction ends (unit_log_add), and a shard
 * does not know the declared keys (the coordinator names them when it
 * takes), so each key a transaction logs is kept once, in a table of the
 * transaction's memory, made again by the next transaction.
 */
static const char *
interned_key(const char *text)
{
	static HTAB *keys = NULL;
	static LocalTransactionId made_in = InvalidLocalTransactionId;
	char	  **entry;
	bool		found;

	if (keys == NULL || made_in != MyProc->lxid)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(char *);
		ctl.entrysize = sizeof(char *);
		ctl.hash = key_text_hash;
		ctl.match = key_text_match;
		ctl.hcxt = TopTransactionContext;
		keys = hash_create("contcount shard feed keys", 64, &ctl,
						   HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
		made_in = MyProc->lxid;
	}
	entry = hash_search(keys, &text, HASH_ENTER, &found);
	if (!found)
		*entry = MemoryContextStrdup(TopTransactionContext, text);
	return *entry;
}

/* Log the row, of the person of digest, for each feed of the table. */
static void
log_row(const ShardFeeds *feeds, TriggerData *trigdata, const uint8 *digest)
{
	for (int i = 0; i < feeds->nfeeds; i++)
	{
		const ShardFeed *feed = &feeds->feeds[i];
		FmgrInfo	key_out;
		Datum		key;
		bool		isnull;
		char	   *text;

		if (!feed->keyed)
		{
			unit_log_add(feed->log_id, digest, NULL);
			continue;
		}
		/* a row without a key is in no key, as in releases */
		if (feed->key == InvalidAttrNumber)
			continue;
		key = heap_getattr(trigdata->tg_trigtuple, feed->key,
						   RelationGetDescr(trigdata->tg_relation), &isnull);
		if (isnull)
			continue;
		fmgr_info(feed->key_out_fn, &key_out);
		text = OutputFunctionCall(&key_out, key);
		unit_log_add(feed->log_id, digest, interned_key(text));
		pfree(text);
	}
}

/*
 * feed_shard_counters(unit_column): an AFTER INSERT row trigger on a
 * shard's table that logs each row of a person for every feed of the table.
 */
PG_FUNCTION_INFO_V1(contcount_feed_shard_counters);
Datum
contcount_feed_shard_counters(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	ShardFeeds *feeds = fcinfo->flinfo->fn_extra;
	FmgrInfo	unit_out;
	bool		isnull;
	Datum		unit;
	uint8		digest[PG_SHA256_DIGEST_LENGTH];

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(trigdata->tg_event) ||
		!TRIGGER_FIRED_BY_INSERT(trigdata->tg_event) || !TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) ||
		trigdata->tg_trigger->tgnargs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("feed_shard_counters must be an AFTER INSERT row trigger with one argument")));
	if (feeds == NULL)
		fcinfo->flinfo->fn_extra = feeds = shard_feeds(trigdata, fcinfo->flinfo->fn_mcxt);
	if (feeds->nfeeds == 0)
		return PointerGetDatum(NULL);
	unit = heap_getattr(trigdata->tg_trigtuple, feeds->unit,
						RelationGetDescr(trigdata->tg_relation), &isnull);
	/* a row without a unit is no one's: never counted, as in releases */
	if (isnull)
		return PointerGetDatum(NULL);
	fmgr_info(feeds->unit_out_fn, &unit_out);
	unit_log_digest(OutputFunctionCall(&unit_out, unit), digest);
	log_row(feeds, trigdata, digest);
	return PointerGetDatum(NULL);
}

/*
 * feed_shard(table_name, unit_column): the shard's DBA lets the table feed
 * the coordinator's counters, by the trigger above (superuser only, as
 * feed_source: its function is not PUBLIC).
 */
PG_FUNCTION_INFO_V1(contcount_feed_shard);
Datum
contcount_feed_shard(PG_FUNCTION_ARGS)
{
	Oid			relid = DatumGetObjectId(arg_required(fcinfo, 0, "table_name"));
	char	   *column = DatumGetCString(DirectFunctionCall1(nameout,
															 arg_required(fcinfo, 1, "unit_column")));
	char	   *table = get_rel_name(relid);
	OwnerScope	scope;

	if (table == NULL || get_rel_relkind(relid) != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("a shard feeds counters from a table")));
	if (get_attnum(relid, column) <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist", column, table)));
	if (OidIsValid(get_trigger_oid(relid, SHARD_FEED_TRIGGER, true)))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("table \"%s\" feeds counters already", table)));
	owner_begin(&scope);
	if (SPI_execute(psprintf("CREATE TRIGGER %s AFTER INSERT ON %s FOR EACH ROW EXECUTE FUNCTION "
							 "contcount_internal.feed_shard_counters(%s)", SHARD_FEED_TRIGGER,
							 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
														table),
							 quote_literal_cstr(column)), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not create the trigger feeding counters on \"%s\"", table);
	owner_end(&scope);
	PG_RETURN_VOID();
}

/*
 * The table feeds counters by its trigger, of this unit column (the one the
 * coordinator bounds by): 55000 otherwise.
 */
static void
require_feeding_trigger(Oid relid, const char *unit_column)
{
	Oid			trigger = get_trigger_oid(relid, SHARD_FEED_TRIGGER, true);
	Relation	rel = table_open(relid, AccessShareLock);
	bool		same = false;

	for (int i = 0; OidIsValid(trigger) && rel->trigdesc && i < rel->trigdesc->numtriggers; i++)
		if (rel->trigdesc->triggers[i].tgoid == trigger)
			same = rel->trigdesc->triggers[i].tgnargs == 1 &&
				strcmp(rel->trigdesc->triggers[i].tgargs[0], unit_column) == 0;
	table_close(rel, AccessShareLock);
	if (!same)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" of the shard does not feed counters by unit column \"%s\"",
						get_rel_name(relid), unit_column),
				 errhint("A superuser on the shard runs contcount.feed_shard('%s', '%s').",
						 get_rel_name(relid), unit_column)));
}

/*
 * What the coordinator asks of a feed: its bounds and, over a dimension,
 * the key column and the keys declared there (a text[]).
 */
typedef struct FeedAsk
{
	const char *name;
	Oid			relid;
	int32		max_rows;
	int64		after;
	char	   *key_column;		/* NULL: plain counts */
	Datum		keys;
	int32		max_groups;
	bool		persons;
} FeedAsk;

/*
 * The feed's row, made if new (its trigger's lookups are forgotten, so
 * that inserts log for it once this commits), and locked until the
 * transaction ends: the seals of a feed come one at a time.  Its id.  A
 * seal under way elsewhere (one whose coordinator died and that has not
 * noticed yet) makes this one fail at once (55P03), not wait: the
 * coordinator's step never hangs on it, and reads this shard later.  A
 * feed keeps the bounds it was made with: a person's rows sealed under
 * one bound are never bounded again under another.
 */
static int64
lock_feed(const FeedAsk *ask)
{
	static SPIPlanPtr make_plan;
	static SPIPlanPtr lock_plan;
	Oid			types[6] = {TEXTOID, OIDOID, INT4OID, TEXTOID, INT4OID, BOOLOID};
	Datum		values[6] = {CStringGetTextDatum(ask->name), ObjectIdGetDatum(ask->relid),
		Int32GetDatum(ask->max_rows),
		ask->key_column ? CStringGetTextDatum(ask->key_column) : (Datum) 0,
	Int32GetDatum(ask->max_groups), BoolGetDatum(ask->persons)};
	char		nulls[6] = {' ', ' ', ' ', ask->key_column ? ' ' : 'n', ask->key_column ? ' ' : 'n', ' '};
	bool		isnull;

	owner_run(&make_plan, "INSERT INTO contcount.shard_feed (name, relid, max_rows, key_column, "
			  "max_groups, persons) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO NOTHING",
			  6, types, values, nulls, SPI_OK_INSERT);
	if (SPI_processed > 0)
		feed_cache_changed();
	owner_run(&lock_plan, "SELECT id FROM contcount.shard_feed WHERE name OPERATOR(pg_catalog.=) $1 "
			  "AND relid OPERATOR(pg_catalog.=) $2 AND max_rows OPERATOR(pg_catalog.=) $3 "
			  "AND key_column IS NOT DISTINCT FROM $4 AND max_groups IS NOT DISTINCT FROM $5 "
			  "AND persons OPERATOR(pg_catalog.=) $6 FOR UPDATE NOWAIT",
			  6, types, values, nulls, SPI_OK_SELECT);
	if (SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("feed \"%s\" of the shard feeds from another table or with other bounds",
						ask->name)));
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * Seal what a keyed feed's log holds now, each person bounded across the
 * declared keys, into its next batch: a row of the keys with rows, their
 * rows as two arrays, and their sum.
 */
static void
seal_keys(int64 feed, const FeedAsk *ask)
{
	static SPIPlanPtr seal_plan;
	Oid			types[3] = {INT8OID, TEXTARRAYOID, INT8ARRAYOID};
	Datum		values[3];
	Datum	   *keys;
	Datum	   *rows;
	int			n = 0;
	bool		isnull;

	unit_log_take_key_bounded(-feed, ask->max_rows, ask->persons, ask->max_groups, ask->keys);
	keys = palloc(sizeof(Datum) * Max(1, SPI_processed));
	rows = palloc(sizeof(Datum) * Max(1, SPI_processed));
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		rows[n] = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2, &isnull);
		if (DatumGetInt64(rows[n]) > 0)
			keys[n++] = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull);
	}
	values[0] = Int64GetDatum(feed);
	values[1] = PointerGetDatum(construct_array(keys, n, TEXTOID, -1, false, TYPALIGN_INT));
	values[2] = PointerGetDatum(construct_array(rows, n, INT8OID, 8, FLOAT8PASSBYVAL,
												TYPALIGN_DOUBLE));
	owner_run(&seal_plan, "INSERT INTO contcount.shard_feed_batch (feed_id, rows, keys, key_rows) "
			  "SELECT $1, (SELECT pg_catalog.sum(r) FROM pg_catalog.unnest($3) r), $2, $3 "
			  "WHERE pg_catalog.cardinality($2) OPERATOR(pg_catalog.>) 0", 3, types, values, NULL,
			  SPI_OK_INSERT);
}

/*
 * Seal what the feed's log holds now into its next batch (none if it
 * counts nothing), then delete the batches up to after, and read those
 * after it: their last id (after if none), their sum and, over a
 * dimension, each key's sum (two arrays), as the function's answer.
 */
static HeapTuple
seal_and_read(int64 feed, const FeedAsk *ask, TupleDesc answer)
{
	static SPIPlanPtr seal_plan;
	static SPIPlanPtr read_plan;
	Oid			types[2] = {INT8OID, INT8OID};
	Datum		values[2] = {Int64GetDatum(feed), Int64GetDatum(ask->after)};
	Datum		values4[4];
	bool		nulls4[4];

	if (ask->key_column != NULL)
		seal_keys(feed, ask);
	else
	{
		values[1] = Int64GetDatum(unit_log_take_bounded(-feed, ask->max_rows));
		owner_run(&seal_plan, "INSERT INTO contcount.shard_feed_batch (feed_id, rows) "
				  "SELECT $1, $2 WHERE $2 OPERATOR(pg_catalog.>) 0", 2, types, values, NULL,
				  SPI_OK_INSERT);
		values[1] = Int64GetDatum(ask->after);
	}
	owner_run(&read_plan, "WITH gone AS (DELETE FROM contcount.shard_feed_batch "
			  "WHERE feed_id OPERATOR(pg_catalog.=) $1 AND id OPERATOR(pg_catalog.<=) $2), "
			  "b AS (SELECT * FROM contcount.shard_feed_batch WHERE feed_id OPERATOR(pg_catalog.=) $1 "
			  "AND id OPERATOR(pg_catalog.>) $2), "
			  "k AS (SELECT u.key, pg_catalog.sum(u.rows)::pg_catalog.int8 AS rows FROM b, "
			  "ROWS FROM (pg_catalog.unnest(b.keys), pg_catalog.unnest(b.key_rows)) u(key, rows) "
			  "GROUP BY u.key) "
			  "SELECT coalesce((SELECT pg_catalog.max(id) FROM b), $2), "
			  "(SELECT coalesce(pg_catalog.sum(rows), 0)::pg_catalog.int8 FROM b), "
			  "(SELECT pg_catalog.array_agg(key ORDER BY key) FROM k), "
			  "(SELECT pg_catalog.array_agg(rows ORDER BY key) FROM k)",
			  2, types, values, NULL, SPI_OK_SELECT);
	for (int c = 0; c < 4; c++)
		values4[c] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, c + 1, &nulls4[c]);
	/* out of SPI's memory, which owner_end frees */
	return SPI_copytuple(heap_form_tuple(answer, values4, nulls4));
}

/*
 * The ask's dimension, from arguments 6 to 9 (key_column, keys,
 * max_groups, persons): none without a key column; with one, the column
 * of the shard's table and the declared keys, none null, and max_groups at
 * least 1.
 */
static void
ask_keys(FunctionCallInfo fcinfo, FeedAsk *ask)
{
	ask->persons = !PG_ARGISNULL(9) && PG_GETARG_BOOL(9);
	ask->max_groups = PG_ARGISNULL(8) ? 0 : PG_GETARG_INT32(8);
	if (PG_ARGISNULL(6))
	{
		if (!PG_ARGISNULL(7) || !PG_ARGISNULL(8))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("keys and max_groups come with a key_column")));
		return;
	}
	ask->key_column = text_to_cstring(PG_GETARG_TEXT_PP(6));
	if (get_attnum(ask->relid, ask->key_column) <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist", ask->key_column,
						get_rel_name(ask->relid))));
	if (PG_ARGISNULL(7) || array_contains_nulls(PG_GETARG_ARRAYTYPE_P(7)))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the declared keys must not be null")));
	if (ARR_NDIM(PG_GETARG_ARRAYTYPE_P(7)) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("the declared keys must be a one-dimensional array")));
	if (ask->max_groups < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_groups must be at least 1")));
	ask->keys = PG_GETARG_DATUM(7);
}

/*
 * shard_feed_take(feed, schema_name, table_name, unit_column, max_rows,
 * after, key_column, keys, max_groups, persons): (the last batch id, the
 * exact bounded rows of the batches after after, and over a dimension each
 * declared key's) of the feed, for the coordinator's step.
 */
PG_FUNCTION_INFO_V1(contcount_shard_feed_take);
Datum
contcount_shard_feed_take(PG_FUNCTION_ARGS)
{
	FeedAsk		ask = {0};
	TupleDesc	answer;
	HeapTuple	tuple;
	OwnerScope	scope;

	ask.name = arg_text(fcinfo, 0, "feed");
	ask.relid = shard_counts_table(arg_text(fcinfo, 1, "schema_name"),
								   arg_text(fcinfo, 2, "table_name"));
	ask.max_rows = DatumGetInt32(arg_required(fcinfo, 4, "max_rows"));
	ask.after = DatumGetInt64(arg_required(fcinfo, 5, "after"));
	if (ask.max_rows < 1 || ask.after < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_rows must be at least 1 and after at least 0")));
	ask_keys(fcinfo, &ask);
	require_feeding_trigger(ask.relid, arg_text(fcinfo, 3, "unit_column"));
	if (get_call_result_type(fcinfo, NULL, &answer) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "shard_feed_take must return a row");
	BlessTupleDesc(answer);
	owner_begin(&scope);
	tuple = seal_and_read(lock_feed(&ask), &ask, answer);
	owner_end(&scope);
	return HeapTupleGetDatum(tuple);
}

/*
 * Delete what the feed's negative id holds in a table of contcount's (each
 * statement its own snapshot, taken after the feed's row was deleted, so
 * that a seal that committed while the delete waited is seen whole).
 */
static void
forget_under(SPIPlanPtr *plan, const char *sql, int64 log_id)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(log_id)};

	owner_run(plan, sql, 1, types, values, NULL, SPI_OK_DELETE);
}

/*
 * contcount.shard_feed_drop(feed): the coordinator dropped the feed's
 * counter.  Deletes the feed's row (its batches go with it: ON DELETE
 * CASCADE; a seal under way is waited for) and everything under its
 * negative id: its persons' bounds and keys, and its log, with the log of
 * any feed dropped before whose rows came in since (a transaction that
 * looked its feeds up before a drop committed logs them at its own
 * commit).  The triggers stop logging for the feed.  True if there was
 * such a feed: a feed that is gone is no error, so that the coordinator
 * asks again when it did not hear the answer.  Answers the roles granted
 * EXECUTE, as shard_feed_take.
 */
PG_FUNCTION_INFO_V1(contcount_shard_feed_drop);
Datum
contcount_shard_feed_drop(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr drop_plan;
	static SPIPlanPtr unit_plan;
	static SPIPlanPtr key_plan;
	static SPIPlanPtr log_plan;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(arg_text(fcinfo, 0, "feed"))};
	OwnerScope	scope;
	bool		dropped;

	owner_begin(&scope);
	owner_run(&drop_plan, "DELETE FROM contcount.shard_feed WHERE name OPERATOR(pg_catalog.=) $1 "
			  "RETURNING id", 1, types, values, NULL, SPI_OK_DELETE_RETURNING);
	dropped = SPI_processed > 0;
	if (dropped)
	{
		bool		isnull;
		int64		log_id = -DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
														  SPI_tuptable->tupdesc, 1, &isnull));

		feed_cache_changed();
		forget_under(&unit_plan, "DELETE FROM contcount.counter_unit "
					 "WHERE counter_id OPERATOR(pg_catalog.=) $1", log_id);
		forget_under(&key_plan, "DELETE FROM contcount.counter_unit_key "
					 "WHERE counter_id OPERATOR(pg_catalog.=) $1", log_id);
	}
	/* the log of every feed gone, this one's included */
	owner_run(&log_plan, "DELETE FROM contcount.counter_unit_log l "
			  "WHERE l.counter_id OPERATOR(pg_catalog.<) 0 AND NOT EXISTS (SELECT 1 "
			  "FROM contcount.shard_feed f "
			  "WHERE f.id OPERATOR(pg_catalog.=) OPERATOR(pg_catalog.-) l.counter_id)",
			  0, NULL, NULL, NULL, SPI_OK_DELETE);
	owner_end(&scope);
	PG_RETURN_BOOL(dropped);
}
