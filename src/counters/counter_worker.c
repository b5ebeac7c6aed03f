/*
 * counter_worker.c
 *		The step worker: closes every counter's steps, on the clock and on
 *		request, in the database named by contcount.database.
 *
 * Closing a step is one transaction of the worker's own, committed with
 * synchronous_commit on: it consumes the committed counts of the step from
 * contcount.counter_delta, pushes their sum into the mechanism (drawing the
 * step's noise), and stores the new state and the release.  Only then is the
 * shared slot updated.  So a release is visible, in the table or in shared
 * memory, only once the state that produced it is durable; a crash before
 * the commit loses only noise that nobody saw, and a crash after it keeps
 * every node's noise as drawn.  Counts are consumed in the same transaction
 * that records them in a step: none is lost, none counted twice.
 *
 * A copied counter pays again.  The counter tables are configuration tables
 * of the extension, so pg_dump and pg_restore, and pg_upgrade, carry a
 * counter's state to another place; steps closed there draw fresh noise for
 * tree nodes that the original draws too (or drew already), two noisy values
 * of one node that the ledger never paid for.  So each counter records where
 * its state lives (counter_place_here: cluster, database, table), and a step
 * that finds the counter somewhere else first charges its ledger its epsilon
 * (or rho) again, as create_counter did (in the owner's name, to the same
 * ledger), and records the new place, both in the step's transaction: a copy
 * pays once, and releases nothing unpaid.  The charge itself cannot be taken
 * back: a crash between it and the commit makes the next step pay again,
 * which errs on the safe side.  If the ledger refuses, the step is rolled
 * back (its noise unseen), the refusal is logged with the ledger's SQLSTATE
 * and kept in the slot for tick() to raise, and the clock tries again after
 * REFUSED_RETRY_MS.  A base backup, a promoted standby or point-in-time
 * recovery keep the place: their state came through WAL and the old server
 * is gone, so they go on without paying.
 *
 * A counter over a source with per-block budgets pays each block as its
 * clock enters it: closing step k, the worker pays the blocks that step k+1
 * may count and that are not paid yet (a subtransaction of the step's, in
 * the owner's name), and records their end (blocks_until) in the step's
 * transaction.  The row trigger counts only rows timed before blocks_until
 * as committed, so no row is counted before its block's charge is durable.
 * A block's refusal (ZB001) stops the counter after this step, whose rows
 * all lie in paid blocks: finished, with finish_reason.  Any other error of
 * the charge is a refusal as a copy's, and the step is taken again later.
 *
 * IDENTIFICATION
 *	  src/counters/counter_worker.c
 */
#include "postgres.h"

#include <math.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "common/args.h"
#include "common/random.h"
#include "common/settings.h"
#include "counters/alerts.h"
#include "counters/counter.h"
#include "counters/counter_keys.h"
#include "counters/counter_shmem.h"
#include "counters/shard_counters.h"
#include "ledger/ledger.h"
#include "sources/feed_cache.h"
#include "sources/source.h"
#include "sources/source_blocks.h"
#include "sources/unit_log.h"

/* Reload the counters at least this often, in case a wake-up was missed. */
#define RELOAD_INTERVAL_MS 10000

/* After it stops, the worker starts again in (seconds): bgw_restart_time. */
#define WORKER_RESTART_S 10
/* And look at the clock at least this often. */
#define MAX_SLEEP_MS 1000
/* How long the clock waits to ask again a ledger that refused a copy. */
#define REFUSED_RETRY_MS 60000

/* What a copied counter's source is to its copy: see copied_source(). */
typedef struct CopiedSource
{
	char	   *ledger;
	char	   *gone;
} CopiedSource;

/*
 * A counter over a source with blocks: the blocks it paid for,
 * [from, until), its clock, and its source's ledger and blocks.
 */
typedef struct CounterBlocks
{
	TimestampTz from;
	TimestampTz until;
	TimestampTz started_at;
	int64		step_usecs;
	char	   *ledger;
	SourceBlocks blocks;
} CounterBlocks;

/*
 * The counter whose copy (or blocks) is being paid for, while its ledger is
 * charged: an error then is the ledger's refusal, which stops that counter
 * alone.
 */
static struct
{
	bool		active;
	bool		copy;			/* a copy's charge, or its next blocks' */
	char		name[NAMEDATALEN];
}			paying;

/* The audit's statement for a copy's charge, as long as it is made. */
static char paying_statement[256];

PGDLLEXPORT void counter_worker_main(Datum arg);

void
counter_worker_register(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = WORKER_RESTART_S;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "contcount");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "counter_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "contcount step worker");
	snprintf(worker.bgw_type, BGW_MAXLEN, "contcount step worker");
	RegisterBackgroundWorker(&worker);
}

static void
begin_work(void)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
}

