/*
 * ledger_curve_sql.c
 *		The SQL functions contcount.ledger_delta() and
 *		contcount.ledger_epsilon(): the tight (epsilon, delta) of what a
 *		ledger the caller sees has spent, from ledger_curve.c's composition.
 *
 * Why a file of its own: the curve (ledger_curve.c) is read by ledger.c for
 * the tight_epsilon column of contcount.ledgers, and these functions look
 * the ledger up through ledger.c; here, above both, the calls go one way.
 * The functions keep the curve for the rest of the statement while the
 * ledger spends nothing more, so that a query over many epsilons builds it
 * once.  They take no lock of their own: ledger_store.c's protocol covers
 * the reads of the store.
 *
 * IDENTIFICATION
 *	  src/ledger/ledger_curve_sql.c
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "ledger/ledger.h"
#include "ledger/ledger_curve.h"
#include "ledger/ledger_store.h"

/*
 * What a call site of ledger_delta() or ledger_epsilon() keeps: the curve
 * of the ledger it read last, while that ledger spends nothing more.
 */
typedef struct CurveCache
{
	MemoryContext context;		/* the curve's; reset for another */
	int64		ledger;
	uint64		spent_units;
	cc_accounting accounting;
	cc_privacy_curve *curve;	/* NULL: nothing kept */
} CurveCache;

/*
 * The curve of the ledger named, which the caller must see, with its
 * accounting and what it spent; NULL if the store does not know the ledger
 * (restored without its spending).  What it spent is read before the store
 * is scanned: the curve is of that much or more (a charge made meanwhile),
 * still an upper bound for it, and the zCDP conversion of that much is one
 * too; a charge after the reading changes what it spent, and the next call
 * builds the curve again.
 */
static const cc_privacy_curve *
curve_of(FunctionCallInfo fcinfo, const char *name, cc_accounting *accounting,
		 uint64 *spent_units)
{
	int64		ledger = ledger_require_visible(name);
	CurveCache *cache = fcinfo->flinfo->fn_extra;
	MemoryContext old;
	LedgerReleases *releases;

	if (!ledger_store_spent(ledger, spent_units, accounting))
		return NULL;
	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(CurveCache));
		cache->context = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "contcount curve",
											   ALLOCSET_DEFAULT_SIZES);
		fcinfo->flinfo->fn_extra = cache;
	}
	if (cache->curve != NULL && cache->ledger == ledger &&
		cache->spent_units == *spent_units && cache->accounting == *accounting)
		return cache->curve;

	cache->curve = NULL;
	MemoryContextReset(cache->context);
	old = MemoryContextSwitchTo(cache->context);
	releases = ledger_releases_read(&ledger, 1);
	cache->curve = ledger_curve_build(releases, ledger, name);
	MemoryContextSwitchTo(old);
	cache->ledger = ledger;
	cache->spent_units = *spent_units;
	cache->accounting = *accounting;
	return cache->curve;
}

/*
 * contcount.ledger_delta(ledger, epsilon): the least delta known for which
 * the ledger's releases together are (epsilon, delta)-DP.
 */
PG_FUNCTION_INFO_V1(contcount_ledger_delta);
Datum
contcount_ledger_delta(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	double		epsilon = PG_GETARG_FLOAT8(1);
	const cc_privacy_curve *curve;
	cc_accounting accounting;
	uint64		spent;

	/* written so that NaN fails too */
	if (!(epsilon >= 0.0 && epsilon < INFINITY))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon must be a finite number, at least 0")));
	curve = curve_of(fcinfo, name, &accounting, &spent);
	if (curve == NULL)
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(ledger_curve_delta(curve, accounting, spent, epsilon));
}

/*
 * contcount.ledger_epsilon(ledger, delta): the least epsilon known for which
 * the ledger's releases together are (epsilon, delta)-DP; Infinity if none
 * is (delta 0 after a Gaussian release).
 */
PG_FUNCTION_INFO_V1(contcount_ledger_epsilon);
Datum
contcount_ledger_epsilon(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	double		delta = PG_GETARG_FLOAT8(1);
	const cc_privacy_curve *curve;
	cc_accounting accounting;
	uint64		spent;

	if (!(delta >= 0.0 && delta <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("delta must be between 0 and 1")));
	curve = curve_of(fcinfo, name, &accounting, &spent);
	if (curve == NULL)
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(ledger_curve_epsilon(curve, accounting, spent, delta));
}
