/*
 * source_blocks_sql.c
 *		The SQL functions of per-block budgets: source_blocks() declares
 *		them, contcount.blocks and contcount.block_charges show them, and
 *		source_expired_rows() counts the rows past the retention.
 *
 * What blocks are, and what a release needs of them, is in source_blocks.c;
 * these functions read a source's declaration (source.c) and so sit above
 * both.
 *
 * IDENTIFICATION
 *	  src/sources/source_blocks_sql.c
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "common/args.h"
#include "common/int.h"
#include "common/owner_spi.h"
#include "common/settings.h"
#include "ledger/ledger.h"
#include "ledger/ledger_store.h"
#include "sources/feed_cache.h"
#include "sources/source.h"
#include "sources/source_blocks.h"

/*
 * source_blocks(source, block_length, budget, retention): hold the source's
 * budget per block from now on.  The length is fixed once declared; the
 * budget of every block and the retention may change (binding from commit,
 * as a ledger's budget does).
 */
PG_FUNCTION_INFO_V1(contcount_source_blocks);
Datum
contcount_source_blocks(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr read_plan = NULL;
	static SPIPlanPtr plan = NULL;
	char	   *name = arg_text(fcinfo, 0, "source name");
	Interval   *length = DatumGetIntervalP(arg_required(fcinfo, 1, "block length"));
	Datum		budget = arg_required(fcinfo, 2, "budget");
	Interval   *retention = DatumGetIntervalP(arg_required(fcinfo, 3, "retention"));
	int64		length_usecs = interval_usecs(length, "block length");
	OwnerScope	scope;
	Oid			types[4] = {TEXTOID, INTERVALOID, NUMERICOID, INTERVALOID};
	Datum		values[4] = {CStringGetTextDatum(name), IntervalPGetDatum(length), budget,
	IntervalPGetDatum(retention)};
	char	   *counter;
	bool		isnull;
	Datum		declared;

	(void) interval_usecs(retention, "retention");

	/* a ledger's budget (in units of 1e-9), at least one unit */
	if (!ledger_budget_valid(budget) ||
		!DatumGetBool(DirectFunctionCall2(numeric_gt, budget,
										  DirectFunctionCall1(int8_numeric, Int64GetDatum(0)))))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a block's budget must be a multiple of 0.000000001 from 0.000000001 to 9223372036")));
	owner_begin(&scope);
	/* locked: concurrent declarations of one source wait on each other */
	owner_select_existing(&read_plan, "SELECT block_length FROM contcount.source "
						  "WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
						  1, types, values, "protected source", name);
	declared = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull && interval_usecs(DatumGetIntervalP(declared), "block length") != length_usecs)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the block length of protected source \"%s\" is fixed once declared", name),
				 errdetail("Blocks of another length would hold the same rows with fresh budgets.")));
	/*
	 * A counter of a source without blocks counts rows whatever their time:
	 * it paid the source's ledger, not the blocks its rows fall in.  One of
	 * a source with blocks pays the blocks it counts, whatever their budget
	 * and the retention say later.
	 */
	counter = isnull ? source_counted_by(name) : NULL;
	if (counter != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("protected source \"%s\" is counted by counter \"%s\"", name, counter),
				 errhint("Drop its counters first.")));
	if (isnull)
		source_blocks_require_alone(name, source_relid(name), true);
	owner_run(&plan, "UPDATE contcount.source SET block_length = $2, block_budget = $3, retention = $4 "
			  "WHERE name OPERATOR(pg_catalog.=) $1",
			  4, types, values, NULL, SPI_OK_UPDATE);
	owner_end(&scope);
	feed_cache_changed();
	PG_RETURN_VOID();
}

/* A source with blocks, as the views show it. */
typedef struct ShownSource
{
	char	   *name;
	int64		ledger;
	uint64		budget_units;
	int64		retention;
	cc_accounting accounting;
} ShownSource;

