/*
 * source_counter.c
 *		Counters over protected sources: each unit's inserts counted up to
 *		the source's max_rows, for as long as the counter runs.
 *
 * create_counter(..., source => s) calibrates the counter's noise for
 * max_rows (a unit adds at most that much to the whole stream) and counts
 * through one row trigger on the source's table that feeds every counter
 * of the source: contcount_internal.feed_source_counters(source), created by the
 * DBA's protect_table (or feed_source) and dropped by drop_source.  An
 * analyst's create_counter and drop_counter then only write contcount's
 * own tables: they take no lock on the DBA's table, and an analyst who
 * leaves such a transaction open blocks no insert (a trigger created or
 * dropped per counter held the table's ShareRowExclusiveLock until the
 * analyst's transaction ended).  Nor does drop_counter delete the units of
 * the counter (an insert whose statement still feeds it would wait on
 * them): the step worker sweeps the units of dropped counters.
 *
 * The trigger looks the source's running counters up (one query as the
 * extension's owner, on what is committed now plus the inserting
 * transaction's changes), keeps the answer in the backend until they or the
 * source change (feed_cache.c: a statement's first row then costs no query)
 * and does nothing for a row when there are none.  For each counter it adds
 * one to the unit's entry of the transaction's unit log (unit_log.c: a
 * digest of the unit and a probe of a backend hash table a row, no query),
 * appended to contcount.counter_unit_log just before commit, with the
 * insert, in rows too small to be toasted; the step that takes the log bounds
 * each unit by max_rows against its row of contcount.counter_unit, so an
 * insert locks no row of contcount's and concurrent inserts of one unit
 * never wait on each other, yet count at most max_rows between them
 * (test/specs/source_counter.spec).  A database not yet updated to 0.6
 * bounds each row at once, by an upsert of the unit's row that stops at
 * max_rows, counted only if it did.
 *
 * Why an AFTER row trigger: a BEFORE one sees rows that ON CONFLICT DO
 * NOTHING (or DO UPDATE) then skips without an error, and would count
 * them; a statement trigger with a transition table copies every row into
 * a tuplestore where the row trigger queues and refetches it, which
 * bench/inserts measures about even, and the per-row work is the same.
 *
 * A unit is kept by the SHA-256 digest of its text form (which the source
 * checks is one a value): 32 bytes whatever the unit, so that no unit,
 * however long, can make the application's insert fail on counter_unit's
 * index.  Why a collision cannot hurt: two units whose digests collide
 * share one bound of max_rows between them.  Every prefix of the counted
 * stream (min(max_rows, rows of the pair so far)) still moves by at most
 * max_rows when one of them is removed, and the stream's steps by at most
 * 2 max_rows in L1, for that pair only; and no such pair is expected to
 * exist: among 2^32 units the chance of any collision is about 2^-193, and
 * no one knows how to make one on purpose.  A database not yet updated to
 * 0.6 keeps units by their text form.
 *
 * Rows inserted through a coordinator into a partition that is a shard
 * (shards.c) are not counted here: they arrive on the shard, whose own
 * trigger counts them for this counter (shard_feed.c), so they count once.
 *
 * Over a source with per-block budgets, a row is counted only if its time
 * lies in the blocks the counter paid (see FeedCounter), checked before
 * the row is logged, so that an uncounted row spends nothing of its unit's
 * bound.
 *
 * Only the extension's owner may create these triggers: their functions
 * are not PUBLIC, and PostgreSQL checks EXECUTE on a trigger's function
 * when the trigger is created.  A database not yet updated to 0.6 still
 * has a trigger per counter, contcount.count_source_rows(counter), fed
 * the same way; the update replaces them with one trigger a source.
 *
 * IDENTIFICATION
 *	  src/sources/source_counter.c
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "common/args.h"
#include "common/owner_spi.h"
#include "sources/counter_delta.h"
#include "sources/feed_cache.h"
#include "sources/shards.h"
#include "sources/source.h"
#include "sources/unit_log.h"

/* The SHA-256 digest of len bytes, into out (PG_SHA256_DIGEST_LENGTH bytes). */
static void
sha256(const char *bytes, size_t len, uint8 *out)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);

	if (pg_cryptohash_init(ctx) < 0 || pg_cryptohash_update(ctx, (const uint8 *) bytes, len) < 0 ||
		pg_cryptohash_final(ctx, out, PG_SHA256_DIGEST_LENGTH) < 0)
		elog(ERROR, "could not compute a SHA-256 digest: %s", pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);
}

