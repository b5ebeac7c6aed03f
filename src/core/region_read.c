/*
 * region_read.c
 *		Reading a built curve: delta at an epsilon and the least epsilon at
 *		a delta, from its Gaussian part analytically and its atoms, and by
 *		basic composition with the charges known by their rho only; never
 *		below the true curve, floating point included.
 *
 * IDENTIFICATION
 *	  src/core/region_read.c
 */
#include "privacy_region.h"
#include "privacy_region_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* The Gaussian part                                                      */
/* ---------------------------------------------------------------------- */

/*
 * Mills ratio Phi(-x) / phi(x) for x >= 0, relative error about 1e-15: from
 * erfc below 4 (exp(x^2/2) is then exact to a few ulps), from its continued
 * fraction 1/(x+ 1/(x+ 2/(x+ ...))) above (40 levels: below 1e-18 at 4).
 */
static double
mills(double x)
{
	double		f = x;

	if (x < 4.0)
		return 0.5 * SQRT_2PI * erfc(x / M_SQRT2) * exp(0.5 * x * x);
	for (int k = 40; k >= 1; k--)
		f = x + k / f;
	return 1.0 / f;
}

/* log Phi(-x) for any x */
static double
log_upper_tail(double x)
{
	if (x < 4.0)
		return log(0.5 * erfc(x / M_SQRT2));
	return -0.5 * x * x - LOG_SQRT_2PI + log(mills(x));
}

/*
 * delta_G(t) = Phi(-x1) - e^t Phi(-x2), x1 = t/mu - mu/2, x2 = x1 + mu, for
 * mu > 0, raised by a bound on its rounding error.  Above the mean
 * (x1 >= 0) the difference is phi(x1) (R(x1) - R(x2)) with R the Mills
 * ratio (e^t phi(x2) = phi(x1)): no underflow, and a cancellation of
 * relative size about (x1 + 2)/mu, charged below.
 */
static double
delta_gauss(double t, double mu)
{
	double		x1 = t / mu - 0.5 * mu;
	double		x2 = x1 + mu;
	double		value;
	double		rel;

	if (x1 >= 0.0)
	{
		value = exp(-0.5 * x1 * x1 - LOG_SQRT_2PI) * (mills(x1) - mills(x2));
		rel = 4e-16 * (8.0 + x1 * x1) + 1e-14 * (x1 + 2.0) / fmin(mu, 1.0);
	}
	else
	{
		value = 0.5 * erfc(x1 / M_SQRT2) - exp(t + log_upper_tail(x2));
		rel = 4e-16 * (8.0 + fabs(t) + x2 * x2) + 1e-14 / fmin(mu, 1.0);
	}
	if (value <= 0.0)
		return 0.0;
	return fmin(1.0, value * (1.0 + rel));
}

/* ---------------------------------------------------------------------- */
/* Reading the curve                                                      */
/* ---------------------------------------------------------------------- */

/* delta of the charges but the CC_CHARGE_ZCDP ones (the region's) */
static double
region_delta(const cc_privacy_curve *c, double epsilon)
{
	double		sum = 0.0;

	if (!(epsilon > 0.0))
		epsilon = 0.0;
	if (epsilon >= c->max_loss)
		return 0.0;
	if (c->mu2 == 0.0)
	{
		for (int64_t k = c->natoms - 1; k >= 0 && c->loss[k] > epsilon; k--)
			sum += c->mass[k] * -expm1(epsilon - c->loss[k]);
	}
	else
	{
		double		mu = sqrt(c->mu2);

		/*
		 * From the highest loss down; delta_G falls with t = epsilon - l,
		 * so the atoms not yet summed add at most their mass times the
		 * last term's delta_G: stop once that is negligible, adding it.
		 */
		for (int64_t k = c->natoms - 1; k >= 0; k--)
		{
			double		d = delta_gauss(epsilon - c->loss[k], mu);

			sum += c->mass[k] * d;
			if (c->below[k] * d <= 1e-14 * sum)
			{
				sum += c->below[k] * d;
				break;
			}
		}
	}
	return fmin(1.0, (c->p_inf + sum) * c->scale * (1.0 + REL_ROUNDING + c->rel));
}

/*
 * From delta(lo) > delta >= delta(hi), the smallest epsilon with delta(epsilon)
 * <= delta to 1e-12 relative: the Illinois variant of regula falsi on
 * log delta (nearly linear, so a dozen steps), bisecting where delta is 0.
 * Only a point whose delta was seen at most the target becomes hi.
 */
