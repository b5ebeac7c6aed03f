/*
 * test_mechanisms.c
 *		Parameters, state invariants and noise variance of every mechanism.
 */
#include "unit.h"
#include "mechanism_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
test_params(void)
{
	static const double bad_eps[] = {0.0, -1.0, 1e-7, 1000.5, 1e300, NAN, INFINITY, -INFINITY};
	uint64_t	units;
	cc_params	p;
	cc_kind		kind;

	for (size_t i = 0; i < sizeof(bad_eps) / sizeof(bad_eps[0]); i++)
		CHECK(cc_epsilon_units(bad_eps[i], &units) == CC_BAD_EPSILON, "epsilon %g", bad_eps[i]);
	CHECK(cc_epsilon_units(0.1, &units) == CC_OK && units == 100000000, "0.1 -> %llu",
		  (unsigned long long) units);
	CHECK(cc_epsilon_units(1e-6, &units) == CC_OK && units == 1000, "1e-6 -> %llu",
		  (unsigned long long) units);
	CHECK(cc_epsilon_units(1000, &units) == CC_OK, "1000 refused");

	for (int k = 0; k < CC_NUM_KINDS; k++)
		CHECK(cc_kind_from_name(cc_kind_name(k), &kind) && kind == (cc_kind) k, "kind %d", k);
	CHECK(!cc_kind_from_name("Binary", &kind) && !cc_kind_from_name("", &kind), "bad names");

	p = params_for(CC_BINARY, 1.0, 0);
	CHECK(cc_params_prepare(&p) == CC_NEED_HORIZON, "binary without horizon");
	p = params_for(CC_SIMPLE_I, 1.0, 0);
	CHECK(cc_params_prepare(&p) == CC_NEED_HORIZON, "simple_i without horizon");
	p = params_for(CC_TWO_LEVEL, 1.0, 0);
	CHECK(cc_params_prepare(&p) == CC_NEED_HORIZON, "two_level without horizon");
	p = params_for(CC_HYBRID, 1.0, 0);
	CHECK(cc_params_prepare(&p) == CC_OK, "hybrid without horizon");
	p = params_for(CC_SIMPLE_II, 1.0, 0);
	CHECK(cc_params_prepare(&p) == CC_OK, "simple_ii without horizon");

	p = params_for(CC_BINARY, 1.0, 0);
	p.has_horizon = true;
	CHECK(cc_params_prepare(&p) == CC_BAD_HORIZON, "horizon 0");
	p.horizon = -5;
	CHECK(cc_params_prepare(&p) == CC_BAD_HORIZON, "horizon -5");
	p.horizon = CC_MAX_HORIZON + 1;
	CHECK(cc_params_prepare(&p) == CC_BAD_HORIZON, "horizon 2^62 + 1");
	p.horizon = CC_MAX_HORIZON;
	CHECK(cc_params_prepare(&p) == CC_OK, "horizon 2^62");

	p = params_for(CC_BINARY, 1.0, 10);
	p.epsilon_units = 999;
	CHECK(cc_params_prepare(&p) == CC_BAD_EPSILON, "epsilon units 999");

	p = params_for(CC_TWO_LEVEL, 1.0, 17);
	CHECK(cc_params_prepare(&p) == CC_OK && p.has_block && p.block == 5, "block for 17: %lld",
		  (long long) p.block);
	p = params_for(CC_TWO_LEVEL, 1.0, 16);
	CHECK(cc_params_prepare(&p) == CC_OK && p.block == 4, "block for 16: %lld", (long long) p.block);
	p = params_for(CC_TWO_LEVEL, 1.0, CC_MAX_HORIZON);
	CHECK(cc_params_prepare(&p) == CC_OK && p.block == INT64_C(1) << 31, "block for 2^62: %lld",
		  (long long) p.block);
	p = params_for(CC_TWO_LEVEL, 1.0, 16);
	p.has_block = true;
	p.block = 0;
	CHECK(cc_params_prepare(&p) == CC_BAD_BLOCK, "block 0");
	p.block = 17;
	CHECK(cc_params_prepare(&p) == CC_BAD_BLOCK, "block above horizon");
	p = params_for(CC_BINARY, 1.0, 16);
	p.has_block = true;
	p.block = 4;
	CHECK(cc_params_prepare(&p) == CC_BLOCK_NOT_APPLICABLE, "block for binary");

	p = params_for(CC_BINARY, 1.0, 16);
	p.sensitivity = 0;
	CHECK(cc_params_prepare(&p) == CC_BAD_SENSITIVITY, "sensitivity 0");
	p.sensitivity = CC_MAX_SENSITIVITY + 1;
	CHECK(cc_params_prepare(&p) == CC_BAD_SENSITIVITY, "sensitivity too large");

	p = params_for(CC_BINARY, 1.0, 16);
	p.beta = 0.0;
	CHECK(cc_params_prepare(&p) == CC_BAD_BETA, "beta 0");
	p.beta = 1.0;
	CHECK(cc_params_prepare(&p) == CC_BAD_BETA, "beta 1");
	p.beta = NAN;
	CHECK(cc_params_prepare(&p) == CC_BAD_BETA, "beta NaN");

	/* T / epsilon = 2^40 / 1e-6 is far above CC_MAX_SCALE */
	p = params_for(CC_SIMPLE_I, 1e-6, INT64_C(1) << 40);
	CHECK(cc_params_prepare(&p) == CC_SCALE_TOO_LARGE, "simple_i scale");
	/* the extremes of the other mechanisms stay below it: 63e6 / 1e-6, 124e6 / 1e-6 */
	p = params_for(CC_BINARY, 1e-6, CC_MAX_HORIZON);
	p.sensitivity = CC_MAX_SENSITIVITY;
	CHECK(cc_params_prepare(&p) == CC_OK, "binary at its extremes");
	p = params_for(CC_HYBRID, 1e-6, 0);
	p.sensitivity = CC_MAX_SENSITIVITY;
	CHECK(cc_params_prepare(&p) == CC_OK, "hybrid at its extremes");
}

