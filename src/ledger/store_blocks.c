/*
 * store_blocks.c
 *		The budgets of a ledger's blocks of time in the store: charging a run of
 *		blocks, all or none, checking their room, raising them from an export,
 *		and listing them.
 *
 * Blocks.  A protected source may hold its budget per block of time
 * (src/sources/source_blocks.c); the blocks' spending lives here too, under
 * the source's ledger, keyed by the block's start.  A block charge
 * (ITEM_BLOCK_CHARGE, format 2 only) pays for one release from each block of
 * a run of consecutive blocks of one length, the run (BlockRun) following
 * the statement: one item, one WAL record, so that redo, like the append
 * under the lock, applies all of the run's blocks or none.  A block is
 * created by its first charge and forgotten only with its ledger; redo finding a block with
 * another end damages the store, and an append refuses a run overlapping
 * blocks of another length.  A ledger's own charges (releases of all its
 * data, before its blocks were declared or from sources without blocks)
 * count against every block of it.  Blocks do not add to their ledger's
 * sum, nor are they in the audit of charges or its curve: they have their
 * own views; an import raises a block by a block charge of the difference.
 * A 0.4 library fails closed on the new kind, as on format 2.
 *
 * Locking: a block charge holds StoreShared->lock exclusively from the
 * budget check of every block of its run to the update of the sums, as
 * the protocol at the top of ledger_store.c says; a check of room or a
 * listing holds it shared.
 *
 * IDENTIFICATION
 *	  src/ledger/store_blocks.c
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/timestamp.h"

#include "common/errors.h"
#include "common/int.h"
#include "common/report.h"
#include "common/settings.h"
#include "ledger/ledger_store.h"
#include "ledger/store_internal.h"

/* "start, end", for messages, palloc'd. */
static char *
block_range(TimestampTz start, TimestampTz end)
{
	char	   *first = pstrdup(timestamptz_to_str(start));

	return psprintf("%s, %s", first, timestamptz_to_str(end));
}

/*
 * The first block of ledger charged with another length than run's that
 * overlaps run's blocks, or NULL.  Lock held.
 */
static BlockSum *
other_block(int64 ledger, const BlockRun *run)
{
	HASH_SEQ_STATUS scan;
	BlockSum   *block;
	TimestampTz end = run->first + run->count * run->length;

	hash_seq_init(&scan, store_block_sums);
	while ((block = hash_seq_search(&scan)) != NULL)
		if (block->key.ledger == ledger && block->key.start < end && block->end > run->first &&
			(block->end - block->key.start != run->length ||
			 (block->key.start - run->first) % run->length != 0))
		{
			hash_seq_term(&scan);
			return block;
		}
	return NULL;
}

/*
 * Append a block charge of charge->units to each block of run, built in buf
 * (ITEM_MAX bytes).  Exclusive lock held.  Returns the record's end.
 */
static XLogRecPtr
append_block_charge(char *buf, const StoreCharge *charge, const BlockRun *run)
{
	StoreItem  *item = store_build_item(buf, ITEM_BLOCK_CHARGE, charge->ledger, charge->units, charge, NULL);

	memcpy((char *) item + item->length, run, sizeof(BlockRun));
	item->length += sizeof(BlockRun);
	return store_append_item(item);
}

/*
 * 55000 if the block of an export in run overlaps a block of ledger (shown,
 * as messages show it) charged with another length.  Lock held.
 */
void
store_refuse_other_length(int64 ledger, const BlockRun *run, const char *shown)
{
	BlockSum   *block = other_block(ledger, run);

	if (block != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("a block of the export overlaps a block of another length in this store"),
				 errdetail("Block [%s) of ledger %s is in this store.",
						   block_range(block->key.start, block->end), shown)));
}

/* How many of run's blocks ledger does not hold yet.  Lock held. */
static int64
fresh_blocks(int64 ledger, const BlockRun *run)
{
	int64		fresh = 0;

	for (int64 i = 0; i < run->count; i++)
	{
		BlockKey	key = {ledger, run->first + i * run->length};

		fresh += hash_search(store_block_sums, &key, HASH_FIND, NULL) == NULL;
	}
	return fresh;
}

void
ledger_store_check_block_room(int64 ledger, const char *name, const StoreBlockRun *want, Oid role)
{
	BlockRun	run = {want->first, want->length, want->count};
	int64		fresh;
	/* looked up before the lock: catalog access */
	bool		superuser = superuser_arg(role);

	store_lock(LW_SHARED);
	store_refuse_if_damaged();
	fresh = fresh_blocks(ledger, &run);
	if (fresh > 0)
		store_require_block_room(ledger, name, fresh, superuser);
	LWLockRelease(store_state->lock);
}

