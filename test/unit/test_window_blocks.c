/*
 * test_window_blocks.c
 *		The blocks window (src/core/window_blocks.c), two levels and three:
 *		every step's number of noisy nodes counted by brute force, every
 *		release against the least-squares estimate computed apart from the
 *		nodes' matrix (r B = a, the reported variance ||r||^2 times a draw's),
 *		the sums over a horizon and the choice of K (and K1, K2) against
 *		loops, the empirical variance over 4 10^4 streams (two levels) and
 *		10^4 (three), an empirical privacy audit on neighbouring streams for
 *		each, and the windows at the frontier (printed for the docs).
 *
 * Statistical checks: 46, each at 7 standard deviations (2.6e-12): 3 for
 * each of the 12 steps of the 4 runs of check_blocks_variance() and one on
 * the bound in each, and 3 in each of the 2 audits; counted in unit.h's
 * budget.
 */
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "choice.h"
#include "window.h"

#define MAX_STEPS 40			/* brute force: the steps of its streams */
#define MAX_NODES (3 * MAX_STEPS)

/* K1 = block and K2 = super (0: two levels), both chosen when block is 0 */
static cc_window_params
blocks_params(int64_t width, int64_t block, int64_t super, int64_t horizon, double epsilon)
{
	cc_window_params p = {CC_WINDOW_BLOCKS, width, horizon, 0, 1, 0.05, 0, block, super};

	cc_epsilon_units(epsilon, &p.epsilon_units);
	return p;
}

/* The steps drawn at once: a block's K1, or a superblock's K1 K2. */
static int
period_of(int64_t block, int64_t super)
{
	return (int) (super > 0 ? block * super : block);
}

/*
 * The nodes' matrix over n steps (n a multiple of the period): node i < n
 * is step i, node n + b is block b, and with superblocks node
 * n + n / K1 + s is superblock s.  Returns the number of nodes.
 */
static int
node_matrix(int64_t block, int64_t super, int n, long double b[MAX_NODES][MAX_STEPS])
{
	int			blocks = n / (int) block;
	int			nodes = n + blocks + (super > 0 ? n / period_of(block, super) : 0);

	memset(b, 0, sizeof(long double) * MAX_NODES * MAX_STEPS);
	for (int i = 0; i < n; i++)
	{
		b[i][i] = 1;
		b[n + i / block][i] = 1;
		if (super > 0)
			b[n + blocks + i / period_of(block, super)][i] = 1;
	}
	return nodes;
}

