/*
 * privacy_region.h
 *		The tight (epsilon, delta) curve of what a ledger has spent, from the
 *		privacy region of the composition of its charges.
 *
 * Pure C: no PostgreSQL headers.  A mechanism's privacy region is the set of
 * (type I, type II) error pairs of tests telling two neighbouring databases
 * apart; every (epsilon, delta) pair it satisfies is a tangent line of the
 * region, delta(epsilon) = sup_S P(S) - e^epsilon Q(S) for the worst pair
 * (P, Q) of output laws (seed 002, section 1).  The pair whose region
 * contains all others is the mechanism's dominating pair; composing
 * mechanisms, even adaptively, composes their dominating pairs (Kairouz, Oh
 * and Viswanath 2015, Thm 3.3; Dong, Roth and Su 2019, Thm 3.2), and then
 *
 *		delta(epsilon) = E_P[(1 - e^(epsilon - L))_+],  L = log(P/Q),
 *
 * L = +infinity where Q = 0.  L under P is the privacy loss distribution; it
 * adds up over a composition.  The curve computed here is an upper bound on
 * the true one (never below it), and so are the epsilons it gives.
 *
 * Charges, and the dominating pair taken for each:
 *	- CC_CHARGE_PURE: any epsilon-DP mechanism (a whole binary tree with
 *	  discrete Laplace noise...).  Its region lies in randomized response's
 *	  (Kairouz, Oh and Viswanath): L = +-epsilon.
 *	- CC_CHARGE_GAUSSIAN: a mechanism whose region lies in the Gaussian's of
 *	  mu = sqrt(2 rho): continuous Gaussian noise of any dimension, mu =
 *	  L2 sensitivity / sigma.  NOT the discrete Gaussian: at the same rho its
 *	  curve lies above (delta(0) is 1/Z against 2 Phi(mu/2) - 1).
 *	- CC_CHARGE_DGAUSS: discrete Gaussian noise of variance parameter sigma2
 *	  on one integer coordinate that neighbours move by sensitivity; a vector
 *	  of independent discrete Gaussians (a tree's nodes) is one charge a
 *	  coordinate.  Its loss distribution is computed from the exact pmf.
 *	- CC_CHARGE_DGAUSS_BOUND: discrete Gaussian noise of variance parameter
 *	  sigma2 on integer coordinates, at most `coordinates` of which move
 *	  between neighbours, by integer amounts whose absolute values over
 *	  sigma2 add up to at most l1 and whose squares over sigma2 add up to at
 *	  most 2 rho: a bound from the continuous Gaussian (privacy_region.c).
 *	- CC_CHARGE_ZCDP: a rho-zCDP mechanism and nothing more (an imported
 *	  charge): composed with the others by basic composition, its part's
 *	  (epsilon, delta) from the zCDP conversion (accounting.h).
 * Whatever the charges, the curve is also never above the zCDP conversion
 * of their composition (epsilon^2/2 for a pure charge, D^2 / (2 sigma^2) a
 * discrete Gaussian coordinate, rho for the others).
 */
#ifndef CC_PRIVACY_REGION_H
#define CC_PRIVACY_REGION_H

#include <stddef.h>
#include <stdint.h>

#include "accounting.h"			/* cc_cost */
#include "core.h"				/* cc_allocator */
#include "noise.h"				/* cc_scale */

typedef enum cc_charge_kind
{
	CC_CHARGE_PURE,				/* epsilon_units */
	CC_CHARGE_GAUSSIAN,			/* rho */
	CC_CHARGE_DGAUSS,			/* sigma2, sensitivity */
	CC_CHARGE_DGAUSS_BOUND,		/* sigma2, coordinates, l1, rho */
	CC_CHARGE_ZCDP				/* rho */
} cc_charge_kind;

/*
 * count equal charges of a ledger; the fields their kind does not name are
 * ignored.
 */