static void
test_push_errors(void)
{
	seeded_rng r;
	cc_params	p = params_for(CC_BINARY, 1.0, 3);
	cc_state   *s = new_state(&p);
	cc_release	before;
	cc_release	after;

	seeded_rng_init(&r, 10);
	CHECK(cc_push(s, 2, &r.rng) == CC_OK, "push");
	cc_read(s, &before);
	CHECK(cc_push(s, -1, &r.rng) == CC_NEGATIVE_ITEM, "negative");
	cc_read(s, &after);
	CHECK(after.t == 1 && after.noisy == before.noisy && cc_exact_count(s) == 2,
		  "negative item changed the state");
	CHECK(cc_push(s, 0, &r.rng) == CC_OK && cc_push(s, 0, &r.rng) == CC_OK, "push to horizon");
	cc_read(s, &before);
	CHECK(cc_push(s, 0, &r.rng) == CC_PAST_HORIZON, "past horizon");
	cc_read(s, &after);
	CHECK(after.t == 3 && after.noisy == before.noisy, "past horizon changed the state");
	free(s);

	p = params_for(CC_SIMPLE_II, 1.0, 0);
	s = new_state(&p);
	/* room for any noise of scale 1 but with probability below e^-1000 */
	CHECK(cc_push(s, INT64_MAX - 1000, &r.rng) == CC_OK, "push near the top");
	CHECK(cc_push(s, 2000, &r.rng) == CC_OVERFLOW, "overflow of the exact count");
	free(s);
}