/*
 * The name of a source's feeding trigger: one a source on its table, and no
 * longer than an identifier may be, whatever the source's name.
 */
static char *
feed_trigger_name(const char *source)
{
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	char		hex[17];

	sha256(source, strlen(source), digest);
	for (int i = 0; i < 8; i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
	return psprintf("contcount_source_%s", hex);
}

bool
source_feed_installed(void)
{
	return contcount_has_column("counter_unit", "unit_digest");
}

bool
counter_sources_installed(void)
{
	return contcount_has_column("counter", "source");
}

/* The table, quoted and schema-qualified, or NULL if it is gone. */
static char *
table_sql(Oid relid)
{
	char	   *relname = get_rel_name(relid);

	return relname ? quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)), relname) :
		NULL;
}

/*
 * The trigger function, schema-qualified.  It lives in contcount_internal,
 * but the 0.6 update creates the triggers of existing sources before it
 * creates that schema and moves the function there.
 */
static const char *
feed_function_sql(void)
{
	return OidIsValid(get_namespace_oid("contcount_internal", true)) ?
		"contcount_internal.feed_source_counters" : "contcount.feed_source_counters";
}

/* Can a trigger count the relation's inserts: a table, not a view? */
static bool
has_own_rows(Oid relid)
{
	char		kind = get_rel_relkind(relid);

	return kind == RELKIND_RELATION || kind == RELKIND_PARTITIONED_TABLE;
}

void
source_counter_feed(const char *source, Oid relid)
{
	char	   *trigger = feed_trigger_name(source);
	char	   *table = table_sql(relid);
	OwnerScope	scope;

	if (table == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the table of protected source \"%s\" is gone", source)));
	/* a view has no row of its own to count: create_counter refuses it */
	if (!source_feed_installed() || !has_own_rows(relid) ||
		OidIsValid(get_trigger_oid(relid, trigger, true)))
		return;
	owner_begin(&scope);
	if (SPI_execute(psprintf("CREATE TRIGGER %s AFTER INSERT ON %s FOR EACH ROW "
							 "EXECUTE FUNCTION %s(%s)",
							 quote_identifier(trigger), table, feed_function_sql(),
							 quote_literal_cstr(source)),
					false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not create the trigger of protected source \"%s\"", source);
	owner_end(&scope);
}

void
source_counter_unfeed(const char *source, Oid relid)
{
	char	   *trigger = feed_trigger_name(source);
	char	   *table = table_sql(relid);
	OwnerScope	scope;

	if (table == NULL || !OidIsValid(get_trigger_oid(relid, trigger, true)))
		return;
	owner_begin(&scope);
	if (SPI_execute(psprintf("DROP TRIGGER %s ON %s", quote_identifier(trigger), table),
					false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not drop the trigger of protected source \"%s\"", source);
	owner_end(&scope);
}

void
source_counter_require_feed(const char *source, Oid relid)
{
	if (!source_feed_installed())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("counters over protected sources need contcount 0.6 in this database"),
				 errhint("Run ALTER EXTENSION contcount UPDATE.")));
	if (!has_own_rows(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a counter over protected source \"%s\" needs a table: it counts the table's inserts",
						source)));
	if (!OidIsValid(get_trigger_oid(relid, feed_trigger_name(source), true)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the table of protected source \"%s\" has no trigger feeding its counters", source),
				 errhint("A superuser creates it with contcount.feed_source('%s').", source)));
}

/*
 * A running counter the trigger feeds.  With blocks, the rows it counts are
 * those timed in [from, until): from the counter's first block, or the
 * retention if later, to the end of the blocks the counter had paid, as
 * committed, when the statement began (the worker records them only once
 * their charge is durable: a row is never counted before its block is
 * paid).  Two comparisons a row, no query.
 */