static void
end_work(void)
{
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

static bool
extension_installed(void)
{
	return OidIsValid(get_namespace_oid("contcount", true)) &&
		OidIsValid(get_relname_relid("counter", get_namespace_oid("contcount", true)));
}

/*
 * Delete the units of dropped counters: drop_counter leaves them, so that
 * an analyst's open transaction holds no row that an insert may write.  An
 * index probe per counter with units (their ids, skipped through the
 * index), then the units of those that are gone; this transaction is short,
 * so an insert still feeding a dropped counter waits on it only briefly.
 * Negative ids are the persons of a shard's feeds (src/sources/shard_feed.c),
 * which no counter here has: kept.
 */
static void
sweep_units(void)
{
	if (!counter_sources_installed())
		return;
	if (SPI_execute("WITH RECURSIVE ids(id) AS ("
					"(SELECT counter_id FROM contcount.counter_unit ORDER BY counter_id LIMIT 1) "
					"UNION ALL SELECT (SELECT u.counter_id FROM contcount.counter_unit u "
					"WHERE u.counter_id OPERATOR(pg_catalog.>) ids.id ORDER BY u.counter_id LIMIT 1) "
					"FROM ids WHERE ids.id IS NOT NULL) "
					"DELETE FROM contcount.counter_unit WHERE counter_id IN (SELECT id FROM ids "
					"WHERE ids.id OPERATOR(pg_catalog.>) 0 AND NOT EXISTS (SELECT 1 FROM contcount.counter c "
					"WHERE c.id OPERATOR(pg_catalog.=) ids.id))", false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not sweep the units of dropped counters");
}

/* Free the slots of counters no longer in contcount.counter (SPI's result). */
static void
free_gone_slots(CounterShared *cs)
{
	for (int i = 0; i < cs->nslots; i++)
	{
		bool		present = false;

		for (uint64 r = 0; r < SPI_processed && !present; r++)
		{
			bool		isnull;

			present = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc,
												  1, &isnull)) == cs->slots[i].id;
		}
		if (!present)
			cs->slots[i].id = 0;
	}
}

/*
 * Give the counter of a row of contcount.counter a slot, unless it has one,
 * was dropped since it was read, or its state is damaged (a warning).
 * False, with a warning, if no slot is free.
 */
static bool
load_slot(CounterShared *cs, HeapTuple tuple, TupleDesc desc)
{
	bool		isnull;
	int64		id = DatumGetInt64(SPI_getbinval(tuple, desc, 1, &isnull));
	bytea	   *state;
	CounterSlot *slot = NULL;
	CounterSlot *free_slot = NULL;

	for (int i = 0; i < cs->nslots; i++)
	{
		if (cs->slots[i].id == id)
			slot = &cs->slots[i];
		else if (cs->slots[i].id == 0 && free_slot == NULL)
			free_slot = &cs->slots[i];
	}
	if (slot != NULL || counter_shmem_dropped(cs, id))
		return true;			/* current already, or dropped since we read */
	if (free_slot == NULL)
	{
		ereport(WARNING,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("more counters than contcount.max_counters = %d; some get no steps",
						cs->nslots)));
		return false;
	}
	state = DatumGetByteaPP(SPI_getbinval(tuple, desc, 7, &isnull));
	if (!cc_state_valid(VARDATA_ANY(state), VARSIZE_ANY_EXHDR(state)))
	{
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the state of counter %s is damaged; it gets no steps",
						SPI_getvalue(tuple, desc, 2))));
		return true;
	}
	slot = free_slot;
	memset(slot, 0, sizeof(*slot));
	slot->id = id;
	strlcpy(slot->name, SPI_getvalue(tuple, desc, 2), NAMEDATALEN);
	slot->owner = DatumGetObjectId(SPI_getbinval(tuple, desc, 8, &isnull));
	slot->finished = DatumGetBool(SPI_getbinval(tuple, desc, 3, &isnull));
	slot->steps = DatumGetInt64(SPI_getbinval(tuple, desc, 4, &isnull));
	slot->started_at = DatumGetTimestampTz(SPI_getbinval(tuple, desc, 5, &isnull));
	slot->step_usecs = DatumGetInt64(SPI_getbinval(tuple, desc, 6, &isnull));
	slot->state_bytes = VARSIZE_ANY_EXHDR(state);
	memcpy(slot->state, VARDATA_ANY(state), slot->state_bytes);
	return true;
}

/*
 * Open the shards' feeds (shard_counters.c) of the counters that came into
 * the slots since before (the ids the slots held then): just created, or
 * the worker just started; a transaction each.
 */
static void
open_shard_feeds(CounterShared *cs, const int64 *before)
{
	for (int i = 0; i < cs->nslots; i++)
	{
		int64		id;
		bool		known = false;

		LWLockAcquire(cs->lock, LW_SHARED);
		id = cs->slots[i].id;
		LWLockRelease(cs->lock);
		for (int j = 0; j < cs->nslots && !known; j++)
			known = before[j] == id;
		if (id == 0 || known)
			continue;
		begin_work();
		shard_counters_open(id);
		end_work();
	}
}

/*
 * Drop the shards' feeds of dropped counters (shard_counters.c), in a
 * transaction of their own after drop_counter committed: drop_counter does
 * not wait on shards, and a shard down now is asked again at the next
 * load (a reload, or RELOAD_INTERVAL_MS later).
 */
static void
drop_shard_feeds(void)
{
	begin_work();
	shard_counters_forget();
	end_work();
}