static void
test_state_size(void)
{
	cc_params	small = params_for(CC_BINARY, 1.0, 1024);
	cc_params	large = params_for(CC_BINARY, 1.0, INT64_C(1) << 40);
	cc_params	simple = params_for(CC_SIMPLE_II, 1.0, 0);

	cc_params_prepare(&small);
	cc_params_prepare(&large);
	cc_params_prepare(&simple);
	/* 11 levels against 41: 30 more nodes of two int64 */
	CHECK(cc_state_size(&large) - cc_state_size(&small) == 30 * sizeof(cc_tree_node),
		  "binary sizes %zu and %zu", cc_state_size(&small), cc_state_size(&large));
	CHECK(cc_state_size(&large) < 1024, "binary state for 2^40 steps: %zu bytes", cc_state_size(&large));
	CHECK(cc_state_size(&simple) == sizeof(cc_state), "simple_ii state %zu", cc_state_size(&simple));

	/* the largest states fit CC_STATE_MAX_BYTES */
	large = params_for(CC_BINARY, 1.0, CC_MAX_HORIZON);
	cc_params_prepare(&large);
	simple = params_for(CC_HYBRID, 1.0, 0);
	cc_params_prepare(&simple);
	CHECK(cc_state_size(&large) <= CC_STATE_MAX_BYTES && cc_state_size(&simple) <= CC_STATE_MAX_BYTES,
		  "largest states %zu and %zu", cc_state_size(&large), cc_state_size(&simple));
}

/* A state read back from storage is checked before it is used. */
static void
test_state_valid(void)
{
	seeded_rng r;
	cc_params	p = params_for(CC_BINARY, 0.5, 100);
	cc_state   *s = new_state(&p);
	size_t		size = cc_state_bytes(s);
	char	   *copy = malloc(size);

	seeded_rng_init(&r, 12);
	for (int i = 0; i < 10; i++)
		cc_push(s, i, &r.rng);
	CHECK(size == cc_state_size(&p) && cc_state_valid(s, size), "a state as written");
	CHECK(!cc_state_valid(s, size - 8), "a truncated state");
	memcpy(copy, s, size);
	((cc_state *) copy)->params.horizon = 5;	/* fewer steps than it has */
	CHECK(!cc_state_valid(copy, size), "a state past its horizon");
	memcpy(copy, s, size);
	((cc_state *) copy)->params.epsilon_units = 7;	/* below the minimum */
	CHECK(!cc_state_valid(copy, size), "a state with bad parameters");
	memcpy(copy, s, size);
	((cc_state *) copy)->params.kind = (cc_kind) 77;
	CHECK(!cc_state_valid(copy, size), "a state of no known mechanism");
	free(copy);
	free(s);
}

/*
 * The tree keeps only the nodes of t's binary expansion, each holding the
 * exact sum of its dyadic interval, and a node's noise does not change while
 * the node lives.
 */
static void
test_binary_tree(void)
{
	enum
	{
		T = 1000
	};
	seeded_rng r;
	cc_params	p = params_for(CC_BINARY, 1.0, T);
	cc_state   *s = new_state(&p);
	cc_tree    *tree = cc_state_part(s);
	cc_tree_node *node = cc_tree_nodes(tree);
	int64_t		items[T + 1];
	int64_t		prefix[T + 1];
	int64_t		noise_at_close[16];
	int			bad_nodes = 0;
	int			redrawn = 0;
	int			bad_release = 0;

	CHECK(tree->levels == 10, "levels for 1000: %lld", (long long) tree->levels);
	seeded_rng_init(&r, 11);
	prefix[0] = 0;
	for (int64_t t = 1; t <= T; t++)
	{
		int64_t		sum = 0;
		int			closing = __builtin_ctzll(t);

		items[t] = (int64_t) cc_uniform_below(&r.rng, 5);
		prefix[t] = prefix[t - 1] + items[t];
		cc_push(s, items[t], &r.rng);
		noise_at_close[closing] = node[closing].noisy - node[closing].exact;
		for (int j = 0; j < tree->levels; j++)
		{
			if (t & (INT64_C(1) << j))
			{
				int64_t		end = (t >> j) << j;

				bad_nodes += node[j].exact != prefix[end] - prefix[end - (INT64_C(1) << j)];
				redrawn += node[j].noisy - node[j].exact != noise_at_close[j];
				sum += node[j].noisy;
			}
			else
				bad_nodes += node[j].exact != 0 || node[j].noisy != 0;
		}
		bad_release += sum != s->noisy || cc_exact_count(s) != prefix[t];
	}
	CHECK(bad_nodes == 0, "%d nodes with a wrong exact sum or not cleared", bad_nodes);
	CHECK(redrawn == 0, "%d node reads saw a redrawn noise", redrawn);
	CHECK(bad_release == 0, "%d releases not the sum of the live nodes", bad_release);
	free(s);
}