typedef struct FeedCounter
{
	int64		counter;
	bool		blocks;
	TimestampTz from;			/* as looked up: the first block's start */
	TimestampTz until;
	int64		retention;		/* microseconds, with blocks */
	/* over a dimension: its column here, its name and declaration's version */
	bool		keyed;
	AttrNumber	dimension;		/* InvalidAttrNumber: gone, no row counts */
	Oid			key_out_fn;
	NameData	dimension_name;
	char		version[64];
	/* set up for each statement: the output function and the sorted keys */
	FmgrInfo	key_out;
	int			nkeys;
	char	  **keys;
} FeedCounter;

/*
 * What the trigger needs, looked up once and kept by the backend until
 * contcount's counters or sources change (feed_cache.c), then copied for
 * each statement: the running counters of the source, and the source's
 * columns in the table the trigger fired on.  One block of memory, so that
 * the cache keeps a copy.
 */
typedef struct SourceFeed
{
	Oid			source_relid;
	AttrNumber	unit;			/* in the table the trigger fired on */
	int32		max_rows;
	Oid			unit_out_fn;
	FmgrInfo	unit_out;		/* set up for each statement */
	bool		logged;			/* counted through the unit log (0.6 on) */
	bool		on_shard;		/* a shard's partition: the shard counts its rows */
	AttrNumber	time;			/* InvalidAttrNumber: no counter has blocks */
	Oid			time_type;
	int			ncounters;
	FeedCounter counters[FLEXIBLE_ARRAY_MEMBER];
} SourceFeed;

#define FEED_SIZE(ncounters) (offsetof(SourceFeed, counters) + sizeof(FeedCounter) * (ncounters))

/*
 * The counters of a source (by_source) or the one counter named $1, with
 * (DIMENSION_COLUMNS, from 0.6) each one's dimension, its column and the
 * version of its declaration.
 */
#define FEED_SQL(columns, joins, where) \
	"SELECT c.id, c.blocks_from, c.blocks_until, s.retention, a.attname, s.max_rows, t.attname, " \
	"s.relid" columns " FROM contcount.counter c " \
	"JOIN contcount.source s ON s.name OPERATOR(pg_catalog.=) c.source " \
	"JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) s.relid " \
	"AND a.attnum OPERATOR(pg_catalog.=) s.unit_attnum " \
	"LEFT JOIN pg_catalog.pg_attribute t ON t.attrelid OPERATOR(pg_catalog.=) s.relid " \
	"AND t.attnum OPERATOR(pg_catalog.=) s.time_attnum AND NOT t.attisdropped " \
	joins "WHERE NOT c.finished AND " where
#define DIMENSION_COLUMNS ", c.dimension, da.attname, d.xmin::pg_catalog.text " \
	"OPERATOR(pg_catalog.||) d.ctid::pg_catalog.text OPERATOR(pg_catalog.||) " \
	"pg_catalog.pg_column_size(d.keys)::pg_catalog.text"
#define DIMENSION_JOINS \
	"LEFT JOIN contcount.source_dimension d ON d.source OPERATOR(pg_catalog.=) c.source " \
	"AND d.name OPERATOR(pg_catalog.=) c.dimension " \
	"LEFT JOIN pg_catalog.pg_attribute da ON da.attrelid OPERATOR(pg_catalog.=) s.relid " \
	"AND da.attnum OPERATOR(pg_catalog.=) d.attnum AND NOT da.attisdropped "

/* A column of the source in the table the trigger fired on, by name. */
static AttrNumber
target_column(Relation rel, const char *column, const char *what)
{
	AttrNumber	attnum = column ? get_attnum(RelationGetRelid(rel), column) : InvalidAttrNumber;

	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("a column of %s is gone", what)));
	return attnum;
}

/* Order C strings by strcmp, for qsort and bsearch. */
static int
by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * The declared keys of a counter's dimension, sorted, kept by the backend
 * while the dimension's row is the version it was read at (its xmin, ctid
 * and stored size, read without detoasting the keys: a declaration changed,
 * even in this transaction, is a new row version), so that they are read
 * and sorted once, not once a statement (12 ms a statement for 10^5 keys).
 * Each counter's keys live in a memory context of their own; keys read
 * again get a new one, and the old goes with the transaction, since a
 * statement under way may still hold them, and the transaction's unit log
 * names each row's key by its text here (unit_log_add).
 */
