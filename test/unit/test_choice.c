/*
 * test_choice.c
 *		Mechanism "auto": its closed forms against sums over every step, and
 *		the per-step variances those sums use against the states' own.
 */
#include "unit.h"
#include "choice.h"

#include <math.h>
#include <stdlib.h>

/* Every horizon up to this is checked step by step, for both objectives. */
#define BRUTE_MAX_T 3000
/* Closed forms and brute force agree to rounding only. */
#define REL_TOL 1e-9

static int
floor_log2(int64_t n)
{
	int			k = 0;

	while ((n >> k) > 1)
		k++;
	return k;
}

/*
 * kary: sum |d_j| over t's balanced base-k digits, and h the fewest levels
 * with (k^h - 1) / 2 >= T, computed apart from the core; the k is the one
 * the core chose (test_kary.c checks the choice's figures).
 */
static double
kary_variance(int64_t T, double eps, int64_t sens, int64_t t)
{
	static cc_params p;			/* the last horizon's, prepared once */
	int64_t		k;
	int64_t		h = 1;
	int64_t		power;
	int64_t		draws = 0;

	if (p.kind != CC_KARY || p.horizon != T || p.sensitivity != sens ||
		p.epsilon_units != params_for(CC_KARY, eps, T).epsilon_units)
	{
		p = params_for(CC_KARY, eps, T);
		p.sensitivity = sens;
		cc_params_prepare(&p);
	}
	k = p.block;
	for (power = k; (power - 1) / 2 < T; power *= k)
		h++;
	while (t != 0)
	{
		int64_t		r = ((t % k) + k) % k;

		if (r > (k - 1) / 2)
			r -= k;
		draws += r < 0 ? -r : r;
		t = (t - r) / k;
	}
	return (double) draws * dlap_var((double) (h * sens) / eps);
}

/*
 * The variance of the release at step t of horizon T, from the README's
 * table, computed apart from the core: its own scales, block and heights.
 */
static double
step_variance(cc_kind kind, int64_t T, double eps, int64_t sens, int64_t t)
{
	double		unit = (double) sens / eps;
	int			L = floor_log2(T) + 1;

	switch (kind)
	{
		case CC_SIMPLE_I:
			return dlap_var((double) T * unit);
		case CC_SIMPLE_II:
			return (double) t * dlap_var(unit);
		case CC_TWO_LEVEL:
			{
				int64_t		B = 1;

				while (B * B < T)
					B++;
				return (double) (t / B + t % B) * dlap_var(2 * unit);
			}
		case CC_BINARY:
			return __builtin_popcountll(t) * dlap_var(L * unit);
		case CC_HYBRID:
			{
				int			k = floor_log2(t);
				int64_t		rest = t - ((int64_t) 1 << k);

				return (k + 1) * dlap_var(2 * unit) +
					(rest > 0 ? __builtin_popcountll(rest) * dlap_var(2 * k * unit) : 0.0);
			}
		case CC_HONAKER:
			{
				double		share = 0.0;

				for (int d = 0; d < 63; d++)
					if ((t >> d) & 1)
						share += ldexp(1.0, d) / (ldexp(1.0, d + 1) - 1.0);
				return share * dlap_var(L * unit);
			}
		case CC_SMOOTH_BINARY:
			{
				int			h = smooth_binary_height(T);

				return h / 2 * dlap_var(h / 2 * unit);
			}
		case CC_KARY:
			return kary_variance(T, eps, sens, t);
			/* zCDP kinds: test_gaussian_mechanisms.c */
		case CC_GAUSSIAN_HONAKER:
		case CC_BLT:
		case CC_BLT_SCALED:
		case CC_NUM_KINDS:
			break;
	}
	abort();
}

static cc_params
params_with(cc_kind kind, double eps, int64_t sens, int64_t T)
{
	cc_params	p = params_for(kind, eps, T);

	p.sensitivity = sens;
	return p;
}

static bool
close_to(double a, double b)
{
	return fabs(a - b) <= REL_TOL * fabs(b);
}

/*
 * For every horizon up to BRUTE_MAX_T: each mechanism's mean and worst
 * variance over t = 1 .. T against cc_variance_over_horizon(), and the kind
 * cc_choose() picks against the least of the sums, for both objectives.
 */