static double
search(const cc_privacy_curve *c, double delta, double lo, double hi)
{
	double		flo = log(region_delta(c, lo) / delta);
	double		dhi = region_delta(c, hi);
	double		fhi = dhi > 0.0 ? log(dhi / delta) : -INFINITY;
	int			kept = 0;		/* the end kept last: -1 lo, 1 hi */

	for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++)
	{
		double		mid = 0.5 * (lo + hi);
		double		x = mid;
		double		d;

		if (isfinite(fhi) && fhi < flo)
			x = hi - fhi * (hi - lo) / (fhi - flo);
		if (!(x > lo && x < hi))
			x = mid;
		d = region_delta(c, x);
		if (d <= delta)
		{
			hi = x;
			fhi = d > 0.0 ? log(d / delta) : -INFINITY;
			if (kept == -1)
				flo *= 0.5;
			kept = -1;
		}
		else
		{
			lo = x;
			flo = log(d / delta);
			if (kept == 1)
				fhi *= 0.5;
			kept = 1;
		}
	}
	return hi;
}

/* epsilon of the charges but the CC_CHARGE_ZCDP ones */
static double
region_epsilon(const cc_privacy_curve *c, double delta)
{
	double		lo = 0.0;
	double		hi;

	if (!(delta >= 0.0))
		delta = 0.0;
	if (region_delta(c, 0.0) <= delta)
		return 0.0;
	if (c->max_loss < INFINITY)
		hi = c->max_loss;
	else
	{
		if (c->p_inf * c->scale * (1.0 + REL_ROUNDING + c->rel) >= delta)
			return INFINITY;
		hi = 1.0;
		while (region_delta(c, hi) > delta)
		{
			lo = hi;
			hi *= 2.0;
			if (hi > 1e15)
				return INFINITY;
		}
	}
	return search(c, delta, lo, hi);
}

/*
 * The least of f(x) over x in [0, 1] that `first` and SPLITS points spread
 * on the logistic scale and SPLIT_REFINE golden-section steps around the
 * best find: every x gives a valid bound, so any is kept.
 */
static double
least_split(double (*f) (const cc_privacy_curve *c, double arg, double x),
			const cc_privacy_curve *c, double arg, double first)
{
	const double golden = 0.61803398874989484820;
	double		best = f(c, arg, first);
	int			at = 0;
	double		lo;
	double		hi;

	for (int i = 0; i < SPLITS; i++)
	{
		double		v = f(c, arg, 1.0 / (1.0 + exp(-(-12.0 + 24.0 * i / (SPLITS - 1)))));

		if (v < best)
		{
			best = v;
			at = i;
		}
	}
	lo = -12.0 + 24.0 * (at > 0 ? at - 1 : at) / (SPLITS - 1);
	hi = -12.0 + 24.0 * (at < SPLITS - 1 ? at + 1 : at) / (SPLITS - 1);
	for (int i = 0; i < SPLIT_REFINE; i++)
	{
		double		x1 = hi - golden * (hi - lo);
		double		x2 = lo + golden * (hi - lo);
		double		f1 = f(c, arg, 1.0 / (1.0 + exp(-x1)));
		double		f2 = f(c, arg, 1.0 / (1.0 + exp(-x2)));

		best = fmin(best, fmin(f1, f2));
		if (f1 <= f2)
			hi = x2;
		else
			lo = x1;
	}
	return best;
}

/* Basic composition: the region at x epsilon, the rho-only part at the rest. */
static double
split_delta(const cc_privacy_curve *c, double epsilon, double x)
{
	return region_delta(c, x * epsilon) + cc_zcdp_delta(c->rho_z, (1.0 - x) * epsilon);
}

/* The same, at x delta and the rest. */
static double
split_epsilon(const cc_privacy_curve *c, double delta, double x)
{
	return region_epsilon(c, x * delta) + cc_zcdp_epsilon(c->rho_z, (1.0 - x) * delta);
}

double
cc_privacy_curve_delta(const cc_privacy_curve *c, double epsilon)
{
	double		delta;

	if (!(epsilon > 0.0))
		epsilon = 0.0;
	if (c->rho_z == 0.0)
		delta = region_delta(c, epsilon);
	else if (epsilon == 0.0)
		delta = fmin(1.0, region_delta(c, 0.0) + cc_zcdp_delta(c->rho_z, 0.0));
	else
		/* first where the region's delta reaches 0, if it does */
		delta = fmin(1.0, least_split(split_delta, c, epsilon,
									  fmin(1.0, c->max_loss / epsilon)));
	return fmin(delta, cc_zcdp_delta(c->rho_all, epsilon));
}

double
cc_privacy_curve_epsilon(const cc_privacy_curve *c, double delta)
{
	double		epsilon;

	if (!(delta >= 0.0))
		delta = 0.0;
	if (delta >= 1.0)
		return 0.0;
	if (c->rho_z == 0.0)
		epsilon = region_epsilon(c, delta);
	else if (delta == 0.0)
		epsilon = INFINITY;
	else
		/* first the region's epsilon at delta 0, finite for pure charges */
		epsilon = least_split(split_epsilon, c, delta, 0.0);
	if (delta > 0.0 && delta < 1.0)
		epsilon = fmin(epsilon, cc_zcdp_epsilon(c->rho_all, delta));
	return epsilon;
}

