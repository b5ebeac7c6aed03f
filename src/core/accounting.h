/*
 * accounting.h
 *		What one release costs a privacy budget ledger that accounts in pure
 *		epsilon-DP or in rho-zCDP, and what a zCDP ledger's rho means as
 *		(epsilon, delta)-DP.
 *
 * Pure C: no PostgreSQL headers.  A ledger adds up costs in one measure:
 * epsilon for pure differential privacy, rho for zero-concentrated
 * differential privacy (Bun and Steinke 2016), each of which composes by
 * addition.  Amounts are exact integers in units of 1e-9, for rho as for
 * epsilon (CC_EPSILON_UNITS_PER_ONE).
 */
#ifndef CC_ACCOUNTING_H
#define CC_ACCOUNTING_H

#include <stdbool.h>
#include <stdint.h>

#include "noise.h"				/* cc_scale */

/*
 * Stored in the ledger store's items and in counters' states: never
 * renumber.  Zero is pure, as counter states saved before zCDP hold zero
 * where their parameters now say it.
 */
typedef enum cc_accounting
{
	CC_PURE = 0,				/* epsilon-DP: Laplace releases */
	CC_ZCDP = 1					/* rho-zCDP: Gaussian releases */
} cc_accounting;

/*
 * What a release with discrete Gaussian noise is, beyond its rho, so that
 * its (epsilon, delta) curve can be bounded more tightly than by the zCDP
 * conversion (privacy_region.c has the argument): every noisy coordinate
 * gets independent discrete Gaussian noise of variance parameter sigma2, and
 * between neighbouring inputs at most `coordinates` of them move, by
 * integers.  Then either
 *	- shift > 0: the release is dominated by `coordinates` coordinates each
 *	  moved by exactly shift (the exact curve of the discrete Gaussian), or
 *	- shift = 0: the moves add up, in absolute value and divided by
 *	  sigma2, to at most l1_units * 1e-9, and their squares, divided by
 *	  sigma2, to at most 2 rho (how sigma2 was calibrated).
 * All zero: nothing is known beyond rho (an imported charge).
 */
typedef struct cc_gauss
{
	cc_scale	sigma2;
	uint64_t	coordinates;
	uint64_t	shift;
	uint64_t	l1_units;
} cc_gauss;

/*
 * What one release costs, as its mechanism's proof states it; for a zCDP
 * release also what its noise is (zero if unknown, and for pure releases).
 */
typedef struct cc_cost
{
	cc_accounting accounting;
	uint64_t	units;			/* epsilon (pure) or rho (zCDP), 1e-9 units */
	cc_gauss	gauss;
} cc_cost;

static inline cc_cost
cc_pure_cost(uint64_t epsilon_units)
{
	cc_cost		cost = {CC_PURE, epsilon_units, {{0, 0}, 0, 0, 0}};

	return cost;
}

/* A zCDP release known only by its rho. */
static inline cc_cost
cc_zcdp_cost(uint64_t rho_units)
{
	cc_cost		cost = {CC_ZCDP, rho_units, {{0, 0}, 0, 0, 0}};

	return cost;
}

/*
 * The rho of an epsilon-DP release, epsilon^2 / 2 (Bun and Steinke 2016,
 * Proposition 3.3), rounded up to a whole unit: ceil(e^2 / (2 * 10^9)) for e
 * units of epsilon, exact in 128-bit integers; UINT64_MAX if it does not fit.
 */
extern uint64_t cc_rho_of_epsilon(uint64_t epsilon_units);

/*
 * What a release of cost release costs a ledger accounting in ledger, in
 * the ledger's units, into *units: a pure release its epsilon on a pure
 * ledger and its rho (cc_rho_of_epsilon) on a zCDP ledger, a zCDP release
 * its rho on a zCDP ledger.  False when the ledger cannot pay for it at all:
 * a zCDP release on a pure ledger (Gaussian noise is not epsilon-DP for any
 * finite epsilon), or an accounting that is neither.
 */
extern bool cc_ledger_cost(cc_accounting ledger, cc_cost release, uint64_t *units);

/*
 * An epsilon such that every rho-zCDP mechanism is (epsilon, delta)-DP, for
 * rho >= 0 and 0 < delta < 1: the conversion of Canonne, Kamath and Steinke
 * 2020 (Proposition 12 / Corollary 13, also Asoodeh et al. 2021),
 *
 *		epsilon = inf over alpha > 1 of
 *			alpha rho + (ln(1/delta) + (alpha - 1) ln(1 - 1/alpha) - ln alpha) / (alpha - 1),
 *
 * never above Bun and Steinke's rho + 2 sqrt(rho ln(1/delta)).  Every alpha
 * gives a valid bound, so the search for the best one needs no care; the
 * value at the alpha found is rounded up by more than its floating-point
 * error.  0 for rho = 0; at least 0.  For display, not for accounting:
 * ledgers add up rho exactly.
 */
extern double cc_zcdp_epsilon(double rho, double delta);

/*
 * The same conversion the other way: a delta such that every rho-zCDP
 * mechanism is (epsilon, delta)-DP, for rho >= 0 and epsilon >= 0,
 *
 *		delta = inf over alpha > 1 of
 *			exp((alpha - 1) (alpha rho - epsilon)) (1 - 1/alpha)^alpha / (alpha - 1),
 *
 * raised past its floating-point error; at most 1, and 0 for rho = 0.
 */
extern double cc_zcdp_delta(double rho, double epsilon);

#endif							/* CC_ACCOUNTING_H */
