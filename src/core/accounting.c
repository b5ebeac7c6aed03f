/*
 * accounting.c
 *		Costs of releases to pure and zCDP ledgers, and zCDP as
 *		(epsilon, delta)-DP.
 *
 * Costs are exact integers rounded up, so that a ledger never counts less
 * than a release's proof states: an epsilon-DP release is (epsilon^2/2)-zCDP,
 * and its rho in units is ceil(e^2 / (2 * 10^9)) for e units of epsilon,
 * whose square needs 128 bits (e is at most 10^12 for epsilon 1000, but any
 * uint64 is taken).
 *
 * The conversion to (epsilon, delta) is the only floating point here, and
 * only for display.  With a = alpha - 1 > 0 and L = ln(1/delta), Canonne,
 * Kamath and Steinke's bound reads
 *
 *		f(a) = (1 + a) rho + ln(a / (1 + a)) + (L - ln(1 + a)) / a,
 *
 * valid at every a.  f goes to infinity at both ends (L/a as a -> 0, a rho
 * as a -> infinity), so a golden-section search over ln a finds its least
 * value; a search that stopped short would only give a larger, still valid,
 * epsilon.  The value at the a found is then raised by 1e-12 of the sum of
 * its terms' magnitudes, far more than the few ulps each term may be off.
 * The other way, ln delta at a given epsilon is
 *
 *		g(a) = a ((1 + a) rho - epsilon) + a ln(a / (1 + a)) - ln(1 + a),
 *
 * f solved for ln delta, searched and raised the same way.
 *
 * IDENTIFICATION
 *	  src/core/accounting.c
 */
#include "accounting.h"

#include <math.h>
#include <stddef.h>

#include "core.h"				/* CC_EPSILON_UNITS_PER_ONE */

typedef unsigned __int128 u128;

/* ln a searched over [-SEARCH_LN_A, SEARCH_LN_A] */
#define SEARCH_LN_A 60.0
#define SEARCH_STEPS 200
/* an upper bound on the relative error of evaluating f, with room */
#define EVAL_MARGIN 1e-12

uint64_t
cc_rho_of_epsilon(uint64_t epsilon_units)
{
	u128		square = (u128) epsilon_units * epsilon_units;
	u128		den = 2 * (u128) CC_EPSILON_UNITS_PER_ONE;

	/* square <= 2^128 - 2^65 + 1, so adding den - 1 cannot wrap */
	u128		rho = (square + den - 1) / den;

	return rho > (u128) UINT64_MAX ? UINT64_MAX : (uint64_t) rho;
}

bool
cc_ledger_cost(cc_accounting ledger, cc_cost release, uint64_t *units)
{
	if (ledger == CC_PURE && release.accounting == CC_PURE)
	{
		*units = release.units;
		return true;
	}
	if (ledger == CC_ZCDP && release.accounting == CC_PURE)
	{
		*units = cc_rho_of_epsilon(release.units);
		return true;
	}
	if (ledger == CC_ZCDP && release.accounting == CC_ZCDP)
	{
		*units = release.units;
		return true;
	}
	return false;
}

/* f at a = e^ln_a; with *margin, the bound on its evaluation error. */
static double
cks_bound(double rho, double log_inv_delta, double ln_a, double *margin)
{
	double		a = exp(ln_a);
	double		log1p_a = log1p(a);
	double		t1 = (1.0 + a) * rho;
	double		t2 = log(a) - log1p_a;
	double		t3 = (log_inv_delta - log1p_a) / a;

	if (margin != NULL)
		*margin = EVAL_MARGIN * (fabs(t1) + fabs(log(a)) + log1p_a + fabs(t3));
	return t1 + t2 + t3;
}

/* g at a = e^ln_a; with *margin, the bound on its evaluation error. */
static double
cks_log_delta(double rho, double epsilon, double ln_a, double *margin)
{
	double		a = exp(ln_a);
	double		log1p_a = log1p(a);
	double		t1 = a * ((1.0 + a) * rho - epsilon);

	/* a ln(a / (1 + a)), without ln a - ln(1 + a) cancelling for large a */
	double		t2 = a < 1.0 ? a * (ln_a - log1p_a) : -a * log1p(1.0 / a);

	if (margin != NULL)
		*margin = EVAL_MARGIN * (a * (1.0 + a) * rho + a * epsilon + fabs(t2) + log1p_a) +
			4e-16;				/* and exp's own rounding */
	return t1 + t2 - log1p_a;
}

/*
 * The least value of bound(x) over x = ln a in [-SEARCH_LN_A, SEARCH_LN_A]
 * that a golden-section search finds, raised by its evaluation margin: any
 * a gives a valid bound, so a search that stops short only loses tightness.
 */
static double
least_bound(double (*bound) (double, double, double, double *), double rho, double arg)
{
	const double golden = 0.61803398874989484820;
	double		lo = -SEARCH_LN_A;
	double		hi = SEARCH_LN_A;
	double		x1 = hi - golden * (hi - lo);
	double		x2 = lo + golden * (hi - lo);
	double		f1 = bound(rho, arg, x1, NULL);
	double		f2 = bound(rho, arg, x2, NULL);
	double		margin;

	for (int i = 0; i < SEARCH_STEPS; i++)
	{
		if (f1 <= f2)
		{
			hi = x2;
			x2 = x1;
			f2 = f1;
			x1 = hi - golden * (hi - lo);
			f1 = bound(rho, arg, x1, NULL);
		}
		else
		{
			lo = x1;
			x1 = x2;
			f1 = f2;
			x2 = lo + golden * (hi - lo);
			f2 = bound(rho, arg, x2, NULL);
		}
	}
	return bound(rho, arg, f1 <= f2 ? x1 : x2, &margin) + margin;
}

double
cc_zcdp_epsilon(double rho, double delta)
{
	double		best;

	if (!(rho > 0.0))
		return 0.0;
	if (!(delta > 0.0 && delta < 1.0) || isinf(rho))
		return INFINITY;
	best = least_bound(cks_bound, rho, -log(delta));

	/* delta(epsilon) falls as epsilon grows: a bound below 0 holds at 0 */
	return best > 0.0 ? best : 0.0;
}

double
cc_zcdp_delta(double rho, double epsilon)
{
	if (!(rho > 0.0))
		return 0.0;
	if (!(epsilon >= 0.0) || isinf(rho))
		return 1.0;
	if (isinf(epsilon))
		return 0.0;
	return fmin(1.0, exp(least_bound(cks_log_delta, rho, epsilon)));
}
