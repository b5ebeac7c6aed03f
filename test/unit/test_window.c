/*
 * test_window.c
 *		Sliding-window counts: the tree's decomposition against a brute
 *		force, the differences' draws against node sets counted apart, the
 *		releases against replays, the sensitivity of the tree's nodes, and
 *		the variance at chosen steps against the closed form.
 *
 * Statistical checks: 21 (3 for each of the 7 steps of the 5 runs of
 * check_variance()), counted in unit.h's budget.
 */
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "choice.h"
#include "window.h"

static int
floor_log2(int64_t n)
{
	return 63 - __builtin_clzll((unsigned long long) n);
}

/*
 * The fewest aligned dyadic intervals of size at most 2^top covering steps
 * a .. b exactly, by dynamic programming over the positions.
 */
static int64_t
brute_nodes(int64_t a, int64_t b, int top)
{
	int64_t		n = b - a + 1;
	int64_t    *best = malloc((size_t) (n + 1) * sizeof(int64_t));
	int64_t		result;

	best[0] = 0;
	for (int64_t e = 1; e <= n; e++)
	{
		best[e] = INT64_MAX;
		for (int j = 0; j <= top; j++)
		{
			int64_t		size = INT64_C(1) << j;
			int64_t		start = a - 1 + e - size;	/* position of its first step */

			if (e - size >= 0 && start % size == 0 && best[e - size] + 1 < best[e])
				best[e] = best[e - size] + 1;
		}
	}
	result = best[n];
	free(best);
	return result;
}

static bool
is_a_tree(cc_window_kind kind)
{
	return kind == CC_WINDOW_TREE || kind == CC_WINDOW_HONAKER;
}

static cc_window_params
window_params(cc_window_kind kind, int64_t width, int64_t horizon, double epsilon)
{
	cc_window_params p = {kind, width, horizon, 0, 1, 0.05, 0, 0, 0};

	cc_epsilon_units(epsilon, &p.epsilon_units);
	return p;
}

cc_window *
unit_new_window(cc_window_params *p)
{
	cc_window  *w;

	if (cc_window_prepare(p) != CC_OK)
	{
		fprintf(stderr, "bad window parameters\n");
		exit(2);
	}
	w = malloc(cc_window_size(p));
	cc_window_init(w, p);
	return w;
}

static void
test_tree_nodes(void)
{
	int			wrong = 0;

	for (int64_t width = 1; width <= 40; width++)
		for (int64_t t = 1; t <= 200; t++)
		{
			int64_t		a = t > width ? t - width + 1 : 1;

			if (cc_window_tree_nodes(width, t) != brute_nodes(a, t, floor_log2(width)))
				wrong++;
		}
	CHECK(wrong == 0, "%d windows decomposed into more nodes than the fewest", wrong);

	/* the closed form auto compares: the mean of what the states report */
	wrong = 0;
	for (int64_t width = 1; width <= 100; width += 9)
		for (int kind = CC_WINDOW_TREE; kind <= CC_WINDOW_HONAKER; kind += CC_WINDOW_HONAKER)
	{
		cc_window_params p = window_params((cc_window_kind) kind, width, 300, 0.3);
		cc_window  *w = unit_new_window(&p);
		seeded_rng	r;
		double		total = 0,
					mean,
					worst;

		seeded_rng_init(&r, (uint64_t) width);
		for (int64_t t = 1; t <= 300; t++)
		{
			cc_release rel;

			cc_window_push(w, 1, &r.rng);
			cc_window_read(w, &rel);
			total += rel.variance;
			wrong += cc_window_draws(w) != cc_window_tree_nodes(width, t);
		}
		cc_window_variances(&p, &mean, &worst);
		wrong += fabs(mean - total / 300) > 1e-9 * mean;
		free(w);
	}
	CHECK(wrong == 0, "%d tree states or means off the closed form", wrong);
	/* the most: 2 floor(log2 W) - 1 or so, never 2 L */
	for (int64_t width = 2; width <= 4096; width *= 3)
	{
		int64_t		most = 0;

		for (int64_t t = 1; t <= 3 * width; t++)
			if (cc_window_tree_nodes(width, t) > most)
				most = cc_window_tree_nodes(width, t);
		CHECK(most < 2 * (floor_log2(width) + 1), "W = %lld: %lld nodes",
			  (long long) width, (long long) most);
	}
}

