/*
 * store_import.c
 *		Importing a ledger's export into the store, and the checks that refuse
 *		an export the store could not keep before anything is imported.
 *
 * An import never lowers what a ledger spent: it creates a ledger the store
 * does not hold (with its audit) and raises one that spent less, by a charge
 * of the difference.  The checks hold StoreShared->lock shared; the import
 * holds it exclusively and flushes after releasing it, as the protocol at
 * the top of ledger_store.c says.
 *
 * IDENTIFICATION
 *	  src/ledger/store_import.c
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/timestamp.h"

#include "common/errors.h"
#include "common/int.h"
#include "common/settings.h"
#include "ledger/ledger_store.h"
#include "ledger/store_internal.h"

/*
 * Refuse (22023) a ledger of an export whose name the store could not keep,
 * or whose audit does not add up as the store would: each charge what its
 * releases cost a ledger of that accounting, no refund beyond the charges
 * before it, and spent_units exactly what they sum to (an export's spending
 * is its audit's).  Nothing else can be trusted of such an export.
 */
static void
check_import_audit(const char *name, cc_accounting accounting, uint64 spent_units,
				   const StoreCharge *charges, int ncharges)
{
	uint64		running = 0;

	if (strlen(name) > LEDGER_NAME_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ledger name must be at most %d bytes", LEDGER_NAME_MAX)));
	for (int i = 0; i < ncharges; i++)
	{
		if (!store_charge_adds_up(accounting, charges[i].cost, charges[i].releases, charges[i].units))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a charge of the export of ledger \"%s\" is not what its releases cost a %s ledger",
							name, ledger_accounting_name(accounting))));
		if (!charges[i].refund)
		{
			if (pg_add_u64_overflow(running, charges[i].units, &running))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("the charges of the export of ledger \"%s\" exceed what a ledger can spend",
								name)));
		}
		else if (charges[i].units > running)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the export of ledger \"%s\" refunds more than it charged", name)));
		else
			running -= charges[i].units;
	}
	if (running != spent_units)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the export of ledger \"%s\" says it spent " UINT64_FORMAT
						" units, and its charges add up to " UINT64_FORMAT, name, spent_units, running)));
}

/* ZB003 if the store knows the ledger (sum) in another accounting. */
static void
check_import_accounting(const LedgerSum *sum, const char *name, cc_accounting accounting)
{
	if (sum != NULL && sum->accounting != accounting)
		ereport(ERROR,
				(errcode(ERRCODE_CONTCOUNT_ACCOUNTING),
				 errmsg("ledger \"%s\" accounts in %s here, and the export accounts it in %s",
						name, ledger_accounting_name(sum->accounting), ledger_accounting_name(accounting)),
				 errdetail("A ledger's accounting never changes: what it spent is in its own measure.")));
}

void
ledger_store_check_import(int64 ledger, const char *name, cc_accounting accounting,
						  uint64 spent_units, const StoreCharge *charges, int ncharges)
{
	store_lock(LW_SHARED);
	store_refuse_if_damaged();
	check_import_accounting(hash_search(store_sums, &ledger, HASH_FIND, NULL), name, accounting);
	LWLockRelease(store_state->lock);
	check_import_audit(name, accounting, spent_units, charges, ncharges);
}

int
ledger_store_check_import_blocks(int64 ledger, const char *name, const StoreBlock *exported,
								 int nblocks)
{
	int			fresh = 0;
	const char *shown = psprintf("\"%s\"", name);

	store_lock(LW_SHARED);
	store_refuse_if_damaged();
	for (int i = 0; i < nblocks; i++)
	{
		BlockRun	run = {exported[i].start, exported[i].end - exported[i].start, 1};

		/* as the store holds them: in order, none overlapping another */
		if (exported[i].end <= exported[i].start ||
			(i > 0 && exported[i].start < exported[i - 1].end))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the blocks of the export of ledger \"%s\" are not in order, "
							"each ending after it starts", name)));
		store_refuse_other_length(ledger, &run, shown);
		fresh += hash_search(store_block_sums, &(BlockKey) {ledger, exported[i].start}, HASH_FIND, NULL) == NULL;
	}
	LWLockRelease(store_state->lock);
	return fresh;
}

void
ledger_store_check_import_room(int ledgers, int64 nblocks)
{
	store_lock(LW_SHARED);
	if (hash_get_num_entries(store_sums) + ledgers > contcount_max_ledgers)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("the server already holds contcount.max_ledgers = %d ledgers",
						contcount_max_ledgers),
				 errdetail("The export has %d ledgers this store does not hold.", ledgers),
				 errhint("Raise contcount.max_ledgers and restart the server.")));
	if (hash_get_num_entries(store_block_sums) + nblocks > contcount_max_blocks)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("the server holds room for contcount.max_blocks = %d blocks", contcount_max_blocks),
				 errdetail("The export has " INT64_FORMAT " blocks this store does not hold.", nblocks),
				 errhint("Raise contcount.max_blocks and restart the server.")));
	LWLockRelease(store_state->lock);
}

const char *
ledger_store_import(int64 ledger, const char *name, cc_accounting accounting,
					TimestampTz created_at, Oid created_by, uint64 spent_units,
					const StoreCharge *charges, int ncharges)
{
	char		buf[ITEM_MAX];
	LedgerSum  *sum;
	const char *action = "kept";
	XLogRecPtr	last = InvalidXLogRecPtr;
	uint64		forgotten_units;
	cc_accounting forgotten_accounting;

	store_refuse_in_recovery();
	store_lock(LW_EXCLUSIVE);
	store_refuse_if_damaged();
	sum = hash_search(store_sums, &ledger, HASH_FIND, NULL);
	/* a ledger dropped here stays dropped, and takes no room again */
	if (sum == NULL && store_forgotten(ledger, &forgotten_units, &forgotten_accounting))
	{
		LWLockRelease(store_state->lock);
		return "kept";
	}
	check_import_accounting(sum, name, accounting);
	check_import_audit(name, accounting, spent_units, charges, ncharges);
	if (sum == NULL)
	{
		/* only a superuser imports */
		last = store_append_creation(ledger, name, created_by, created_at, accounting, true);
		for (int i = 0; i < ncharges; i++)
			last = store_append_item(store_build_item(buf, charges[i].refund ? ITEM_REFUND : ITEM_CHARGE,
										  ledger, charges[i].units, &charges[i],
										  charges[i].function));
		sum = hash_search(store_sums, &ledger, HASH_FIND, NULL);
		action = "created";
	}
	if (sum->spent_units < spent_units)
	{
		/* the difference, as one release of the ledger's own kind */
		StoreCharge raise = {
			.at = GetCurrentTimestamp(),.role = GetUserId(),.ledger = ledger,
			.cost = {accounting, spent_units - sum->spent_units},.releases = 1,
			.statement = "what the export spent beyond its audit"
		};

		last = store_append_item(store_build_item(buf, ITEM_CHARGE, ledger, spent_units - sum->spent_units,
									  &raise, "import_ledgers"));
		if (strcmp(action, "kept") == 0)
			action = "raised";
	}
	LWLockRelease(store_state->lock);
	if (last != InvalidXLogRecPtr)
		store_make_durable(last);
	return action;
}
