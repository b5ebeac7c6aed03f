/*
 * ledger_curve.c
 *		The tight (epsilon, delta) of what a ledger has spent, for the SQL
 *		functions contcount.ledger_delta() and contcount.ledger_epsilon(),
 *		and the tight_epsilon column of contcount.ledgers.
 *
 * A ledger adds up epsilon or rho, which composes by addition but is loose
 * as (epsilon, delta)-DP for many releases or Gaussian ones.  The store
 * keeps, with every charge, what each of its releases is (cc_cost: its
 * epsilon, or its rho and what its noise is) and how many, and with every
 * refund how many were never made; so the releases a ledger made are known,
 * and their composition's curve comes from src/core/privacy_region.c.  One
 * scan of the store collects them, counted by kind: a ledger of a million
 * releases of a few kinds is a few charges with counts.
 *
 * Charges recorded without their releases (0.3 and 0.4's items, 0.2's
 * records) are pure; their batches and refunds cannot be matched to one
 * another, so all of a ledger's are taken as one pure release of their net
 * epsilon, which dominates whatever they were (pure composition adds up).
 * A zCDP charge whose noise is not recorded (an import's) is known by its
 * rho only, and the core composes it by basic composition.  For a zCDP
 * ledger the curve is also kept below the zCDP conversion of what the
 * ledger spent (rho rounded up at every charge), so that the tight epsilon
 * is never above the spent_epsilon the views show.
 *
 * Cost: a scan of the whole store (every ledger's items) and the curve's
 * build, a few milliseconds for a few kinds of releases, however many.  The
 * SQL functions (ledger_curve_sql.c) keep the curve for the rest of the
 * statement while the ledger spends nothing more.
 *
 * IDENTIFICATION
 *	  src/ledger/ledger_curve.c
 */
#include "postgres.h"

#include <math.h>

#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "core/mechanism.h"
#include "ledger/ledger_curve.h"
#include "ledger/ledger_store.h"

/* Releases of one ledger with one cost; padding zeroed, for hashing. */
typedef struct ReleaseKey
{
	int64		ledger;
	uint64		units;
	uint64		sigma2_num;
	uint64		sigma2_den;
	uint64		coordinates;
	uint64		shift;
	uint64		l1_units;
	uint32		accounting;
	uint32		unrecorded;		/* 1: charges before 0.5, units in all */
} ReleaseKey;

typedef struct ReleaseCount
{
	ReleaseKey	key;
	uint64		made;			/* releases charged (or units, unrecorded) */
	uint64		unmade;			/* refunded */
} ReleaseCount;

struct LedgerReleases
{
	HTAB	   *wanted;			/* ledger ids */
	HTAB	   *counts;			/* ReleaseCount by ReleaseKey */
};

static void
count_charge(const StoreCharge *charge, void *arg)
{
	LedgerReleases *releases = arg;
	ReleaseKey	key;
	ReleaseCount *count;
	bool		found;
	uint64		amount;

	if (hash_search(releases->wanted, &charge->ledger, HASH_FIND, NULL) == NULL)
		return;
	memset(&key, 0, sizeof(key));
	key.ledger = charge->ledger;
	if (charge->releases == 0)
	{
		key.accounting = CC_PURE;
		key.unrecorded = 1;
		amount = charge->units;
	}
	else
	{
		key.accounting = charge->cost.accounting;
		key.units = charge->cost.units;
		key.sigma2_num = charge->cost.gauss.sigma2.num;
		key.sigma2_den = charge->cost.gauss.sigma2.den;
		key.coordinates = charge->cost.gauss.coordinates;
		key.shift = charge->cost.gauss.shift;
		key.l1_units = charge->cost.gauss.l1_units;
		amount = (uint64) charge->releases;
	}
	count = hash_search(releases->counts, &key, HASH_ENTER, &found);
	if (!found)
		count->made = count->unmade = 0;
	/* saturating: a count that large is refused by the core anyway */
	if (charge->refund)
		count->unmade = count->unmade + amount < count->unmade ? PG_UINT64_MAX :
			count->unmade + amount;
	else
		count->made = count->made + amount < count->made ? PG_UINT64_MAX :
			count->made + amount;
}