typedef struct KeyCache
{
	int64		counter;
	char		version[64];
	int			nkeys;
	char	  **keys;
	MemoryContext cxt;
} KeyCache;

static HTAB *key_cache = NULL;

/* Read and sort the keys of the entry's counter.  Owner scope. */
static void
read_keys(KeyCache *entry, const char *source, const char *dimension)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(source), CStringGetTextDatum(dimension)};
	Datum	   *elems;
	bool		isnull;
	MemoryContext old;

	entry->version[0] = '\0';	/* an error below leaves it to be read again */
	entry->nkeys = 0;
	if (entry->cxt != NULL)
		MemoryContextSetParent(entry->cxt, TopTransactionContext);
	entry->cxt = AllocSetContextCreate(TopMemoryContext, "contcount dimension keys",
									   ALLOCSET_SMALL_SIZES);
	owner_run(&plan, "SELECT keys FROM contcount.source_dimension "
			  "WHERE source OPERATOR(pg_catalog.=) $1 AND name OPERATOR(pg_catalog.=) $2",
			  2, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return;
	old = MemoryContextSwitchTo(entry->cxt);
	deconstruct_array(DatumGetArrayTypeP(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
													   1, &isnull)),
					  TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &entry->nkeys);
	entry->keys = palloc(sizeof(char *) * Max(1, entry->nkeys));
	for (int k = 0; k < entry->nkeys; k++)
		entry->keys[k] = TextDatumGetCString(elems[k]);
	pfree(elems);
	MemoryContextSwitchTo(old);
	qsort(entry->keys, entry->nkeys, sizeof(char *), by_text);
}

/*
 * The key cache's entry of the counter, read (as the extension's owner)
 * if it is not of the version the feed was looked up at.
 */
static KeyCache *
cached_keys(const FeedCounter *counter, const char *source)
{
	KeyCache   *entry;
	bool		found;

	if (key_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(int64);
		ctl.entrysize = sizeof(KeyCache);
		key_cache = hash_create("contcount dimension keys", 16, &ctl, HASH_ELEM | HASH_BLOBS);
	}
	entry = hash_search(key_cache, &counter->counter, HASH_ENTER, &found);
	if (!found)
	{
		entry->version[0] = '\0';
		entry->cxt = NULL;
	}
	if (strcmp(entry->version, counter->version) != 0)
	{
		OwnerScope	scope;

		owner_begin(&scope);
		read_keys(entry, source, NameStr(counter->dimension_name));
		owner_end(&scope);
		strlcpy(entry->version, counter->version, sizeof(entry->version));
	}
	return entry;
}

/*
 * The dimension of counter i of the feed, from columns 9 to 11 of its row
 * (the counter's dimension, its column's name and the version of its
 * declaration): the column here, by name.  A dimension or column since
 * dropped leaves no row a key: the counter counts none, and the insert goes
 * through.  SPI's tuple.
 */
static void
feed_dimension(FeedCounter *counter, Relation rel, HeapTuple tuple, TupleDesc desc)
{
	bool		isnull;
	bool		varlena;
	char	   *column;
	char	   *dimension = SPI_getvalue(tuple, desc, 9);
	char	   *version = SPI_getvalue(tuple, desc, 11);

	counter->keyed = dimension != NULL;
	column = SPI_getvalue(tuple, desc, 10);
	(void) SPI_getbinval(tuple, desc, 11, &isnull);
	if (dimension == NULL || column == NULL || isnull ||
		(counter->dimension = get_attnum(RelationGetRelid(rel), column)) == InvalidAttrNumber)
		return;
	getTypeOutputInfo(TupleDescAttr(RelationGetDescr(rel), counter->dimension - 1)->atttypid,
					  &counter->key_out_fn, &varlena);
	namestrcpy(&counter->dimension_name, dimension);
	strlcpy(counter->version, version, sizeof(counter->version));
}

