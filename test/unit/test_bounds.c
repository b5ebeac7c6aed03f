/*
 * test_bounds.c
 *		The simultaneous bound: its union over the steps within beta under
 *		the exact law of the noise and nearly all of beta spent, covering
 *		every step at once in simulated streams, tight against the largest
 *		error those streams show, and finite and sane at the largest
 *		horizons and scales.
 */
#include "unit.h"
#include "mechanism_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Support of the exact pmfs below: the scales used make the rest < 1e-30. */
#define HALF 800
#define WIDTH (2 * HALF + 1)

/* pmf of discrete Laplace of scale b on [-HALF, HALF] */
static void
dlap_pmf(double b, double *pmf)
{
	double		p = exp(-1.0 / b);

	for (int i = 0; i < WIDTH; i++)
		pmf[i] = (1.0 - p) / (1.0 + p) * pow(p, abs(i - HALF));
}

/* out = a * b, both on [-HALF, HALF], cut to it; out may not alias */
static void
convolve(const double *a, const double *b, double *out)
{
	for (int i = 0; i < WIDTH; i++)
	{
		/* out[i] = sum_j a[j] b[i - j + HALF], that index within b */
		int			lo = i - HALF > 0 ? i - HALF : 0;
		int			hi = i + HALF < WIDTH - 1 ? i + HALF : WIDTH - 1;
		double		s = 0.0;

		for (int j = lo; j <= hi; j++)
			s += a[j] * b[i - j + HALF];
		out[i] = s;
	}
}

/* the pmf of a sum of n draws of scale b */
static void
sum_pmf(int n, double b, double *out)
{
	static double one[WIDTH];
	static double next[WIDTH];

	dlap_pmf(b, one);
	memcpy(out, one, sizeof(one));
	for (int k = 1; k < n; k++)
	{
		convolve(out, one, next);
		memcpy(out, next, sizeof(next));
	}
}

/* P(|S| > a) */
static double
two_sided_tail(const double *pmf, double a)
{
	double		s = 0.0;

	for (int i = 0; i < WIDTH; i++)
		if (fabs((double) (i - HALF)) > a)
			s += pmf[i];
	return s;
}

/* The moment generating function against a direct sum over the pmf. */
static void
test_log_mgf(void)
{
	static double pmf[WIDTH];

	dlap_pmf(5.0, pmf);
	for (int i = 0; i < 3; i++)
	{
		double		lambda = (double) i * 0.05;
		double		direct = 0.0;

		for (int j = 0; j < WIDTH; j++)
			direct += pmf[j] * exp(lambda * (double) (j - HALF));
		CHECK(fabs(cc_dlap_log_mgf(0.2, lambda) - log(direct)) <= 1e-12 * (1.0 + log(direct)),
			  "log mgf at %g: %.17g vs %.17g", lambda, cc_dlap_log_mgf(0.2, lambda), log(direct));
	}
	CHECK(cc_dlap_log_mgf(0.2, 0.2) == INFINITY, "log mgf at 1/b");
}

/*
 * binary at T = 1000, epsilon 1 (10 levels, b = 10): every step's noise is
 * a sum of popcount(t) draws whose exact law a convolution gives.  The
 * bounds' union over the steps must stay within beta; the classes below the
 * cap must sit exactly at the floor quantile (one less would exceed it: the
 * exact tail, not an overstatement of it); and most of beta must be spent
 * (Chernoff bounds would leave most of it unused).
 */
