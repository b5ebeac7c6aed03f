/*
 * test_window_blocks.c
 *		The blocks window (src/core/window_blocks.c): every step's number of
 *		noisy nodes counted by brute force, every release against the
 *		least-squares estimate computed apart from the nodes' matrix (r B = a,
 *		the reported variance ||r||^2 times a draw's), the sums over a
 *		horizon and the choice of K against loops, the empirical variance
 *		over 4 10^4 streams, an empirical privacy audit on neighbouring
 *		streams, and the windows at the frontier (printed for the docs).
 *
 * Statistical checks: 23, each at 7 standard deviations (2.6e-12): 3 for
 * each of the 6 steps of the 2 runs of check_blocks_variance() and one on
 * the bound in each, and 3 in the audit; counted in unit.h's budget.
 */
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "choice.h"
#include "window.h"

#define MAX_STEPS 40			/* brute force: the steps of its streams */
#define MAX_NODES (2 * MAX_STEPS)

static cc_window_params
blocks_params(int64_t width, int64_t block, int64_t horizon, double epsilon)
{
	cc_window_params p = {CC_WINDOW_BLOCKS, width, horizon, 0, 1, 0.05, 0, block};

	cc_epsilon_units(epsilon, &p.epsilon_units);
	return p;
}

static cc_window *
blocks_window(cc_window_params *p)
{
	cc_window  *w;

	if (cc_window_prepare(p) != CC_OK)
	{
		fprintf(stderr, "bad blocks parameters\n");
		exit(2);
	}
	w = malloc(cc_window_size(p));
	cc_window_init(w, p);
	return w;
}

/*
 * The nodes' matrix over n steps (n a multiple of K): node i < n is step i,
 * node n + b is block b.  Returns the number of nodes.
 */
