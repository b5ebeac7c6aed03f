/*
 * test_accounting.c
 *		Costs to pure and zCDP ledgers, and the zCDP to (epsilon, delta)
 *		conversion.
 *
 * No statistical checks: every check is exact or deterministic.
 */
#include "unit.h"

#include "accounting.h"

#include <math.h>

typedef unsigned __int128 u128;

#define TWO_UNITS ((u128) 2 * CC_EPSILON_UNITS_PER_ONE)

/* r is ceil(e^2 / (2 * 10^9)): r * 2e9 >= e^2 > (r - 1) * 2e9. */
static bool
is_rho_rounded_up(uint64_t e, uint64_t r)
{
	u128		square = (u128) e * e;

	return (u128) r * TWO_UNITS >= square && (r == 0 || (u128) (r - 1) * TWO_UNITS < square);
}

static void
test_rho_of_epsilon(void)
{
	seeded_rng r;
	int			wrong = 0;
	static const struct
	{
		uint64_t	epsilon_units;
		uint64_t	rho_units;
	}			exact[] = {
		{0, 0},
		{1, 1},					/* 5e-19 rho: one unit, rounded up */
		{1000, 1},				/* epsilon 1e-6, the least a release takes */
		{63245, 2},				/* 63245^2 = 3999930025, just below 2 units */
		{63246, 3},				/* 63246^2 = 4000056516, just above */
		{123457, 8},			/* 7.62 units */
		{100000000, 5000000},	/* epsilon 0.1: rho 0.005, exact */
		{250000000, 31250000},	/* epsilon 0.25: rho 1/32, exact */
		{1000000000, 500000000},	/* epsilon 1: rho 1/2 */
		{UINT64_C(1000000000000), UINT64_C(500000000000000)},	/* epsilon 1000 */
	};

	for (int i = 0; i < (int) (sizeof(exact) / sizeof(exact[0])); i++)
		CHECK(cc_rho_of_epsilon(exact[i].epsilon_units) == exact[i].rho_units,
			  "rho of %llu units of epsilon is %llu, not %llu",
			  (unsigned long long) exact[i].epsilon_units,
			  (unsigned long long) cc_rho_of_epsilon(exact[i].epsilon_units),
			  (unsigned long long) exact[i].rho_units);

	/* rounded up, never down, over the whole range that fits */
	seeded_rng_init(&r, 1313);
	for (int i = 0; i < 100000; i++)
	{
		/* up to 2^47 units of epsilon, whose rho fits in 64 bits */
		uint64_t	e = cc_next_word(&r.rng) >> (17 + cc_next_word(&r.rng) % 47);

		if (!is_rho_rounded_up(e, cc_rho_of_epsilon(e)))
			wrong++;
	}
	CHECK(wrong == 0, "%d of 100000 rhos are not the square over 2e9 rounded up", wrong);

	/* beyond 64 bits it saturates, and a budget can never afford it */
	CHECK(cc_rho_of_epsilon(UINT64_MAX) == UINT64_MAX, "saturates");
	CHECK(cc_rho_of_epsilon(UINT64_C(1) << 40) == UINT64_C(604462909807315),
		  "2^80 / 2e9 rounded up: %llu", (unsigned long long) cc_rho_of_epsilon(UINT64_C(1) << 40));
}

static void
test_ledger_cost(void)
{
	uint64_t	units = 7;

	CHECK(cc_ledger_cost(CC_PURE, cc_pure_cost(250000000), &units) && units == 250000000,
		  "a pure release costs a pure ledger its epsilon");
	CHECK(cc_ledger_cost(CC_ZCDP, cc_pure_cost(250000000), &units) && units == 31250000,
		  "a pure release costs a zCDP ledger epsilon^2 / 2");
	CHECK(cc_ledger_cost(CC_ZCDP, cc_pure_cost(1000), &units) && units == 1,
		  "rounded up: %llu", (unsigned long long) units);
	CHECK(cc_ledger_cost(CC_ZCDP, cc_zcdp_cost(31250000), &units) && units == 31250000,
		  "a zCDP release costs a zCDP ledger its rho");
	units = 7;
	CHECK(!cc_ledger_cost(CC_PURE, cc_zcdp_cost(31250000), &units) && units == 7,
		  "a pure ledger cannot pay for a zCDP release");
	CHECK(!cc_ledger_cost((cc_accounting) 2, cc_pure_cost(1), &units) &&
		  !cc_ledger_cost((cc_accounting) 3, cc_pure_cost(1), &units) &&
		  !cc_ledger_cost(CC_ZCDP, (cc_cost) {.accounting = (cc_accounting) 3,.units = 1}, &units),
		  "an accounting that is neither pays for nothing");
}

