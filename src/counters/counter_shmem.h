/*
 * counter_shmem.h
 *		The counters' shared state: a slot per counter, with its mechanism's
 *		state as last committed, and the requests for the step worker.
 */
#ifndef CONTCOUNT_COUNTER_SHMEM_H
#define CONTCOUNT_COUNTER_SHMEM_H

#include "datatype/timestamp.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"

#include "core/mechanism.h"

typedef struct CounterSlot
{
	int64		id;				/* 0: the slot is free */
	char		name[NAMEDATALEN];
	Oid			owner;			/* who may feed it, with the roles it allowed */
	bool		finished;		/* a bounded counter past its horizon */
	int64		steps;			/* steps closed and committed */
	TimestampTz started_at;		/* step k closes at started_at + k * step */
	int64		step_usecs;
	uint64		ticks_requested;	/* explicit steps asked for */
	uint64		ticks_done;		/* and closed */

	/*
	 * A copied counter whose ledger refused to pay for it again (or a
	 * counter the blocks of whose next step could not be charged): the
	 * refusal's SQLSTATE (0: none), for tick() to raise, and when the clock
	 * may try again.  See counter_worker.c.
	 */
	int			refused_code;
	bool		refused_copy;	/* the refusal was a copy's */
	char		refused_message[160];
	char		refused_detail[160];
	TimestampTz retry_at;
	int64		state_bytes;
	char		state[CC_STATE_MAX_BYTES];	/* as last committed */
} CounterSlot;

typedef struct CounterShared
{
	LWLock	   *lock;
	Latch	   *worker_latch;	/* NULL while no worker runs */
	bool		reload_requested;
	ConditionVariable step_closed;
	int64		dropped[64];	/* recently dropped counters, never to reload */
	int			next_dropped;
	int			nslots;
	CounterSlot slots[FLEXIBLE_ARRAY_MEMBER];
} CounterShared;

extern void counter_shmem_request(void);
extern void counter_shmem_startup(void);

/* The shared state, or an error naming shared_preload_libraries. */
extern CounterShared *counter_shared(void);

/* Is there shared state (was contcount loaded at server start)? */
extern bool counter_shmem_attached(void);

/* Look a counter up by name; false if the worker has not loaded it. */
extern bool counter_shmem_find(const char *name, int64 *id, Oid *owner, bool *finished);

/* Once this transaction commits, free the counter's slot for good. */
extern void counter_shmem_forget_at_commit(int64 id);

/* Was the counter dropped (so a reload must not bring it back)? Lock held. */
extern bool counter_shmem_dropped(CounterShared *cs, int64 id);

/* Wake the worker, asking it to reload the counters if reload. */
extern void counter_shmem_wake_worker(bool reload);

#endif							/* CONTCOUNT_COUNTER_SHMEM_H */