static int
node_matrix(int64_t block, int n, long double b[MAX_NODES][MAX_STEPS])
{
	int			nodes = n + n / (int) block;

	memset(b, 0, sizeof(long double) * MAX_NODES * MAX_STEPS);
	for (int i = 0; i < n; i++)
	{
		b[i][i] = 1;
		b[n + i / block][i] = 1;
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

/* The draws in the state's order: at a block's first step, its K steps', then its own. */
static void
replay_draws(int64_t block, int n, cc_scale scale, uint64_t seed, int64_t *z)
{
	seeded_rng	r;

	seeded_rng_init(&r, seed);
	for (int first = 0; first < n; first += (int) block)
	{
		for (int i = 0; i < block; i++)
			z[first + i] = cc_discrete_laplace(&r.rng, scale);
		z[n + first / block] = cc_discrete_laplace(&r.rng, scale);
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
 * One stream of T steps for W and K: at every step, the estimate's row
 * r = a G^-1 B' computed apart, checked against what the state releases.
 */
static void
brute_run(int64_t width, int64_t block, int64_t horizon, brute_errors *e)
{
	static long double b[MAX_NODES][MAX_STEPS];
	static long double inv[MAX_STEPS][MAX_STEPS];
	int			n = (int) ((horizon + block - 1) / block * block);
	int			nodes = node_matrix(block, n, b);
	cc_window_params p = blocks_params(width, block, horizon, 0.7);
	cc_window  *w = blocks_window(&p);
	cc_scale	scale;
	int64_t		z[MAX_NODES];
	int64_t		x[MAX_STEPS];
	seeded_rng	r;
	uint64_t	seed = (uint64_t) (width * 100 + block);

	for (int i = 0; i < n; i++)
	{
		int			holding = 0;

		for (int v = 0; v < nodes; v++)
			holding += b[v][i] != 0;
		e->sensitivity = holding > e->sensitivity ? holding : e->sensitivity;
	}
	gram_inverse(b, nodes, n, inv);
	cc_scale_make(2, p.epsilon_units, CC_EPSILON_UNITS_PER_ONE, &scale);
	replay_draws(block, n, scale, seed, z);
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
			long long	num = llroundl(noise * (long double) (block + 1));
			long long	twice = 2 * num + block + 1;
			long long	q = twice / (2 * (block + 1));

			if (twice % (2 * (block + 1)) != 0 && twice < 0)
				q--;
			e->value += rel.noisy != exact + q;
		}
		e->variance += fabsl((long double) rel.variance - norm * cc_dlap_variance(scale)) >
			1e-9L * (long double) rel.variance;
		e->span += fabsl((long double) cc_window_blocks_units(width, block, t) - norm) > 1e-12L;
	}
	free(w);
}

/* Every W and K small enough for brute force, over streams of 30 steps. */
static void
test_blocks_brute(void)
{
	static const int64_t widths[] = {1, 2, 3, 5, 8, 13, 30};
	static const int64_t blocks[] = {1, 2, 3, 4, 7, 10};
	brute_errors e = {0};

	for (int i = 0; i < 7; i++)
		for (int k = 0; k < 6; k++)
			brute_run(widths[i], blocks[k], 30, &e);
	CHECK(e.sensitivity == 2, "a step in %d nodes, not 2", e.sensitivity);
	CHECK(e.not_a == 0, "%d steps where r B is not the window", e.not_a);
	CHECK(e.value == 0, "%d releases other than the least-squares estimate", e.value);
	CHECK(e.variance == 0, "%d variances other than ||r||^2 times a draw's", e.variance);
	CHECK(e.span == 0, "%d steps whose closed form is not ||r||^2", e.span);
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

			cc_window_blocks_over_horizon(width, chosen, horizons[h], &chosen_sum, &chosen_most);
			for (int64_t k = 1; k <= width; k++)
			{
				double		sum = 0,
							most = 0,
							fast,
							fast_most;

				for (int64_t t = 1; t <= horizons[h]; t++)
				{
					double		u = cc_window_blocks_units(width, k, t);

					sum += u;
					most = fmax(most, u);
				}
				cc_window_blocks_over_horizon(width, k, horizons[h], &fast, &fast_most);
				wrong += fabs(fast - sum) > 1e-9 * sum || fabs(fast_most - most) > 1e-12 * most;
				wrong += fast < chosen_sum * (1 - 1e-12);
			}
		}
	CHECK(wrong == 0, "%d sums over the horizon or choices of K wrong", wrong);
}

#define TRIALS 40000

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

static bool
within(double sample, double var, double kappa4)
{
	return fabs(sample - var) <= 7.0 * sqrt((kappa4 + 2.0 * var * var) / TRIALS);
}

/*
 * The error's mean and variance at three steps against the closed form
 * (the rounding adds at most 1/4, within the slack), with the scale of a
 * third node refused; and the bound, which holds at every step at once but
 * with probability beta, exceeded in at most that share of the runs.
 */
static void
check_blocks_variance(int64_t width, int64_t horizon, const int64_t *steps)
{
	double		sum[3] = {0},
				sumsq[3] = {0};
	long		exceeded = 0;
	seeded_rng	r;
	int64_t    *x = malloc((size_t) horizon * sizeof(int64_t));
	int64_t		block = 0;

	seeded_rng_init(&r, (uint64_t) (7000 + width));
	for (int trial = 0; trial < TRIALS; trial++)
	{
		cc_window_params p = blocks_params(width, 0, horizon, 1.0);
		cc_window  *w = blocks_window(&p);
		bool		over = false;

		block = p.block;
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
	for (int c = 0; c < 3; c++)
	{
		double		mean = sum[c] / TRIALS;
		double		sample = sumsq[c] / TRIALS - mean * mean;
		double		var,
					kappa4,
					wrong_var,
					wrong_kappa4;

		blocks_moments(width, block, steps[c], 2.0, &var, &kappa4);
		blocks_moments(width, block, steps[c], 3.0, &wrong_var, &wrong_kappa4);
		CHECK(fabs(mean) <= 7.0 * sqrt(var / TRIALS), "blocks W=%lld t=%lld: mean %g",
			  (long long) width, (long long) steps[c], mean);
		CHECK(within(sample, var, kappa4), "blocks W=%lld K=%lld t=%lld: variance %g, closed form %g",
			  (long long) width, (long long) block, (long long) steps[c], sample, var);
		CHECK(!within(sample, wrong_var, wrong_kappa4), "blocks W=%lld t=%lld: a wrong scale passes",
			  (long long) width, (long long) steps[c]);
	}
	/* at most beta's share of the runs (binomial, 7 standard deviations) */
	CHECK(exceeded <= 0.05 * TRIALS + 7.0 * sqrt(0.05 * 0.95 * TRIALS), "blocks W=%lld: the bound failed in %ld of %d runs",
		  (long long) width, exceeded, TRIALS);
	free(x);
}

#define AUDIT_RUNS 100000

/*
 * The audit: W = K = 1, one step of 0 (D) or 1 (D'), the release's noise
 * half the sum of two draws; the event "release >= 3" has probability at
 * most e^epsilon times as much under D as under D'.  The same run with the
 * scale halved (epsilon 2) must be caught.
 */
static void
test_blocks_audit(void)
{
	long		hits[2][2] = {{0}};
	double		excess[2];
	seeded_rng	r;

	seeded_rng_init(&r, 8080);
	for (int halved = 0; halved < 2; halved++)
		for (int64_t item = 0; item < 2; item++)
			for (long run = 0; run < AUDIT_RUNS; run++)
			{
				cc_window_params p = blocks_params(1, 1, 1, halved ? 2.0 : 1.0);
				cc_window  *w = blocks_window(&p);
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
	printf("blocks window audit: ratio %.3f for e^epsilon %.3f (%ld against %ld runs)\n",
		   (double) hits[0][1] / (double) hits[0][0], exp(1.0), hits[0][1], hits[0][0]);
}

/*
 * The windows of W = 30, 365, 1000 over T = 1000 W beside the frontier at
 * horizon W (the kary running count at T = W), printed for the docs; blocks
 * below the kary window there, and auto picking it.
 */
static void
test_blocks_frontier(void)
{
	static const int64_t widths[] = {30, 365, 1000};

	for (int i = 0; i < 3; i++)
	{
		cc_params	prefix = params_for(CC_KARY, 1.0, widths[i]);
		cc_window_params blocks = blocks_params(widths[i], 0, 1000 * widths[i], 1.0);
		cc_window_params kary = blocks;
		cc_window_params pick = blocks;
		double		mean[3],
					worst[3];

		kary.kind = CC_WINDOW_KARY;
		pick.kind = CC_WINDOW_AUTO;
		cc_params_prepare(&prefix);
		cc_variance_over_horizon(&prefix, &mean[2], &worst[2]);
		cc_window_prepare(&blocks);
		cc_window_prepare(&kary);
		cc_window_prepare(&pick);
		cc_window_variances(&blocks, &mean[0], &worst[0]);
		cc_window_variances(&kary, &mean[1], &worst[1]);
		CHECK(mean[0] < mean[1] && worst[0] < worst[1] && pick.kind == CC_WINDOW_BLOCKS,
			  "W = %lld: blocks %g, kary %g, auto %s", (long long) widths[i], mean[0], mean[1],
			  cc_window_kind_name(pick.kind));
		printf("window at the frontier: W = %lld, T = 1000 W: blocks %.1f / %.1f (K = %lld), "
			   "kary %.1f / %.1f; frontier at horizon W %.1f / %.1f; blocks / frontier %.2f "
			   "(mean / worst, epsilon 1)\n", (long long) widths[i], mean[0], worst[0],
			   (long long) blocks.block, mean[1], worst[1], mean[2], worst[2], mean[0] / mean[2]);
	}
}

/* A K out of range, and a scale that does not fit. */
static void
test_blocks_parameters(void)
{
	cc_window_params p = blocks_params(10, CC_WINDOW_BLOCKS_MAX_K + 1, 100, 1.0);
	cc_window_kind k;

	CHECK(cc_window_prepare(&p) == CC_BAD_BLOCK, "K too large");
	p = blocks_params(10, -1, 100, 1.0);
	CHECK(cc_window_prepare(&p) == CC_BAD_BLOCK, "K negative");
	CHECK(cc_window_kind_from_name("blocks", &k) && k == CC_WINDOW_BLOCKS, "the name");
	p = blocks_params(10, 0, 100, 1.0);
	CHECK(cc_window_prepare(&p) == CC_OK && p.block >= 1 && p.block <= 10, "K chosen");
}

void
test_window_blocks(void)
{
	static const int64_t short_steps[] = {5, 30, 64};
	static const int64_t long_steps[] = {47, 150, 299};

	test_blocks_parameters();
	test_blocks_brute();
	test_blocks_horizon();
	check_blocks_variance(10, 64, short_steps);
	check_blocks_variance(100, 300, long_steps);
	test_blocks_audit();
	test_blocks_frontier();
}