/* 2^d / (2^(d+1) - 1): Honaker's variance at level d, in draws */
static double
honaker_weight(int d)
{
	return 1.0 / (2.0 - ldexp(1.0, -d));
}

/*
 * Variance of the release at t, from the table of docs/design.md's "Privacy
 * invariants" (for honaker: before rounding), with discrete noise; level_error shifts the number of
 * levels the scale is computed from.  For blt, whose scale has no levels,
 * it makes sigma^2 15% too small per level; its K and sigma^2 are the
 * state's, checked against their own formula in test_blt.c.
 */
static double
expected_variance(const cc_state *s, int64_t t, double level_error)
{
	const cc_params *p = &s->params;
	double		e = (double) p->epsilon_units / 1e9;
	double		rho = (double) p->rho_units / 1e9;
	double		d = (double) p->sensitivity;
	double		share = 0.0;
	int64_t		k;

	switch (p->kind)
	{
		case CC_SIMPLE_I:
			return dlap_var(p->horizon * d / e);
		case CC_SIMPLE_II:
			return t * dlap_var(d / e);
		case CC_TWO_LEVEL:
			return (t / p->block + t % p->block) * dlap_var(2 * d / e);
		case CC_BINARY:
			return __builtin_popcountll(t) *
				dlap_var((cc_tree_levels(p->horizon) + level_error) * d / e);
		case CC_HYBRID:
			k = 63 - __builtin_clzll(t);
			return (k + 1) * dlap_var(2 * d / e) +
				(t == (INT64_C(1) << k) ? 0.0 :
				 __builtin_popcountll(t - (INT64_C(1) << k)) * dlap_var(2 * k * d / e));
		case CC_SMOOTH_BINARY:
			/* k = h / 2 nodes of scale k, h the smallest even with C(h, k) > T */
			for (k = 1; k < 34; k++)
			{
				double		leaves = 1.0;

				for (int i = 1; i <= k; i++)
					leaves = leaves * (k + i) / i;
				if (leaves > (double) p->horizon)
					break;
			}
			return k * dlap_var((k + level_error) * d / e);
		case CC_HONAKER:
		case CC_GAUSSIAN_HONAKER:
			for (int b = 0; b < 63; b++)
				if (t & (INT64_C(1) << b))
					share += honaker_weight(b);
			if (p->kind == CC_HONAKER)
				return share * dlap_var((cc_tree_levels(p->horizon) + level_error) * d / e);
			/* sigma^2 = L Delta^2 / (2 rho) */
			return share * dgauss_var((cc_tree_levels(p->horizon) + level_error) * d * d /
									  (2.0 * rho));
		case CC_BLT:
			{
				const cc_blt_part *part = cc_state_part(s);

				return dgauss_var(cc_scale_value(s->scale)) * (1.0 + 0.15 * level_error) *
					blt_brute_error(p->horizon, t) / ldexp(1.0, 2 * (int) part->shift);
			}
		default:
			abort();
	}
}

/*
 * The fourth cumulant of the release's noise: cumulants of independent draws
 * add, and a draw weighted by w has w^4 times its own.  Honaker's estimate of
 * a node at level d weighs the 2^(d-j) draws of each level j below it by
 * 2^j / (2^(d+1) - 1).
 */
static double
expected_kappa4(const cc_state *s)
{
	cc_term		terms[CC_MAX_TERMS];
	double		k4 = 0.0;

	/* the discrete Gaussian's is below exp(-2 pi^2 sigma^2) sigma^4: none */
	if (s->params.privacy == CC_ZCDP)
		return 0.0;
	if (s->params.kind == CC_HONAKER)
	{
		double		one = dlap_kappa4(cc_scale_value(s->scale));

		for (int d = 0; d < 63; d++)
			if (s->t & (INT64_C(1) << d))
				for (int j = 0; j <= d; j++)
					k4 += ldexp(1.0, d - j) *
						pow(ldexp(1.0, j) / (ldexp(1.0, d + 1) - 1.0), 4) * one;
		return k4;
	}
	for (int i = 0, n = cc_mechanism(s->params.kind)->terms(s, terms); i < n; i++)
		k4 += terms[i].count * dlap_kappa4(cc_scale_value(terms[i].scale));
	return k4;
}