static void
test_brute_force(double eps, int64_t sens)
{
	int			bad_forms = 0;
	int			bad_choices = 0;

	for (int64_t T = 1; T <= BRUTE_MAX_T; T++)
	{
		double		mean[CC_NUM_KINDS];
		double		worst[CC_NUM_KINDS];

		for (int k = 0; k < CC_NUM_KINDS; k++)
		{
			cc_params	p = params_with((cc_kind) k, eps, sens, T);
			long double sum = 0.0;
			double		most = 0.0;
			double		form_mean;
			double		form_worst;

			if (cc_kind_privacy((cc_kind) k) != CC_PURE)
			{
				mean[k] = worst[k] = INFINITY;
				continue;
			}
			for (int64_t t = 1; t <= T; t++)
			{
				double		v = step_variance((cc_kind) k, T, eps, sens, t);

				sum += v;
				if (v > most)
					most = v;
			}
			mean[k] = (double) (sum / T);
			worst[k] = most;
			if (cc_params_prepare(&p) != CC_OK)
			{
				bad_forms++;
				continue;
			}
			cc_variance_over_horizon(&p, &form_mean, &form_worst);
			if (!close_to(form_mean, mean[k]) || !close_to(form_worst, worst[k]))
			{
				if (bad_forms++ < 5)
					fprintf(stderr, "%s at T = %lld: mean %.10g (sum %.10g), worst %.10g (max %.10g)\n",
							cc_kind_name((cc_kind) k), (long long) T,
							form_mean, mean[k], form_worst, worst[k]);
			}
		}
		for (int o = 0; o <= CC_OBJECTIVE_WORST; o++)
		{
			const double *value = o == CC_OBJECTIVE_MEAN ? mean : worst;
			cc_params	p = params_with(CC_SIMPLE_I, eps, sens, T);
			double		least = value[0];

			for (int k = 1; k < CC_NUM_KINDS; k++)
				if (value[k] < least)
					least = value[k];
			if (cc_choose(&p, (cc_objective) o) != CC_OK ||
				value[p.kind] > least * (1.0 + REL_TOL))
			{
				if (bad_choices++ < 5)
					fprintf(stderr, "%s at T = %lld: picked %s, %.10g against %.10g\n",
							cc_objective_name((cc_objective) o), (long long) T,
							cc_kind_name(p.kind), value[p.kind], least);
			}
		}
	}
	CHECK(bad_forms == 0, "%d closed forms differ from the sums over t (eps %g, sensitivity %lld)",
		  bad_forms, eps, (long long) sens);
	CHECK(bad_choices == 0, "%d choices are not the least (eps %g, sensitivity %lld)",
		  bad_choices, eps, (long long) sens);
}

/*
 * The per-step variances above are the ones the mechanisms report: every
 * step of these horizons, read from a state fed zeros.
 */
static void
test_step_variances(void)
{
	static const int64_t extra[] = {1000, 1023, 1024, 3432, 3433};
	seeded_rng r;
	int			bad = 0;

	seeded_rng_init(&r, 12);
	for (int i = 0; i < 200 + (int) (sizeof(extra) / sizeof(extra[0])); i++)
	{
		int64_t		T = i < 200 ? i + 1 : extra[i - 200];

		for (int k = 0; k < CC_NUM_KINDS; k++)
		{
			cc_params	p = params_with((cc_kind) k, 1.0, 1, T);
			cc_state   *s;

			if (cc_kind_privacy((cc_kind) k) != CC_PURE)
				continue;
			s = new_state(&p);

			for (int64_t t = 1; t <= T; t++)
			{
				cc_release release;
				double		v = step_variance((cc_kind) k, T, 1.0, 1, t);

				cc_push(s, 0, &r.rng);
				cc_read(s, &release);
				if (!close_to(release.variance, v) && bad++ < 5)
					fprintf(stderr, "%s, T = %lld, t = %lld: %.10g, formula %.10g\n",
							cc_kind_name((cc_kind) k), (long long) T, (long long) t,
							release.variance, v);
			}
			free(s);
		}
	}
	CHECK(bad == 0, "%d step variances differ from the formulas", bad);
}

