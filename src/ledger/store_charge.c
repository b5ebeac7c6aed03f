/*
 * store_charge.c
 *		Creating, charging, refunding and forgetting ledgers in the store, and
 *		reading what one spent.
 *
 * What it owns: the checks before an append (a whole store on a primary,
 * not stale, the ledger known, its budget, its room) and the waits after
 * it.  Each append holds StoreShared->lock exclusively from its check to the
 * update of the sums and flushes after releasing it, as the protocol at the
 * top of ledger_store.c says.
 *
 * IDENTIFICATION
 *	  src/ledger/store_charge.c
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/timestamp.h"

#include "common/errors.h"
#include "common/int.h"
#include "common/report.h"
#include "ledger/ledger_store.h"
#include "ledger/store_internal.h"

/*
 * Append the creation of a ledger in this database under name (which it is
 * found by again after a dropped extension), if there is room (refusals
 * worded for a superuser caller, or not).  Exclusive lock held.
 */
XLogRecPtr
store_append_creation(int64 ledger, const char *name, Oid role, TimestampTz at, cc_accounting accounting,
				bool superuser)
{
	char		buf[ITEM_MAX];
	StoreCharge creation = {
		.at = at,.role = role,.ledger = ledger,.cost = {accounting, 0},
		.function = "create_ledger",.statement = name
	};
	StoreItem  *item;

	store_require_ledger_room(role, superuser);
	item = store_build_item(buf, ITEM_CREATED, ledger, 0, &creation, NULL);
	item->database = MyDatabaseId;
	return store_append_item(item);
}

void
ledger_store_create(int64 ledger, const char *name, Oid role, cc_accounting accounting)
{
	/* looked up before the lock: catalog access */
	bool		superuser = superuser_arg(role);
	const char *creator = store_role_name(role);

	store_refuse_in_recovery();
	store_lock(LW_EXCLUSIVE);
	store_refuse_if_damaged();
	if (!superuser)
		store_require_ledger_share(role, creator);
	/* flushed by the commit of the catalog row, which follows it in WAL */
	(void) store_append_creation(ledger, name, role, GetCurrentTimestamp(), accounting, superuser);
	LWLockRelease(store_state->lock);
}

void
ledger_store_forget(int64 ledger)
{
	char		buf[ITEM_MAX];
	StoreCharge forget = {
		.at = GetCurrentTimestamp(),.role = GetUserId(),.ledger = ledger,
		.function = "drop_ledger",.statement = ""
	};

	store_refuse_in_recovery();
	store_lock(LW_EXCLUSIVE);
	store_refuse_if_damaged();
	if (hash_search(store_sums, &ledger, HASH_FIND, NULL) != NULL)
		(void) store_append_item(store_build_item(buf, ITEM_FORGOTTEN, ledger, 0, &forget, NULL));
	LWLockRelease(store_state->lock);
}

/* What one release of cost costs a ledger of accounting; ZB003 if it cannot pay. */
uint64
ledger_store_release_units(cc_accounting accounting, const char *name, cc_cost cost)
{
	uint64		units;

	if (!cc_ledger_cost(accounting, cost, &units))
		ereport(ERROR,
				(errcode(ERRCODE_CONTCOUNT_ACCOUNTING),
				 errmsg("ledger \"%s\" accounts in pure epsilon and cannot pay for a zCDP release", name),
				 errdetail("A release with Gaussian noise is rho-zCDP (here rho %s), which no epsilon bounds.",
						   format_budget_units(cost.units)),
				 errhint("Charge it to a zCDP ledger, created with contcount.create_ledger(name, rho => ..., delta => ...).")));
	return units;
}

/*
 * Take the store lock exclusively for a charge to ledger, on a primary whose
 * store is whole and knows the ledger, and return its sum; else an error.
 */
LedgerSum *
store_lock_for_charge(int64 ledger, const char *name)
{
	LedgerSum  *sum;

	store_refuse_in_recovery();
	store_lock(LW_EXCLUSIVE);
	store_refuse_if_damaged();
	if (store_state->stale)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the ledger store may be missing charges: releases are refused"),
				 errdetail("Recovery stopped at its target (%s); charges made after it, whose values "
						   "were shown, are not in this store.", store_state->stale_target),
				 errhint("Import the ledgers' latest export with contcount.import_ledgers(), then "
						 "accept the store with contcount.accept_ledger_store().")));
	sum = hash_search(store_sums, &ledger, HASH_FIND, NULL);
	if (sum == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("ledger \"%s\" is missing from the ledger store: releases are refused", name),
				 errdetail("The store does not hold it: it was dropped since the release looked it up, "
						   "or the store in WAL never recorded its creation (the ledger was restored or "
						   "upgraded without its spending, or the store was lost)."),
				 errhint("Import the ledger's export with contcount.import_ledgers(), or restore the "
						 "server from a base backup and its WAL.")));
	return sum;
}