/* Canonne, Kamath and Steinke's bound at a = alpha - 1, written apart. */
static long double
cks_at(long double rho, long double delta, long double a)
{
	long double alpha = 1.0L + a;

	return alpha * rho + (logl(1.0L / delta) + (alpha - 1.0L) * logl(1.0L - 1.0L / alpha) - logl(alpha)) /
		(alpha - 1.0L);
}

/*
 * The least value of f(x, y, a) over a grid of ln a, refined around the best
 * point: the conversions are written apart from the code under test, and so
 * is their search.
 */
static long double
grid_min(long double (*f) (long double, long double, long double), long double x, long double y)
{
	long double best = INFINITY;
	long double best_u = 0;
	long double step = 0.01L;

	for (long double u = -40.0L; u <= 40.0L; u += step)
	{
		long double v = f(x, y, expl(u));

		if (v < best)
		{
			best = v;
			best_u = u;
		}
	}
	for (int round = 0; round < 6; round++)
	{
		long double center = best_u;

		step /= 100.0L;
		for (long double u = center - 100.0L * step; u <= center + 100.0L * step; u += step)
		{
			long double v = f(x, y, expl(u));

			if (v < best)
			{
				best = v;
				best_u = u;
			}
		}
	}
	return best;
}

/* epsilon for a delta at the grid's least value */
static double
cks_grid(double rho, double delta)
{
	long double best = grid_min(cks_at, rho, delta);

	return best > 0 ? (double) best : 0.0;
}

/*
 * The exact privacy profile of the Gaussian mechanism with sensitivity 1 and
 * variance sigma^2 = 1 / (2 rho), which is rho-zCDP (Balle and Wang 2018,
 * Theorem 8): delta(epsilon) = Phi(1/(2 sigma) - epsilon sigma)
 * - e^epsilon Phi(-1/(2 sigma) - epsilon sigma).
 */
static double
gaussian_delta(double rho, double epsilon)
{
	long double sigma = sqrtl(1.0L / (2.0L * rho));
	long double h = 1.0L / (2.0L * sigma);

	/* e^epsilon Phi(.) in logarithms: e^epsilon alone overflows */
	return (double) (0.5L * erfcl(-(h - epsilon * sigma) / sqrtl(2.0L)) -
					 expl(epsilon + logl(0.5L * erfcl((h + epsilon * sigma) / sqrtl(2.0L)))));
}

static void
test_zcdp_epsilon(void)
{
	static const double rhos[] = {1e-9, 1e-6, 1e-3, 1.0 / 32, 0.5, 2, 50, 1e4};
	static const double deltas[] = {0.5, 1e-1, 1e-3, 1e-6, 1e-10, 1e-30};
	int			valid = 0;
	int			tight = 0;
	int			below_bs = 0;
	int			cases = 0;

	CHECK(cc_zcdp_epsilon(0, 1e-6) == 0, "nothing spent: epsilon 0");
	/* the figure: rho 1/32 at delta 1e-3 is epsilon 0.688 */
	CHECK(fabs(cc_zcdp_epsilon(1.0 / 32, 1e-3) - 0.68800245548780839) < 1e-9 &&
		  cc_zcdp_epsilon(1.0 / 32, 1e-3) >= 0.68800245548780839,
		  "rho 1/32 at delta 1e-3: %.12f, not 0.688002455488 (40 digits, apart)",
		  cc_zcdp_epsilon(1.0 / 32, 1e-3));
	CHECK(fabs(cc_zcdp_epsilon(0.5, 1e-6) - 5.22153444453016904) < 1e-9,
		  "rho 1/2 at delta 1e-6: %.12f", cc_zcdp_epsilon(0.5, 1e-6));

	for (int i = 0; i < (int) (sizeof(rhos) / sizeof(rhos[0])); i++)
		for (int j = 0; j < (int) (sizeof(deltas) / sizeof(deltas[0])); j++)
		{
			double		rho = rhos[i];
			double		delta = deltas[j];
			double		eps = cc_zcdp_epsilon(rho, delta);
			double		grid = cks_grid(rho, delta);
			double		bs = rho + 2 * sqrt(rho * log(1 / delta));

			cases++;
			/* a rho-zCDP mechanism, the Gaussian, is (eps, delta)-DP */
			if (gaussian_delta(rho, eps) <= delta)
				valid++;
			else
				fprintf(stderr, "rho %g delta %g: the Gaussian has delta %g at epsilon %g\n",
						rho, delta, gaussian_delta(rho, eps), eps);
			/* the best alpha, found: at the grid's least value, rounded up */
			if (eps >= grid - 1e-12 * (1 + grid) && eps <= grid + 1e-9 * (1 + grid))
				tight++;
			else
				fprintf(stderr, "rho %g delta %g: epsilon %.15g, the grid's %.15g\n", rho, delta, eps, grid);
			if (eps <= bs)
				below_bs++;
			else
				fprintf(stderr, "rho %g delta %g: epsilon %g above Bun and Steinke's %g\n", rho, delta, eps, bs);
		}
	CHECK(valid == cases, "the exact Gaussian meets delta at the epsilon found: %d of %d", valid, cases);
	CHECK(tight == cases, "the epsilon found is the grid's least, within 1e-9: %d of %d", tight, cases);
	CHECK(below_bs == cases, "and never above rho + 2 sqrt(rho ln(1/delta)): %d of %d", below_bs, cases);

	/* more spent, or a smaller delta, never shows a smaller epsilon */
	CHECK(cc_zcdp_epsilon(0.5, 1e-6) < cc_zcdp_epsilon(0.5000001, 1e-6) &&
		  cc_zcdp_epsilon(0.5, 1e-6) < cc_zcdp_epsilon(0.5, 0.9e-6), "monotone");
	CHECK(isinf(cc_zcdp_epsilon(0.5, 0)) && isinf(cc_zcdp_epsilon(0.5, 1)) &&
		  isinf(cc_zcdp_epsilon(0.5, NAN)), "delta outside (0, 1): no finite epsilon");
}

