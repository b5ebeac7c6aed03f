/*
 * ledger_forget.c
 *		Giving back a ledger's room in the store (its slot of
 *		contcount.max_ledgers, its blocks) once nothing can charge it.
 *
 * The store's items are not transactional: a creation is appended in the
 * transaction that inserts the ledger's row, and a drop only marks the row.
 * Nothing can charge a ledger whose row is dropped, or whose row never
 * committed (charges read the ledger as committed, and a release refused
 * there never reaches the store), so its room can be given back: at the
 * commit of the drop, or at the rollback of the (sub)transaction that
 * created it.  A forgetting that fails (a damaged store, an error while
 * appending) is only logged: the ledger keeps its room, which errs on the
 * side of keeping what was spent.  A prepared transaction keeps the room of
 * what it drops, and of what it creates even if it is rolled back.  A forgotten ledger's charges stay on the store's pages
 * for the audit; a charge that reaches the store after it was forgotten
 * (it read the ledger before the drop committed) is refused as a charge to
 * a ledger the store does not hold, and a refund to it is dropped.
 *
 * IDENTIFICATION
 *	  src/ledger/ledger_forget.c
 */
#include "postgres.h"

#include "access/xact.h"
#include "nodes/pg_list.h"
#include "storage/lwlock.h"
#include "utils/memutils.h"

#include "ledger/ledger_forget.h"
#include "ledger/ledger_store.h"

typedef struct Forgetting
{
	int64		ledger;
	bool		at_commit;		/* dropped; else created */
	SubTransactionId subid;		/* the subtransaction that asked */
} Forgetting;

/* What this transaction asked, in TopTransactionContext. */
static List *pending = NIL;
static bool registered = false;

/* Forget a ledger after its (sub)transaction ended: a failure is logged. */
static void
forget_after_end(int64 ledger)
{
	MemoryContext context = CurrentMemoryContext;

	PG_TRY();
	{
		ledger_store_forget(ledger);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(context);
		edata = CopyErrorData();
		FlushErrorState();
		/* no lock is held by the end of a transaction when it calls us */
		LWLockReleaseAll();
		ereport(WARNING,
				(errcode(edata->sqlerrcode),
				 errmsg("ledger " INT64_FORMAT " keeps its room in the ledger store: %s",
						ledger, edata->message)));
		FreeErrorData(edata);
	}
	PG_END_TRY();
}

static void
at_end_of_xact(XactEvent event, void *arg pg_attribute_unused())
{
	ListCell   *lc;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT && event != XACT_EVENT_PREPARE)
		return;
	if (event != XACT_EVENT_PREPARE)
		foreach(lc, pending)
		{
			Forgetting *f = lfirst(lc);

			if (f->at_commit == (event == XACT_EVENT_COMMIT))
				forget_after_end(f->ledger);
		}
	pending = NIL;				/* its memory goes with the transaction */
}

/*
 * A subtransaction that rolls back takes back its drops and gives back
 * what it created; one that commits hands both to its parent.
 */
static void
at_end_of_subxact(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid,
				  void *arg pg_attribute_unused())
{
	ListCell   *lc;

	if (event != SUBXACT_EVENT_ABORT_SUB && event != SUBXACT_EVENT_COMMIT_SUB)
		return;
	foreach(lc, pending)
	{
		Forgetting *f = lfirst(lc);

		if (f->subid != mySubid)
			continue;
		if (event == SUBXACT_EVENT_COMMIT_SUB)
			f->subid = parentSubid;
		else
		{
			if (!f->at_commit)
				forget_after_end(f->ledger);
			pending = foreach_delete_current(pending, lc);
		}
	}
}

static void
ask(int64 ledger, bool at_commit)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	Forgetting *f = palloc(sizeof(Forgetting));

	f->ledger = ledger;
	f->at_commit = at_commit;
	f->subid = GetCurrentSubTransactionId();
	pending = lappend(pending, f);
	MemoryContextSwitchTo(old);
	if (!registered)
	{
		RegisterXactCallback(at_end_of_xact, NULL);
		RegisterSubXactCallback(at_end_of_subxact, NULL);
		registered = true;
	}
}

void
ledger_forget_at_commit(int64 ledger)
{
	ask(ledger, true);
}

void
ledger_forget_at_abort(int64 ledger)
{
	ask(ledger, false);
}
