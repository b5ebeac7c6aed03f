/*
 * ledger.h
 *		Privacy budget ledgers: which one pays, and charging it.
 */
#ifndef CONTCOUNT_LEDGER_H
#define CONTCOUNT_LEDGER_H

#include "nodes/execnodes.h"

#include "common/errors.h"
#include "core/accounting.h"
#include "ledger/ledger_store.h"

/*
 * Every charge says what the release it pays for is: cc_pure_cost(epsilon
 * units) for an epsilon-DP (Laplace) release, a zCDP cost of rho units for a
 * rho-zCDP (Gaussian) one, with what its noise is (cc_params_cost() fills
 * it in; cc_zcdp_cost() leaves it unknown).  The ledger converts it to its own accounting (a
 * pure release costs a zCDP ledger ceil(epsilon^2 / 2)) and the store keeps
 * both, the release's cost and what the ledger was charged, so that the
 * composition can be rebuilt release by release.  A pure ledger refuses a
 * zCDP release (ZB003).
 */

/*
 * Charge cost for a release by function, durably, before its first value
 * leaves: to the ledger named (which the caller must have been granted), or
 * when that is NULL to contcount.ledger.  Raises an error, and so releases
 * nothing, when no ledger is selected, when the ledger cannot account for
 * the release (ZB003), when the budget would be overspent, during recovery,
 * or when the ledger store is damaged.
 */
extern void ledger_charge(const char *ledger, cc_cost cost, const char *function);

/*
 * Refuse a release of cost that the ledger named (or, when NULL,
 * contcount.ledger's) cannot pay for in its accounting (ZB003: a zCDP
 * release on a pure ledger), and raise ledger_charge's other errors but
 * overspending: for releases that compute their values before they are
 * charged, so that such a release computes nothing.  Nothing for a pure
 * release, which every ledger takes.
 */
extern void ledger_check_cost(const char *ledger, cc_cost cost);

/*
 * Charge a release from a protected source: first to the caller's ledger as
 * ledger_charge does (a team's quota), then to the source's ledger (the
 * budget of the data, which every team's releases from it add up in), which
 * the source's grant lets the caller spend.  The same ledger is charged once.
 * Each ledger pays in its own accounting; if either cannot account for the
 * release (ZB003), neither is charged.
 */
extern void ledger_charge_source(const char *ledger, const char *source_ledger,
								 cc_cost cost, const char *function);

/*
 * Charge a release from a protected source with per-block budgets: to the
 * caller's ledger as ledger_charge_source does, then, in place of the
 * source's ledger, each block of run of it (none if run->count is 0), each
 * block's budget block_budget_units in the source ledger's accounting.  If
 * either ledger cannot account for the release (ZB003), nothing is charged;
 * if a block would overspend (ZB001), no block is.
 */
extern void ledger_charge_blocks(const char *ledger, const char *source_ledger, cc_cost cost,
								 const char *function, const StoreBlockRun *run,
								 uint64 block_budget_units);

/*
 * The second half of ledger_charge_blocks: each block of run of the
 * source's ledger, and nothing else (a counter's clock entering blocks: its
 * own ledger paid once, at its creation).  The store refuses a release the
 * ledger cannot account for (ZB003).
 */
extern void ledger_charge_source_blocks(const char *source_ledger, cc_cost cost,
										const char *function, const StoreBlockRun *run,
										uint64 block_budget_units);

/*
 * The releases of one call site of an aggregate in one query.  Every group,
 * partition or rescan that releases a value is a release of its own and
 * pays for itself: SQL cannot tell contcount that groups are disjoint.  A
 * charge pays for a batch of releases in advance (1, 2, 4, ... up to a
 * limit, and never more than the budget affords), so many groups need few
 * fsyncs; what is left unused when the query ends is refunded.  Lives in the
 * query's memory.
 */
typedef struct ChargeSite
{
	const char *function;
	char	   *ledger;			/* as named; NULL: contcount.ledger */
	cc_cost		cost;			/* of one release */
	int64		ledger_id;		/* that the prepaid releases were charged to */
	int64		prepaid;		/* releases paid for and not made yet */
	int64		next_batch;		/* releases the next charge pays for */
	bool		settles;		/* a refund at the end of the query is set up */
} ChargeSite;

extern void ledger_site_init(ChargeSite *site, const char *ledger, cc_cost cost,
							 const char *function);

/*
 * Pay for one release of the call site, before its value is computed; node
 * is the aggregate's plan node.  Raises an error, and so releases nothing,
 * as ledger_charge does.
 */
extern void ledger_pay_release(ChargeSite *site, PlanState *node);

/* Units of epsilon or rho as a numeric, negated (for a refund) if negative. */
extern Datum ledger_units_numeric(uint64 units, bool negative);

/*
 * Is a numeric a ledger's budget (epsilon or rho): a finite multiple of
 * 0.000000001 from 0 to 9223372036.854775807, which the views show as units?
 * And is one a zCDP ledger's delta: above 0 (as a double) and below 1?
 */
extern bool ledger_budget_valid(Datum budget);
extern bool ledger_delta_valid(Datum delta);

/*
 * The id of the live ledger of that name, if the caller sees it in
 * contcount.ledgers (a superuser, a role it is granted to, or the role
 * whose contcount.ledger names it); else an error: 42704 if there is no
 * such ledger, 42501 if the caller may not see it.
 */
extern int64 ledger_require_visible(const char *name);

/*
 * What the ledger named (NULL: contcount.ledger's) has left, its budget as
 * committed now less what the store says it spent, in the units of its
 * accounting (*accounting); *name is the ledger's.  For a caller that sees
 * it (as ledger_require_visible), or by_source: a source's ledger, which a
 * source's grant lets the caller spend, and *shown says whether the caller
 * may see its figures.  ZB002 when none is selected.  Reads only: for
 * previews.
 */
extern uint64 ledger_remaining(const char *ledger, bool by_source, const char **name,
							   cc_accounting *accounting, bool *shown);

/* What a release would charge a ledger, for previews (ledger_preview.c). */
typedef struct LedgerPreview
{
	const char *name;			/* the ledger that would pay */
	cc_accounting accounting;	/* its accounting */
	uint64		units;			/* what one release costs it, in its units */
	int64		releases_left;	/* how many such releases it can still pay;
								 * -1: figures the caller may not see */
} LedgerPreview;

/*
 * What one release of cost would charge the ledger named (NULL:
 * contcount.ledger's), and how many it can still pay, for a caller that sees
 * it: the errors of ledger_remaining, and ZB003 for a release it cannot
 * account for.  Charges nothing.
 */
extern void ledger_preview_charge(const char *ledger, cc_cost cost, LedgerPreview *preview);

/*
 * The same for a source's ledger, which the caller need not see: its
 * releases_left is -1 unless the caller may see its figures.
 */
extern void ledger_preview_source_charge(const char *source_ledger, cc_cost cost,
										 LedgerPreview *preview);

/* Ledger ids (int64) in order, for qsort and bsearch. */
extern int	ledger_compare_ids(const void *a, const void *b);

#endif							/* CONTCOUNT_LEDGER_H */