static void
test_binary_exact(void)
{
	static double pmf[10][WIDTH];
	cc_params	p = params_for(CC_BINARY, 1.0, 1000);
	cc_state   *s = new_state(&p);
	seeded_rng	r;
	double		bounds[10] = {0};
	int64_t		steps[10] = {0};
	double		cap = 0.0;
	double		spent = 0.0;
	double		floor_share = CC_BOUND_FLOOR * p.beta / 1000.0;

	for (int k = 1; k < 10; k++)
		sum_pmf(k, 10.0, pmf[k]);
	seeded_rng_init(&r, 77);
	for (int t = 1; t <= 1000; t++)
	{
		cc_release rel;
		int			k = __builtin_popcount(t);

		cc_push(s, 0, &r.rng);
		cc_read(s, &rel);
		bounds[k] = rel.bound;
		steps[k]++;
		if (rel.bound > cap)
			cap = rel.bound;
	}
	for (int k = 1; k < 10; k++)
	{
		spent += (double) steps[k] * two_sided_tail(pmf[k], bounds[k]);
		CHECK(steps[k] == cc_count_popcount(1000, k), "popcount %d: %lld steps, counted %lld",
			  k, (long long) steps[k], (long long) cc_count_popcount(1000, k));
		if (bounds[k] < cap)
			CHECK(two_sided_tail(pmf[k], bounds[k]) <= floor_share &&
				  two_sided_tail(pmf[k], bounds[k] - 1.0) > floor_share,
				  "popcount %d: bound %g is not the floor quantile (%g, %g against %g)", k,
				  bounds[k], two_sided_tail(pmf[k], bounds[k]),
				  two_sided_tail(pmf[k], bounds[k] - 1.0), floor_share);
	}
	CHECK(spent <= p.beta, "binary: the union of the bounds fails with %g > beta", spent);
	CHECK(spent > 0.8 * p.beta, "binary: the bounds spend %g of beta %g", spent, p.beta);
	printf("bound binary T=1000: exact union %.4f of beta %.2f, cap %g\n", spent, p.beta, cap);
	free(s);
}

/*
 * hybrid at T = 256, epsilon 1: at t = 2^k + s the noise is k + 1 draws of
 * scale 2 and popcount(s) of scale 2k, whose law is a convolution.  The
 * bound sums the tree's draws exactly and bounds the others by their
 * moment generating functions; its union must stay within beta and spend
 * most of it.
 */
static void
test_hybrid_exact(void)
{
	static double logs[9][WIDTH];
	static double tree[WIDTH];
	static double noise[WIDTH];
	double		bounds[9][9];
	cc_params	p = params_for(CC_HYBRID, 1.0, 256);
	cc_state   *s = new_state(&p);
	seeded_rng	r;
	double		spent = 0.0;

	seeded_rng_init(&r, 78);
	for (int t = 1; t <= 256; t++)
	{
		cc_release rel;
		int			k = 31 - __builtin_clz(t);

		cc_push(s, 0, &r.rng);
		cc_read(s, &rel);
		bounds[k][__builtin_popcount(t - (1 << k))] = rel.bound;
	}
	for (int k = 0; k <= 8; k++)
	{
		int			last = k < 8 ? (1 << k) : 1;	/* s in [0, last) */

		sum_pmf(k + 1, 2.0, logs[k]);
		for (int j = 0; j <= k; j++)
		{
			int64_t		steps = j == 0 ? 1 : cc_count_popcount(last - 1, j);

			if (steps == 0)
				continue;
			if (j == 0)
				memcpy(noise, logs[k], sizeof(noise));
			else
			{
				sum_pmf(j, 2.0 * k, tree);
				convolve(logs[k], tree, noise);
			}
			spent += (double) steps * two_sided_tail(noise, bounds[k][j]);
		}
	}
	CHECK(spent <= p.beta, "hybrid: the union of the bounds fails with %g > beta", spent);
	/* its logarithmic draws are bounded by Chernoff: a fifth at least */
	CHECK(spent > 0.2 * p.beta, "hybrid: the bounds spend %g of beta %g", spent, p.beta);
	printf("bound hybrid T=256: exact union %.4f of beta %.2f\n", spent, p.beta);
	free(s);
}