/* Bring the slots in line with contcount.counter, as committed. */
static void
load_counters(CounterShared *cs)
{
	bool		installed;
	int64	   *before = palloc_array(int64, cs->nslots);

	LWLockAcquire(cs->lock, LW_SHARED);
	for (int i = 0; i < cs->nslots; i++)
		before[i] = cs->slots[i].id;
	LWLockRelease(cs->lock);

	begin_work();
	installed = extension_installed();
	if (installed &&
		SPI_execute("SELECT id, name, finished, steps, started_at, "
					"(extract(epoch FROM step) OPERATOR(pg_catalog.*) 1000000)::pg_catalog.int8, "
					"state, owner FROM contcount.counter", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read contcount.counter");

	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	cs->reload_requested = false;
	if (installed)
	{
		free_gone_slots(cs);
		for (uint64 r = 0; r < SPI_processed; r++)
			if (!load_slot(cs, SPI_tuptable->vals[r], SPI_tuptable->tupdesc))
				break;
	}
	else
		for (int i = 0; i < cs->nslots; i++)
			cs->slots[i].id = 0;
	LWLockRelease(cs->lock);
	if (installed)
		sweep_units();
	end_work();
	ConditionVariableBroadcast(&cs->step_closed);
	if (installed)
	{
		open_shard_feeds(cs, before);
		drop_shard_feeds();
	}
	pfree(before);
}

/*
 * contcount.ledger as a session of role would have it in this database:
 * set for the role in the database, for the role, for the database, or for
 * all roles, in that order.  NULL if none is: then the server's value,
 * which the worker has too.  For counters created before 0.3, which did not
 * record the ledger their creator's setting chose.
 */
static char *
role_ledger_setting(Oid role)
{
	Oid			types[2] = {OIDOID, OIDOID};
	Datum		args[2] = {ObjectIdGetDatum(role), ObjectIdGetDatum(MyDatabaseId)};

	if (SPI_execute_with_args("SELECT pg_catalog.substr(c.setting, 18) "
							  "FROM pg_catalog.pg_db_role_setting s, "
							  "pg_catalog.unnest(s.setconfig) c(setting) "
							  "WHERE (s.setrole OPERATOR(pg_catalog.=) $1 "
							  "OR s.setrole OPERATOR(pg_catalog.=) 0) "
							  "AND (s.setdatabase OPERATOR(pg_catalog.=) $2 "
							  "OR s.setdatabase OPERATOR(pg_catalog.=) 0) "
							  "AND pg_catalog.starts_with(c.setting, 'contcount.ledger=') "
							  "ORDER BY s.setrole OPERATOR(pg_catalog.=) 0, "
							  "s.setdatabase OPERATOR(pg_catalog.=) 0 LIMIT 1",
							  2, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the settings of role %u", role);
	if (SPI_processed == 0)
		return NULL;
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

/* What begin_paying changed, for end_paying to restore. */
typedef struct PayingScope
{
	Oid			save_user;
	int			save_context;
	int			nest_level;
} PayingScope;

/*
 * Charge in the name of a counter's owner, for its copy or else for the
 * blocks of its next step, with contcount.ledger set to
 * setting (unless NULL), the audit's statement saying what the charge pays
 * for; paying.active tells an error until end_paying for the ledger's
 * refusal.  An error if the owner is gone.
 */
static void
begin_paying(PayingScope *scope, const char *name, Oid owner, bool copy, const char *setting,
			 const char *statement)
{
	paying.active = true;
	paying.copy = copy;
	strlcpy(paying.name, name, NAMEDATALEN);

	/*
	 * The owner is kept by oid: a copy restored into another cluster may
	 * name a role that does not exist there, or another role.
	 */
	if (!SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(owner)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("the owner of counter \"%s\" does not exist", name),
				 errdetail("Its owner was the role with oid %u where the counter was created.", owner)));
	scope->nest_level = NewGUCNestLevel();
	if (setting != NULL)
		(void) set_config_option("contcount.ledger", setting, PGC_SUSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	GetUserIdAndSecContext(&scope->save_user, &scope->save_context);
	SetUserIdAndSecContext(owner, scope->save_context | SECURITY_LOCAL_USERID_CHANGE);
	/* the audit shows the statement a charge paid for: say what this one is */
	strlcpy(paying_statement, statement, sizeof(paying_statement));
	debug_query_string = paying_statement;
}

static void
end_paying(PayingScope *scope)
{
	paying.active = false;
	debug_query_string = NULL;
	SetUserIdAndSecContext(scope->save_user, scope->save_context);
	AtEOXact_GUC(true, scope->nest_level);
}

/*
 * An error, raised while paying (a refusal, which the clock asks again), if
 * the ledger of the counter's source was dropped.
 */
static void
require_blocks(const char *name, const CounterBlocks *paid)
{
	if (paid->ledger == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("the ledger of the protected source of counter \"%s\" was dropped", name)));
}

/*
 * Charge the ledger of a copied counter what its parameters cost again (its
 * epsilon, or its rho), as create_counter did: in the name of its owner (who
 * must still be allowed the ledger), to the ledger named, or when none was
 * named to the one contcount.ledger chooses, with contcount.ledger set to
 * setting (unless NULL) for the charge; a counter over a protected source
 * pays the source's ledger too, or with blocks (paid not NULL) each block
 * it paid for.  Raises the ledger's error if it refuses, or if the source or
 * its ledger is gone, with paying.active set so that the caller knows it
 * for a refusal.
 */
static void
pay_again(const char *name, Oid owner, const char *ledger, const char *setting,
		  const CopiedSource *source, const CounterBlocks *paid, cc_cost cost,
		  const char *statement)
{
	PayingScope scope;
	const char *source_ledger = source->ledger;

	begin_paying(&scope, name, owner, true, setting, statement);
	/* raised here, a refusal of the copy: the step waits, the worker goes on */
	if (source->gone != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("counter \"%s\" was copied, and its protected source \"%s\" or its ledger is gone",
						name, source->gone)));
	if (paid != NULL)
	{
		StoreBlockRun run = {paid->from, paid->blocks.length,
		(paid->until - paid->from) / paid->blocks.length};

		require_blocks(name, paid);
		ledger_charge_blocks(ledger, source_ledger, cost, "counter_copy", &run,
							 paid->blocks.budget_units);
	}
	else if (source_ledger != NULL)
		ledger_charge_source(ledger, source_ledger, cost, "counter_copy");
	else
		ledger_charge(ledger, cost, "counter_copy");
	end_paying(&scope);
}

/*
 * The blocks a counter over a source with blocks paid for, and the
 * source's blocks and ledger (NULL if dropped) as committed now; false for
 * a counter of any other kind.
 * In the transaction's SPI memory.
 */
static bool
counter_blocks(int64 id, const char *name, CounterBlocks *paid)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(id)};
	HeapTuple	tuple;
	TupleDesc	desc;
	bool		isnull;

	if (!counter_sources_installed())
		return false;
	if (SPI_execute_with_args("SELECT c.blocks_from, c.blocks_until, c.started_at, "
							  "(extract(epoch FROM c.step) OPERATOR(pg_catalog.*) 1000000)::pg_catalog.int8, "
							  "l.name, s.block_length, "
							  "pg_catalog.int8(s.block_budget OPERATOR(pg_catalog.*) 1000000000::pg_catalog.numeric), "
							  "s.retention FROM contcount.counter c "
							  "LEFT JOIN contcount.source s ON s.name OPERATOR(pg_catalog.=) c.source "
							  "LEFT JOIN contcount.ledger l ON l.id OPERATOR(pg_catalog.=) s.ledger_id "
							  "AND l.dropped_at IS NULL "
							  "WHERE c.id OPERATOR(pg_catalog.=) $1 AND c.blocks_until IS NOT NULL",
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the blocks of counter \"%s\"", name);
	if (SPI_processed == 0)
		return false;
	tuple = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	paid->from = DatumGetTimestampTz(SPI_getbinval(tuple, desc, 1, &isnull));
	paid->until = DatumGetTimestampTz(SPI_getbinval(tuple, desc, 2, &isnull));
	paid->started_at = DatumGetTimestampTz(SPI_getbinval(tuple, desc, 3, &isnull));
	paid->step_usecs = DatumGetInt64(SPI_getbinval(tuple, desc, 4, &isnull));
	paid->ledger = SPI_getvalue(tuple, desc, 5);
	source_blocks_read(&paid->blocks, tuple, desc, 6);

	/*
	 * A source is not dropped, nor are its blocks undeclared, while counted;
	 * if they were, the counter pays no more blocks, and counts no row past
	 * those it paid.
	 */
	return paid->blocks.length > 0;
}


/*
 * Pay the blocks of run, in the name of the counter's owner, before any row
 * timed in them is counted: true if they paid, false if a block refused
 * (ZB001), with the refusal in *refusal.  The charge is a subtransaction of
 * the step's, so that a refusal leaves the step to be taken.  Any other
 * error is raised with paying.active set, as a copy's refusal: the step is
 * rolled back and taken again later.
 */
static bool
enter_blocks(const char *name, Oid owner, const CounterBlocks *paid, const StoreBlockRun *run,
			 cc_cost cost, int64 step, char **refusal)
{
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner resowner = CurrentResourceOwner;
	char		statement[sizeof(paying_statement)];
	volatile bool entered = true;

	snprintf(statement, sizeof(statement), "step " INT64_FORMAT " of counter \"%s\"", step, name);
	BeginInternalSubTransaction(NULL);
	PG_TRY();
	{
		PayingScope scope;

		begin_paying(&scope, name, owner, false, NULL, statement);
		require_blocks(name, paid);
		ledger_charge_source_blocks(paid->ledger, cost, "counter_step", run,
									paid->blocks.budget_units);
		end_paying(&scope);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(context);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_CONTCOUNT_BUDGET_EXCEEDED)
			PG_RE_THROW();
		FlushErrorState();
		/* restores the user and the settings */
		RollbackAndReleaseCurrentSubTransaction();
		paying.active = false;
		debug_query_string = NULL;
		*refusal = edata->message;
		entered = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(context);
	CurrentResourceOwner = resowner;
	return entered;
}

/*
 * The ledger of the protected source a copied counter counts, which its
 * copy pays too (NULL for a counter of inserts), or the source's name in
 * gone if the source or its ledger is gone: the copy cannot pay it.
 */
static void
copied_source(int64 id, const char *name, CopiedSource *source)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(id)};

	source->ledger = NULL;
	source->gone = NULL;
	if (!counter_sources_installed())
		return;
	if (SPI_execute_with_args("SELECT c.source, l.name FROM contcount.counter c "
							  "LEFT JOIN contcount.source s ON s.name OPERATOR(pg_catalog.=) c.source "
							  "LEFT JOIN contcount.ledger l ON l.id OPERATOR(pg_catalog.=) s.ledger_id "
							  "AND l.dropped_at IS NULL "
							  "WHERE c.id OPERATOR(pg_catalog.=) $1 AND c.source IS NOT NULL",
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the source of counter \"%s\"", name);
	if (SPI_processed == 0)
		return;
	source->ledger = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	if (source->ledger == NULL)
		source->gone = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

/*
 * One step of one counter, as close_step takes it: the counter as read
 * (FOR UPDATE) in the step's transaction, where its state lives (a copy
 * pays again), the blocks it paid, and what the step released.
 */
typedef struct Step
{
	int64		id;
	char		name[NAMEDATALEN];
	Oid			owner;
	char	   *ledger;			/* named at creation, or NULL */
	char	   *charged;		/* the ledger creation charged, or NULL */
	CounterPlace here;
	bool		copied;
	char		from[96];		/* the place its state was recorded at */
	cc_state   *state;			/* aligned for the core, outside SPI's memory */
	bool		has_blocks;
	CounterBlocks paid;
	cc_release	release;
	bool		keyed;			/* over a dimension: the keys release, not it */
	KeyTaken	taken;			/* keyed: each key's rows of this step */
	char	   *refusal;		/* a block refused: this is its last step */
	/* the refusal, kept beyond the step's transaction for the log */
	char		refused[256];
} Step;

/* The slot of counter id, or NULL if it has none.  Under cs->lock. */
static CounterSlot *
slot_of(CounterShared *cs, int64 id)
{
	for (int i = 0; i < cs->nslots; i++)
		if (cs->slots[i].id == id)
			return &cs->slots[i];
	return NULL;
}

/*
 * Where a counter's state was recorded, from its row: a copy if that is not
 * here.  A place not recorded (a counter restored from a dump of 0.2) is not
 * known to be here: it is a copy.
 */
static void
read_place(Step *step, HeapTuple tuple, TupleDesc desc)
{
	bool		isnull;
	bool		system_null,
				database_null,
				table_null;
	int64		system = DatumGetInt64(SPI_getbinval(tuple, desc, 6, &system_null));
	Oid			database = DatumGetObjectId(SPI_getbinval(tuple, desc, 7, &database_null));
	Oid			table = DatumGetObjectId(SPI_getbinval(tuple, desc, 8, &table_null));

	step->owner = DatumGetObjectId(SPI_getbinval(tuple, desc, 3, &isnull));
	step->ledger = SPI_getvalue(tuple, desc, 4);
	step->charged = SPI_getvalue(tuple, desc, 5);
	step->copied = system_null || database_null || table_null ||
		system != step->here.system || database != step->here.database ||
		table != step->here.table;
	if (!system_null && !database_null && !table_null)
		snprintf(step->from, sizeof(step->from), "system " INT64_FORMAT " database %u table %u",
				 system, database, table);
}

/*
 * The counter's state from its row, checked, in memory of its own: the
 * step's commit frees SPI's.
 */
static cc_state *
read_state(const char *name, HeapTuple tuple, TupleDesc desc)
{
	/* aligned for the core */
	static union
	{
		char		bytes[CC_STATE_MAX_BYTES];
		int64		align;
	}			state_buf;
	bool		isnull;
	bytea	   *stored = DatumGetByteaPP(SPI_getbinval(tuple, desc, 2, &isnull));

	if (!cc_state_valid(VARDATA_ANY(stored), VARSIZE_ANY_EXHDR(stored)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the state of counter \"%s\" is damaged", name)));
	memcpy(state_buf.bytes, VARDATA_ANY(stored), VARSIZE_ANY_EXHDR(stored));
	return (cc_state *) state_buf.bytes;
}

/*
 * Read and lock the counter id for its step, with its state, its place and
 * its blocks; false if it is gone or finished.
 */
static bool
read_counter(Step *step, int64 id)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(id)};
	bool		placed;

	memset(step, 0, sizeof(*step));
	step->id = id;
	strlcpy(step->from, "an unknown place", sizeof(step->from));
	placed = counter_place_here(&step->here);
	if (SPI_execute_with_args(placed ?
							  "SELECT name, state, owner, ledger, charged_ledger, "
							  "place_system, place_database, place_table FROM contcount.counter "
							  "WHERE id OPERATOR(pg_catalog.=) $1 AND NOT finished FOR UPDATE" :
							  "SELECT name, state FROM contcount.counter "
							  "WHERE id OPERATOR(pg_catalog.=) $1 AND NOT finished FOR UPDATE",
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read counter " INT64_FORMAT, id);
	if (SPI_processed == 0)
		return false;
	strlcpy(step->name, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1), NAMEDATALEN);
	if (placed)
		read_place(step, SPI_tuptable->vals[0], SPI_tuptable->tupdesc);
	step->state = read_state(step->name, SPI_tuptable->vals[0], SPI_tuptable->tupdesc);
	step->has_blocks = counter_blocks(id, step->name, &step->paid);
	return true;
}