/* The smooth binary tree's node set of a leaf, counted apart: (b, l >> b). */
static int
unshared_apart(uint64_t later, uint64_t earlier, int height)
{
	int			n = 0;

	for (int b = 0; b < height; b++)
	{
		bool		in_later = (later >> b) & 1,
					in_earlier = (earlier >> b) & 1;
		bool		same = in_later && in_earlier && (later >> b) == (earlier >> b);

		n += (in_later && !same) + (in_earlier && !same);
	}
	return n;
}

/* The k-weight leaves in order, counted apart: the t-th from 1. */
static uint64_t
leaf_apart(int64_t t, int height)
{
	for (uint64_t l = 0;; l++)
		if (__builtin_popcountll(l) == height / 2 && --t == 0)
			return l;
}

/*
 * The differences: releases are c_t - c_(t-W) of a smooth binary state run
 * on the same random words, and their draws the node sets' difference.
 */
static void
test_differences(void)
{
	const int64_t horizon = 300;
	int			height = smooth_binary_height(horizon);
	int			wrong_value = 0,
				wrong_draws = 0,
				wrong_mean = 0;

	for (int64_t width = 1; width <= 70; width += 23)
	{
		cc_window_params wp = window_params(CC_WINDOW_DIFF, width, horizon, 0.7);
		cc_params	sp = params_for(CC_SMOOTH_BINARY, 0.7, horizon);
		cc_window  *w = unit_new_window(&wp);
		cc_state   *s = new_state(&sp);
		seeded_rng	r1,
					r2;
		int64_t    *c = calloc(horizon + 1, sizeof(int64_t));
		double		total = 0,
					mean,
					worst;

		seeded_rng_init(&r1, 700 + width);
		seeded_rng_init(&r2, 700 + width);
		for (int64_t t = 1; t <= horizon; t++)
		{
			int64_t		x = (t * 7919) % 13;
			cc_release	rw,
						rs;

			cc_window_push(w, x, &r1.rng);
			cc_push(s, x, &r2.rng);
			cc_window_read(w, &rw);
			cc_read(s, &rs);
			c[t] = rs.noisy;
			if (rw.noisy != c[t] - (t > width ? c[t - width] : 0))
				wrong_value++;
			if (cc_window_draws(w) != (t > width ?
									   unshared_apart(leaf_apart(t + 1, height),
													  leaf_apart(t - width + 1, height), height) :
									   height / 2))
				wrong_draws++;
			total += rw.variance;
		}
		/* the closed form auto compares: the mean of what the states report */
		cc_window_variances(&wp, &mean, &worst);
		if (fabs(mean - total / horizon) > 1e-9 * mean)
			wrong_mean++;
		free(c);
		free(w);
		free(s);
	}
	CHECK(wrong_value == 0, "%d differences not c_t - c_(t-W)", wrong_value);
	CHECK(wrong_draws == 0, "%d differences with the wrong draws", wrong_draws);
	CHECK(wrong_mean == 0, "%d mean variances not the states'", wrong_mean);
}

/*
 * Sensitivity: streams that differ by one event at step s, on the same
 * random words, give nodes that differ in exactly L = floor(log2 W) + 1
 * nodes over the whole run, by 1 each; and windows that differ where
 * they hold s.
 */