/* Counter i of the feed, from row i of the lookup.  SPI's tuple, owner scope. */
static void
feed_counter(SourceFeed *feed, int i, HeapTuple tuple, TupleDesc desc)
{
	FeedCounter *counter = &feed->counters[i];
	bool		isnull;

	counter->counter = DatumGetInt64(SPI_getbinval(tuple, desc, 1, &isnull));
	counter->from = DatumGetTimestampTz(SPI_getbinval(tuple, desc, 2, &isnull));
	counter->blocks = !isnull;
	if (counter->blocks)
	{
		Datum		retention = SPI_getbinval(tuple, desc, 4, &isnull);

		counter->until = DatumGetTimestampTz(SPI_getbinval(tuple, desc, 3, &isnull));
		counter->retention = interval_usecs(DatumGetIntervalP(retention), "retention");
	}
}

/*
 * The source's columns in the table the trigger fired on (a partition
 * numbers its columns its own way: by name), from the lookup's first row.
 */
static void
feed_columns(SourceFeed *feed, Relation rel, HeapTuple tuple, TupleDesc desc, const char *what)
{
	bool		isnull;
	bool		blocks = false;
	bool		varlena;

	feed->unit = target_column(rel, SPI_getvalue(tuple, desc, 5), what);
	feed->max_rows = DatumGetInt32(SPI_getbinval(tuple, desc, 6, &isnull));
	feed->source_relid = DatumGetObjectId(SPI_getbinval(tuple, desc, 8, &isnull));
	getTypeOutputInfo(TupleDescAttr(RelationGetDescr(rel), feed->unit - 1)->atttypid,
					  &feed->unit_out_fn, &varlena);
	for (int i = 0; i < feed->ncounters; i++)
		blocks |= feed->counters[i].blocks;
	if (!blocks)
		return;
	feed->time = target_column(rel, SPI_getvalue(tuple, desc, 7), what);
	feed->time_type = TupleDescAttr(RelationGetDescr(rel), feed->time - 1)->atttypid;
	if (feed->time_type != TIMESTAMPTZOID && feed->time_type != TIMESTAMPOID &&
		feed->time_type != DATEOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the time column of %s must be a timestamptz, a timestamp or a date", what)));
}

/*
 * Is the table the trigger fired on a shard's partition of the source's
 * table (shards.c), from the lookup's first row?  Its rows, inserted
 * through the coordinator, arrive on the shard, whose own trigger counts
 * them for the coordinator's counters (shard_feed.c): counted here too,
 * they would count twice.
 */
static bool
on_shard(const SourceFeed *feed, Relation rel, HeapTuple tuple, TupleDesc desc)
{
	Oid			relid = RelationGetRelid(rel);

	return relid != feed->source_relid && shards_is_shard(relid) &&
		list_member_oid(shards_partitions(feed->source_relid,
										  get_attnum(feed->source_relid, SPI_getvalue(tuple, desc, 5))),
						relid);
}

/*
 * Look the feed up: one query as the extension's owner, on what is
 * committed now plus the inserting transaction's changes.
 */
static SourceFeed *
look_up_feed(MemoryContext cxt, TriggerData *trigdata, bool by_source)
{
	static SPIPlanPtr plans[2][2];
	bool		dimensions = by_source && contcount_has_column("counter", "dimension");
	const char *name = trigdata->tg_trigger->tgargs[0];
	const char *what = by_source ? psprintf("protected source \"%s\"", name) :
		psprintf("the source of counter \"%s\"", name);
	SourceFeed *feed;
	OwnerScope	scope;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	int			ncounters;

	owner_begin(&scope);
	owner_run(&plans[by_source][dimensions],
			  dimensions ? FEED_SQL(DIMENSION_COLUMNS, DIMENSION_JOINS, "c.source OPERATOR(pg_catalog.=) $1") :
			  by_source ? FEED_SQL("", "", "c.source OPERATOR(pg_catalog.=) $1") :
			  FEED_SQL("", "", "c.name OPERATOR(pg_catalog.=) $1"),
			  1, types, values, NULL, SPI_OK_SELECT);
	ncounters = (int) SPI_processed;
	feed = MemoryContextAllocZero(cxt, FEED_SIZE(ncounters));
	feed->ncounters = ncounters;
	for (int i = 0; i < feed->ncounters; i++)
	{
		feed_counter(feed, i, SPI_tuptable->vals[i], SPI_tuptable->tupdesc);
		if (dimensions)
			feed_dimension(&feed->counters[i], trigdata->tg_relation, SPI_tuptable->vals[i],
						   SPI_tuptable->tupdesc);
	}
	if (feed->ncounters > 0)
	{
		feed_columns(feed, trigdata->tg_relation, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, what);
		feed->on_shard = on_shard(feed, trigdata->tg_relation, SPI_tuptable->vals[0],
								  SPI_tuptable->tupdesc);
	}
	feed->logged = unit_log_installed();
	owner_end(&scope);
	return feed;
}

/*
 * The feed of this statement: kept by the backend, or looked up and kept,
 * with what depends on the moment (the retention's first instant) and the
 * unit's output function set up in the statement's memory.
 */
static SourceFeed *
source_feed(FunctionCallInfo fcinfo, TriggerData *trigdata, bool by_source)
{
	const char *name = trigdata->tg_trigger->tgargs[0];
	Oid			relid = RelationGetRelid(trigdata->tg_relation);
	MemoryContext cxt = fcinfo->flinfo->fn_mcxt;
	SourceFeed *feed = feed_cache_get(name, by_source, relid, cxt);
	TimestampTz now;

	if (feed == NULL)
	{
		feed = look_up_feed(cxt, trigdata, by_source);
		feed_cache_put(name, by_source, relid, feed->source_relid, feed, FEED_SIZE(feed->ncounters));
	}
	if (feed->ncounters == 0)
		return feed;
	/* rows older than the retention are never read */
	now = GetCurrentTimestamp();
	for (int i = 0; i < feed->ncounters; i++)
	{
		FeedCounter *counter = &feed->counters[i];

		if (counter->blocks)
			counter->from = Max(counter->from, now - counter->retention);
		if (counter->keyed && counter->dimension != InvalidAttrNumber)
		{
			KeyCache   *keys = cached_keys(counter, name);

			counter->nkeys = keys->nkeys;
			counter->keys = keys->keys;
			fmgr_info_cxt(counter->key_out_fn, &counter->key_out, cxt);
		}
	}
	fmgr_info_cxt(feed->unit_out_fn, &feed->unit_out, cxt);
	return feed;
}

/*
 * The row's time in UTC, as releases cast it: a timestamp is read as UTC, a
 * date as its midnight UTC; false for a row without a time, which is in no
 * block.
 */
static bool
row_time(const SourceFeed *feed, TriggerData *trigdata, TimestampTz *time)
{
	bool		isnull;
	Datum		value = heap_getattr(trigdata->tg_trigtuple, feed->time,
									 RelationGetDescr(trigdata->tg_relation), &isnull);

	if (isnull)
		return false;
	if (feed->time_type == DATEOID)
	{
		DateADT		date = DatumGetDateADT(value);

		if (DATE_NOT_FINITE(date))
			return false;
		*time = (TimestampTz) (date) * USECS_PER_DAY;
	}
	else
		*time = DatumGetTimestampTz(value);
	return true;
}

/* The unit's digest: the SHA-256 digest of its text form. */
static void
unit_digest(SourceFeed *feed, Datum unit, uint8 *digest)
{
	char	   *text = OutputFunctionCall(&feed->unit_out, unit);

	unit_log_digest(text, digest);
	pfree(text);
}

/* May the counter count a row at time (timed: the row has one)? */
static bool
in_blocks(const FeedCounter *counter, bool timed, TimestampTz time)
{
	return !counter->blocks || (timed && time >= counter->from && time < counter->until);
}

#define UPSERT_SQL \
	"INSERT INTO contcount.counter_unit AS u (counter_id, unit, rows) " \
	"VALUES ($1, $2, 1) ON CONFLICT (counter_id, unit) " \
	"DO UPDATE SET rows = u.rows OPERATOR(pg_catalog.+) 1 " \
	"WHERE u.rows OPERATOR(pg_catalog.<) $3"

/*
 * Before 0.6: count the row within its unit's bound at once, by an upsert
 * of the unit's text form in counter_unit, for each counter that may.
 */
static void
upsert_row(SourceFeed *feed, Datum unit, bool timed, TimestampTz time)
{
	static SPIPlanPtr plan;
	Oid			types[3] = {INT8OID, TEXTOID, INT4OID};
	Datum		values[3];
	OwnerScope	scope;

	values[1] = CStringGetTextDatum(OutputFunctionCall(&feed->unit_out, unit));
	values[2] = Int32GetDatum(feed->max_rows);
	owner_begin(&scope);
	for (int i = 0; i < feed->ncounters; i++)
	{
		if (!in_blocks(&feed->counters[i], timed, time))
			continue;
		values[0] = Int64GetDatum(feed->counters[i].counter);
		owner_run(&plan, UPSERT_SQL, 3, types, values, NULL, SPI_OK_INSERT);
		if (SPI_processed > 0)
			counter_count_rows(feed->counters[i].counter, 1);
	}
	owner_end(&scope);
}

/*
 * The row's key of the counter's dimension, as declared, or NULL if the row
 * has none or one not declared: left out, as releases leave it out.
 */
static const char *
row_key(FeedCounter *counter, TriggerData *trigdata)
{
	bool		isnull;
	Datum		value;
	char	   *text;
	char	  **found;

	if (counter->dimension == InvalidAttrNumber)
		return NULL;
	value = heap_getattr(trigdata->tg_trigtuple, counter->dimension,
						 RelationGetDescr(trigdata->tg_relation), &isnull);
	if (isnull)
		return NULL;
	text = OutputFunctionCall(&counter->key_out, value);
	found = bsearch(&text, counter->keys, counter->nkeys, sizeof(char *), by_text);
	pfree(text);
	return found ? *found : NULL;
}

/*
 * Count the row for every counter whose blocks hold it: logged for the
 * step, which bounds each unit (unit_log.c), or, before 0.6, upserted.
 */
static void
feed_row(SourceFeed *feed, TriggerData *trigdata)
{
	bool		isnull;
	Datum		unit = heap_getattr(trigdata->tg_trigtuple, feed->unit,
									RelationGetDescr(trigdata->tg_relation), &isnull);
	TimestampTz time = 0;
	bool		timed;
	uint8		digest[PG_SHA256_DIGEST_LENGTH];

	/* a row without a unit is no one's: never counted, as in releases */
	if (isnull)
		return;
	timed = feed->time != InvalidAttrNumber && row_time(feed, trigdata, &time);
	if (!feed->logged)
	{
		upsert_row(feed, unit, timed, time);
		return;
	}
	unit_digest(feed, unit, digest);
	for (int i = 0; i < feed->ncounters; i++)
	{
		const char *key = NULL;

		if (!in_blocks(&feed->counters[i], timed, time) ||
			(feed->counters[i].keyed && (key = row_key(&feed->counters[i], trigdata)) == NULL))
			continue;
		unit_log_add(feed->counters[i].counter, digest, key);
	}
}

/*
 * An AFTER INSERT row trigger naming the source (by_source) or, before 0.6,
 * the counter it feeds: count the row for the running counters.
 */
static Datum
feed_trigger(FunctionCallInfo fcinfo, bool by_source, const char *function)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	SourceFeed *feed = fcinfo->flinfo->fn_extra;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(trigdata->tg_event) ||
		!TRIGGER_FIRED_BY_INSERT(trigdata->tg_event) || !TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) ||
		trigdata->tg_trigger->tgnargs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s must be an AFTER INSERT row trigger with one argument", function)));
	if (feed == NULL)
		fcinfo->flinfo->fn_extra = feed = source_feed(fcinfo, trigdata, by_source);
	if (feed->ncounters > 0 && !feed->on_shard)
		feed_row(feed, trigdata);
	return PointerGetDatum(NULL);
}

PG_FUNCTION_INFO_V1(contcount_feed_source_counters);
Datum
contcount_feed_source_counters(PG_FUNCTION_ARGS)
{
	return feed_trigger(fcinfo, true, "feed_source_counters");
}

/* The trigger of one counter, in a database not yet updated to 0.6. */
PG_FUNCTION_INFO_V1(contcount_count_source_rows);
Datum
contcount_count_source_rows(PG_FUNCTION_ARGS)
{
	return feed_trigger(fcinfo, false, "count_source_rows");
}
