/*
 * counter_trigger.c
 *		contcount.count_inserts(counter): the trigger that feeds a counter.
 *
 * Rows are counted in backend memory, per counter and per subtransaction
 * level: a rolled-back savepoint drops its counts, a released one hands them
 * to its parent, an aborted transaction drops everything.  Just before the
 * transaction commits (or is prepared for two-phase commit), the counts
 * become one row per counter in contcount.counter_delta, written in the
 * transaction itself: the counts are committed, and survive a crash,
 * exactly when the inserts they count are.  The step worker turns committed
 * deltas into steps.
 *
 * IDENTIFICATION
 *	  src/counters/counter_trigger.c
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/trigger.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "counters/counter.h"
#include "counters/counter_shmem.h"
#include "counters/statement_rows.h"

typedef struct PendingCount
{
	int64		counter;
	int			level;			/* transaction nesting level of the rows */
	int64		rows;
} PendingCount;

static PendingCount *pending = NULL;
static int	npending = 0;
static int	maxpending = 0;

void
counter_count_rows(int64 counter, int64 rows)
{
	int			level = GetCurrentTransactionNestLevel();

	for (int i = npending - 1; i >= 0 && pending[i].level == level; i--)
	{
		if (pending[i].counter == counter)
		{
			pending[i].rows += rows;
			return;
		}
	}
	if (npending == maxpending)
	{
		maxpending = Max(16, 2 * maxpending);
		pending = pending ?
			repalloc(pending, maxpending * sizeof(PendingCount)) :
			MemoryContextAlloc(TopMemoryContext, maxpending * sizeof(PendingCount));
	}
	pending[npending++] = (PendingCount)
	{
		counter, level, rows
	};
}

/* Write the transaction's counts, one row per counter. */
static void
flush_pending(void)
{
	Relation	rel;
	Oid			relid;

	if (npending == 0)
		return;
	relid = get_relname_relid("counter_delta", get_namespace_oid("contcount", false));
	if (!OidIsValid(relid))
		elog(ERROR, "contcount.counter_delta does not exist");
	/* the table is written as a catalog would be: no rights, triggers or indexes apply */
	rel = table_open(relid, RowExclusiveLock);
	for (int i = 0; i < npending; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};
		int64		rows = pending[i].rows;

		if (pending[i].counter == 0)
			continue;			/* merged into an earlier entry */
		for (int j = i + 1; j < npending; j++)
		{
			if (pending[j].counter == pending[i].counter)
			{
				rows += pending[j].rows;
				pending[j].counter = 0;
			}
		}
		values[0] = Int64GetDatum(pending[i].counter);
		values[1] = Int64GetDatum(rows);
		simple_heap_insert(rel, heap_form_tuple(RelationGetDescr(rel), values, nulls));
	}
	table_close(rel, RowExclusiveLock);
	npending = 0;
}

static void
xact_callback(XactEvent event, void *arg)
{
	(void) arg;
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			flush_pending();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PREPARE:
			npending = 0;
			break;
		default:
			break;
	}
}

static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	int			kept = 0;

	(void) mySubid;
	(void) parentSubid;
	(void) arg;
	if (event != SUBXACT_EVENT_ABORT_SUB && event != SUBXACT_EVENT_COMMIT_SUB)
		return;
	for (int i = 0; i < npending; i++)
	{
		if (pending[i].level < level)
			pending[kept++] = pending[i];
		else if (event == SUBXACT_EVENT_COMMIT_SUB)
		{
			/* the parent now owns them (duplicates are merged at flush) */
			pending[i].level = level - 1;
			pending[kept++] = pending[i];
		}
	}
	npending = kept;
}

void
counter_trigger_install(void)
{
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
}

/* The counter a trigger feeds, looked up and checked once per query. */
typedef struct TriggerTarget
{
	int64		counter;
	bool		finished;
} TriggerTarget;

PG_FUNCTION_INFO_V1(contcount_count_inserts);
Datum
contcount_count_inserts(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	TriggerTarget *target = fcinfo->flinfo->fn_extra;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("count_inserts must be called as a trigger")));
	if (!TRIGGER_FIRED_AFTER(trigdata->tg_event) || !TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("count_inserts must be an AFTER INSERT trigger")));
	if (trigdata->tg_trigger->tgnargs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("count_inserts takes one argument, the counter's name")));

	if (target == NULL)
	{
		target = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(TriggerTarget));
		target->counter = counter_to_feed(trigdata->tg_trigger->tgargs[0], trigdata->tg_relation,
										  &target->finished);
		fcinfo->flinfo->fn_extra = target;
	}

	/* a finished counter releases nothing more: its rows need no counting */
	if (target->finished)
		return PointerGetDatum(NULL);
	if (TRIGGER_FIRED_FOR_ROW(trigdata->tg_event))
		counter_count_rows(target->counter, 1);
	else if (trigdata->tg_newtable != NULL)
	{
		int64		rows = tuplestore_tuple_count(trigdata->tg_newtable);

		if (rows > 0)
			counter_count_rows(target->counter, rows);
	}
	else
		statement_rows_count_later(target->counter, RelationGetRelid(trigdata->tg_relation));
	return PointerGetDatum(NULL);
}