static void
test_tree_sensitivity(void)
{
	int			wrong = 0;

	for (int64_t width = 1; width <= 33; width += 4)
		for (int64_t s = 1; s <= 40; s += 3)
		{
			cc_window_params p = window_params(width % 8 == 1 ? CC_WINDOW_HONAKER : CC_WINDOW_TREE,
											   width, 128, 1.0);
			cc_window  *a = unit_new_window(&p);
			cc_window  *b = unit_new_window(&p);
			seeded_rng	ra,
						rb;
			int			moved = 0,
						off = 0;

			seeded_rng_init(&ra, (uint64_t) (width * 1000 + s));
			seeded_rng_init(&rb, (uint64_t) (width * 1000 + s));
			for (int64_t t = 1; t <= 128; t++)
			{
				int64_t		va[64],
							vb[64];
				int			n;

				cc_window_push(a, 2, &ra.rng);
				cc_window_push(b, 2 + (t == s), &rb.rng);
				n = cc_window_closed_nodes(a, va);
				if (n != cc_window_closed_nodes(b, vb))
					off++;
				for (int i = 0; i < n; i++)
				{
					moved += va[i] != vb[i];
					off += vb[i] - va[i] != 0 && vb[i] - va[i] != 1;
				}
			}
			if (moved != floor_log2(width) + 1 || off != 0)
				wrong++;
			free(a);
			free(b);
		}
	CHECK(wrong == 0, "%d neighbours moved other than L nodes by 1", wrong);
}

/* kary: the fewest levels h with (k^h - 1) / 2 >= W, counted apart */
static int64_t
kary_levels_apart(int64_t k, int64_t width)
{
	int64_t		h = 0;
	int64_t		power = 1;

	while ((power - 1) / 2 < width)
	{
		power *= k;
		h++;
	}
	return h;
}

/*
 * kary: add sign times the blocks of prefix(x) into coef (level j's block i
 * at j * stride + i), from x's balanced digits found by trial: the top
 * digit a with |x - a K| <= (K - 1) / 2, then the others from the top
 * down, each block run between the digits' partial sums.
 */
static void
kary_blocks_apart(int64_t k, int64_t h, int64_t x, int sign, int *coef, int64_t stride)
{
	int64_t		c = (k - 1) / 2;
	int64_t		powers[64];
	int64_t		digits[64];
	int64_t		a = 0;
	int64_t		r;
	int64_t		p;

	powers[0] = 1;
	for (int64_t j = 1; j < h; j++)
		powers[j] = powers[j - 1] * k;
	while (llabs(x - a * powers[h - 1]) > (powers[h - 1] - 1) / 2)
		a++;
	r = x - a * powers[h - 1];
	for (int64_t j = 0; j + 1 < h; j++)
	{
		digits[j] = ((r % k) + k) % k;
		if (digits[j] > c)
			digits[j] -= k;
		r = (r - digits[j]) / k;
	}
	for (int64_t i = 0; i < a; i++)
		coef[(h - 1) * stride + i] += sign;
	p = a * powers[h - 1];
	for (int64_t j = h - 2; j >= 0; j--)
	{
		int64_t		b = p / powers[j];

		for (int64_t i = 0; i < llabs(digits[j]); i++)
			coef[j * stride + (digits[j] > 0 ? b + i : b - 1 - i)] += digits[j] > 0 ? sign : -sign;
		p += digits[j] * powers[j];
	}
	CHECK(p == x, "kary digits of %lld", (long long) x);
}

/*
 * kary: the draws the core counts in the window at t are the blocks left,
 * with multiplicity, once prefix(t) - prefix(t - W) is replayed block by
 * block and the common ones cancel; and no block is left twice.
 */
static void
test_kary_blocks(void)
{
	static const int64_t arities[] = {3, 5, 7, 13, 29};
	static const int64_t widths[] = {1, 2, 3, 10, 30, 100, 365};
	int			wrong = 0,
				twice = 0;

	for (int a = 0; a < 5; a++)
		for (int i = 0; i < 7; i++)
		{
			int64_t		k = arities[a],
						width = widths[i];
			int64_t		h = kary_levels_apart(k, width);
			int64_t		stride = 4 * width + 2 * k + 16;
			int		   *coef = malloc((size_t) (h * stride) * sizeof(int));

			for (int64_t t = 1; t <= 3 * width + 2 * k; t++)
			{
				int64_t		left = 0;

				memset(coef, 0, (size_t) (h * stride) * sizeof(int));
				kary_blocks_apart(k, h, t, 1, coef, stride);
				kary_blocks_apart(k, h, t > width ? t - width : 0, -1, coef, stride);
				for (int64_t b = 0; b < h * stride; b++)
				{
					left += (int64_t) coef[b] * coef[b];
					twice += abs(coef[b]) > 1;
				}
				wrong += left != cc_window_kary_draws_at(k, width, t);
			}
			free(coef);
		}
	CHECK(wrong == 0 && twice == 0, "%d windows counted other than the replay, %d blocks twice",
		  wrong, twice);
}

