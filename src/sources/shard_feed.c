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
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "common/args.h"
#include "common/owner_spi.h"
#include "sources/feed_cache.h"
#include "sources/shards.h"
#include "sources/unit_log.h"

/* The trigger's name on a shard's table: one a table. */
#define SHARD_FEED_TRIGGER "contcount_shard_feed"

/*
 * The feeds of a table, as the trigger looked them up (kept by feed_cache.c
 * until contcount's counters change, which registering a feed announces).
 */
typedef struct ShardFeeds
{
	AttrNumber	unit;
	Oid			unit_out_fn;
	int			nfeeds;
	int64		log_ids[FLEXIBLE_ARRAY_MEMBER];	/* the feeds' negative ids */
} ShardFeeds;

#define FEEDS_SIZE(n) (offsetof(ShardFeeds, log_ids) + sizeof(int64) * (n))

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
	owner_run(&plan, "SELECT id FROM contcount.shard_feed WHERE relid OPERATOR(pg_catalog.=) $1",
			  1, types, values, NULL, SPI_OK_SELECT);
	feeds = MemoryContextAllocZero(cxt, FEEDS_SIZE(SPI_processed));
	feeds->nfeeds = (int) SPI_processed;
	for (int i = 0; i < feeds->nfeeds; i++)
	{
		bool		isnull;

		feeds->log_ids[i] = -DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i],
														  SPI_tuptable->tupdesc, 1, &isnull));
	}
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
	for (int i = 0; i < feeds->nfeeds; i++)
		unit_log_add(feeds->log_ids[i], digest, NULL);
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
 * The feed's row, made if new (its trigger's lookups are forgotten, so
 * that inserts log for it once this commits), and locked until the
 * transaction ends: the seals of a feed come one at a time.  Its id.  A
 * seal under way elsewhere (one whose coordinator died and that has not
 * noticed yet) makes this one fail at once (55P03), not wait: the
 * coordinator's step never hangs on it, and reads this shard later.
 */
static int64
lock_feed(const char *name, Oid relid, int32 max_rows)
{
	static SPIPlanPtr make_plan;
	static SPIPlanPtr lock_plan;
	Oid			types[3] = {TEXTOID, OIDOID, INT4OID};
	Datum		values[3] = {CStringGetTextDatum(name), ObjectIdGetDatum(relid),
	Int32GetDatum(max_rows)};
	bool		isnull;

	owner_run(&make_plan, "INSERT INTO contcount.shard_feed (name, relid, max_rows) "
			  "VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING", 3, types, values, NULL,
			  SPI_OK_INSERT);
	if (SPI_processed > 0)
		feed_cache_changed();
	owner_run(&lock_plan, "SELECT id FROM contcount.shard_feed WHERE name OPERATOR(pg_catalog.=) $1 "
			  "AND relid OPERATOR(pg_catalog.=) $2 AND max_rows OPERATOR(pg_catalog.=) $3 FOR UPDATE NOWAIT",
			  3, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("feed \"%s\" of the shard feeds from another table or with another max_rows",
						name)));
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * Seal what the feed's log holds now into its next batch (none if it
 * counts nothing), delete the batches up to after, and read those after
 * it: their last id (after if none) and their sum.
 */
static void
seal_and_read(int64 feed, int32 max_rows, int64 after, int64 *upto, int64 *rows)
{
	static SPIPlanPtr seal_plan;
	static SPIPlanPtr read_plan;
	Oid			types[2] = {INT8OID, INT8OID};
	Datum		values[2] = {Int64GetDatum(feed), Int64GetDatum(unit_log_take_bounded(-feed, max_rows))};
	bool		isnull;

	owner_run(&seal_plan, "INSERT INTO contcount.shard_feed_batch (feed_id, rows) "
			  "SELECT $1, $2 WHERE $2 OPERATOR(pg_catalog.>) 0", 2, types, values, NULL,
			  SPI_OK_INSERT);
	values[1] = Int64GetDatum(after);
	owner_run(&read_plan, "WITH gone AS (DELETE FROM contcount.shard_feed_batch "
			  "WHERE feed_id OPERATOR(pg_catalog.=) $1 AND id OPERATOR(pg_catalog.<=) $2) "
			  "SELECT coalesce(pg_catalog.max(id), $2), coalesce(pg_catalog.sum(rows), 0)::pg_catalog.int8 "
			  "FROM contcount.shard_feed_batch WHERE feed_id OPERATOR(pg_catalog.=) $1 "
			  "AND id OPERATOR(pg_catalog.>) $2", 2, types, values, NULL, SPI_OK_SELECT);
	*upto = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	*rows = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
}

/*
 * shard_feed_take(feed, schema_name, table_name, unit_column, max_rows,
 * after): {the last batch id, the exact bounded rows of the batches after
 * after} of the feed, for the coordinator's step.
 */
PG_FUNCTION_INFO_V1(contcount_shard_feed_take);
Datum
contcount_shard_feed_take(PG_FUNCTION_ARGS)
{
	char	   *feed = arg_text(fcinfo, 0, "feed");
	Oid			relid = shard_counts_table(arg_text(fcinfo, 1, "schema_name"),
										   arg_text(fcinfo, 2, "table_name"));
	int32		max_rows = DatumGetInt32(arg_required(fcinfo, 4, "max_rows"));
	int64		after = DatumGetInt64(arg_required(fcinfo, 5, "after"));
	Datum		answer[2];
	int64		upto;
	int64		rows;
	OwnerScope	scope;

	if (max_rows < 1 || after < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_rows must be at least 1 and after at least 0")));
	require_feeding_trigger(relid, arg_text(fcinfo, 3, "unit_column"));
	owner_begin(&scope);
	seal_and_read(lock_feed(feed, relid, max_rows), max_rows, after, &upto, &rows);
	owner_end(&scope);
	answer[0] = Int64GetDatum(upto);
	answer[1] = Int64GetDatum(rows);
	PG_RETURN_ARRAYTYPE_P(construct_array(answer, 2, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}
