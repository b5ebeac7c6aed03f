/*
 * counter_shmem.c
 *		The counters' shared state.
 *
 * Locking protocol: CounterShared->lock guards every slot and the fields of
 * CounterShared but step_closed.  The step worker is the only process that
 * fills or changes a slot, holding the lock exclusively; it does so only
 * after the transaction that made the change has committed (or, for a step
 * whose charge for a copy or for blocks was refused, after the rollback),
 * so a slot never
 * shows state that could still be rolled back.  Other processes take the
 * lock shared to read, and exclusively only to ask for a tick or a reload
 * (ticks_requested, reload_requested) or, when the drop of a counter
 * commits, to free its slot and record its id in dropped, so that its
 * triggers stop finding it at once and a reload that read the table before
 * the commit does not bring it back.  Waiting for a step happens on
 * step_closed, outside the lock.
 *
 * IDENTIFICATION
 *	  src/counters/counter_shmem.c
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/memutils.h"
#include "storage/shmem.h"

#include "common/settings.h"
#include "counters/counter_shmem.h"

static CounterShared *shared = NULL;

static Size
shared_size(void)
{
	return add_size(offsetof(CounterShared, slots),
					mul_size(contcount_max_counters, sizeof(CounterSlot)));
}

void
counter_shmem_request(void)
{
	RequestAddinShmemSpace(shared_size());
	RequestNamedLWLockTranche("contcount_counters", 1);
}

void
counter_shmem_startup(void)
{
	bool		found;

	shared = ShmemInitStruct("contcount counters", shared_size(), &found);
	if (!found)
	{
		memset(shared, 0, shared_size());
		shared->lock = &(GetNamedLWLockTranche("contcount_counters"))->lock;
		ConditionVariableInit(&shared->step_closed);
		shared->nslots = contcount_max_counters;
	}
}

CounterShared *
counter_shared(void)
{
	if (shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("contcount must be loaded through shared_preload_libraries"),
				 errhint("Add contcount to shared_preload_libraries in postgresql.conf and restart the server.")));
	return shared;
}

bool
counter_shmem_attached(void)
{
	return shared != NULL;
}

bool
counter_shmem_find(const char *name, int64 *id, Oid *owner, bool *finished)
{
	CounterShared *cs = counter_shared();
	bool		found = false;

	LWLockAcquire(cs->lock, LW_SHARED);
	for (int i = 0; i < cs->nslots && !found; i++)
	{
		CounterSlot *slot = &cs->slots[i];

		if (slot->id != 0 && strcmp(slot->name, name) == 0)
		{
			*id = slot->id;
			*owner = slot->owner;
			*finished = slot->finished;
			found = true;
		}
	}
	LWLockRelease(cs->lock);
	return found;
}

void
counter_shmem_wake_worker(bool reload)
{
	CounterShared *cs = counter_shared();
	Latch	   *latch;

	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	if (reload)
		cs->reload_requested = true;
	latch = cs->worker_latch;
	LWLockRelease(cs->lock);
	if (latch)
		SetLatch(latch);
}

bool
counter_shmem_dropped(CounterShared *cs, int64 id)
{
	for (size_t i = 0; i < lengthof(cs->dropped); i++)
		if (cs->dropped[i] == id)
			return true;
	return false;
}

/* Counters dropped by the current transaction. */
static List *dropping = NIL;
static bool callback_registered = false;

static void
forget_dropped(XactEvent event, void *arg)
{
	(void) arg;
	if (event == XACT_EVENT_COMMIT && dropping != NIL)
	{
		CounterShared *cs = counter_shared();
		ListCell   *lc;
		Latch	   *latch;

		LWLockAcquire(cs->lock, LW_EXCLUSIVE);
		foreach(lc, dropping)
		{
			int64		id = *(int64 *) lfirst(lc);

			for (int i = 0; i < cs->nslots; i++)
				if (cs->slots[i].id == id)
					cs->slots[i].id = 0;
			cs->dropped[cs->next_dropped] = id;
			cs->next_dropped = (cs->next_dropped + 1) % lengthof(cs->dropped);
		}
		/* the worker sweeps their units (counter_worker.c) */
		cs->reload_requested = true;
		latch = cs->worker_latch;
		LWLockRelease(cs->lock);
		if (latch)
			SetLatch(latch);
		ConditionVariableBroadcast(&cs->step_closed);
	}
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE)
		dropping = NIL;			/* its memory goes with the transaction */
}

void
counter_shmem_forget_at_commit(int64 id)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	int64	   *copy = palloc(sizeof(int64));

	*copy = id;
	dropping = lappend(dropping, copy);
	MemoryContextSwitchTo(old);
	if (!callback_registered)
	{
		RegisterXactCallback(forget_dropped, NULL);
		callback_registered = true;
	}
}