/*
 * kary: the mean over the horizon that window_kary.c sums over one period
 * is the step-by-step one, and the chosen k has the least of the odd k.
 */
static void
test_kary_choice(void)
{
	static const int64_t widths[] = {1, 7, 30, 365};
	int			wrong = 0;

	for (int i = 0; i < 4; i++)
	{
		cc_window_params p = window_params(CC_WINDOW_KARY, widths[i], 5000, 1.0);
		double		chosen,
					worst;

		cc_window_prepare(&p);
		cc_window_variances(&p, &chosen, &worst);
		for (int64_t k = 3; k <= 63; k += 2)
		{
			double		sum = 0,
						fast;
			int64_t		most = 0,
						fast_most;

			for (int64_t t = 1; t <= 5000; t++)
			{
				int64_t		draws = cc_window_kary_draws_at(k, widths[i], t);

				sum += (double) draws;
				most = draws > most ? draws : most;
			}
			cc_window_kary_draws_over_horizon(k, widths[i], 5000, &fast, &fast_most);
			wrong += fast != sum || fast_most != most;
			p.arity = k;
			cc_window_variances(&p, &fast, &worst);
			wrong += fast < chosen * (1 - 1e-12);
		}
	}
	CHECK(wrong == 0, "%d sums over the horizon or choices of k wrong", wrong);
}

/*
 * kary: up to t = W a window is a running count, so over T = W the window
 * is the kary running count at horizon W, the frontier, exactly; over a
 * long stream, its mean variance against that and the other windows'
 * (printed for the docs).
 */
static void
test_kary_frontier(void)
{
	static const int64_t widths[] = {365, 1024};

	for (int i = 0; i < 2; i++)
	{
		cc_params	prefix = params_for(CC_KARY, 1.0, widths[i]);
		cc_window_params at_w = window_params(CC_WINDOW_KARY, widths[i], widths[i], 1.0);
		double		mean[CC_WINDOW_AUTO + 1],
					worst[CC_WINDOW_AUTO + 1];
		int64_t		long_k = 0;

		cc_params_prepare(&prefix);
		cc_variance_over_horizon(&prefix, &mean[CC_WINDOW_AUTO], &worst[CC_WINDOW_AUTO]);
		cc_window_prepare(&at_w);
		cc_window_variances(&at_w, &mean[0], &worst[0]);
		CHECK(fabs(mean[0] - mean[CC_WINDOW_AUTO]) <= 1e-9 * mean[0] &&
			  fabs(worst[0] - worst[CC_WINDOW_AUTO]) <= 1e-9 * worst[0],
			  "W = %lld: kary window over W %g, kary running count %g", (long long) widths[i],
			  mean[0], mean[CC_WINDOW_AUTO]);
		for (int k = 0; k < CC_WINDOW_AUTO; k++)
		{
			cc_window_params p = window_params((cc_window_kind) k, widths[i], 1000 * widths[i], 1.0);

			cc_window_prepare(&p);
			cc_window_variances(&p, &mean[k], &worst[k]);
			if (k == CC_WINDOW_KARY)
				long_k = p.arity;
		}
		printf("window frontier: W = %lld, T = 1000 W: kary %.1f / %.1f (k = %lld), tree %.1f / %.1f, "
			   "honaker %.1f / %.1f, difference %.1f / %.1f; kary running count at T = W "
			   "%.1f / %.1f (k = %lld) (mean / worst, epsilon 1)\n",
			   (long long) widths[i], mean[CC_WINDOW_KARY], worst[CC_WINDOW_KARY],
			   (long long) long_k, mean[CC_WINDOW_TREE], worst[CC_WINDOW_TREE],
			   mean[CC_WINDOW_HONAKER], worst[CC_WINDOW_HONAKER], mean[CC_WINDOW_DIFF],
			   worst[CC_WINDOW_DIFF], mean[CC_WINDOW_AUTO], worst[CC_WINDOW_AUTO],
			   (long long) prefix.block);
	}
}