/*
 * The counts committed before this snapshot, and only those, taken: the
 * plain counts, the rows each person logged over a source, bounded here
 * by what max_rows leaves the person (src/sources/unit_log.c), and the
 * batches of bounded counts that the source's shards sealed since the last
 * step (shard_counters.c).
 */
static int64
consume_deltas(const Step *step)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(step->id)};
	int64		items = 0;
	bool		isnull;

	if (SPI_execute_with_args("DELETE FROM contcount.counter_delta "
							  "WHERE counter_id OPERATOR(pg_catalog.=) $1 RETURNING n",
							  1, types, args, NULL, false, 0) != SPI_OK_DELETE_RETURNING)
		elog(ERROR, "could not read the counts of counter \"%s\"", step->name);
	for (uint64 r = 0; r < SPI_processed; r++)
		if (__builtin_add_overflow(items, DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r],
																	  SPI_tuptable->tupdesc, 1,
																	  &isnull)), &items))
			elog(ERROR, "the step of counter \"%s\" overflows", step->name);
	if (__builtin_add_overflow(items, unit_log_rows(step->id, true), &items) ||
		__builtin_add_overflow(items, shard_counters_collect(step->id, NULL), &items))
		elog(ERROR, "the step of counter \"%s\" overflows", step->name);
	return items;
}