/* simple_i at T = 100: one draw of scale 100, an exact quantile at beta / T */
static void
test_simple_i_exact(void)
{
	cc_params	p = params_for(CC_SIMPLE_I, 1.0, 100);
	cc_state   *s = new_state(&p);
	seeded_rng	r;
	cc_release	rel;
	double		q = exp(-1.0 / 100.0);
	double		delta = p.beta / 100.0;

	seeded_rng_init(&r, 79);
	cc_push(s, 0, &r.rng);
	cc_read(s, &rel);
	/* P(|X| > m) = 2 q^(m+1) / (1 + q) */
	CHECK(2.0 * pow(q, rel.bound + 1.0) / (1.0 + q) <= delta &&
		  2.0 * pow(q, rel.bound) / (1.0 + q) > delta,
		  "simple_i bound %g is not the exact quantile", rel.bound);
	free(s);
}

/*
 * The smallest f with P(Bin(n, prob) >= f) < 2e-9, summed in logs.  f
 * streams or more failing a bound of failure probability beta is a false
 * alarm that rarely; and with prob = 1 - beta, the f-th smallest of n draws
 * is below the law's (1 - beta) quantile that rarely (f of them would be).
 */
static int
binomial_upper(int n, double prob)
{
	double		tail = 0.0;

	for (int f = n; f >= 0; f--)
	{
		tail += exp(lgamma(n + 1.0) - lgamma(f + 1.0) - lgamma(n - f + 1.0) +
					f * log(prob) + (n - f) * log1p(-prob));
		if (tail >= 2e-9)
			return f + 1;
	}
	return 0;
}

