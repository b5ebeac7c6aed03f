/*
 * source_counter.c
 *		Counters over protected sources: each unit's inserts counted up to
 *		the source's max_rows, for as long as the counter runs.
 *
 * create_counter(..., source => s) calibrates the counter's noise for
 * max_rows (a unit adds at most that much to the whole stream) and makes it
 * count through a row trigger on the source's table, created here as the
 * extension's owner.  The trigger, contcount.count_source_rows(counter),
 * adds one to the unit's row in contcount.counter_unit with an upsert that
 * stops at max_rows, and counts the row only if it did: the unit's count is
 * written in the inserting (sub)transaction, like the counter's own pending
 * counts, so both are committed, or lost, together with the insert; and
 * the upsert locks the unit's row, so concurrent inserts of one unit count
 * at most max_rows between them, whatever their isolation levels (the upsert
 * works on the unit's latest row; test/specs/source_counter.spec).  Units are kept by their text form, which the source
 * checks is one a value.
 *
 * Over a source with per-block budgets, a row is counted only if its time
 * lies in the blocks the counter paid (see SourceTarget), checked before
 * the upsert, so that an uncounted row spends nothing of its unit's bound.
 *
 * Only the extension's owner may create such a trigger: count_source_rows
 * is not PUBLIC, and PostgreSQL checks EXECUTE on a trigger's function when
 * the trigger is created.
 *
 * IDENTIFICATION
 *	  src/sources/source_counter.c
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "common/args.h"
#include "common/owner_spi.h"
#include "counters/counter.h"
#include "sources/source.h"

/* The trigger's name on the source's table: one a counter. */
static char *
trigger_name(int64 counter)
{
	return psprintf("contcount_counter_" INT64_FORMAT, counter);
}

void
source_counter_attach(int64 counter, const char *counter_name, const SourceBounds *bounds)
{
	OwnerScope	scope;
	char	   *table = quote_qualified_identifier(get_namespace_name(get_rel_namespace(bounds->relid)),
												   get_rel_name(bounds->relid));

	owner_begin(&scope);
	if (SPI_execute(psprintf("CREATE TRIGGER %s AFTER INSERT ON %s FOR EACH ROW "
							 "EXECUTE FUNCTION contcount.count_source_rows(%s)",
							 quote_identifier(trigger_name(counter)), table,
							 quote_literal_cstr(counter_name)), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not create the trigger of counter \"%s\"", counter_name);
	owner_end(&scope);
}

void
source_counter_detach(int64 counter, const char *source)
{
	static SPIPlanPtr plan = NULL;
	OwnerScope	scope;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(source)};

	owner_begin(&scope);
	owner_run(&plan, "SELECT relid FROM contcount.source WHERE name OPERATOR(pg_catalog.=) $1",
			  1, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed > 0)
	{
		bool		isnull;
		Oid			relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0],
														   SPI_tuptable->tupdesc, 1, &isnull));
		char	   *relname = get_rel_name(relid);

		if (relname != NULL &&
			SPI_execute(psprintf("DROP TRIGGER IF EXISTS %s ON %s", quote_identifier(trigger_name(counter)),
								 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
															relname)),
						false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not drop the trigger of counter " INT64_FORMAT, counter);
	}
	owner_end(&scope);
}

/*
 * What the trigger needs, looked up once per query.  With blocks, the rows
 * it counts are those timed in [from, until): from the counter's first
 * block, or the retention if later, to the end of the blocks the counter
 * had paid, as committed, when the query began (the worker records them
 * only once their charge is durable: a row is never counted before its
 * block is paid).  Two comparisons a row, no query.
 */
typedef struct SourceTarget
{
	int64		counter;
	bool		finished;
	AttrNumber	unit;			/* in the table the trigger fired on */
	int32		max_rows;
	FmgrInfo	unit_out;
	bool		blocks;
	AttrNumber	time;			/* in the table the trigger fired on */
	Oid			time_type;
	TimestampTz from;
	TimestampTz until;
} SourceTarget;

/* A column of the source in the table the trigger fired on, by name. */
static AttrNumber
target_column(Relation rel, const char *column, const char *counter)
{
	AttrNumber	attnum = column ? get_attnum(RelationGetRelid(rel), column) : InvalidAttrNumber;

	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("a column of the source of counter \"%s\" is gone", counter)));
	return attnum;
}