#define TRIALS 40000

/* The levels of the window's decomposition at t, counted apart. */
static int
window_levels(int64_t width, int64_t t, int *levels)
{
	int			top = floor_log2(width);
	int			n = 0;
	int64_t		p = t > width ? t - width : 0;

	while (p < t)
	{
		int			j = top;

		while (p % (INT64_C(1) << j) != 0 || p + (INT64_C(1) << j) > t)
			j--;
		levels[n++] = j;
		p += INT64_C(1) << j;
	}
	return n;
}

/*
 * The variance and fourth cumulant of honaker's window at t, for draws of
 * scale b: each node of level d sums 2^k draws weighted 2^(d-k) / D_d.
 */
static void
honaker_moments(int64_t width, int64_t t, double b, double *var, double *kappa4)
{
	int			levels[128];
	int			n = window_levels(width, t, levels);

	*var = 0;
	*kappa4 = 0;
	for (int i = 0; i < n; i++)
		for (int k = 0; k <= levels[i]; k++)
		{
			double		weight = ldexp(1.0, levels[i] - k) / (ldexp(2.0, levels[i]) - 1);

			*var += ldexp(1.0, k) * weight * weight * dlap_var(b);
			*kappa4 += ldexp(1.0, k) * pow(weight, 4) * dlap_kappa4(b);
		}
}

/* The variance and fourth cumulant of the error at t, for draws of scale b. */
static void
error_moments(cc_window_kind kind, int64_t width, int64_t t, int64_t draws, double b,
			  double *var, double *kappa4)
{
	if (kind == CC_WINDOW_HONAKER)
		honaker_moments(width, t, b, var, kappa4);
	else
	{
		*var = draws * dlap_var(b);
		*kappa4 = draws * dlap_kappa4(b);
	}
}

/*
 * variance_consistent() at z standard deviations: kary's checks take 7
 * (2.6e-12 each), outside the shared budget's UNIT_Z ones (unit.h).
 */
static bool
variance_within(double sample, double var, double kappa4, double z)
{
	return fabs(sample - var) <= z * sqrt((kappa4 + 2.0 * var * var) / TRIALS);
}

/*
 * The error's mean and variance at steps against the closed form, with the
 * scale of one level more (trees) or one more k (differences) refused.
 */