/* G^-1 for G = B'B, by Gauss-Jordan in long double (G is positive definite). */
static void
gram_inverse(const long double b[MAX_NODES][MAX_STEPS], int nodes, int n,
			 long double inv[MAX_STEPS][MAX_STEPS])
{
	static long double g[MAX_STEPS][2 * MAX_STEPS];

	for (int i = 0; i < n; i++)
		for (int j = 0; j < 2 * n; j++)
		{
			g[i][j] = j == n + i;
			for (int v = 0; v < nodes && j < n; v++)
				g[i][j] += b[v][i] * b[v][j];
		}
	for (int c = 0; c < n; c++)
	{
		long double pivot = g[c][c];

		for (int j = 0; j < 2 * n; j++)
			g[c][j] /= pivot;
		for (int i = 0; i < n; i++)
			if (i != c)
			{
				long double f = g[i][c];

				for (int j = 0; j < 2 * n; j++)
					g[i][j] -= f * g[c][j];
			}
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			inv[i][j] = g[i][n + j];
}

/*
 * The draws in the state's order: at a block's first step, its K steps',
 * then its own; with superblocks, all of a superblock's blocks so at its
 * first step, then its own.
 */
static void
replay_draws(int64_t block, int64_t super, int n, cc_scale scale, uint64_t seed, int64_t *z)
{
	seeded_rng	r;

	seeded_rng_init(&r, seed);
	for (int first = 0; first < n; first += (int) block)
	{
		for (int i = 0; i < block; i++)
			z[first + i] = cc_discrete_laplace(&r.rng, scale);
		z[n + first / block] = cc_discrete_laplace(&r.rng, scale);
		if (super > 0 && (first + block) % period_of(block, super) == 0)
			z[n + n / block + first / period_of(block, super)] =
				cc_discrete_laplace(&r.rng, scale);
	}
}

typedef struct brute_errors
{
	int			sensitivity;	/* the most nodes holding one step */
	int			not_a;			/* r B != a */
	int			variance;		/* reported other than ||r||^2 v */
	int			value;			/* release other than the estimate */
	int			span;			/* units other than the estimate's */
} brute_errors;

/*
 * One stream of T steps for W, K1 and K2: at every step, the estimate's row
 * r = a G^-1 B' computed apart, checked against what the state releases
 * (the estimate's noise times D1 D2, D2 = 1 without superblocks, rounded
 * to the nearest integer, halves up).
 */
static void
brute_run(int64_t width, int64_t block, int64_t super, int64_t horizon, brute_errors *e)
{
	static long double b[MAX_NODES][MAX_STEPS];
	static long double inv[MAX_STEPS][MAX_STEPS];
	int64_t		period = period_of(block, super);
	int			n = (int) ((horizon + period - 1) / period * period);
	int			nodes = node_matrix(block, super, n, b);
	cc_window_params p = blocks_params(width, block, super, horizon, 0.7);
	cc_window  *w = unit_new_window(&p);
	long long	den = (block + 1) * (super > 0 ? period + block + 1 : 1);
	cc_scale	scale;
	int64_t		z[MAX_NODES];
	int64_t		x[MAX_STEPS];
	seeded_rng	r;
	uint64_t	seed = (uint64_t) (width * 100 + block * 10 + super);

	for (int i = 0; i < n; i++)
	{
		int			holding = 0;

		for (int v = 0; v < nodes; v++)
			holding += b[v][i] != 0;
		e->sensitivity = holding > e->sensitivity ? holding : e->sensitivity;
	}
	gram_inverse(b, nodes, n, inv);
	cc_scale_make(super > 0 ? 3 : 2, p.epsilon_units, CC_EPSILON_UNITS_PER_ONE, &scale);
	replay_draws(block, super, n, scale, seed, z);
	seeded_rng_init(&r, seed);
	for (int64_t t = 1; t <= horizon; t++)
	{
		long double a_inv[MAX_STEPS] = {0};
		long double rv[MAX_NODES];
		long double norm = 0,
					noise = 0;
		int64_t		lo = t > width ? t - width + 1 : 1;
		int64_t		exact = 0;
		cc_release	rel;

		x[t - 1] = (t * 7) % 3;
		cc_window_push(w, x[t - 1], &r.rng);
		cc_window_read(w, &rel);
		for (int64_t s = lo; s <= t; s++)
		{
			exact += x[s - 1];
			for (int j = 0; j < n; j++)
				a_inv[j] += inv[s - 1][j];
		}
		for (int v = 0; v < nodes; v++)
		{
			rv[v] = 0;
			for (int j = 0; j < n; j++)
				rv[v] += a_inv[j] * b[v][j];
			norm += rv[v] * rv[v];
			noise += rv[v] * (long double) z[v];
		}
		for (int j = 0; j < n; j++)
		{
			long double cover = 0;

			for (int v = 0; v < nodes; v++)
				cover += rv[v] * b[v][j];
			e->not_a += fabsl(cover - (j + 1 >= lo && j + 1 <= t)) > 1e-12L;
		}
		{
			long long	num = llroundl(noise * (long double) den);
			long long	twice = 2 * num + den;
			long long	q = twice / (2 * den);

			if (twice % (2 * den) != 0 && twice < 0)
				q--;
			e->value += rel.noisy != exact + q;
		}
		e->variance += fabsl((long double) rel.variance - norm * cc_dlap_variance(scale)) >
			1e-9L * (long double) rel.variance;
		e->span += fabsl((long double) cc_window_blocks_units(width, block, super, t) - norm) >
			1e-12L;
	}
	free(w);
}

/*
 * Every W and K (two levels) or K1, K2 (three) small enough for brute
 * force, over streams of 30 steps.
 */
static void
test_blocks_brute(void)
{
	static const int64_t widths[] = {1, 2, 3, 5, 8, 13, 30};
	static const int64_t blocks[] = {1, 2, 3, 4, 7, 10};
	static const int64_t pairs[][2] = {{1, 2}, {2, 2}, {1, 3}, {2, 3}, {3, 2}, {3, 3}, {2, 4}, {4, 2}};

	for (int levels = 2; levels <= 3; levels++)
	{
		brute_errors e = {0};

		for (int i = 0; i < 7; i++)
			for (int k = 0; k < (levels == 2 ? 6 : 8); k++)
				brute_run(widths[i], levels == 2 ? blocks[k] : pairs[k][0],
						  levels == 2 ? 0 : pairs[k][1], 30, &e);
		CHECK(e.sensitivity == levels, "a step in %d nodes, not %d", e.sensitivity, levels);
		CHECK(e.not_a == 0, "%d steps where r B is not the window (%d levels)", e.not_a, levels);
		CHECK(e.value == 0, "%d releases other than the least-squares estimate (%d levels)",
			  e.value, levels);
		CHECK(e.variance == 0, "%d variances other than ||r||^2 times a draw's (%d levels)",
			  e.variance, levels);
		CHECK(e.span == 0, "%d steps whose closed form is not ||r||^2 (%d levels)", e.span,
			  levels);
	}
}

/* The sums over a horizon, their largest term and the choice of K, against loops. */
static void
test_blocks_horizon(void)
{
	static const int64_t widths[] = {1, 7, 30, 100, 365};
	static const int64_t horizons[] = {1, 29, 400, 5000};
	int			wrong = 0;

	for (int i = 0; i < 5; i++)
		for (int h = 0; h < 4; h++)
		{
			int64_t		width = widths[i] < horizons[h] ? widths[i] : horizons[h];
			int64_t		chosen = cc_window_blocks_choose(width, horizons[h]);
			double		chosen_sum,
						chosen_most;

			cc_window_blocks_over_horizon(width, chosen, 0, horizons[h], &chosen_sum, &chosen_most);
			for (int64_t k = 1; k <= width; k++)
			{
				double		sum = 0,
							most = 0,
							fast,
							fast_most;

				for (int64_t t = 1; t <= horizons[h]; t++)
				{
					double		u = cc_window_blocks_units(width, k, 0, t);

					sum += u;
					most = fmax(most, u);
				}
				cc_window_blocks_over_horizon(width, k, 0, horizons[h], &fast, &fast_most);
				wrong += fabs(fast - sum) > 1e-9 * sum || fabs(fast_most - most) > 1e-12 * most;
				wrong += fast < chosen_sum * (1 - 1e-12);
			}
		}
	CHECK(wrong == 0, "%d sums over the horizon or choices of K wrong", wrong);
}

/* The sum over steps 1 .. horizon of the units at t, and their largest, by a loop. */
static void
loop_over_horizon(int64_t width, int64_t block, int64_t super, int64_t horizon, double *sum,
				  double *most)
{
	*sum = *most = 0;
	for (int64_t t = 1; t <= horizon; t++)
	{
		double		u = cc_window_blocks_units(width, block, super, t);

		*sum += u;
		*most = fmax(*most, u);
	}
}

/*
 * Three levels: the sums over a horizon and their largest term against
 * loops for every K1, K2 <= 12 with K1 K2 <= W, and the (K1, K2) chosen
 * within 2% of the least of those sums (the choice weighs the steps from W
 * on by their mean over a period: exact for whole periods, 1.02% off at
 * W = 365, T = 400, where 36 steps follow W).
 */
static void
test_three_horizon(void)
{
	static const int64_t widths[] = {7, 30, 100, 365};
	static const int64_t horizons[] = {29, 400, 5000};
	int			wrong = 0,
				far = 0;

	for (int i = 0; i < 4; i++)
		for (int h = 0; h < 3; h++)
		{
			int64_t		width = widths[i] < horizons[h] ? widths[i] : horizons[h];
			double		best = INFINITY,
						sum,
						most,
						fast,
						fast_most;
			int64_t		k1,
						k2;

			for (k1 = 1; k1 <= 12; k1++)
				for (k2 = 2; k2 <= 12 && k1 * k2 <= width; k2++)
				{
					loop_over_horizon(width, k1, k2, horizons[h], &sum, &most);
					cc_window_blocks_over_horizon(width, k1, k2, horizons[h], &fast, &fast_most);
					wrong += fabs(fast - sum) > 1e-9 * sum || fabs(fast_most - most) > 1e-12 * most;
					best = fmin(best, sum);
				}
			if (cc_window_blocks_choose_three(width, horizons[h], &k1, &k2))
			{
				cc_window_blocks_over_horizon(width, k1, k2, horizons[h], &fast, &fast_most);
				far += fast > 1.02 * best;
			}
		}
	CHECK(wrong == 0, "%d sums over the horizon of three levels wrong", wrong);
	CHECK(far == 0, "%d choices of (K1, K2) beyond 2%% of the best", far);
}

#define TRIALS 40000
#define TRIALS_THREE 10000

/* Variance and fourth cumulant of the window's noise at t, from its weights. */
static void
blocks_moments(int64_t width, int64_t block, int64_t t, double b, double *var,
			   double *kappa4)
{
	cc_window_span span;
	int64_t		qs[3];

	cc_window_blocks_span(width, block, t, &span);
	qs[0] = span.q_first;
	qs[1] = span.q_last;
	qs[2] = block;
	*var = *kappa4 = 0;
	for (int i = 0; i < 3; i++)
	{
		double		times = i == 2 ? (double) span.full : 1.0;
		double		in = (double) (block + 1 - qs[i]) / (double) (block + 1);
		double		out = (double) qs[i] / (double) (block + 1);

		*var += times * (qs[i] * in * in + (block + 1 - qs[i]) * out * out) * dlap_var(b);
		*kappa4 += times * (qs[i] * pow(in, 4) + (block + 1 - qs[i]) * pow(out, 4)) *
			dlap_kappa4(b);
	}
}

/*
 * Three levels: the same from the window's weights, superblock by
 * superblock holding P of its steps: each block holding q of them weighs
 * its q steps 1 - a - alpha, its others a + alpha, its own draw
 * a - K1 alpha (a = q / D1, alpha = P / (D1 D2)), and the superblock's
 * draw weighs P / D2.
 */
static void
three_moments(int64_t width, int64_t block, int64_t super, int64_t t, double b, double *var,
			  double *kappa4)
{
	int64_t		n = block * super;
	int64_t		lo = t > width ? t - width + 1 : 1;
	double		d1 = (double) (block + 1);
	double		d2 = (double) (n + block + 1);
	double		v2 = 0,
				v4 = 0;

	for (int64_t s = (lo - 1) / n; s <= (t - 1) / n; s++)
	{
		int64_t		p = (t < (s + 1) * n ? t : (s + 1) * n) - (lo > s * n + 1 ? lo : s * n + 1) + 1;
		double		alpha = (double) p / (d1 * d2);
		double		weights[4] = {(double) p / d2};
		double		times[4] = {1};

		for (int64_t j = 0; j < super; j++)
		{
			int64_t		first = s * n + j * block + 1;
			int64_t		last = first + block - 1;
			int64_t		q = (t < last ? t : last) - (lo > first ? lo : first) + 1;
			double		a;

			q = q > 0 ? q : 0;
			a = (double) q / d1;
			weights[1] = 1 - a - alpha;
			times[1] = (double) q;
			weights[2] = a + alpha;
			times[2] = (double) (block - q);
			weights[3] = a - (double) block * alpha;
			times[3] = 1;
			for (int k = j == 0 ? 0 : 1; k < 4; k++)
			{
				v2 += times[k] * pow(weights[k], 2);
				v4 += times[k] * pow(weights[k], 4);
			}
		}
	}
	*var = v2 * dlap_var(b);
	*kappa4 = v4 * dlap_kappa4(b);
}

static bool
within(double sample, double var, double kappa4, int trials)
{
	return fabs(sample - var) <= 7.0 * sqrt((kappa4 + 2.0 * var * var) / trials);
}

/* The moments of either construction: three_moments() with superblocks */
static void
window_moments(int64_t width, int64_t block, int64_t super, int64_t t, double b, double *var,
			   double *kappa4)
{
	if (super > 0)
		three_moments(width, block, super, t, b, var, kappa4);
	else
		blocks_moments(width, block, t, b, var, kappa4);
}

/*
 * The error's mean and variance at three steps against the closed form
 * (the rounding adds at most 1/4, within the slack), with the scale of
 * another number of levels refused (a third node for two, two for three);
 * and the bound, which holds at every step at once but with probability
 * beta, exceeded in at most that share of the runs.  K1 and K2 as named
 * (block 0: chosen).
 */
static void
check_blocks_variance(int64_t width, int64_t block, int64_t super, int64_t horizon,
					  const int64_t *steps, int trials)
{
	double		sum[3] = {0},
				sumsq[3] = {0};
	long		exceeded = 0;
	seeded_rng	r;
	int64_t    *x = malloc((size_t) horizon * sizeof(int64_t));
	cc_window_params p = blocks_params(width, block, super, horizon, 1.0);
	double		scale;

	seeded_rng_init(&r, (uint64_t) (7000 + width));
	for (int trial = 0; trial < trials; trial++)
	{
		cc_window  *w = unit_new_window(&p);
		bool		over = false;

		for (int64_t t = 1, c = 0; t <= horizon; t++)
		{
			cc_release	rel;
			int64_t		exact = 0;

			x[t - 1] = (t * 31 + trial * 17) % 5;
			cc_window_push(w, x[t - 1], &r.rng);
			cc_window_read(w, &rel);
			for (int64_t u = t > width ? t - width + 1 : 1; u <= t; u++)
				exact += x[u - 1];
			over |= (double) llabs(rel.noisy - exact) > rel.bound;
			if (c < 3 && t == steps[c])
			{
				sum[c] += (double) (rel.noisy - exact);
				sumsq[c] += (double) (rel.noisy - exact) * (double) (rel.noisy - exact);
				c++;
			}
		}
		exceeded += over;
		free(w);
	}
	scale = p.superblock > 0 ? 3.0 : 2.0;
	for (int c = 0; c < 3; c++)
	{
		double		mean = sum[c] / trials;
		double		sample = sumsq[c] / trials - mean * mean;
		double		var,
					kappa4,
					wrong_var,
					wrong_kappa4;

		window_moments(width, p.block, p.superblock, steps[c], scale, &var, &kappa4);
		window_moments(width, p.block, p.superblock, steps[c], 5.0 - scale, &wrong_var,
					   &wrong_kappa4);
		CHECK(fabs(mean) <= 7.0 * sqrt(var / trials), "blocks W=%lld t=%lld: mean %g",
			  (long long) width, (long long) steps[c], mean);
		CHECK(within(sample, var, kappa4, trials),
			  "blocks W=%lld K1=%lld K2=%lld t=%lld: variance %g, closed form %g",
			  (long long) width, (long long) p.block, (long long) p.superblock,
			  (long long) steps[c], sample, var);
		CHECK(!within(sample, wrong_var, wrong_kappa4, trials),
			  "blocks W=%lld t=%lld: a wrong scale passes", (long long) width,
			  (long long) steps[c]);
	}
	/* at most beta's share of the runs (binomial, 7 standard deviations) */
	CHECK(exceeded <= 0.05 * trials + 7.0 * sqrt(0.05 * 0.95 * trials),
		  "blocks W=%lld: the bound failed in %ld of %d runs", (long long) width, exceeded,
		  trials);
	free(x);
}

#define AUDIT_RUNS 100000

/*
 * The audit: W = 1, one step of 0 (D) or 1 (D'); two levels with K = 1, the
 * release's noise half the sum of two draws, or three with K1 = 1, K2 = 2,
 * 3/8 of the step's and block's draws, 1/8 of the next step's and block's
 * and 1/4 of the superblock's; the event "release >= 3" has probability at
 * most e^epsilon times as much under D' as under D.  The same run with the
 * scale halved (epsilon 2) must be caught.
 */
static void
test_blocks_audit(int64_t super)
{
	long		hits[2][2] = {{0}};
	double		excess[2];
	seeded_rng	r;

	seeded_rng_init(&r, 8080);
	for (int halved = 0; halved < 2; halved++)
		for (int64_t item = 0; item < 2; item++)
			for (long run = 0; run < AUDIT_RUNS; run++)
			{
				cc_window_params p = blocks_params(1, 1, super, 1, halved ? 2.0 : 1.0);
				cc_window  *w = unit_new_window(&p);
				cc_release	rel;

				cc_window_push(w, item, &r.rng);
				cc_window_read(w, &rel);
				hits[halved][item] += rel.noisy >= 3;
				free(w);
			}
	/* at 7 standard deviations (audit_ratio_within's excess), not UNIT_Z */
	audit_ratio_within(AUDIT_RUNS, hits[0][1], hits[0][0], 1.0, &excess[0]);
	CHECK(excess[0] <= 7.0, "blocks audit: %ld against %ld runs, %.2f standard deviations "
		  "beyond e^epsilon", hits[0][1], hits[0][0], excess[0]);
	audit_ratio_within(AUDIT_RUNS, hits[0][0], hits[0][1], 1.0, &excess[1]);
	CHECK(excess[1] <= 7.0, "blocks audit, the other way: %.2f standard deviations", excess[1]);
	audit_ratio_within(AUDIT_RUNS, hits[1][1], hits[1][0], 1.0, &excess[1]);
	CHECK(excess[1] > 7.0, "blocks audit misses scales halved (%ld against %ld runs)",
		  hits[1][1], hits[1][0]);
	printf("blocks window audit, %d levels: ratio %.3f for e^epsilon %.3f (%ld against %ld "
		   "runs; scale halved: %.3f)\n", super > 0 ? 3 : 2,
		   (double) hits[0][1] / (double) hits[0][0], exp(1.0), hits[0][1], hits[0][0],
		   (double) hits[1][1] / (double) hits[1][0]);
}

/*
 * The windows of W = 30, 365, 1000 over T = 1000 W beside the frontier at
 * horizon W (the kary running count at T = W), printed for the docs; blocks
 * below the kary window there, and auto picking it; three levels chosen
 * where they beat two (W = 365, 1000: below two levels' best K), two at 30.
 */
static void
test_blocks_frontier(void)
{
	static const int64_t widths[] = {30, 365, 1000};

	for (int i = 0; i < 3; i++)
	{
		cc_params	prefix = params_for(CC_KARY, 1.0, widths[i]);
		cc_window_params blocks = blocks_params(widths[i], 0, 0, 1000 * widths[i], 1.0);
		cc_window_params kary = blocks;
		cc_window_params pick = blocks;
		cc_window_params two = blocks;
		double		mean[4],
					worst[4];

		kary.kind = CC_WINDOW_KARY;
		pick.kind = CC_WINDOW_AUTO;
		two.block = cc_window_blocks_choose(widths[i], 1000 * widths[i]);
		cc_params_prepare(&prefix);
		cc_variance_over_horizon(&prefix, &mean[2], &worst[2]);
		cc_window_prepare(&blocks);
		cc_window_prepare(&kary);
		cc_window_prepare(&pick);
		cc_window_prepare(&two);
		cc_window_variances(&blocks, &mean[0], &worst[0]);
		cc_window_variances(&kary, &mean[1], &worst[1]);
		cc_window_variances(&two, &mean[3], &worst[3]);
		CHECK(mean[0] < mean[1] && worst[0] < worst[1] && pick.kind == CC_WINDOW_BLOCKS,
			  "W = %lld: blocks %g, kary %g, auto %s", (long long) widths[i], mean[0], mean[1],
			  cc_window_kind_name(pick.kind));
		CHECK(i == 0 ? blocks.superblock == 0 : blocks.superblock > 0 && mean[0] < mean[3],
			  "W = %lld: K2 = %lld, mean %g against two levels' %g", (long long) widths[i],
			  (long long) blocks.superblock, mean[0], mean[3]);
		printf("window at the frontier: W = %lld, T = 1000 W: blocks %.1f / %.1f (K1 = %lld, "
			   "K2 = %lld; two levels %.1f / %.1f, K = %lld), kary %.1f / %.1f; frontier at "
			   "horizon W %.1f / %.1f; blocks / frontier %.2f (mean / worst, epsilon 1)\n",
			   (long long) widths[i], mean[0], worst[0], (long long) blocks.block,
			   (long long) blocks.superblock, mean[3], worst[3], (long long) two.block,
			   mean[1], worst[1], mean[2], worst[2], mean[0] / mean[2]);
	}
}

/* K1 or K2 out of range, and the choice of both. */
static void
test_blocks_parameters(void)
{
	cc_window_params p = blocks_params(10, CC_WINDOW_BLOCKS_MAX_K + 1, 0, 100, 1.0);
	cc_window_kind k;

	CHECK(cc_window_prepare(&p) == CC_BAD_BLOCK, "K too large");
	p = blocks_params(10, -1, 0, 100, 1.0);
	CHECK(cc_window_prepare(&p) == CC_BAD_BLOCK, "K negative");
	p = blocks_params(10, 2, 1, 100, 1.0);
	CHECK(cc_window_prepare(&p) == CC_BAD_BLOCK, "K2 = 1");
	p = blocks_params(10, 2, -2, 100, 1.0);
	CHECK(cc_window_prepare(&p) == CC_BAD_BLOCK, "K2 negative");
	p = blocks_params(10, 2, CC_WINDOW_BLOCKS_MAX_K + 1, 100, 1.0);
	CHECK(cc_window_prepare(&p) == CC_BAD_BLOCK, "K2 too large");
	CHECK(cc_window_kind_from_name("blocks", &k) && k == CC_WINDOW_BLOCKS, "the name");
	p = blocks_params(10, 0, 0, 100, 1.0);
	CHECK(cc_window_prepare(&p) == CC_OK && p.block >= 1 && p.block <= 10, "K chosen");
	p = blocks_params(2000, 0, 0, 20000, 1.0);
	CHECK(cc_window_prepare(&p) == CC_OK && p.superblock >= 2 && p.block * p.superblock <= 2000,
		  "K1, K2 chosen: %lld, %lld", (long long) p.block, (long long) p.superblock);
}

void
test_window_blocks(void)
{
	static const int64_t short_steps[] = {5, 30, 64};
	static const int64_t long_steps[] = {47, 150, 299};
	static const int64_t three_short[] = {5, 12, 40};
	static const int64_t three_long[] = {17, 30, 77};

	test_blocks_parameters();
	test_blocks_brute();
	test_blocks_horizon();
	test_three_horizon();
	check_blocks_variance(10, 0, 0, 64, short_steps, TRIALS);
	check_blocks_variance(100, 0, 0, 300, long_steps, TRIALS);
	check_blocks_variance(12, 2, 3, 48, three_short, TRIALS_THREE);
	check_blocks_variance(30, 3, 5, 90, three_long, TRIALS_THREE);
	test_blocks_audit(0);
	test_blocks_audit(2);
	test_blocks_frontier();
}
