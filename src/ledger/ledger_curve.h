/*
 * ledger_curve.h
 *		The (epsilon, delta) curve of what a ledger has spent, from the
 *		composition of the releases the store recorded.
 *
 * IDENTIFICATION
 *	  src/ledger/ledger_curve.h
 */
#ifndef CONTCOUNT_LEDGER_CURVE_H
#define CONTCOUNT_LEDGER_CURVE_H

#include "core/privacy_region.h"

/* The releases of some ledgers, read from the store in one scan. */
typedef struct LedgerReleases LedgerReleases;

/* Read the releases of ledgers[0..n) from the store, in CurrentMemoryContext. */
extern LedgerReleases *ledger_releases_read(const int64 *ledgers, int n);

/*
 * The curve of one of them, in CurrentMemoryContext; raises an error
 * (54000, 53200) if it cannot be composed.  name is for messages.
 */
extern cc_privacy_curve *ledger_curve_build(const LedgerReleases *releases, int64 ledger,
											const char *name);

/*
 * epsilon at delta (0 to 1) of a curve, and delta at epsilon (at least 0),
 * for a ledger of that accounting which spent spent_units (read before its
 * releases were): for a zCDP ledger also never above the zCDP conversion of
 * what it spent, which the views show.
 */
extern double ledger_curve_epsilon(const cc_privacy_curve *curve, cc_accounting accounting,
								   uint64 spent_units, double delta);
extern double ledger_curve_delta(const cc_privacy_curve *curve, cc_accounting accounting,
								 uint64 spent_units, double epsilon);

#endif							/* CONTCOUNT_LEDGER_CURVE_H */
