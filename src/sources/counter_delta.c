/*
 * counter_delta.c
 *		The rows inserted for each counter, buffered per (sub)transaction and
 *		written to contcount.counter_delta with the transaction.
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
 * Both kinds of trigger count here: count_inserts (src/counters) and the
 * trigger of a protected source (source_counter.c), which is why the buffer
 * lives below the counters.
 *
 * IDENTIFICATION
 *	  src/sources/counter_delta.c
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "sources/counter_delta.h"

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
counter_delta_install(void)
{
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
}