/*
 * The sources with blocks that the caller may see, by name: all for a
 * superuser; else those whose ledger it administers, and, unless
 * admin_only, those it is granted.  In the caller's memory.
 */
static ShownSource *
shown_sources(bool admin_only, int *nsources)
{
	static SPIPlanPtr plan = NULL;
	MemoryContext outer = CurrentMemoryContext;
	OwnerScope	scope;
	Oid			types[2] = {OIDOID, BOOLOID};
	Datum		values[2];
	ShownSource *sources;

	owner_begin(&scope);
	values[0] = ObjectIdGetDatum(scope.caller);
	values[1] = BoolGetDatum(admin_only);
	owner_run(&plan, "SELECT s.name, s.ledger_id, s.block_length, "
			  "pg_catalog.int8(s.block_budget OPERATOR(pg_catalog.*) 1000000000::pg_catalog.numeric), "
			  "s.retention FROM contcount.source s "
			  "WHERE s.block_length IS NOT NULL "
			  "AND (contcount.ledger_granted(s.ledger_id, $1, true) OR (NOT $2 AND EXISTS ("
			  "SELECT FROM contcount.source_grant g WHERE g.source OPERATOR(pg_catalog.=) s.name "
			  "AND pg_catalog.pg_has_role($1, g.role_id, 'USAGE')))) ORDER BY s.name",
			  2, types, values, NULL, SPI_OK_SELECT);
	sources = MemoryContextAlloc(outer, sizeof(ShownSource) * Max(SPI_processed, 1));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		SourceBlocks blocks;
		bool		isnull;
		uint64		spent;

		sources[i].name = MemoryContextStrdup(outer, SPI_getvalue(tuple, desc, 1));
		sources[i].ledger = DatumGetInt64(SPI_getbinval(tuple, desc, 2, &isnull));
		source_blocks_read(&blocks, tuple, desc, 3);
		sources[i].budget_units = blocks.budget_units;
		sources[i].retention = blocks.retention;
		sources[i].accounting = CC_PURE;
		(void) ledger_store_spent(sources[i].ledger, &spent, &sources[i].accounting);
	}
	*nsources = (int) SPI_processed;
	owner_end(&scope);
	return sources;
}