/*
 * The error of the release before any rounding: Honaker's estimate and blt's
 * total / K are rounded to the integer released, and their formulas are the
 * estimate's (the rounding is checked apart, in test_honaker.c and
 * test_blt.c).
 */
static double
release_error(const cc_state *s)
{
	const cc_honaker_node *node = cc_honaker_nodes((cc_honaker_part *) cc_state_part(s));
	double		err = 0.0;

	if (s->params.kind == CC_BLT)
	{
		const cc_blt_part *part = cc_state_part(s);

		return (double) ((long double) cc_wide_get(&part->total) /
						 ldexpl(1.0L, (int) part->shift) - (long double) s->exact);
	}
	if (s->params.kind != CC_HONAKER && s->params.kind != CC_GAUSSIAN_HONAKER)
		return (double) (s->noisy - s->exact);
	for (int d = 0; d < 63; d++)
		if (s->t & (INT64_C(1) << d))
			err += (double) (node[d].whole - node[d].exact) +
				(double) node[d].frac / (ldexp(1.0, d + 1) - 1.0);
	return err;
}

enum
{
	TRIALS = 20000, STREAM = 64, NCHECK = 5
};
static const int64_t check_steps[NCHECK] = {1, 5, 31, 48, 64};

/*
 * Run TRIALS independent releases of one stream and compare, at a few steps,
 * the empirical variance of noisy - exact with the formula, the variance the
 * state reports with the formula, and the error bound with beta.
 */
static void
check_variance(cc_params p, uint64_t seed)
{
	seeded_rng r;
	int64_t		items[STREAM + 1];
	double		sum[NCHECK] = {0};
	double		sumsq[NCHECK] = {0};
	double		kappa4[NCHECK];
	double		reported[NCHECK];
	long		bound_failures = 0;
	cc_state   *s = new_state(&p);
	const char *name = cc_kind_name(p.kind);

	seeded_rng_init(&r, seed);
	for (int t = 1; t <= STREAM; t++)
		items[t] = (int64_t) cc_uniform_below(&r.rng, 2);
	for (long trial = 0; trial < TRIALS; trial++)
	{
		int			c = 0;
		bool		failed = false;

		cc_state_init(s, &p);
		for (int64_t t = 1; t <= STREAM; t++)
		{
			cc_release rel;

			cc_push(s, items[t], &r.rng);
			cc_read(s, &rel);
			failed |= fabs((double) (rel.noisy - cc_exact_count(s))) > rel.bound;
			if (c < NCHECK && t == check_steps[c])
			{
				double		err = release_error(s);

				sum[c] += err;
				sumsq[c] += err * err;
				reported[c] = rel.variance;
				kappa4[c] = expected_kappa4(s);
				c++;
			}
		}
		bound_failures += failed;
	}
	for (int c = 0; c < NCHECK; c++)
	{
		double		var = expected_variance(s, check_steps[c], 0);
		double		mean = sum[c] / TRIALS;
		double		sample = sumsq[c] / TRIALS - mean * mean;

		CHECK(fabs(reported[c] - var) <= 1e-9 * var, "%s t=%lld: reported variance %g, formula %g",
			  name, (long long) check_steps[c], reported[c], var);
		CHECK(fabs(mean) <= UNIT_Z * sqrt(var / TRIALS), "%s t=%lld: mean error %g",
			  name, (long long) check_steps[c], mean);
		CHECK(variance_consistent(sample, var, kappa4[c], TRIALS),
			  "%s t=%lld: empirical variance %g, formula %g", name,
			  (long long) check_steps[c], sample, var);

		/* the same check must see a tree with one level fewer */
		if ((p.kind == CC_BINARY && __builtin_popcountll(check_steps[c]) >= 3) ||
			p.kind == CC_HONAKER || p.kind == CC_SMOOTH_BINARY ||
			p.kind == CC_GAUSSIAN_HONAKER || p.kind == CC_BLT)
			CHECK(!variance_consistent(sample, expected_variance(s, check_steps[c], -1),
									   kappa4[c], TRIALS),
				  "%s t=%lld: a scale one level short passes", name, (long long) check_steps[c]);
	}
	CHECK(bound_failures <= TRIALS * p.beta + UNIT_Z * sqrt(TRIALS * p.beta * (1 - p.beta)),
		  "%s: the simultaneous bound failed in %ld of %d runs", name, bound_failures, TRIALS);
	free(s);
}

