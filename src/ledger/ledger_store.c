/*
 * ledger_store.c
 *		The durable truth of the privacy budget: ledger creations, charges and
 *		refunds, appended to pages of a relation of our own and written through
 *		a custom WAL resource manager; and the sums they add up to, kept in
 *		shared memory.  This file owns that shared state: it loads it, appends
 *		items and redoes them, and states the locking protocol below.
 *
 * The store's files (store_internal.h is what they share):
 *	store_page.c	the items and pages of the file, and scanning it
 *	store_wal.c		the flush and synchronous standbys; desc, identify, mask
 *	store_stale.c	recovery stopped at a target: the file its end leaves
 *	store_legacy.c	taking contcount 0.2's store file in
 *	ledger_store.c	the shared state, its lock, the load, append and redo
 *	store_room.c	refusals for want of room, and who holds it
 *	store_charge.c	creating, charging, refunding, forgetting a ledger
 *	store_audit.c	the audit, forgotten ledgers, names created
 *	store_blocks.c	the budgets of blocks of time
 *	store_import.c	importing an export, and checking it first
 * Each calls only the ones above it in this list and this file.
 *
 * Every change to the store is a WAL record of our resource manager,
 * appending an item to the store's last page, inserted outside any
 * transaction and flushed before the value it pays for is shown
 * (store_wal.c says why a relation in WAL; store_page.c, why pages, and the
 * item formats).
 *
 * Sums.  Shared memory holds each ledger's accounting and what it spent,
 * added up from the pages by the first backend that needs them after start
 * (on a standby too) and kept current by every append and, once loaded, by
 * redo.  Redo of a record whose page already held it (BLK_DONE) adds
 * nothing: the load counted it from the page.
 *
 * Accounting.  A ledger accounts in pure epsilon or in zCDP rho, for good:
 * its creation item says which, and every charge item says both what its
 * releases cost in their own accounting (each pure release's epsilon, each
 * Gaussian release's rho and what its noise is, cc_gauss, and how many)
 * and what the ledger was charged in its own (units), so that the
 * composition can be rebuilt release by release (ledger_curve.c).
 * Applying an item checks that the two agree (a zCDP release on a pure
 * ledger, or units that are not the releases' cost, damage the store).
 *
 * Forgetting.  A ledger that nothing can charge any more (its drop
 * committed, or its creation rolled back: ledger_forget.c) gives back its
 * room: an ITEM_FORGOTTEN item (format 2 only) removes its sum and its
 * blocks, in the append as in the load and redo, so the room stays free
 * through restarts and on standbys.  Its items stay on the pages, for the
 * audit and the export; an import keeps it forgotten.  A charge after it
 * finds no sum and is refused; a refund after it is dropped.  Each role that
 * is not a superuser creates at most contcount.max_ledgers_per_role live
 * ledgers (the sum keeps its creator), and each ledger holds at most
 * contcount.max_blocks_per_ledger blocks.  A 0.5 library fails closed on
 * the new kind.
 *
 * Failing closed.  An item whose CRC fails, a charge to a ledger the store
 * never created, more ledgers than contcount.max_ledgers, or a 0.2 store file
 * that is not the one taken in (store_legacy.c), mark the store damaged:
 * every charge is refused until the server is restored and restarted.  A lost
 * store file leaves the catalog's ledgers missing from the store: refused
 * too.  A standby refuses releases (it cannot log a charge) but shows spent
 * and the audit.
 *
 * Locking protocol: StoreShared->lock guards StoreShared, the sums hash and
 * the blocks hash, and serializes appends (so the last page and the
 * relation's extension have one writer).  An append holds it exclusively
 * from the budget check (of every block of a block charge) through the page
 * change and WAL insert to the update of the sums, and releases it before
 * the flush, so that flushes of concurrent charges overlap and
 * group-commit.  A charge seen by others before its flush can only make
 * them refuse more, and their own flush, later in WAL, covers it.  Reading
 * a sum takes the lock shared; the first reader after start loads the sums
 * under it exclusively.  Redo takes it exclusively around each record, and
 * always before the buffer lock, as appends and the load do.  Scanning the
 * audit takes no store lock, only each page's buffer lock in turn.
 *
 * IDENTIFICATION
 *	  src/ledger/ledger_store.c
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#include "common/seal.h"
#include "common/settings.h"
#include "ledger/ledger_store.h"
#include "ledger/store_internal.h"


StoreShared *store_state = NULL;
HTAB	   *store_sums = NULL;
HTAB	   *store_block_sums = NULL;

static void store_redo(XLogReaderState *record);

static RmgrData store_rmgr = {
	.rm_name = RM_CONTCOUNT_NAME,
	.rm_redo = store_redo,
	.rm_desc = store_desc,
	.rm_identify = store_identify,
	.rm_cleanup = store_cleanup,
	.rm_mask = store_mask
};

/* the same resource manager under the id 0.5 wrote: see store_internal.h */
static RmgrData store_legacy_rmgr = {
	.rm_name = RM_CONTCOUNT_LEGACY_NAME,
	.rm_redo = store_redo,
	.rm_desc = store_desc,
	.rm_identify = store_identify,
	.rm_cleanup = store_cleanup,
	.rm_mask = store_mask
};