/*
 * A bounded counter past its horizon stops: recorded, committed, then
 * published.  Its last counts are dropped with the deltas, and what its
 * persons logged since with them.
 */
static void
finish_at_horizon(CounterShared *cs, const Step *step, uint64 ticks_seen)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(step->id)};
	CounterSlot *slot;

	if (SPI_execute_with_args("UPDATE contcount.counter SET finished = true "
							  "WHERE id OPERATOR(pg_catalog.=) $1",
							  1, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not finish counter \"%s\"", step->name);
	unit_log_forget(step->id);
	feed_cache_changed();
	end_work();
	ereport(LOG,
			(errmsg("counter \"%s\" has reached its horizon of " INT64_FORMAT " steps and releases no more",
					step->name, cc_state_params(step->state)->horizon)));
	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	if ((slot = slot_of(cs, step->id)) != NULL)
	{
		slot->finished = true;
		slot->ticks_done = ticks_seen;
	}
	LWLockRelease(cs->lock);
	ConditionVariableBroadcast(&cs->step_closed);
}

/* Record that a copy is here now, with the step that paid for it. */
static void
record_place(const Step *step)
{
	Oid			types[4] = {INT8OID, INT8OID, OIDOID, OIDOID};
	Datum		args[4];

	args[0] = Int64GetDatum(step->id);
	args[1] = Int64GetDatum(step->here.system);
	args[2] = ObjectIdGetDatum(step->here.database);
	args[3] = ObjectIdGetDatum(step->here.table);
	if (SPI_execute_with_args("UPDATE contcount.counter SET place_system = $2, "
							  "place_database = $3, place_table = $4 "
							  "WHERE id OPERATOR(pg_catalog.=) $1",
							  4, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record where counter \"%s\" is", step->name);
}

/*
 * A copy pays before its first release here, and records that it is here,
 * with the step: a refusal rolls the step back.
 */
static void
pay_copy(const Step *step)
{
	char		statement[sizeof(paying_statement)];
	CopiedSource source;

	snprintf(statement, sizeof(statement),
			 "step " INT64_FORMAT " of counter \"%s\", copied from %s to system "
			 INT64_FORMAT " database %u table %u",
			 step->release.t, step->name, step->from, step->here.system, step->here.database,
			 step->here.table);

	/*
	 * contcount.ledger as the creator had it: recorded when it chose the
	 * ledger; otherwise the owner's, which also decides, as it did for the
	 * creator, whether a ledger named needs a grant.
	 */
	copied_source(step->id, step->name, &source);
	pay_again(step->name, step->owner, step->ledger,
			  step->ledger == NULL && step->charged != NULL ? step->charged :
			  role_ledger_setting(step->owner),
			  &source, step->has_blocks ? &step->paid : NULL,
			  cc_params_cost(cc_state_params(step->state)), statement);
	record_place(step);
	ereport(LOG,
			(errmsg("counter \"%s\" was copied and paid its %s again", step->name,
					cc_state_params(step->state)->privacy == CC_ZCDP ? "rho" : "epsilon"),
			 errdetail("Its state was at %s; it is now at system " INT64_FORMAT
					   " database %u table %u.",
					   step->from, step->here.system, step->here.database, step->here.table)));
}

/*
 * Record the blocks a counter has paid up to (until), and, if a block
 * refused (refusal not NULL), that it is finished and why.
 */
static void
record_blocks(const Step *step, TimestampTz until, const char *refusal)
{
	Oid			types[3] = {INT8OID, TIMESTAMPTZOID, TEXTOID};
	Datum		args[3];
	char		nulls[3] = {' ', ' ', 'n'};

	args[0] = Int64GetDatum(step->id);
	args[1] = TimestampTzGetDatum(until);
	if (refusal != NULL)
	{
		args[2] = CStringGetTextDatum(refusal);
		nulls[2] = ' ';
	}
	if (SPI_execute_with_args("UPDATE contcount.counter SET blocks_until = $2, "
							  "finished = $3 IS NOT NULL, finish_reason = $3 "
							  "WHERE id OPERATOR(pg_catalog.=) $1",
							  3, types, args, nulls, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record the blocks of counter \"%s\"", step->name);
	/* the trigger counts rows in the new blocks once this commits */
	feed_cache_changed();
}

/*
 * A counter over a source with blocks pays the blocks of its next step now,
 * before any row timed in them can be counted (the trigger counts rows
 * timed before blocks_until as committed): none after a bounded counter's
 * last step.  A block that refuses stops the counter after this step, whose
 * rows all lie in blocks it paid.
 */
static void
pay_next_blocks(Step *step)
{
	const cc_params *params = cc_state_params(step->state);
	TimestampTz next_end;		/* of the step after this one */
	StoreBlockRun run;
	char	   *refusal = NULL;

	if (!step->has_blocks || (params->has_horizon && step->release.t >= params->horizon) ||
		!step_end(step->paid.started_at, step->release.t + 1, step->paid.step_usecs, &next_end))
		return;
	source_blocks_counter_run(step->paid.blocks.length, step->paid.until, next_end, &run);
	if (run.count <= 0)
		return;
	if (enter_blocks(step->name, step->owner, &step->paid, &run, cc_params_cost(params),
					 step->release.t + 1, &refusal))
		record_blocks(step, run.first + run.count * run.length, NULL);
	else
	{
		record_blocks(step, step->paid.until, refusal);
		strlcpy(step->refused, refusal, sizeof(step->refused));
		step->refusal = step->refused;
	}
}

/*
 * Store the step's release and the state that produced it; over a
 * dimension only the state, the clock of the keys' releases.
 */
static void
store_step(const Step *step)
{
	static char blob[VARHDRSZ + CC_STATE_MAX_BYTES];
	Oid			types[7] = {INT8OID, INT8OID, INT8OID, FLOAT8OID, FLOAT8OID, BYTEAOID, BOOLOID};
	Datum		args[7];

	args[0] = Int64GetDatum(step->id);
	args[1] = Int64GetDatum(step->release.t);
	args[2] = Int64GetDatum(step->release.noisy);
	args[3] = Float8GetDatum(sqrt(step->release.variance));
	args[4] = Float8GetDatum(step->release.bound);
	memcpy(blob + VARHDRSZ, step->state, cc_state_bytes(step->state));
	SET_VARSIZE(blob, VARHDRSZ + cc_state_bytes(step->state));
	args[5] = PointerGetDatum(blob);
	args[6] = BoolGetDatum(step->keyed);
	if (SPI_execute_with_args("WITH r AS (INSERT INTO contcount.counter_release "
							  "(counter_id, t, noisy_count, stddev, bound, released_at) "
							  "SELECT $1, $2, $3, $4, $5, pg_catalog.now() WHERE NOT $7) "
							  "UPDATE contcount.counter SET steps = $2, state = $6 "
							  "WHERE id OPERATOR(pg_catalog.=) $1",
							  7, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not store the step of counter \"%s\"", step->name);
}

/* A step committed and flushed: now it may be published in its slot. */
static void
publish_step(CounterShared *cs, const Step *step, uint64 ticks_seen)
{
	CounterSlot *slot;

	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	if ((slot = slot_of(cs, step->id)) != NULL)
	{
		slot->finished = step->refusal != NULL;
		slot->steps = step->release.t;
		slot->ticks_done = ticks_seen;
		slot->refused_code = 0;
		slot->retry_at = 0;
		slot->state_bytes = cc_state_bytes(step->state);
		memcpy(slot->state, step->state, cc_state_bytes(step->state));
	}
	LWLockRelease(cs->lock);
	ConditionVariableBroadcast(&cs->step_closed);
}

/*
 * Close the next step of one counter, in a transaction of its own.  Returns
 * false if the counter is gone or finished.
 */
static bool
close_step(CounterShared *cs, int64 id, uint64 ticks_seen)
{
	Step		step;
	int64		items;
	cc_status	status;

	begin_work();
	pgstat_report_activity(STATE_RUNNING, "closing a contcount step");
	if (!read_counter(&step, id))
	{
		end_work();
		return false;
	}
	items = consume_deltas(&step);
	status = cc_push(step.state, items, strong_rng());
	if (status == CC_PAST_HORIZON)
	{
		finish_at_horizon(cs, &step, ticks_seen);
		return false;
	}
	if (status != CC_OK)
		elog(ERROR, "counter \"%s\" cannot take its step (status %d)", step.name, (int) status);
	cc_read(step.state, &step.release);
	step.keyed = counter_keys_step(step.id, step.name, step.state, step.release.t, &step.taken);
	if (step.copied)
		pay_copy(&step);
	pay_next_blocks(&step);
	store_step(&step);
	alerts_fire(step.id, step.keyed ? &step.taken : NULL, step.release.t, items);
	end_work();
	if (step.refusal != NULL)
		ereport(LOG,
				(errmsg("counter \"%s\" took step " INT64_FORMAT " and releases no more: %s",
						step.name, step.release.t, step.refusal)));
	publish_step(cs, &step, ticks_seen);
	return step.refusal == NULL;
}

/*
 * Keep a refusal in the counter's slot, for tick() to raise, until the clock
 * asks the ledger again.
 */
static void
publish_refusal(CounterShared *cs, int64 id, const ErrorData *edata, uint64 ticks_seen)
{
	CounterSlot *slot;

	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	if ((slot = slot_of(cs, id)) != NULL)
	{
		slot->refused_code = edata->sqlerrcode;
		slot->refused_copy = paying.copy;
		strlcpy(slot->refused_message, edata->message, sizeof(slot->refused_message));
		strlcpy(slot->refused_detail, edata->detail ? edata->detail : "",
				sizeof(slot->refused_detail));
		slot->retry_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), REFUSED_RETRY_MS);
		slot->ticks_done = ticks_seen;
	}
	LWLockRelease(cs->lock);
	ConditionVariableBroadcast(&cs->step_closed);
}

/*
 * close_step, but a copied counter whose ledger refuses to pay again, or a
 * counter whose next blocks cannot be charged (but for a block's refusal,
 * which finishes it), stops alone: its step is rolled back, the refusal logged with the ledger's
 * SQLSTATE and kept in its slot for tick(), and false returned.  Any other
 * error ends the worker, as before.
 */
static bool
close_step_or_refuse(CounterShared *cs, int64 id, uint64 ticks_seen)
{
	MemoryContext context = CurrentMemoryContext;
	volatile bool closed = false;

	PG_TRY();
	{
		closed = close_step(cs, id, ticks_seen);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		if (!paying.active)
			PG_RE_THROW();
		paying.active = false;
		debug_query_string = NULL;
		MemoryContextSwitchTo(context);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		pgstat_report_activity(STATE_IDLE, NULL);

		ereport(WARNING,
				(errcode(edata->sqlerrcode),
				 errmsg(paying.copy ? "counter \"%s\" was copied and takes no step: %s" :
						"counter \"%s\" cannot pay the blocks of its next step and takes no step: %s",
						paying.name, edata->message),
				 edata->detail ? errdetail("%s", edata->detail) : 0,
				 paying.copy ?
				 errhint("A copy of a counter pays its epsilon (or rho) again before its next step. "
						 "The worker asks its ledger again at the next tick() and every %d seconds.",
						 REFUSED_RETRY_MS / 1000) :
				 errhint("The worker asks again at the next tick() and every %d seconds.",
						 REFUSED_RETRY_MS / 1000)));

		publish_refusal(cs, id, edata, ticks_seen);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	return closed;
}

/*
 * One round: close at most one due step (by the clock or by request) of
 * each counter, in slot order.  A counter far behind its schedule (after
 * downtime, or with steps the clock has long passed) takes one step a
 * round like every other, so it never delays another's steps by more than
 * a step of each counter; it catches up over the following rounds, from
 * its last committed step.  Returns how long to sleep before the next
 * round, in milliseconds: 0 if a step was closed, since that counter may
 * be due again at once.
 */
static long
close_due_steps(CounterShared *cs)
{
	long		sleep_ms = MAX_SLEEP_MS;

	for (int i = 0; i < cs->nslots; i++)
	{
		int64		id;
		bool		due;
		uint64		ticks;
		TimestampTz next;
		TimestampTz now = GetCurrentTimestamp();

		CHECK_FOR_INTERRUPTS();
		LWLockAcquire(cs->lock, LW_SHARED);
		id = cs->slots[i].id;
		ticks = cs->slots[i].ticks_requested;
		/* a step that ends beyond the timestamps is never due on the clock */
		if (!step_end(cs->slots[i].started_at, cs->slots[i].steps + 1, cs->slots[i].step_usecs, &next))
			next = DT_NOEND;
		due = id != 0 && !cs->slots[i].finished &&
			(ticks > cs->slots[i].ticks_done ||
			 (now >= next && now >= cs->slots[i].retry_at));
		LWLockRelease(cs->lock);
		if (id != 0 && !due && next > now)
			sleep_ms = Min(sleep_ms, (long) ((next - now) / 1000) + 1);
		if (due && close_step_or_refuse(cs, id, ticks))
			sleep_ms = 0;
	}
	return sleep_ms;
}

/* Says, under the error, why the worker could not connect. */
static void
connect_context(void *arg)
{
	errcontext("contcount step worker connecting to database \"%s\" (contcount.database), again every %d s",
			   (const char *) arg, WORKER_RESTART_S);
}

/*
 * Connect to contcount.database.  If it is gone (DROP DATABASE ... WITH
 * (FORCE) terminated the worker), the error is logged with why, and the
 * postmaster starts the worker again after WORKER_RESTART_S: it waits so
 * for the database to be there again.
 */
static void
connect_to_database(void)
{
	ErrorContextCallback context;

	context.callback = connect_context;
	context.arg = contcount_database;
	context.previous = error_context_stack;
	error_context_stack = &context;
	BackgroundWorkerInitializeConnection(contcount_database, NULL, 0);
	error_context_stack = context.previous;
	ereport(LOG,
			(errmsg("contcount step worker started in database \"%s\"", contcount_database)));
}

/*
 * Are this server's transactions read-only by default?  A failover manager
 * fences a node it promotes so: pg_auto_failover sets
 * default_transaction_read_only until the old primary is known to be
 * demoted, so that two primaries never both take writes.  The worker must
 * not write then either: it waits a round (a reload wakes it), rather than
 * fail on its first write and start again WORKER_RESTART_S later.
 * *waiting says whether it said so already.  Returns whether it waited.
 */
static bool
wait_while_read_only(bool *waiting)
{
	if (!DefaultXactReadOnly)
	{
		if (*waiting)
			ereport(LOG,
					(errmsg("contcount step worker resuming: default_transaction_read_only is off")));
		*waiting = false;
		return false;
	}
	if (!*waiting)
		ereport(LOG,
				(errmsg("contcount step worker waiting: default_transaction_read_only is on"),
				 errdetail("Its counters go on from their last committed step once it is off.")));
	*waiting = true;
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 MAX_SLEEP_MS, PG_WAIT_EXTENSION);
	return true;
}

void
counter_worker_main(Datum arg)
{
	CounterShared *cs;
	TimestampTz last_load = 0;
	bool		read_only = false;

	(void) arg;
	/* its charges are no role's statement: no per-statement cap holds them */
	contcount_step_worker = true;
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	connect_to_database();
	/* a step is published only once its transaction is flushed */
	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
	/* the database's search_path is its owner's to set, not ours to trust */
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_OVERRIDE);

	cs = counter_shared();
	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	cs->worker_latch = MyLatch;
	cs->reload_requested = true;
	LWLockRelease(cs->lock);

	while (!ShutdownRequestPending)
	{
		bool		reload;
		long		sleep_ms;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (wait_while_read_only(&read_only))
			continue;
		LWLockAcquire(cs->lock, LW_SHARED);
		reload = cs->reload_requested;
		LWLockRelease(cs->lock);
		if (reload || TimestampDifferenceExceeds(last_load, GetCurrentTimestamp(), RELOAD_INTERVAL_MS))
		{
			load_counters(cs);
			last_load = GetCurrentTimestamp();
		}
		sleep_ms = close_due_steps(cs);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, PG_WAIT_EXTENSION);
	}

	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	cs->worker_latch = NULL;
	LWLockRelease(cs->lock);
	/* exit code 1: the postmaster starts it again, unless it is shutting down */
	ereport(LOG,
			(errmsg("contcount step worker stopping: it received SIGTERM"),
			 errdetail("Unless the server is shutting down, it starts again in %d s, and its counters go on from their last committed step.",
					   WORKER_RESTART_S)));
	proc_exit(1);
}