static void
check_variance(cc_window_kind kind, int64_t width, int64_t horizon, const int64_t *steps,
			   int nsteps)
{
	double		sum[4] = {0},
				sumsq[4] = {0};
	double		epsilon = 1.0;
	double		b,
				wrong_b;
	int64_t		draws[4] = {0};
	int			misreported = 0;
	double		z = kind == CC_WINDOW_KARY ? 7.0 : UNIT_Z;
	seeded_rng	r;
	int64_t    *x = malloc((size_t) horizon * sizeof(int64_t));

	if (kind == CC_WINDOW_DIFF)
	{
		b = smooth_binary_height(horizon) / 2 / epsilon;
		wrong_b = (smooth_binary_height(horizon) / 2 + 1) / epsilon;
	}
	else if (kind == CC_WINDOW_KARY)
	{
		cc_window_params p = window_params(kind, width, horizon, epsilon);

		cc_window_prepare(&p);
		b = (double) kary_levels_apart(p.arity, width) / epsilon;
		wrong_b = (double) (kary_levels_apart(p.arity, width) + 1) / epsilon;
	}
	else
	{
		b = (floor_log2(width) + 1) / epsilon;
		wrong_b = (floor_log2(width) + 2) / epsilon;
	}
	seeded_rng_init(&r, (uint64_t) (kind * 100000 + width));
	for (int trial = 0; trial < TRIALS; trial++)
	{
		cc_window_params p = window_params(kind, width, horizon, epsilon);
		cc_window  *w = unit_new_window(&p);
		int			c = 0;

		for (int64_t t = 1; t <= horizon; t++)
		{
			x[t - 1] = (t * 31 + trial * 17) % 5;
			cc_window_push(w, x[t - 1], &r.rng);
			if (c < nsteps && t == steps[c])
			{
				cc_release rel;
				int64_t		exact = 0;
				double		var,
							kappa4;

				cc_window_read(w, &rel);
				for (int64_t u = t > width ? t - width + 1 : 1; u <= t; u++)
					exact += x[u - 1];
				sum[c] += (double) (rel.noisy - exact);
				sumsq[c] += (double) (rel.noisy - exact) * (double) (rel.noisy - exact);
				draws[c] = cc_window_draws(w);
				error_moments(kind, width, t, draws[c], b, &var, &kappa4);
				misreported += fabs(rel.variance - var) > 1e-9 * var;
				c++;
			}
		}
		free(w);
	}
	CHECK(misreported == 0, "%d variances reported other than the closed form", misreported);
	for (int c = 0; c < nsteps; c++)
	{
		double		mean = sum[c] / TRIALS;
		double		sample = sumsq[c] / TRIALS - mean * mean;
		double		var,
					kappa4,
					wrong_var,
					wrong_kappa4;

		error_moments(kind, width, steps[c], draws[c], b, &var, &kappa4);
		error_moments(kind, width, steps[c], draws[c], wrong_b, &wrong_var, &wrong_kappa4);
		/* rounding honaker's sum adds at most 1/4 to the variance: within the checks' slack */
		CHECK(fabs(mean) <= z * sqrt(var / TRIALS), "%s W=%lld t=%lld: mean %g",
			  cc_window_kind_name(kind), (long long) width, (long long) steps[c], mean);
		CHECK(variance_within(sample, var, kappa4, z),
			  "%s W=%lld t=%lld: variance %g, closed form %g", cc_window_kind_name(kind),
			  (long long) width, (long long) steps[c], sample, var);
		CHECK(!variance_within(sample, wrong_var, wrong_kappa4, z),
			  "%s W=%lld t=%lld: a wrong scale passes", cc_window_kind_name(kind),
			  (long long) width, (long long) steps[c]);
	}
	free(x);
}

/*
 * honaker: the release is the rounded sum of the estimates computed apart
 * from every node's noisy value (recorded as they close), and the bound is
 * at least the best Chernoff bound found by a fine search apart, and not
 * far above it.
 */