static int
block_order(const void *a, const void *b)
{
	const StoreBlock *x = (const StoreBlock *) a;
	const StoreBlock *y = (const StoreBlock *) b;

	if (x->ledger != y->ledger)
		return x->ledger < y->ledger ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * The contcount.blocks view: every block of the sources the caller sees,
 * its budget, what it spent (its ledger's own charges included) and
 * whether it is retired.
 */
PG_FUNCTION_INFO_V1(contcount_block_rows);
Datum
contcount_block_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			nsources;
	ShownSource *sources;
	int64		nblocks;
	StoreBlock *blocks;
	TimestampTz now = GetCurrentTimestamp();

	InitMaterializedSRF(fcinfo, 0);
	sources = shown_sources(false, &nsources);
	blocks = ledger_store_blocks(&nblocks);
	qsort(blocks, nblocks, sizeof(StoreBlock), block_order);
	for (int s = 0; s < nsources; s++)
		for (int64 b = 0; b < nblocks; b++)
		{
			Datum		values[8];
			bool		nulls[8] = {false};
			uint64		budget = sources[s].budget_units;
			uint64		spent = blocks[b].spent_units + blocks[b].ledger_spent_units;

			if (blocks[b].ledger != sources[s].ledger)
				continue;
			values[0] = CStringGetTextDatum(sources[s].name);
			values[1] = TimestampTzGetDatum(blocks[b].start);
			values[2] = TimestampTzGetDatum(blocks[b].end);
			values[3] = ledger_units_numeric(budget, false);
			values[4] = ledger_units_numeric(spent, false);
			values[5] = ledger_units_numeric(spent < budget ? budget - spent : 0, false);
			values[6] = CStringGetTextDatum(ledger_accounting_name(sources[s].accounting));
			values[7] = BoolGetDatum(blocks[b].end <= now - sources[s].retention);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	return (Datum) 0;
}

typedef struct BlockAudit
{
	ReturnSetInfo *rsinfo;
	ShownSource *sources;
	int			nsources;
} BlockAudit;

static void
block_audit_one(const StoreCharge *charge, const StoreBlockRun *run, void *arg)
{
	BlockAudit *audit = (BlockAudit *) arg;

	for (int s = 0; s < audit->nsources; s++)
	{
		Datum		values[9];
		bool		nulls[9] = {false};

		if (audit->sources[s].ledger != charge->ledger)
			continue;
		values[0] = TimestampTzGetDatum(charge->at);
		values[1] = ObjectIdGetDatum(charge->role);
		values[2] = CStringGetTextDatum(audit->sources[s].name);
		values[3] = TimestampTzGetDatum(run->first);
		values[4] = TimestampTzGetDatum(run->first + run->count * run->length);
		values[5] = Int64GetDatum(run->count);
		values[6] = ledger_units_numeric(charge->units, false);
		values[7] = CStringGetTextDatum(charge->function);
		values[8] = CStringGetTextDatum(charge->statement);
		tuplestore_putvalues(audit->rsinfo->setResult, audit->rsinfo->setDesc, values, nulls);
	}
}

/*
 * The contcount.block_charges view: which blocks each release charged, for
 * the admins of the sources' ledgers (as contcount.charges).
 */
PG_FUNCTION_INFO_V1(contcount_block_charge_rows);
Datum
contcount_block_charge_rows(PG_FUNCTION_ARGS)
{
	BlockAudit	audit;

	InitMaterializedSRF(fcinfo, 0);
	audit.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	audit.sources = shown_sources(true, &audit.nsources);
	if (audit.nsources > 0)
		ledger_store_scan_blocks(block_audit_one, &audit);
	return (Datum) 0;
}

/*
 * source_expired_rows(source): how many rows of the source's table are
 * older than its retention, which no release reads and the DBA should
 * delete.  An exact count: not for analysts.
 */
PG_FUNCTION_INFO_V1(contcount_source_expired_rows);
Datum
contcount_source_expired_rows(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *name = arg_text(fcinfo, 0, "source name");
	OwnerScope	scope;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	HeapTuple	tuple;
	TupleDesc	desc;
	bool		isnull;
	Oid			relid;
	char	   *relname;
	char	   *time;
	Datum		retention;
	Datum		count;
	Oid			count_type[1] = {TIMESTAMPTZOID};
	Datum		oldest[1];

	owner_begin(&scope);
	owner_read_committed(&plan, "SELECT relid, time_attnum, retention FROM contcount.source "
						 "WHERE name OPERATOR(pg_catalog.=) $1", 1, types, values, NULL);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("protected source \"%s\" does not exist", name)));
	tuple = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	retention = SPI_getbinval(tuple, desc, 3, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("protected source \"%s\" has no retention", name),
				 errhint("Declare its blocks with contcount.source_blocks().")));
	relid = DatumGetObjectId(SPI_getbinval(tuple, desc, 1, &isnull));
	relname = get_rel_name(relid);
	time = get_attname(relid, DatumGetInt16(SPI_getbinval(tuple, desc, 2, &isnull)), true);
	if (relname == NULL || time == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the table of protected source \"%s\" or its time column is gone", name)));
	oldest[0] = TimestampTzGetDatum(GetCurrentTimestamp() -
									interval_usecs(DatumGetIntervalP(retention), "retention"));
	if (SPI_execute_with_args(psprintf("SELECT pg_catalog.count(*) FROM %s "
									   "WHERE %s OPERATOR(pg_catalog.<) $1",
									   quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
																  relname),
									   source_time_sql(relid, DatumGetInt16(SPI_getbinval(tuple, desc, 2, &isnull)),
													   quote_identifier(time))),
							  1, count_type, oldest, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not count the expired rows of protected source \"%s\"", name);
	count = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	owner_end(&scope);
	PG_RETURN_DATUM(count);
}
