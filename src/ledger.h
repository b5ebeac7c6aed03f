/*
 * ledger.h
 *		Privacy budget ledgers: which one pays, and charging it.
 */
#ifndef CONTCOUNT_LEDGER_H
#define CONTCOUNT_LEDGER_H

#include "nodes/execnodes.h"

/* contcount's own SQLSTATEs, class ZB (privacy budget) */
#define ERRCODE_CONTCOUNT_BUDGET_EXCEEDED MAKE_SQLSTATE('Z','B','0','0','1')
#define ERRCODE_CONTCOUNT_NO_LEDGER MAKE_SQLSTATE('Z','B','0','0','2')

/*
 * Charge epsilon_units for a release by function, durably, before its first
 * value leaves: to the ledger named (which the caller must have been granted),
 * or when that is NULL to contcount.ledger.  Raises an error, and so releases
 * nothing, when no ledger is selected, when the budget would be overspent,
 * during recovery, or when the ledger store is damaged.
 */
extern void ledger_charge(const char *ledger, uint64 epsilon_units, const char *function);

/*
 * The charge of one call site of an aggregate, made once per scan of its
 * plan node.  Groups and partitions of one scan are disjoint (parallel
 * composition), but a rescan, under a nested loop or a correlated subquery,
 * releases the same data again and pays again.
 */
typedef struct ChargeSite
{
	bool		charged;
} ChargeSite;

extern void ledger_charge_site(ChargeSite *site, PlanState *node, const char *ledger,
							   uint64 epsilon_units, const char *function);

#endif							/* CONTCOUNT_LEDGER_H */