static void
test_honaker_window(void)
{
	int			wrong_value = 0,
				wrong_bound = 0;
	double		loosest = 0;

	for (int64_t width = 1; width <= 45; width += 11)
	{
		const int64_t horizon = 100;
		cc_window_params p = window_params(CC_WINDOW_HONAKER, width, horizon, 0.5);
		cc_window  *w = unit_new_window(&p);
		int			top = floor_log2(width);
		long double est[8][256];
		double		b = (top + 1) / 0.5;
		double		pp = exp(-1.0 / b);
		double		log_term = log(2.0 * horizon / 0.05);
		seeded_rng	r;

		seeded_rng_init(&r, (uint64_t) (31 * width));
		for (int64_t t = 1; t <= horizon; t++)
		{
			int64_t		raw[64];
			int			n;
			int			levels[128];
			int			count[8] = {0};
			long double total = 0;
			cc_release	rel;
			double		best = INFINITY;

			cc_window_push(w, t % 3, &r.rng);
			n = cc_window_closed_nodes(w, raw);
			for (int j = 0; j < n; j++)
			{
				int64_t		i = (t >> j) - 1;
				long double a = (long double) raw[j];

				est[j][i] = j == 0 ? a :
					(ldexpl(1.0L, j) * a + (ldexpl(1.0L, j) - 1) *
					 (est[j - 1][2 * i] + est[j - 1][2 * i + 1])) / (ldexpl(2.0L, j) - 1);
			}
			n = window_levels(width, t, levels);
			for (int64_t u = t > width ? t - width : 0, i = 0; i < n; u += INT64_C(1) << levels[i], i++)
			{
				total += est[levels[i]][u >> levels[i]];
				count[levels[i]]++;
			}
			cc_window_read(w, &rel);
			if (fabsl((long double) rel.noisy - total) > 0.5L + 1e-9L)
				wrong_value++;

			/* Chernoff apart: lambda on a fine grid below the poles */
			for (int g = 1; g < 3000; g++)
			{
				double		lambda = g / 3000.0 * 1.5 / b;
				double		psi = 0;

				for (int d = 0; d <= top; d++)
					for (int k = 0; k <= d && count[d] > 0; k++)
					{
						double		x = lambda * ldexp(1.0, d - k) / (ldexp(2.0, d) - 1);

						psi += count[d] * ldexp(1.0, k) *
							(x * b < 1.0 ? log((1 - pp) * (1 - pp) / ((1 - pp * exp(x)) * (1 - pp * exp(-x)))) :
							 INFINITY);
					}
				best = fmin(best, (log_term + psi) / lambda);
			}
			if (rel.bound < ceil(best + 0.5) - 1.0)
				wrong_bound++;
			loosest = fmax(loosest, rel.bound / (ceil(best + 0.5) - 1.0));
		}
		free(w);
	}
	CHECK(wrong_value == 0, "%d releases not the rounded sum of the estimates", wrong_value);
	CHECK(wrong_bound == 0, "%d bounds below the best Chernoff bound", wrong_bound);
	CHECK(loosest < 1.05, "bound up to %.3f times the best Chernoff bound", loosest);
}

/*
 * auto: the construction of least mean variance; the table of all, for
 * the docs.
 */
static void
test_auto(void)
{
	static const int64_t horizons[] = {1024, 65536, INT64_C(1) << 20};
	static const int64_t widths[] = {1, 7, 30, 90, 365, 4096, 65536, INT64_C(1) << 20};

	for (int h = 0; h < 3; h++)
		for (int i = 0; i < 8; i++)
		{
			double		mean[CC_WINDOW_AUTO],
						worst[CC_WINDOW_AUTO];
			cc_window_kind best = CC_WINDOW_TREE;
			cc_window_params pick = window_params(CC_WINDOW_AUTO, widths[i], horizons[h], 1.0);

			if (widths[i] > horizons[h])
				continue;
			for (int k = 0; k < CC_WINDOW_AUTO; k++)
			{
				cc_window_params p = window_params((cc_window_kind) k, widths[i], horizons[h], 1.0);

				cc_window_prepare(&p);
				cc_window_variances(&p, &mean[k], &worst[k]);
				if (mean[k] < mean[best])
					best = (cc_window_kind) k;
			}
			cc_window_prepare(&pick);
			CHECK(pick.kind == best, "auto at W = %lld, T = %lld", (long long) widths[i],
				  (long long) horizons[h]);
			/* honaker's nodes each weigh at most what the tree's do */
			CHECK(mean[CC_WINDOW_HONAKER] <= mean[CC_WINDOW_TREE] &&
				  worst[CC_WINDOW_HONAKER] <= worst[CC_WINDOW_TREE], "honaker above the tree");
			printf("window: T = %lld, W = %lld: tree %.1f / %.1f, honaker %.1f / %.1f, "
				   "difference %.1f / %.1f, kary %.1f / %.1f, blocks %.1f / %.1f "
				   "(mean / worst, epsilon 1)\n",
				   (long long) horizons[h], (long long) widths[i],
				   mean[CC_WINDOW_TREE], worst[CC_WINDOW_TREE],
				   mean[CC_WINDOW_HONAKER], worst[CC_WINDOW_HONAKER],
				   mean[CC_WINDOW_DIFF], worst[CC_WINDOW_DIFF],
				   mean[CC_WINDOW_KARY], worst[CC_WINDOW_KARY],
				   mean[CC_WINDOW_BLOCKS], worst[CC_WINDOW_BLOCKS]);
		}
	/* one window: a single draw of L = 1 level */
	{
		cc_window_params one = window_params(CC_WINDOW_AUTO, 1, 1000, 1.0);
		cc_window_params all = window_params(CC_WINDOW_AUTO, 5000, 1000, 1.0);

		CHECK(cc_window_prepare(&one) == CC_OK && is_a_tree(one.kind), "W = 1: a tree");
		CHECK(cc_window_prepare(&all) == CC_OK && all.width == 1000, "W > T: clamped to T");
	}
}