static SourceTarget *
source_target(FunctionCallInfo fcinfo, TriggerData *trigdata)
{
	static SPIPlanPtr plan = NULL;
	const char *name = trigdata->tg_trigger->tgargs[0];
	Relation	rel = trigdata->tg_relation;
	SourceTarget *target;
	OwnerScope	scope;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	HeapTuple	tuple;
	TupleDesc	desc;
	bool		isnull;
	char	   *unit_name;
	Oid			out;
	bool		varlena;

	target = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(SourceTarget));
	owner_begin(&scope);
	owner_run(&plan, "SELECT c.id, c.finished, a.attname, s.max_rows, c.blocks_from, c.blocks_until, "
			  "s.retention, t.attname FROM contcount.counter c "
			  "JOIN contcount.source s ON s.name OPERATOR(pg_catalog.=) c.source "
			  "JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) s.relid "
			  "AND a.attnum OPERATOR(pg_catalog.=) s.unit_attnum "
			  "LEFT JOIN pg_catalog.pg_attribute t ON t.attrelid OPERATOR(pg_catalog.=) s.relid "
			  "AND t.attnum OPERATOR(pg_catalog.=) s.time_attnum AND NOT t.attisdropped "
			  "WHERE c.name OPERATOR(pg_catalog.=) $1",
			  1, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("counter \"%s\" counts no protected source", name)));
	tuple = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	target->counter = DatumGetInt64(SPI_getbinval(tuple, desc, 1, &isnull));
	target->finished = DatumGetBool(SPI_getbinval(tuple, desc, 2, &isnull));
	unit_name = SPI_getvalue(tuple, desc, 3);
	target->max_rows = DatumGetInt32(SPI_getbinval(tuple, desc, 4, &isnull));
	/* a partition numbers its columns its own way: by name */
	target->unit = target_column(rel, unit_name, name);
	target->from = DatumGetTimestampTz(SPI_getbinval(tuple, desc, 5, &isnull));
	target->blocks = !isnull;
	if (target->blocks)
	{
		Datum		retention = SPI_getbinval(tuple, desc, 7, &isnull);

		target->until = DatumGetTimestampTz(SPI_getbinval(tuple, desc, 6, &isnull));
		/* rows older than the retention are never read */
		target->from = Max(target->from, GetCurrentTimestamp() -
						   interval_usecs(DatumGetIntervalP(retention), "retention"));
		target->time = target_column(rel, SPI_getvalue(tuple, desc, 8), name);
		target->time_type = TupleDescAttr(RelationGetDescr(rel), target->time - 1)->atttypid;
		if (target->time_type != TIMESTAMPTZOID && target->time_type != TIMESTAMPOID &&
			target->time_type != DATEOID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("the time column of the source of counter \"%s\" must be a timestamptz, a timestamp or a date",
							name)));
	}
	owner_end(&scope);
	getTypeOutputInfo(TupleDescAttr(RelationGetDescr(rel), target->unit - 1)->atttypid, &out, &varlena);
	fmgr_info_cxt(out, &target->unit_out, fcinfo->flinfo->fn_mcxt);
	return target;
}

/*
 * Is the row timed in a block the counter paid (and no older than the
 * retention)?  Its time in UTC, as releases cast it: a timestamp is read as
 * UTC, a date as its midnight UTC; a row without a time is in no block.
 */
static bool
in_paid_blocks(const SourceTarget *target, TriggerData *trigdata)
{
	bool		isnull;
	Datum		value = heap_getattr(trigdata->tg_trigtuple, target->time,
									 RelationGetDescr(trigdata->tg_relation), &isnull);
	TimestampTz time;

	if (isnull)
		return false;
	if (target->time_type == DATEOID)
	{
		DateADT		date = DatumGetDateADT(value);

		if (DATE_NOT_FINITE(date))
			return false;
		time = (TimestampTz) (date) * USECS_PER_DAY;
	}
	else
		time = DatumGetTimestampTz(value);
	return time >= target->from && time < target->until;
}

PG_FUNCTION_INFO_V1(contcount_count_source_rows);
Datum
contcount_count_source_rows(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	SourceTarget *target = fcinfo->flinfo->fn_extra;
	OwnerScope	scope;
	Datum		unit;
	bool		isnull;
	Oid			types[3] = {INT8OID, TEXTOID, INT4OID};
	Datum		values[3];
	bool		counted;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(trigdata->tg_event) ||
		!TRIGGER_FIRED_BY_INSERT(trigdata->tg_event) || !TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) ||
		trigdata->tg_trigger->tgnargs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("count_source_rows must be an AFTER INSERT row trigger with the counter's name")));
	if (target == NULL)
		fcinfo->flinfo->fn_extra = target = source_target(fcinfo, trigdata);
	if (target->finished)
		return PointerGetDatum(NULL);
	unit = heap_getattr(trigdata->tg_trigtuple, target->unit, RelationGetDescr(trigdata->tg_relation),
						&isnull);
	/* a row without a unit is no one's: never counted, as in releases */
	if (isnull || (target->blocks && !in_paid_blocks(target, trigdata)))
		return PointerGetDatum(NULL);
	values[0] = Int64GetDatum(target->counter);
	values[1] = CStringGetTextDatum(OutputFunctionCall(&target->unit_out, unit));
	values[2] = Int32GetDatum(target->max_rows);
	owner_begin(&scope);
	owner_run(&plan, "INSERT INTO contcount.counter_unit AS u (counter_id, unit, rows) "
			  "VALUES ($1, $2, 1) ON CONFLICT (counter_id, unit) "
			  "DO UPDATE SET rows = u.rows OPERATOR(pg_catalog.+) 1 "
			  "WHERE u.rows OPERATOR(pg_catalog.<) $3",
			  3, types, values, NULL, SPI_OK_INSERT);
	counted = SPI_processed > 0;
	owner_end(&scope);
	if (counted)
		counter_count_rows(target->counter, 1);
	return PointerGetDatum(NULL);
}