void
ledger_store_charge_blocks(int64 ledger, const char *name, uint64 budget_units,
						   StoreCharge *charge, const StoreBlockRun *want)
{
	char		buf[ITEM_MAX];
	BlockRun	run = {want->first, want->length, want->count};
	LedgerSum  *sum;
	BlockSum   *block;
	uint64		each;
	int64		fresh;
	XLogRecPtr	recptr;
	/* looked up before the lock: catalog access */
	bool		superuser = superuser_arg(charge->role);

	Assert(charge->ledger == ledger && charge->cost.units > 0 && run.length > 0 && run.count > 0);
	sum = store_lock_for_charge(ledger, name);
	each = ledger_store_release_units(sum->accounting, name, charge->cost);
	block = other_block(ledger, &run);
	if (block != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the blocks of ledger \"%s\" were charged with another length", name),
				 errdetail("Block [%s) was charged, and a block is never made again with a fresh budget.",
						   block_range(block->key.start, block->end)),
				 errhint("Declare the blocks' length as it was when they were charged.")));
	/* every block pays, or none */
	for (int64 i = 0; i < run.count; i++)
	{
		BlockKey	key = {ledger, run.first + i * run.length};
		uint64		spent;

		block = hash_search(store_block_sums, &key, HASH_FIND, NULL);
		/* the ledger's own charges read rows of every block */
		if (pg_add_u64_overflow(block ? block->spent_units : 0, sum->spent_units, &spent))
			spent = PG_UINT64_MAX;
		if (spent > budget_units || budget_units - spent < each)
			ereport(ERROR,
					(errcode(ERRCODE_CONTCOUNT_BUDGET_EXCEEDED),
					 errmsg("privacy budget of block [%s) of ledger \"%s\" would be overspent",
							block_range(key.start, key.start + run.length), name),
					 errdetail("Requested %s %s, remaining %s; no block of the release was charged.",
							   sum->accounting == CC_PURE ? "epsilon" : "rho", format_budget_units(each),
							   format_budget_units(spent > budget_units ? 0 : budget_units - spent))));
	}
	fresh = fresh_blocks(ledger, &run);
	if (fresh > 0)
		store_require_block_room(ledger, name, fresh, superuser);
	charge->releases = 1;
	charge->units = each;
	recptr = append_block_charge(buf, charge, &run);
	LWLockRelease(store_state->lock);
	store_make_durable(recptr);
}

void
ledger_store_import_blocks(int64 ledger, const StoreBlock *exported, int nblocks)
{
	char		buf[ITEM_MAX];
	char		name[32];
	LedgerSum  *sum;
	XLogRecPtr	last = InvalidXLogRecPtr;

	snprintf(name, sizeof(name), "id " INT64_FORMAT, ledger);
	sum = store_lock_for_charge(ledger, name);
	for (int i = 0; i < nblocks; i++)
	{
		BlockKey	key = {ledger, exported[i].start};
		BlockRun	run = {exported[i].start, exported[i].end - exported[i].start, 1};
		BlockSum   *block;
		uint64		spent;
		StoreCharge raise = {
			.at = GetCurrentTimestamp(),.role = GetUserId(),.ledger = ledger,.releases = 1,
			.function = "import_ledgers",.statement = "what the export's block spent beyond this store's"
		};

		if (run.length <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a block of the export ends before it starts"),
					 errdetail("A block of ledger %s.", name)));
		store_refuse_other_length(ledger, &run, name);
		block = hash_search(store_block_sums, &key, HASH_FIND, NULL);
		spent = block ? block->spent_units : 0;
		if (exported[i].spent_units <= spent)
			continue;
		if (block == NULL && hash_get_num_entries(store_block_sums) >= contcount_max_blocks)
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("the server holds room for contcount.max_blocks = %d blocks", contcount_max_blocks),
					 errhint("Raise contcount.max_blocks and restart the server.")));
		/* the difference, as one release of the ledger's own kind */
		raise.cost.accounting = sum->accounting;
		raise.cost.units = exported[i].spent_units - spent;
		raise.units = raise.cost.units;
		last = append_block_charge(buf, &raise, &run);
	}
	LWLockRelease(store_state->lock);
	if (last != InvalidXLogRecPtr)
		store_make_durable(last);
}

StoreBlock *
ledger_store_blocks(int64 *nblocks)
{
	HASH_SEQ_STATUS scan;
	BlockSum   *block;
	StoreBlock *all;
	int64		n = 0;

	store_lock(LW_SHARED);
	store_refuse_if_damaged();
	all = palloc_array(StoreBlock, Max(hash_get_num_entries(store_block_sums), 1));
	hash_seq_init(&scan, store_block_sums);
	while ((block = hash_seq_search(&scan)) != NULL)
	{
		LedgerSum  *sum = hash_search(store_sums, &block->key.ledger, HASH_FIND, NULL);

		all[n].ledger = block->key.ledger;
		all[n].start = block->key.start;
		all[n].end = block->end;
		all[n].spent_units = block->spent_units;
		/* a block's charge found its ledger in the store */
		all[n].ledger_spent_units = sum->spent_units;
		n++;
	}
	LWLockRelease(store_state->lock);
	*nblocks = n;
	return all;
}