static void
test_parameters(void)
{
	cc_window_params p = window_params(CC_WINDOW_TREE, 0, 10, 1.0);
	cc_window_kind k;

	CHECK(cc_window_prepare(&p) == CC_BAD_BLOCK, "width 0");
	p = window_params(CC_WINDOW_TREE, 3, 0, 1.0);
	CHECK(cc_window_prepare(&p) == CC_BAD_HORIZON, "horizon 0");
	p = window_params(CC_WINDOW_TREE, 3, 10, 1.0);
	p.epsilon_units = 0;
	CHECK(cc_window_prepare(&p) == CC_BAD_EPSILON, "epsilon 0");
	p = window_params(CC_WINDOW_TREE, 3, 10, 1.0);
	p.beta = 1;
	CHECK(cc_window_prepare(&p) == CC_BAD_BETA, "beta 1");
	CHECK(cc_window_kind_from_name("difference", &k) && k == CC_WINDOW_DIFF &&
		  cc_window_kind_from_name("honaker", &k) && k == CC_WINDOW_HONAKER &&
		  !cc_window_kind_from_name("binary", &k), "names");
	{
		cc_window  *w;
		seeded_rng	r;
		cc_release	rel;

		p = window_params(CC_WINDOW_TREE, 3, 2, 1.0);
		w = unit_new_window(&p);
		seeded_rng_init(&r, 5);
		CHECK(cc_window_push(w, -1, &r.rng) == CC_NEGATIVE_ITEM, "negative item");
		CHECK(cc_window_push(w, 1, &r.rng) == CC_OK && cc_window_push(w, 1, &r.rng) == CC_OK &&
			  cc_window_push(w, 1, &r.rng) == CC_PAST_HORIZON, "past the horizon");
		cc_window_read(w, &rel);
		CHECK(rel.t == 2 && rel.bound > 0, "t %lld", (long long) rel.t);
		free(w);
		/* two items whose node overflows */
		p = window_params(CC_WINDOW_TREE, 4, 10, 1.0);
		w = unit_new_window(&p);
		CHECK(cc_window_push(w, INT64_MAX / 2, &r.rng) == CC_OK &&
			  cc_window_push(w, INT64_MAX / 2 + 10, &r.rng) == CC_OVERFLOW, "overflow");
		free(w);
	}
}

void
test_window(void)
{
	static const int64_t tree_steps[] = {7, 30, 64};
	static const int64_t diff_steps[] = {5, 30, 64};
	static const int64_t kary_steps[] = {5, 30, 64, 47, 150, 299};

	test_parameters();
	test_tree_nodes();
	test_differences();
	test_tree_sensitivity();
	check_variance(CC_WINDOW_TREE, 10, 64, tree_steps + 1, 1);
	check_variance(CC_WINDOW_TREE, 16, 64, tree_steps + 1, 2);
	check_variance(CC_WINDOW_DIFF, 10, 64, diff_steps, 1);
	check_variance(CC_WINDOW_DIFF, 20, 64, diff_steps + 1, 1);
	check_variance(CC_WINDOW_HONAKER, 16, 64, tree_steps + 1, 2);
	test_honaker_window();
	test_kary_blocks();
	test_kary_choice();
	test_kary_frontier();
	check_variance(CC_WINDOW_KARY, 10, 64, kary_steps, 3);
	check_variance(CC_WINDOW_KARY, 100, 300, kary_steps + 3, 3);
	test_auto();
}