static void
test_variances(void)
{
	cc_params	p;

	check_variance(params_for(CC_SIMPLE_I, 0.7, STREAM), 20);
	check_variance(params_for(CC_SIMPLE_II, 0.7, STREAM), 21);
	check_variance(params_for(CC_SIMPLE_II, 0.7, 0), 22);
	check_variance(params_for(CC_TWO_LEVEL, 0.7, STREAM), 23);
	p = params_for(CC_TWO_LEVEL, 0.7, STREAM);
	p.has_block = true;
	p.block = 5;
	check_variance(p, 24);
	check_variance(params_for(CC_BINARY, 0.7, STREAM), 25);
	check_variance(params_for(CC_BINARY, 0.7, 100), 26);
	p = params_for(CC_BINARY, 2.0, STREAM);
	p.sensitivity = 3;
	check_variance(p, 27);
	check_variance(params_for(CC_HYBRID, 0.7, 0), 28);
	check_variance(params_for(CC_HYBRID, 0.7, STREAM), 29);
	check_variance(params_for(CC_HONAKER, 0.7, STREAM), 31);
	p = params_for(CC_HONAKER, 2.0, 100);
	p.sensitivity = 3;
	check_variance(p, 32);
	check_variance(params_for(CC_SMOOTH_BINARY, 0.7, STREAM), 33);
	p = params_for(CC_SMOOTH_BINARY, 2.0, 100);
	p.sensitivity = 3;
	check_variance(p, 34);
	check_variance(params_zcdp(CC_GAUSSIAN_HONAKER, 0.7, STREAM), 35);
	p = params_zcdp(CC_GAUSSIAN_HONAKER, 2.0, 100);
	p.sensitivity = 3;
	check_variance(p, 36);
	check_variance(params_zcdp(CC_BLT, 0.5, STREAM), 37);
	p = params_zcdp(CC_BLT, 0.01, 100);
	p.sensitivity = 1000;
	check_variance(p, 38);
}

/* The hybrid mechanism goes on without a horizon, with O(log t) live nodes. */
static void
test_hybrid_unbounded(void)
{
	seeded_rng r;
	cc_params	p = params_for(CC_HYBRID, 1.0, 0);
	cc_state   *s = new_state(&p);
	cc_release	rel;
	int			bad = 0;

	seeded_rng_init(&r, 30);
	for (int64_t t = 1; t <= 100000; t++)
	{
		cc_term		terms[CC_MAX_TERMS];
		int			n;

		if (cc_push(s, 1, &r.rng) != CC_OK)
		{
			bad++;
			break;
		}
		n = cc_mechanism(CC_HYBRID)->terms(s, terms);
		/* at most floor(log2 t) + 1 logarithmic draws and k tree nodes */
		bad += terms[0].count != 64 - __builtin_clzll(t) ||
			(n == 2 && terms[1].count > 63 - __builtin_clzll(t));
	}
	cc_read(s, &rel);
	CHECK(bad == 0 && rel.t == 100000 && cc_exact_count(s) == 100000, "hybrid run: %d bad", bad);
	CHECK(fabs((double) (rel.noisy - 100000)) <= rel.bound, "hybrid error %lld beyond bound %g",
		  (long long) (rel.noisy - 100000), rel.bound);
	free(s);
}

void
test_mechanisms(void)
{
	test_params();
	test_push_errors();
	test_state_size();
	test_state_valid();
	test_binary_tree();
	test_variances();
	test_hybrid_unbounded();
}