/*
 * Refuse an overspend of a ledger the caller may not see (the data's, of a
 * protected source): what it has left tells what other roles spent.
 */
static void
refuse_hidden_overspend(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONTCOUNT_BUDGET_EXCEEDED),
			 errmsg("the data's privacy budget cannot pay for this release"),
			 errdetail("Ledger \"%s\" holds it; what it has left is shown to its admins.", name)));
}

int64
ledger_store_charge(int64 ledger, const char *name, uint64 budget_units,
					StoreCharge *charge, int64 max_releases)
{
	char		buf[ITEM_MAX];
	LedgerSum  *sum;
	uint64		each;
	uint64		remaining;
	uint64		affordable;
	XLogRecPtr	recptr;

	Assert(charge->cost.units > 0 && max_releases >= 1);
	sum = store_lock_for_charge(ledger, name);
	/* at least a unit: cost.units > 0, and a rho of an epsilon rounds up */
	each = ledger_store_release_units(sum->accounting, name, charge->cost);
	remaining = sum->spent_units > budget_units ? 0 : budget_units - sum->spent_units;
	affordable = remaining / each;
	if (affordable == 0 && charge->figures_hidden)
		refuse_hidden_overspend(name);
	if (affordable == 0 && sum->accounting == CC_PURE)
		ereport(ERROR,
				(errcode(ERRCODE_CONTCOUNT_BUDGET_EXCEEDED),
				 errmsg("privacy budget of ledger \"%s\" would be overspent", name),
				 errdetail("Requested epsilon %s, remaining epsilon %s.",
						   format_budget_units(each), format_budget_units(remaining))));
	if (affordable == 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONTCOUNT_BUDGET_EXCEEDED),
				 errmsg("privacy budget of ledger \"%s\" would be overspent", name),
				 charge->cost.accounting == CC_PURE ?
				 errdetail("Requested rho %s (a release of epsilon %s), remaining rho %s.",
						   format_budget_units(each), format_budget_units(charge->cost.units),
						   format_budget_units(remaining)) :
				 errdetail("Requested rho %s, remaining rho %s.",
						   format_budget_units(each), format_budget_units(remaining))));
	/* each * releases <= remaining: no overflow */
	charge->releases = (uint64) max_releases < affordable ? max_releases : (int64) affordable;
	charge->units = each * charge->releases;
	recptr = store_append_item(store_build_item(buf, ITEM_CHARGE, ledger, charge->units, charge, NULL));
	LWLockRelease(store_state->lock);
	store_make_durable(recptr);
	return charge->releases;
}

void
ledger_store_refund(StoreCharge *refund)
{
	char		buf[ITEM_MAX];
	LedgerSum  *sum;

	store_refuse_in_recovery();
	store_lock(LW_EXCLUSIVE);
	store_refuse_if_damaged();
	sum = hash_search(store_sums, &refund->ledger, HASH_FIND, NULL);
	/*
	 * Charged by this backend, so known to the store then: forgotten since
	 * (dropped), and what it spent no longer matters.
	 */
	if (sum == NULL)
	{
		LWLockRelease(store_state->lock);
		return;
	}
	/* the caller charged at least this much, and nothing lowers a sum else */
	if (!cc_ledger_cost(sum->accounting, refund->cost, &refund->units) ||
		pg_mul_u64_overflow(refund->units, (uint64) refund->releases, &refund->units) ||
		sum->spent_units < refund->units)
		elog(ERROR, "refund of more than ledger " INT64_FORMAT " was charged", refund->ledger);
	/* not flushed: a refund lost in a crash only keeps the budget spent */
	(void) store_append_item(store_build_item(buf, ITEM_REFUND, refund->ledger, refund->units, refund, NULL));
	LWLockRelease(store_state->lock);
}

bool
ledger_store_spent(int64 ledger, uint64 *spent_units, cc_accounting *accounting)
{
	LedgerSum  *sum;

	store_lock(LW_SHARED);
	store_refuse_if_damaged();
	sum = hash_search(store_sums, &ledger, HASH_FIND, NULL);
	if (sum != NULL)
	{
		*spent_units = sum->spent_units;
		if (accounting != NULL)
			*accounting = sum->accounting;
	}
	LWLockRelease(store_state->lock);
	return sum != NULL;
}