void
store_mark_damaged(const char *what)
{
	store_state->damaged = true;
	strlcpy(store_state->damage, what, sizeof(store_state->damage));
	ereport(LOG,
			(errmsg("the ledger store is damaged, releases will be refused: %s", what)));
}

static void
require_store(void)
{
	if (store_state == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("contcount must be loaded through shared_preload_libraries"),
				 errhint("Add contcount to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/* The error every use of a damaged store gets.  Lock held. */
void
store_refuse_if_damaged(void)
{
	if (store_state->damaged)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the privacy budget ledger store is damaged: releases are refused"),
				 errdetail("%s", store_state->damage),
				 errhint("Restore the server from a base backup and its WAL (point-in-time recovery), "
						 "or import the ledgers' last export with contcount.import_ledgers(), and restart.")));
}

/*
 * Add units to each block of run of ledger, creating those it is the first
 * charge of.  Lock held exclusively.  Returns false, with the store marked
 * damaged, if a block had another end or there is no room for one.
 */
static bool
apply_block_run(int64 ledger, const BlockRun *run, uint64 units)
{
	for (int64 i = 0; i < run->count; i++)
	{
		BlockKey	key = {ledger, run->first + i * run->length};
		bool		found;
		BlockSum   *block = hash_search(store_block_sums, &key, HASH_ENTER_NULL, &found);

		if (block == NULL)
		{
			store_mark_damaged("more blocks than contcount.max_blocks");
			return false;
		}
		if (!found)
		{
			block->end = key.start + run->length;
			block->spent_units = 0;
		}
		else if (block->end != key.start + run->length)
		{
			char		what[160];

			snprintf(what, sizeof(what), "a block charge of ledger " INT64_FORMAT
					 " whose block at " INT64_FORMAT " has another length", ledger, key.start);
			store_mark_damaged(what);
			return false;
		}
		block->spent_units += units;
	}
	return true;
}

/*
 * Give back the room of a ledger that nothing can charge any more: its sum
 * and its blocks.  Its items stay on the pages, for the audit.  Lock held
 * exclusively.
 */
static void
forget_ledger(int64 ledger)
{
	HASH_SEQ_STATUS scan;
	BlockSum   *block;

	hash_seq_init(&scan, store_block_sums);
	while ((block = hash_seq_search(&scan)) != NULL)
		if (block->key.ledger == ledger)
			(void) hash_search(store_block_sums, &block->key, HASH_REMOVE, NULL);
	(void) hash_search(store_sums, &ledger, HASH_REMOVE, NULL);
}

/* What applying an item found. */
typedef enum Applied
{
	APPLIED,
	UNEXPECTED,					/* not applicable: the store is damaged */
	DAMAGED						/* the store marked damaged already */
} Applied;

/* A ledger's creation: its sum, with its accounting for good. */
static Applied
apply_creation(const StoreItem *item)
{
	LedgerSum  *sum;
	bool		found;

	if (item->accounting != CC_PURE && item->accounting != CC_ZCDP)
		return UNEXPECTED;
	sum = hash_search(store_sums, &item->ledger, HASH_ENTER_NULL, &found);
	if (sum == NULL)
	{
		store_mark_damaged("more ledgers than contcount.max_ledgers");
		return DAMAGED;
	}
	if (!found)
	{
		sum->spent_units = 0;
		sum->accounting = (cc_accounting) item->accounting;
		sum->created_by = item->role;
		sum->database = item->database;
	}
	return sum->accounting == item->accounting ? APPLIED : UNEXPECTED;
}

/*
 * The sum of the ledger a charge, refund or block charge item pays from, if
 * the store knows it and the item's units are what its releases cost it;
 * else NULL.
 */
static LedgerSum *
paying_sum(const StoreItem *item)
{
	LedgerSum  *sum = hash_search(store_sums, &item->ledger, HASH_FIND, NULL);

	if (sum == NULL ||
		!store_charge_adds_up(sum->accounting,
							  (cc_cost) {.accounting = (cc_accounting) item->accounting,
										 .units = item->release_units},
							  item->releases, item->units))
		return NULL;
	return sum;
}

/* A charge or refund, to its ledger's sum. */
static Applied
apply_charge(const StoreItem *item)
{
	LedgerSum  *sum = paying_sum(item);

	if (sum == NULL)
		return UNEXPECTED;
	if (ITEM_KIND(item) == ITEM_CHARGE)
	{
		sum->spent_units += item->units;
		return APPLIED;
	}
	/* a refund never exceeds what its ledger was charged */
	if (item->units > sum->spent_units)
		return UNEXPECTED;
	sum->spent_units -= item->units;
	return APPLIED;
}

/* A block charge, one release from each block of its run. */
static Applied
apply_block_charge(const StoreItem *item)
{
	BlockRun	run;

	if (paying_sum(item) == NULL || !store_item_block_run(item, &run) || item->releases != 1)
		return UNEXPECTED;
	return apply_block_run(item->ledger, &run, item->units) ? APPLIED : DAMAGED;
}

/* An item about the store itself: the 0.2 take-in, a recovery stop. */
static Applied
apply_store_event(const StoreItem *item)
{
	switch (ITEM_KIND(item))
	{
		case ITEM_LEGACY_BEGIN:
			store_state->legacy_begun = true;
			store_state->legacy_size = (int64) item->units;
			store_state->legacy_crc = (pg_crc32c) item->ledger;
			break;
		case ITEM_LEGACY_END:
			store_state->legacy_done = true;
			break;
		case ITEM_STALE:
			store_state->stale = true;
			strlcpy(store_state->stale_target, item->text + strlen(item->text) + 1,
					sizeof(store_state->stale_target));
			break;
		case ITEM_ACCEPTED:
			store_state->stale = false;
			break;
		default:
			return UNEXPECTED;
	}
	return APPLIED;
}

/* A forgotten ledger: appended only for one the store knows, under the lock. */
static Applied
apply_forgotten(const StoreItem *item)
{
	if (hash_search(store_sums, &item->ledger, HASH_FIND, NULL) == NULL)
		return UNEXPECTED;
	forget_ledger(item->ledger);
	return APPLIED;
}

/*
 * Apply one item, in format 2, to the sums and the 0.2 import's state.  Lock
 * held exclusively.  Returns false, with the store marked damaged, if it
 * cannot be applied.
 */
static bool
apply_item(const StoreItem *item)
{
	Applied		applied;
	char		what[160];

	if (item->legacy_end > store_state->legacy_next)
		store_state->legacy_next = item->legacy_end;
	switch (ITEM_KIND(item))
	{
		case ITEM_CREATED:
			applied = apply_creation(item);
			break;
		case ITEM_CHARGE:
		case ITEM_REFUND:
			applied = apply_charge(item);
			break;
		case ITEM_BLOCK_CHARGE:
			applied = apply_block_charge(item);
			break;
		case ITEM_FORGOTTEN:
			applied = apply_forgotten(item);
			break;
		default:
			applied = apply_store_event(item);
			break;
	}
	if (applied == UNEXPECTED)
	{
		snprintf(what, sizeof(what), "an unexpected item of kind %u (accounting %u) for ledger " INT64_FORMAT,
				 item->kind, item->accounting, item->ledger);
		store_mark_damaged(what);
	}
	return applied == APPLIED;
}

static bool
load_one(const StoreItem *item, void *arg pg_attribute_unused())
{
	return apply_item(item);
}

/*
 * Log the target recovery stopped at, if store_cleanup left one, so that it
 * binds on this server, its standbys and its base backups; then remove the
 * file.  Exclusive lock held, on a primary.
 */
static void
log_recovery_stop(void)
{
	char		buf[ITEM_MAX];
	char		target[128] = "";
	StoreCharge marker = {.at = GetCurrentTimestamp(),.role = InvalidOid,.statement = target};

	if (!store_stale_target(target, sizeof(target)))
		return;
	XLogFlush(store_append_item(store_build_item(buf, ITEM_STALE, 0, 0, &marker,
												 "recovery stopped at a target")));
	store_stale_logged();
}

/*
 * Add up the sums from the pages, once after start, and on a primary take in
 * or check a 0.2 file.  Exclusive lock held.
 */
static void
load_store(void)
{
	if (!store_state->loaded)
	{
		char		what[128];
		BlockNumber nblocks = store_blocks();

		if (store_scan_items(load_one, NULL, what, sizeof(what)) == SCAN_DAMAGED)
			store_mark_damaged(what);
		store_state->last_block = nblocks > 0 ? nblocks - 1 : InvalidBlockNumber;
		store_state->loaded = true;
	}
	if (!store_state->legacy_checked && !store_state->damaged && !RecoveryInProgress())
	{
		const char *damage = store_import_legacy(store_state,
												 hash_get_num_entries(store_sums) == 0,
												 store_append_item);

		if (damage != NULL)
			store_mark_damaged(damage);
		log_recovery_stop();
		store_state->legacy_checked = true;
	}
}

/*
 * Take the store lock in mode, the sums loaded.  The first caller after start
 * loads them, exclusively.
 */
void
store_lock(LWLockMode mode)
{
	require_store();
	LWLockAcquire(store_state->lock, mode);
	if (store_state->loaded && (store_state->legacy_checked || RecoveryInProgress()))
		return;
	if (mode == LW_SHARED)
	{
		LWLockRelease(store_state->lock);
		LWLockAcquire(store_state->lock, LW_EXCLUSIVE);
		load_store();
		LWLockRelease(store_state->lock);
		LWLockAcquire(store_state->lock, LW_SHARED);
	}
	else
		load_store();
}

/*
 * Append an item (format 2, stored as store_seal_item says) to the store's
 * pages, logged, not flushed (store_wal_append), and to the sums.
 * Exclusive lock held.  Returns the record's end.  The page read and the
 * record written are not the caller's buffer and WAL usage (common/seal.h):
 * EXPLAIN (ANALYZE, BUFFERS, WAL) around a release shows the call, not how
 * full the store's last page was.
 */
XLogRecPtr
store_append_item(StoreItem *item)
{
	SealedUsage usage;
	XLogRecPtr	recptr;
	char		compact[ITEM_MAX];

	Assert(!RecoveryInProgress());
	seal_usage_save(&usage);
	recptr = store_wal_append(store_seal_item(item, compact), &store_state->last_block);
	seal_usage_restore(&usage);
	if (!apply_item(item))
		store_refuse_if_damaged();
	return recptr;
}

void
ledger_store_accept(void)
{
	char		buf[ITEM_MAX];
	StoreCharge accept = {.at = GetCurrentTimestamp(),.role = GetUserId(),.statement = ""};
	XLogRecPtr	recptr = InvalidXLogRecPtr;

	store_refuse_in_recovery();
	store_lock(LW_EXCLUSIVE);
	store_refuse_if_damaged();
	if (store_state->stale)
		recptr = store_append_item(store_build_item(buf, ITEM_ACCEPTED, 0, 0, &accept, "accept_ledger_store"));
	LWLockRelease(store_state->lock);
	if (recptr != InvalidXLogRecPtr)
		store_make_durable(recptr);
}

uint64
ledger_store_generation(void)
{
	return store_state == NULL ? 0 : pg_atomic_read_u64(&store_state->catalog_generation);
}

void
ledger_store_catalog_changed(void)
{
	if (store_state != NULL)
		pg_atomic_fetch_add_u64(&store_state->catalog_generation, 1);
}

/*
 * Register the resource manager under its id, and under 0.5's id for the
 * records 0.5 left in WAL while contcount.replay_legacy_wal is on.  Another
 * library preloaded before this one may hold 128 (it is every extension's
 * id in development): PostgreSQL would refuse the second registration
 * anyway, and the server would not start; the error says what to do.
 */
void
ledger_store_register_rmgr(void)
{
	RegisterCustomRmgr(RM_CONTCOUNT_ID, &store_rmgr);
	if (!contcount_replay_legacy_wal)
		return;
	if (RmgrIdExists(RM_CONTCOUNT_LEGACY_ID))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("contcount cannot replay 0.5's WAL: resource manager id %d is taken by \"%s\"",
						RM_CONTCOUNT_LEGACY_ID, RmgrTable[RM_CONTCOUNT_LEGACY_ID].rm_name),
				 errdetail("contcount 0.5 and earlier wrote their WAL records under id %d; 0.6 writes them under id %d.",
						   RM_CONTCOUNT_LEGACY_ID, RM_CONTCOUNT_ID),
				 errhint("Once no WAL written by contcount 0.5 remains to be replayed, set contcount.replay_legacy_wal = off.")));
	RegisterCustomRmgr(RM_CONTCOUNT_LEGACY_ID, &store_legacy_rmgr);
}

