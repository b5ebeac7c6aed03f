/*
 * test_monotone.c
 *		The isotonic projection against exact small cases and a brute force
 *		property check (non-decreasing, non-negative, no farther than a
 *		feasible series), and the clamp.
 */
#include "unit.h"

#include <math.h>
#include <stdlib.h>

#include "monotone.h"

static bool
series_equal(const double *a, const double *b, int n)
{
	for (int i = 0; i < n; i++)
		if (fabs(a[i] - b[i]) > 1e-12)
			return false;
	return true;
}

static void
check_exact(void)
{
	cc_pav_block blocks[8];
	double		ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
	double		a[5] = {-8, 3, 1, 5, 4};
	double		a_want[5] = {0, 2, 2, 4.5, 4.5};
	double		b[3] = {-3, -1, -2};
	double		b_want[3] = {0, 0, 0};
	double		c[4] = {1, 2, 3, 4};
	double		c_want[4] = {1, 2, 3, 4};
	double		d[2] = {4, 1};
	double		d_weight[2] = {3, 1};
	double		d_want[2] = {3.25, 3.25};
	double		e[3] = {5, -2, 0};
	double		e_want[3] = {1, 1, 1};

	cc_monotone_series(a, ones, 5, blocks);
	CHECK(series_equal(a, a_want, 5), "%g %g %g %g %g", a[0], a[1], a[2], a[3], a[4]);
	cc_monotone_series(b, ones, 3, blocks);
	CHECK(series_equal(b, b_want, 3), "%g %g %g", b[0], b[1], b[2]);
	cc_monotone_series(c, ones, 4, blocks);
	CHECK(series_equal(c, c_want, 4), "an increasing series is left alone");
	cc_monotone_series(d, d_weight, 2, blocks);
	CHECK(series_equal(d, d_want, 2), "weighted: %g %g", d[0], d[1]);
	cc_monotone_series(e, ones, 3, blocks);
	CHECK(series_equal(e, e_want, 3), "one pool: %g %g %g", e[0], e[1], e[2]);
	cc_monotone_series(a, ones, 0, blocks);
	CHECK(a[0] == 0, "an empty series touches nothing");
}

/*
 * Random series: the output is non-decreasing and non-negative, and the
 * projection is optimal among the series it is compared with: no worse in
 * weighted squared distance than the running maximum clamped at 0, itself
 * feasible.
 */
static void
check_random(void)
{
	enum
	{
		N = 200, RUNS = 500
	};
	double		y[N];
	double		raw[N];
	double		w[N];
	cc_pav_block blocks[N];
	bool		ordered = true;
	bool		optimal = true;

	srand(31);
	for (int r = 0; r < RUNS; r++)
	{
		double		best = 0;
		double		other = 0;
		double		running = 0;

		for (int t = 0; t < N; t++)
		{
			raw[t] = y[t] = t / 4.0 + (rand() % 41 - 20);
			w[t] = 1.0 / (1 + rand() % 9);
		}
		cc_monotone_series(y, w, N, blocks);
		for (int t = 0; t < N; t++)
		{
			running = fmax(running, raw[t]);
			if (y[t] < 0 || (t > 0 && y[t] < y[t - 1]))
				ordered = false;
			best += w[t] * (y[t] - raw[t]) * (y[t] - raw[t]);
			other += w[t] * (running - raw[t]) * (running - raw[t]);
		}
		if (best > other + 1e-9)
			optimal = false;
	}
	CHECK(ordered, "every projected series is non-decreasing and >= 0");
	CHECK(optimal, "the projection is no farther than the clamped running maximum");
}

void
test_monotone(void)
{
	check_exact();
	check_random();
	CHECK(cc_clamp(-110.8, 0, 1) == 0 && cc_clamp(66.3, 0, 1) == 1 && cc_clamp(0.25, 0, 1) == 0.25,
		  "the clamp");
}