typedef struct cc_charge
{
	cc_charge_kind kind;
	uint64_t	count;			/* how many: 0 is none; a pure charge at most
								 * 2^32 times */
	uint64_t	epsilon_units;	/* epsilon = units * 1e-9, as the ledger
								 * stores it; at most 1e12 (epsilon 1000) */
	double		rho;			/* >= 0, mu^2 = 2 rho summed at most 1e8 */
	cc_scale	sigma2;			/* as the sampler takes it (gaussian.h) */
	uint64_t	sensitivity;	/* 1 .. 1e6 */
	uint64_t	coordinates;	/* any */
	double		l1;				/* >= 0 */
} cc_charge;

/*
 * The charge of count releases of cost (cc_params_cost(), as the ledger
 * store keeps it): pure, a discrete Gaussian (cost.gauss.shift > 0: count
 * times its coordinates), its bound, or only its rho when cost.gauss says
 * nothing usable.
 */
extern void cc_charge_of_cost(cc_cost cost, uint64_t count, cc_charge *charge);

/* One release: pure at epsilon, of a rho only, a discrete Gaussian's. */
extern cc_charge cc_charge_pure(double epsilon);
extern cc_charge cc_charge_rho(double rho);
extern cc_charge cc_charge_dgauss(cc_scale sigma2, uint64_t sensitivity);

typedef enum cc_region_status
{
	CC_REGION_OK = 0,
	CC_REGION_BAD_CHARGE,		/* a field outside the range above */
	CC_REGION_TOO_LARGE,		/* a pure charge above epsilon 1000 or
								 * 2^32 times, pure epsilons summing above
								 * 1e6, or mu^2 above 1e8 */
	CC_REGION_NO_MEMORY			/* the allocator returned NULL */
} cc_region_status;

typedef struct cc_privacy_curve cc_privacy_curve;

/*
 * Compose n charges (n may be 0, charges then unread) into *curve, to be
 * given back with cc_privacy_curve_free(); *curve is NULL unless CC_REGION_OK.
 * Equal charges are composed at once, whether given as one with a count or
 * apart: a few milliseconds for millions of charges of a few epsilons or
 * discrete Gaussians; each distinct epsilon or discrete Gaussian costs a
 * pass over the loss grid (1000 different epsilons, or ten trees of
 * discrete Gaussians of ten sigmas: under 0.1 s).  Pure epsilons with a
 * common step (0.1, 0.25, 0.05...) compose exactly; others, and discrete
 * Gaussians, are discretized, overstating epsilon by less than 1e-3 in the
 * tests (3.4e-4 for 1000 different epsilons, at most 3.3e-4 over 3000
 * random small ledgers).
 */
extern cc_region_status cc_privacy_curve_build(const cc_charge *charges,
											   size_t n,
											   const cc_allocator *allocator,
											   cc_privacy_curve **curve);

extern void cc_privacy_curve_free(cc_privacy_curve *curve);

/*
 * delta(epsilon) for epsilon >= 0 (negative is read as 0): an upper bound
 * on the composition's, raised by a bound on its own rounding errors (about
 * 1e-12 relative) so as never to fall below it.  0 exactly at or above the
 * sum of the pure epsilons when there is nothing else.  Microseconds to a
 * few milliseconds; with CC_CHARGE_ZCDP charges, about fifty times that.
 */
extern double cc_privacy_curve_delta(const cc_privacy_curve *curve,
									 double epsilon);

/*
 * The smallest epsilon (to 1e-12 relative) whose delta(epsilon) above is at
 * most delta, so still a valid guarantee; 0 when delta >= delta(0), and
 * +infinity when no epsilon reaches delta: below the mass put at +infinity
 * by cut tails (1e-45 or so; 0 for pure charges alone) and by discrete
 * Gaussians bounded by continuous ones (2 e^(-2 pi^2 sigma^2) each: only
 * groups of thousands of sigma^2 below 1 are), when the zCDP conversion
 * does not reach it either (delta 0 with any Gaussian).  With CC_CHARGE_ZCDP
 * charges, a few thousand readings of delta.
 */
extern double cc_privacy_curve_epsilon(const cc_privacy_curve *curve,
									   double delta);

#endif							/* CC_PRIVACY_REGION_H */