/* Horizons too long to sum over: the figures the README quotes at 2^20. */
static void
test_long_horizons(void)
{
	cc_params	p;
	double		mean;
	double		worst;

	p = params_for(CC_HONAKER, 1.0, INT64_C(1) << 20);
	cc_params_prepare(&p);
	cc_variance_over_horizon(&p, &mean, &worst);
	CHECK(fabs(mean - 4763.4) < 1.0 && fabs(worst - 9527.3) < 1.0,
		  "honaker at 2^20: %g / %g", mean, worst);
	p = params_for(CC_BINARY, 1.0, INT64_C(1) << 20);
	cc_params_prepare(&p);
	cc_variance_over_horizon(&p, &mean, &worst);
	CHECK(fabs(mean - 8818.) < 1.0 && fabs(worst - 17637.) < 1.0,
		  "binary at 2^20: %g / %g", mean, worst);

	/* the largest horizon: no overflow (UBSan), and a finite choice */
	for (int o = 0; o <= CC_OBJECTIVE_WORST; o++)
	{
		p = params_for(CC_SIMPLE_I, 1.0, CC_MAX_HORIZON);
		CHECK(cc_choose(&p, (cc_objective) o) == CC_OK && p.kind == CC_KARY &&
			  cc_state_size(&p) <= CC_STATE_MAX_BYTES,
			  "%s at 2^62: %s", cc_objective_name((cc_objective) o), cc_kind_name(p.kind));
	}
	for (int k = 0; k < CC_NUM_KINDS; k++)
	{
		p = params_for((cc_kind) k, 1.0, CC_MAX_HORIZON);
		if (cc_params_prepare(&p) != CC_OK)
			continue;
		cc_variance_over_horizon(&p, &mean, &worst);
		CHECK(isfinite(mean) && mean > 0 && mean <= worst && isfinite(worst),
			  "%s at 2^62: %g / %g", cc_kind_name((cc_kind) k), mean, worst);
	}
}

static void
test_refusals(void)
{
	cc_params	p;
	cc_objective objective;

	p = params_for(CC_SIMPLE_I, 1.0, 0);
	CHECK(cc_choose(&p, CC_OBJECTIVE_MEAN) == CC_NEED_HORIZON, "no horizon");
	p = params_for(CC_SIMPLE_I, 1.0, 100);
	p.has_block = true;
	p.block = 10;
	CHECK(cc_choose(&p, CC_OBJECTIVE_MEAN) == CC_BLOCK_NOT_APPLICABLE, "a block");
	p = params_for(CC_SIMPLE_I, 1.0, 100);
	p.beta = 1.0;
	CHECK(cc_choose(&p, CC_OBJECTIVE_MEAN) == CC_BAD_BETA, "beta 1");
	p = params_for(CC_SIMPLE_I, 1.0, CC_MAX_HORIZON + 1);
	CHECK(cc_choose(&p, CC_OBJECTIVE_MEAN) == CC_BAD_HORIZON, "horizon past 2^62");

	/* simple_i's scale is too large here: it is passed over, not an error */
	p = params_for(CC_SIMPLE_I, 1e-6, INT64_C(1) << 40);
	p.sensitivity = CC_MAX_SENSITIVITY;
	CHECK(cc_choose(&p, CC_OBJECTIVE_WORST) == CC_OK && p.kind != CC_SIMPLE_I,
		  "tiny epsilon: %s", cc_kind_name(p.kind));

	/* the choice is prepared: kary's arity is filled in */
	p = params_for(CC_SIMPLE_I, 1.0, 1000);
	CHECK(cc_choose(&p, CC_OBJECTIVE_MEAN) == CC_OK && p.kind == CC_KARY &&
		  p.has_block && p.block == 13, "T = 1000: %s, block %lld",
		  cc_kind_name(p.kind), (long long) p.block);

	/* a tie goes to the kind listed first: at T = 1, one draw of Lap(1/eps) */
	p = params_for(CC_SMOOTH_BINARY, 1.0, 1);
	CHECK(cc_choose(&p, CC_OBJECTIVE_MEAN) == CC_OK && p.kind == CC_SIMPLE_I,
		  "tie at T = 1: %s", cc_kind_name(p.kind));

	CHECK(cc_objective_from_name("worst", &objective) && objective == CC_OBJECTIVE_WORST &&
		  cc_objective_from_name("mean", &objective) && objective == CC_OBJECTIVE_MEAN &&
		  !cc_objective_from_name("Mean", &objective) &&
		  !cc_objective_from_name("", &objective), "objective names");
}

void
test_choice(void)
{
	test_brute_force(1.0, 1);
	/* discrete Laplace variance is not quite b^2: the choice may move */
	test_brute_force(0.3, 3);
	test_step_variances();
	test_long_horizons();
	test_refusals();
}
