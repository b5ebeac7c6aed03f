/*
 * store_audit.c
 *		Reading the store's items back: the audit of charges and of block
 *		charges, what a forgotten ledger had spent, and the ledger a name was
 *		last created as.
 *
 * Locking: a scan checks under StoreShared->lock, shared, that the store is
 * whole, then reads the pages without it, each page's buffer lock in turn
 * (the protocol is at the top of ledger_store.c).
 *
 * IDENTIFICATION
 *	  src/ledger/store_audit.c
 */
#include "postgres.h"

#include "ledger/ledger_store.h"
#include "ledger/store_internal.h"

typedef struct AuditScan
{
	void		(*fn) (const StoreCharge *charge, void *arg);
	void		(*block_fn) (const StoreCharge *charge, const StoreBlockRun *run, void *arg);
	void	   *arg;
} AuditScan;

/* A charge, refund or block charge item as the audit shows it. */
static void
item_charge(const StoreItem *item, StoreCharge *charge)
{
	charge->at = item->at;
	charge->role = item->role;
	charge->ledger = item->ledger;
	charge->cost.accounting = (cc_accounting) item->accounting;
	charge->cost.units = item->release_units;
	charge->cost.gauss.sigma2.num = item->sigma2_num;
	charge->cost.gauss.sigma2.den = item->sigma2_den;
	charge->cost.gauss.coordinates = item->coordinates;
	charge->cost.gauss.shift = item->shift;
	charge->cost.gauss.l1_units = item->l1_units;
	charge->releases = item->releases;
	charge->units = item->units;
	charge->refund = ITEM_KIND(item) == ITEM_REFUND;
	charge->function = item->text;
	charge->statement = item->text + strlen(item->text) + 1;
}

static bool
audit_one(const StoreItem *item, void *arg)
{
	AuditScan  *scan = (AuditScan *) arg;
	StoreCharge charge;

	if (ITEM_KIND(item) == ITEM_CHARGE || ITEM_KIND(item) == ITEM_REFUND)
	{
		item_charge(item, &charge);
		scan->fn(&charge, scan->arg);
	}
	return true;
}

static bool
block_audit_one(const StoreItem *item, void *arg)
{
	AuditScan  *scan = (AuditScan *) arg;
	StoreCharge charge;
	BlockRun	run;
	StoreBlockRun shown;

	/* applied when the store was loaded: sound */
	if (ITEM_KIND(item) == ITEM_BLOCK_CHARGE && store_item_block_run(item, &run))
	{
		item_charge(item, &charge);
		shown.first = run.first;
		shown.length = run.length;
		shown.count = run.count;
		scan->block_fn(&charge, &shown, scan->arg);
	}
	return true;
}

/* Every item of a store that is not damaged, without the store lock. */
static void
scan_store(bool (*fn) (const StoreItem *item, void *arg), void *arg)
{
	char		what[128];

	store_lock(LW_SHARED);
	store_refuse_if_damaged();
	LWLockRelease(store_state->lock);
	if (store_scan_items(fn, arg, what, sizeof(what)) == SCAN_DAMAGED)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("could not read the ledger store: %s", what)));
}

void
ledger_store_scan(void (*fn) (const StoreCharge *charge, void *arg), void *arg)
{
	AuditScan	scan = {.fn = fn,.arg = arg};

	scan_store(audit_one, &scan);
}

void
ledger_store_scan_blocks(void (*fn) (const StoreCharge *charge, const StoreBlockRun *run, void *arg),
						 void *arg)
{
	AuditScan	scan = {.block_fn = fn,.arg = arg};

	scan_store(block_audit_one, &scan);
}

/* What a forgotten ledger had spent, added up from its items. */
typedef struct ForgottenScan
{
	int64		ledger;
	bool		forgotten;		/* its last word is that it was forgotten */
	uint64		spent_units;
	cc_accounting accounting;
} ForgottenScan;

static bool
forgotten_one(const StoreItem *item, void *arg)
{
	ForgottenScan *scan = (ForgottenScan *) arg;

	if (item->ledger != scan->ledger)
		return true;
	switch (ITEM_KIND(item))
	{
		case ITEM_CREATED:
			scan->forgotten = false;
			scan->accounting = (cc_accounting) item->accounting;
			break;
		case ITEM_CHARGE:
			scan->spent_units += item->units;
			break;
		case ITEM_REFUND:
			scan->spent_units -= Min(item->units, scan->spent_units);
			break;
		case ITEM_FORGOTTEN:
			scan->forgotten = true;
			break;
		default:
			break;
	}
	return true;
}

/*
 * Did the store forget ledger (dropped)?  If so, what it had spent and its
 * accounting.  A full scan: for exports and imports only.
 */
bool
store_forgotten(int64 ledger, uint64 *spent_units, cc_accounting *accounting)
{
	ForgottenScan scan = {ledger, false, 0, CC_PURE};
	char		what[128];

	if (store_scan_items(forgotten_one, &scan, what, sizeof(what)) == SCAN_DAMAGED)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("could not read the ledger store: %s", what)));
	*spent_units = scan.spent_units;
	*accounting = scan.accounting;
	return scan.forgotten;
}

bool
ledger_store_forgotten(int64 ledger, uint64 *spent_units, cc_accounting *accounting)
{
	bool		found;

	store_lock(LW_SHARED);
	store_refuse_if_damaged();
	found = hash_search(store_sums, &ledger, HASH_FIND, NULL) == NULL &&
		store_forgotten(ledger, spent_units, accounting);
	LWLockRelease(store_state->lock);
	return found;
}

typedef struct FindCreated
{
	Oid			database;
	const char *name;
	bool		(*known) (int64 ledger, void *arg);
	void	   *arg;
	int64		found;
} FindCreated;

static bool
find_created_one(const StoreItem *item, void *arg)
{
	FindCreated *find = (FindCreated *) arg;

	if (ITEM_KIND(item) == ITEM_CREATED && item->database == find->database &&
		strcmp(item->text + strlen(item->text) + 1, find->name) == 0 &&
		!find->known(item->ledger, find->arg))
		find->found = item->ledger;
	/* dropped, or its creation rolled back: nothing to take back */
	else if (ITEM_KIND(item) == ITEM_FORGOTTEN && item->ledger == find->found)
		find->found = 0;
	return true;
}

int64
ledger_store_find_created(Oid database, const char *name,
						  bool (*known) (int64 ledger, void *arg), void *arg)
{
	FindCreated find = {database, name, known, arg, 0};

	scan_store(find_created_one, &find);
	return find.found;
}