LedgerReleases *
ledger_releases_read(const int64 *ledgers, int n)
{
	LedgerReleases *releases = palloc(sizeof(LedgerReleases));
	HASHCTL		info;

	info.keysize = sizeof(int64);
	info.entrysize = sizeof(int64);
	info.hcxt = CurrentMemoryContext;
	releases->wanted = hash_create("contcount curve ledgers", Max(n, 1), &info,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (int i = 0; i < n; i++)
		(void) hash_search(releases->wanted, &ledgers[i], HASH_ENTER, NULL);
	info.keysize = sizeof(ReleaseKey);
	info.entrysize = sizeof(ReleaseCount);
	info.hcxt = CurrentMemoryContext;
	releases->counts = hash_create("contcount curve releases", 64, &info,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	ledger_store_scan(count_charge, releases);
	return releases;
}

static void *
curve_alloc(void *ctx, size_t size)
{
	return MemoryContextAllocExtended((MemoryContext) ctx, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void
curve_release(void *ctx pg_attribute_unused(), void *ptr)
{
	pfree(ptr);
}

cc_privacy_curve *
ledger_curve_build(const LedgerReleases *releases, int64 ledger, const char *name)
{
	HASH_SEQ_STATUS seq;
	ReleaseCount *count;
	cc_charge  *charges = palloc(sizeof(cc_charge) * (hash_get_num_entries(releases->counts) + 1));
	int			n = 0;
	cc_allocator allocator = {curve_alloc, curve_release, CurrentMemoryContext};
	cc_privacy_curve *curve;
	cc_region_status status;

	hash_seq_init(&seq, releases->counts);
	while ((count = hash_seq_search(&seq)) != NULL)
	{
		cc_cost		cost;

		if (count->key.ledger != ledger || count->made <= count->unmade)
			continue;
		memset(&cost, 0, sizeof(cost));
		cost.accounting = (cc_accounting) count->key.accounting;
		cost.units = count->key.units;
		cost.gauss.sigma2.num = count->key.sigma2_num;
		cost.gauss.sigma2.den = count->key.sigma2_den;
		cost.gauss.coordinates = count->key.coordinates;
		cost.gauss.shift = count->key.shift;
		cost.gauss.l1_units = count->key.l1_units;
		if (count->key.unrecorded)
			/* their net epsilon, as one pure release */
			cc_charge_of_cost(cc_pure_cost(count->made - count->unmade), 1, &charges[n++]);
		else
			cc_charge_of_cost(cost, count->made - count->unmade, &charges[n++]);
	}
	status = cc_privacy_curve_build(charges, n, &allocator, &curve);
	pfree(charges);
	switch (status)
	{
		case CC_REGION_OK:
			return curve;
		case CC_REGION_NO_MEMORY:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory composing the releases of ledger \"%s\"", name)));
			break;
		case CC_REGION_TOO_LARGE:
		case CC_REGION_BAD_CHARGE:
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("ledger \"%s\" spent more than its privacy curve can compose", name),
					 errdetail("The curve composes releases of epsilon up to 1000, up to 2^32 of "
							   "each, epsilons summing up to 1000000, and Gaussians of rho summing "
							   "up to 50000000.")));
			break;
	}
	return NULL;				/* not reached */
}

double
ledger_curve_epsilon(const cc_privacy_curve *curve, cc_accounting accounting,
					 uint64 spent_units, double delta)
{
	double		epsilon = cc_privacy_curve_epsilon(curve, delta);

	if (accounting == CC_ZCDP && delta > 0.0 && delta < 1.0)
		epsilon = Min(epsilon, cc_zcdp_epsilon((double) spent_units / CC_RHO_UNITS_PER_ONE, delta));
	return epsilon;
}

double
ledger_curve_delta(const cc_privacy_curve *curve, cc_accounting accounting,
				   uint64 spent_units, double epsilon)
{
	double		delta = cc_privacy_curve_delta(curve, epsilon);

	if (accounting == CC_ZCDP)
		delta = Min(delta, cc_zcdp_delta((double) spent_units / CC_RHO_UNITS_PER_ONE, epsilon));
	return delta;
}