static int
compare_doubles(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

/*
 * STREAMS streams of T steps per mechanism, all items zero (the noise does
 * not depend on them): the fraction of streams where some step's error
 * exceeds its bound must be consistent with at most beta, and a bound 40%
 * too small must be caught by that same check; the largest bound must be at
 * most `tightness` times the (1 - beta) quantile of the largest error, taken
 * from above (binomial_upper) so that sampling never makes it fail by chance.
 */
#define STREAMS 2000

static void
check_coverage(cc_params p, int64_t steps, double tightness)
{
	cc_kind		kind = p.kind;
	int64_t		horizon = p.horizon;
	cc_state   *s = new_state(&p);
	seeded_rng	r;
	double	   *largest = malloc(STREAMS * sizeof(double));
	int			failed = 0;
	int			failed_small = 0;
	double		max_bound = 0.0;
	int			alarm = binomial_upper(STREAMS, p.beta);
	int			rank = binomial_upper(STREAMS, 1.0 - p.beta);
	double		quantile;

	seeded_rng_init(&r, 4242 + (uint64_t) kind * 17 + (uint64_t) horizon);
	for (int n = 0; n < STREAMS; n++)
	{
		bool		over = false;
		bool		over_small = false;

		cc_state_init(s, &p);
		largest[n] = 0.0;
		for (int64_t t = 1; t <= steps; t++)
		{
			cc_release rel;
			double		err;

			cc_push(s, 0, &r.rng);
			cc_read(s, &rel);
			err = fabs((double) rel.noisy);
			over |= err > rel.bound;
			over_small |= err > 0.6 * rel.bound;
			if (err > largest[n])
				largest[n] = err;
			if (rel.bound > max_bound)
				max_bound = rel.bound;
		}
		failed += over;
		failed_small += over_small;
	}
	qsort(largest, STREAMS, sizeof(double), compare_doubles);
	quantile = largest[rank - 1];
	CHECK(failed < alarm, "%s T=%lld: %d of %d streams exceed the bound",
		  cc_kind_name(kind), (long long) horizon, failed, STREAMS);
	CHECK(failed_small >= alarm, "%s T=%lld: 0.6 x bound not caught (%d)",
		  cc_kind_name(kind), (long long) horizon, failed_small);
	if (tightness > 0.0)
		CHECK(max_bound <= tightness * quantile,
			  "%s T=%lld: bound %g above %g x the high quantile %g of the largest error",
			  cc_kind_name(kind), (long long) horizon, max_bound, tightness, quantile);
	printf("bound %-16s T=%lld: largest bound %.1f, %d/%d streams above it, "
		   "(1 - beta) quantile of the largest error %.1f (%.1f from above)\n",
		   cc_kind_name(kind), (long long) horizon, max_bound, failed, STREAMS,
		   largest[(int) ceil((1.0 - p.beta) * STREAMS) - 1], quantile);
	free(largest);
	free(s);
}

/*
 * The largest horizons and scales: the bound of the first 4096 steps of a
 * stream of 2^62 (every popcount up to 12) is finite, at least 2 standard
 * deviations and, where every step is a segment, at most 40 (the noise is a
 * sum of draws whose tails are at most exponential, a single draw's
 * quantile at 1e-22 is ln(2e22) / sqrt(2) = 36 standard deviations, and
 * beta / (4T) is above 1e-22); the time it takes is printed.
 */
static void
check_extreme(cc_params p)
{
	cc_state   *s = new_state(&p);
	seeded_rng	r;
	clock_t		start = clock();
	double		worst = 0.0;
	double		least = INFINITY;
	/* a segment's bound covers its last step, far beyond these */
	bool		segments = p.kind == CC_SIMPLE_II || p.kind == CC_TWO_LEVEL;

	seeded_rng_init(&r, 80);
	for (int t = 1; t <= 4096; t++)
	{
		cc_release rel;
		double		ratio;

		cc_push(s, 0, &r.rng);
		cc_read(s, &rel);
		ratio = rel.bound / sqrt(rel.variance);
		worst = fmax(worst, ratio);
		least = fmin(least, ratio);
	}
	CHECK(isfinite(worst) && least >= 2.0 && (segments || worst <= 40.0),
		  "%s T=%lld: bound from %g to %g standard deviations",
		  cc_kind_name(p.kind), (long long) p.horizon, least, worst);
	printf("bound %-16s T=%lld, scale %g: %.1f to %.3g standard deviations, %.0f ms\n",
		   cc_kind_name(p.kind), (long long) p.horizon, cc_scale_value(s->scale), least, worst,
		   1000.0 * (double) (clock() - start) / CLOCKS_PER_SEC);
	free(s);
}

void
test_bounds(void)
{
	test_log_mgf();
	test_binary_exact();
	test_hybrid_exact();
	test_simple_i_exact();
	check_coverage(params_for(CC_SIMPLE_I, 1.0, 1000), 1000, 1.3);
	check_coverage(params_for(CC_SIMPLE_II, 1.0, 1000), 1000, 1.3);
	check_coverage(params_for(CC_TWO_LEVEL, 1.0, 1000), 1000, 1.3);
	check_coverage(params_for(CC_BINARY, 1.0, 1000), 1000, 1.3);
	check_coverage(params_for(CC_HYBRID, 1.0, 1000), 1000, 1.3);
	check_coverage(params_for(CC_HONAKER, 1.0, 1000), 1000, 1.3);
	check_coverage(params_for(CC_SMOOTH_BINARY, 1.0, 1000), 1000, 1.3);
	check_coverage(params_zcdp(CC_GAUSSIAN_HONAKER, 0.5, 1000), 1000, 1.3);
	check_coverage(params_zcdp(CC_BLT, 0.5, 1000), 1000, 1.3);
	/* without a horizon: the bound covers every step, so these 1000 too */
	check_coverage(params_for(CC_SIMPLE_II, 1.0, 0), 1000, 0.0);
	check_coverage(params_for(CC_HYBRID, 1.0, 0), 1000, 0.0);
	for (int kind = 0; kind < CC_NUM_KINDS; kind++)
	{
		cc_params	p;

		if (kind == CC_BLT || kind == CC_BLT_SCALED)
			p = params_zcdp(kind, 1e-6, cc_kind_max_horizon(kind));
		else if (kind == CC_GAUSSIAN_HONAKER)
			p = params_zcdp(kind, 1e-6, CC_MAX_HORIZON);
		else if (kind == CC_SIMPLE_I)
			p = params_for(kind, 1e-6, 1000000000);	/* scale 1e15, the largest */
		else
			p = params_for(kind, 1e-6, CC_MAX_HORIZON);
		check_extreme(p);
	}
	check_extreme(params_for(CC_HYBRID, 1e-6, 0));
	check_extreme(params_for(CC_SIMPLE_II, 1e-6, 0));
}