/* ln delta of the conversion at alpha = 1 + a, in long double */
static long double
cks_log_delta_at(long double rho, long double epsilon, long double a)
{
	return a * ((1.0L + a) * rho - epsilon) + a * logl(a / (1.0L + a)) - log1pl(a);
}

/* delta for an epsilon at the grid's least value */
static long double
cks_delta_grid(double rho, double epsilon)
{
	return expl(grid_min(cks_log_delta_at, rho, epsilon));
}

/*
 * delta for an epsilon: the inverse of cc_zcdp_epsilon (the same family of
 * bounds), at a refined grid's least value over alpha (never below it), and
 * a valid bound for the Gaussian mechanism.
 */
static void
test_zcdp_delta(void)
{
	static const double rhos[] = {1e-6, 1e-3, 1.0 / 32, 0.5, 2, 50};
	static const double deltas[] = {0.5, 1e-3, 1e-6, 1e-10, 1e-30};
	int			inverse = 0;
	int			above_grid = 0;
	int			valid = 0;
	int			cases = 0;

	CHECK(cc_zcdp_delta(0, 0.1) == 0 && cc_zcdp_delta(0.5, 0) <= 1 &&
		  cc_zcdp_delta(0.5, INFINITY) == 0 && cc_zcdp_delta(0.5, NAN) == 1 &&
		  cc_zcdp_delta(0.5, -1) == 1, "the ends");
	for (int i = 0; i < (int) (sizeof(rhos) / sizeof(rhos[0])); i++)
		for (int j = 0; j < (int) (sizeof(deltas) / sizeof(deltas[0])); j++)
		{
			double		eps = cc_zcdp_epsilon(rhos[i], deltas[j]);
			double		d = cc_zcdp_delta(rhos[i], eps);
			long double grid = cks_delta_grid(rhos[i], eps);

			cases++;
			/* at epsilon 0, delta is below what it was asked for */
			inverse += eps == 0 ? d <= deltas[j] : fabs(d / deltas[j] - 1) <= 1e-6;
			above_grid += d >= grid * (1 - 1e-13L) && d <= grid * (1 + 1e-9L);
			valid += gaussian_delta(rhos[i], eps) <= d;
			if (!((eps == 0 ? d <= deltas[j] : fabs(d / deltas[j] - 1) <= 1e-6) &&
				  d >= grid * (1 - 1e-13L) &&
				  d <= grid * (1 + 1e-9L)))
				fprintf(stderr, "rho %g epsilon %g: delta %.17g (for %g; grid %.17Lg)\n",
						rhos[i], eps, d, deltas[j], grid);
		}
	CHECK(inverse == cases, "delta(epsilon(delta)) is delta within 1e-6 (epsilon is found to 1e-10 or so, and delta falls fast): %d of %d", inverse, cases);
	CHECK(above_grid == cases, "at the grid's least, never below it: %d of %d", above_grid, cases);
	CHECK(valid == cases, "the exact Gaussian meets it: %d of %d", valid, cases);
	CHECK(cc_zcdp_delta(0.5, 3) < cc_zcdp_delta(0.5, 2.9) &&
		  cc_zcdp_delta(0.5, 3) < cc_zcdp_delta(0.51, 3), "monotone");
}

void
test_accounting(void)
{
	test_rho_of_epsilon();
	test_ledger_cost();
	test_zcdp_epsilon();
	test_zcdp_delta();
}