void
ledger_store_shmem_request(void)
{
	RequestAddinShmemSpace(add_size(add_size(MAXALIGN(sizeof(StoreShared)),
											 hash_estimate_size(contcount_max_ledgers,
																sizeof(LedgerSum))),
									hash_estimate_size(contcount_max_blocks, sizeof(BlockSum))));
	RequestNamedLWLockTranche("contcount_ledger", 1);
}

void
ledger_store_shmem_startup(void)
{
	HASHCTL		info;
	bool		found;

	store_state = ShmemInitStruct("contcount ledger store", sizeof(StoreShared), &found);
	info.keysize = sizeof(int64);
	info.entrysize = sizeof(LedgerSum);
	store_sums = ShmemInitHash("contcount ledger sums", contcount_max_ledgers,
						 contcount_max_ledgers, &info, HASH_ELEM | HASH_BLOBS);
	info.keysize = sizeof(BlockKey);
	info.entrysize = sizeof(BlockSum);
	store_block_sums = ShmemInitHash("contcount ledger blocks", contcount_max_blocks,
						   contcount_max_blocks, &info, HASH_ELEM | HASH_BLOBS);
	if (!found)
	{
		memset(store_state, 0, sizeof(*store_state));
		pg_atomic_init_u64(&store_state->catalog_generation, 1);
		store_state->lock = &(GetNamedLWLockTranche("contcount_ledger"))->lock;
		store_state->last_block = InvalidBlockNumber;
	}
}

void
store_refuse_in_recovery(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot change the ledger store during recovery"),
				 errdetail("A standby shows what was spent but cannot record a charge.")));
}

/*
 * Redo: add the item to its page unless the page has it already
 * (store_wal_redo_page), and, once the sums are loaded, to the sums.
 */
static void
store_redo(XLogReaderState *record)
{
	const StoreItem *item = store_wal_record_item(record);
	BlockNumber blkno;

	LWLockAcquire(store_state->lock, LW_EXCLUSIVE);
	if (store_wal_redo_page(record, item, &blkno) && store_state->loaded)
	{
		if (store_state->last_block == InvalidBlockNumber || blkno > store_state->last_block)
			store_state->last_block = blkno;
		if (!store_state->damaged)
		{
			/* a 0.4 primary's record, or this library's */
			char		format_2[ITEM_MAX];

			(void) apply_item(store_item_in_format_2(item, format_2));
		}
	}
	LWLockRelease(store_state->lock);
}

