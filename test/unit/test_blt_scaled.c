/*
 * test_blt_scaled.c
 *		The scaled BLT (mech_blt_scaled.c) against its factorization computed
 *		apart: the multipliers, the sensitivity from the materialized
 *		columns of C D, every step's variance and the mean and worst over the
 *		horizon from W_k(t) summed directly, the bound's classes, the
 *		empirical variance, and its figures beside blt's.
 *
 * Statistical checks here: 10, at 8 standard deviations (each below 1e-14
 * for a normal statistic, below 1e-12 with the chi-square's skew at 20000
 * draws), so they add under 1e-11 to the budget of unit.h.
 */
#include "unit.h"
#include "mechanism_int.h"
#include "choice.h"
#include "gaussian.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FRACTION_BITS 24
#define STRICT_Z 8.0

static bool
close_rel(long double a, long double b, long double tol)
{
	return fabsl(a - b) <= tol * fabsl(b);
}

/* E = 1 + (d + sum_j omega_j / phi_j) / F, apart from mech_blt.c */
static long double
deviation_of(int entry)
{
	const cc_blt_entry *e = &cc_blt_scaled_table[entry];
	long double sum = (long double) e->buffers;

	for (int j = 0; j < e->buffers; j++)
		sum += (long double) e->omega[j] / (long double) e->phi[j];
	return 1.0L + ldexpl(sum, -FRACTION_BITS);
}

/* The first step of t's stretch: its distance to T in a half-octave. */
static int64_t
stretch_start(int64_t T, int64_t t)
{
	int64_t		start = 1;

	for (int p = 0; p < 200; p++)
	{
		long double distance = floorl((long double) T * exp2l(-(long double) p / 2.0L));
		int64_t		first = T - (int64_t) distance + 1;

		if (distance < 1.0L || first > t)
			break;
		start = first;
	}
	return start;
}

/*
 * One horizon: m_t against its definition, sigma^2 against the largest
 * column of C D, and every step's variance against sum_k W_k(t)^2.
 */
static void
check_horizon(int64_t T, int64_t sensitivity, int *bad)
{
	cc_params	p = params_zcdp(CC_BLT_SCALED, 0.5, T);
	cc_state   *s;
	const cc_blt_scaled_part *part;
	long double *b = malloc(T * sizeof(long double));
	long double *c = malloc(T * sizeof(long double));
	long double *norm2 = malloc((T + 1) * sizeof(long double));
	long double *w = calloc(T + 1, sizeof(long double));
	long double most = 0.0L;
	long double l2;
	long double sum = 0.0L;
	long double largest = 0.0L;
	double		mean;
	double		worst;
	seeded_rng	r;

	p.sensitivity = sensitivity;
	s = new_state(&p);
	part = cc_state_part(s);
	blt_brute_b(&cc_blt_scaled_table[part->entry], T, b);
	blt_brute_c(&cc_blt_scaled_table[part->entry], T, c);
	norm2[0] = 0.0L;
	for (int64_t n = 1; n <= T; n++)
		norm2[n] = norm2[n - 1] + c[n - 1] * c[n - 1];
	for (int64_t j = 1; j <= T; j++)
	{
		long double m = (long double) cc_blt_scaled_multiplier(T, (int) part->shift, j);
		long double want = floorl(ldexpl(sqrtl(norm2[T] / norm2[T - stretch_start(T, j) + 1]),
										 (int) part->shift));

		/* the multiplier is its stretch's, within the rounding of a floor */
		if (fabsl(m - want) > 1.0L && (*bad)++ < 5)
			fprintf(stderr, "T %lld: m_%lld = %.0Lf, want %.0Lf\n", (long long) T,
					(long long) j, m, want);
		most = fmaxl(most, m * sqrtl(norm2[T - j + 1]));
	}
	l2 = (long double) sensitivity * most + deviation_of((int) part->entry) * sqrtl((long double) T);
	if (!(cc_scale_value(s->scale) >= l2 * l2 / 1.0L &&
		  cc_scale_value(s->scale) <= l2 * l2 * (1.0L + 1e-6L)) && (*bad)++ < 5)
		fprintf(stderr, "T %lld: sigma^2 %.12g for a sensitivity %.12Lg\n", (long long) T,
				cc_scale_value(s->scale), l2);

	seeded_rng_init(&r, 91);
	for (int64_t t = 1; t <= T; t++)
	{
		long double m = (long double) cc_blt_scaled_multiplier(T, (int) part->shift, t);
		long double v = 0.0L;
		cc_release rel;

		/* W_k(t) = W_k(t - 1) + c'_(t-k) / m_t, c'_n = b_n - b_(n-1) */
		for (int64_t k = 1; k <= t; k++)
		{
			w[k] += (b[t - k] - (t - k > 0 ? b[t - k - 1] : 0.0L)) / m;
			v += w[k] * w[k];
		}
		v *= (long double) dgauss_var(cc_scale_value(s->scale));
		sum += v;
		largest = fmaxl(largest, v);
		cc_push(s, 0, &r.rng);
		cc_read(s, &rel);
		if (!close_rel(rel.variance, v, 1e-9L) && (*bad)++ < 5)
			fprintf(stderr, "T %lld, t %lld: variance %.12g, sum %.12Lg\n", (long long) T,
					(long long) t, rel.variance, v);
	}
	cc_variance_over_horizon(&s->params, &mean, &worst);
	if (!(close_rel(mean, sum / T, 1e-9L) && close_rel(worst, largest, 1e-9L)) && (*bad)++ < 5)
		fprintf(stderr, "T %lld: mean %.12g / %.12Lg, worst %.12g / %.12Lg\n", (long long) T,
				mean, sum / T, worst, largest);
	free(b);
	free(c);
	free(norm2);
	free(w);
	free(s);
}

static void
test_forms(void)
{
	static const int64_t horizons[] = {1, 2, 3, 5, 17, 100, 1000};
	int			bad = 0;

	for (size_t i = 0; i < sizeof(horizons) / sizeof(horizons[0]); i++)
	{
		check_horizon(horizons[i], 1, &bad);
		check_horizon(horizons[i], 3, &bad);
	}
	CHECK(bad == 0, "%d multipliers, calibrations or variances off", bad);
}

/*
 * The bound's classes cover the horizon, and each one's tail dominates the
 * variance proxy and rounding of every step in it (what bounds.c needs).
 */
static void
test_classes(void)
{
	static const int64_t horizons[] = {1000, 5000, 77777};
	int			bad = 0;

	for (size_t i = 0; i < sizeof(horizons) / sizeof(horizons[0]); i++)
	{
		int64_t		T = horizons[i];
		cc_params	p = params_zcdp(CC_BLT_SCALED, 0.5, T);
		const cc_mechanism_ops *ops = cc_mechanism(CC_BLT_SCALED);
		cc_class   *classes = malloc(CC_MAX_CLASSES * sizeof(cc_class));
		cc_state   *s;
		seeded_rng	r;
		int64_t		segments;
		int64_t		covered = 0;
		int			n;
		int			k = 0;
		int64_t		left;
		cc_tail		tail;

		s = new_state(&p);
		n = ops->bound_classes(&s->params, 0, &segments, classes);
		seeded_rng_init(&r, 92);
		for (int c = 0; c < n; c++)
			covered += classes[c].segments;
		bad += covered != T || segments != T || n > CC_MAX_CLASSES;
		ops->bound_tail(&s->params, 0, classes[0].key, &tail);
		left = classes[0].segments;
		for (int64_t t = 1; t <= T; t++)
		{
			cc_noise	noise;

			if (left == 0)
			{
				k++;
				ops->bound_tail(&s->params, 0, classes[k].key, &tail);
				left = classes[k].segments;
			}
			left--;
			cc_push(s, 0, &r.rng);
			ops->gaussian_noise(s, &noise);
			if ((noise.proxy > tail.proxy || noise.rounding > tail.rounding) && bad++ < 5)
				fprintf(stderr, "T %lld, t %lld: proxy %.12g over its class's %.12g\n",
						(long long) T, (long long) t, noise.proxy, tail.proxy);
		}
		free(classes);
		free(s);
	}
	CHECK(bad == 0, "%d classes that do not cover their steps", bad);
}

/*
 * The release before rounding, sum_p Y_p / m_p, minus the count: its
 * empirical mean and variance over 20000 streams against the reported
 * variance, and the same variance with sigma^2 15% short must fail.
 */
static void
test_empirical(void)
{
	enum
	{
		TRIALS = 20000, T = 64, NCHECK = 5
	};
	static const int64_t steps[NCHECK] = {1, 5, 31, 48, 64};
	cc_params	p = params_zcdp(CC_BLT_SCALED, 0.5, T);
	cc_state   *s = new_state(&p);
	const cc_blt_scaled_part *part = cc_state_part(s);
	double		sum[NCHECK] = {0};
	double		sumsq[NCHECK] = {0};
	double		reported[NCHECK] = {0};
	seeded_rng	r;

	int			stretch[T + 1];
	long double multiplier[T + 1];

	/* each step's stretch, numbered from 0, and each stretch's m */
	stretch[1] = 0;
	for (int64_t t = 1; t <= T; t++)
	{
		if (t > 1)
			stretch[t] = stretch[t - 1] + (stretch_start(T, t) == t);
		multiplier[stretch[t]] = (long double) cc_blt_scaled_multiplier(T, (int) part->shift, t);
	}
	seeded_rng_init(&r, 93);
	for (int n = 0; n < TRIALS; n++)
	{
		int			c = 0;

		cc_state_init(s, &p);
		for (int64_t t = 1; t <= T; t++)
		{
			cc_release rel;
			long double estimate = 0.0L;

			cc_push(s, (int64_t) (t % 3), &r.rng);
			if (c == NCHECK || steps[c] != t)
				continue;
			cc_read(s, &rel);
			for (int q = 0; q <= stretch[t]; q++)
				estimate += (long double) cc_wide_get(&part->totals[q]) / multiplier[q];
			sum[c] += (double) (estimate - (long double) s->exact);
			sumsq[c] += (double) ((estimate - s->exact) * (estimate - s->exact));
			reported[c] = rel.variance;
			c++;
		}
	}
	for (int c = 0; c < NCHECK; c++)
	{
		double		mean = sum[c] / TRIALS;
		double		sample = sumsq[c] / TRIALS - mean * mean;
		double		sd = sqrt(2.0 / TRIALS) * reported[c];

		CHECK(fabs(mean) <= STRICT_Z * sqrt(reported[c] / TRIALS), "t=%lld: mean error %g",
			  (long long) steps[c], mean);
		CHECK(fabs(sample - reported[c]) <= STRICT_Z * sd &&
			  fabs(sample - 0.85 * reported[c]) > STRICT_Z * sd,
			  "t=%lld: empirical variance %g, reported %g", (long long) steps[c], sample,
			  reported[c]);
	}
	free(s);
}

/*
 * The table's entries as mech_blt_scaled.c's head requires them: 1 to
 * CC_BLT_SCALED_BUFFERS buffers and zeros past them, a BLT that blt.c
 * takes (positive scales, decays in (0, 1), B's coefficients positive), and
 * no decay slower than blt's entry's slowest, which the buffers' magnitude
 * bound assumes.
 */
static void
test_table(void)
{
	for (int k = 0; k < CC_BLT_ENTRIES; k++)
	{
		const cc_blt_entry *e = &cc_blt_scaled_table[k];
		const cc_blt_entry *old = &cc_blt_table[k];
		uint64_t	slowest = UINT64_MAX;
		cc_blt		blt;
		cc_blt_noise noise;
		bool		ok = e->buffers >= 1 && e->buffers <= CC_BLT_SCALED_BUFFERS;

		for (int j = 0; j < old->buffers; j++)
			slowest = old->phi[j] < slowest ? old->phi[j] : slowest;
		for (int j = 0; ok && j < CC_BLT_SCALED_BUFFERS; j++)
			ok = j < e->buffers ? e->phi[j] >= slowest && e->phi[j] < CC_BLT_ONE &&
				e->omega[j] > 0 : e->phi[j] == 0 && e->omega[j] == 0;
		cc_blt_of_entry(e, &blt);
		CHECK(ok && cc_blt_noise_of(&blt, &noise), "blt_scaled's table, entry 2^%d", k);
	}
}

/*
 * Its figures at rho 1/2 beside blt's (report/accuracy_table.c), none above
 * what blt's table gave it (was_mean, was_worst), the state at the longest
 * horizon, and the checks of a stored state.
 */
static void
test_figures(void)
{
	static const struct
	{
		int64_t		T;
		double		mean;
		double		worst;
		double		was_mean;
		double		was_worst;
	}			cases[] = {{1000, 9.0494, 9.6924, 9.0494, 9.6924},
	{INT64_C(1) << 14, 15.0830, 16.0733, 15.1807, 16.0733},
	{INT64_C(1) << 20, 27.0404, 28.3414, 27.8598, 29.0315}};
	cc_params	p;
	cc_state   *s;
	cc_blt_scaled_part *part;
	seeded_rng	r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		double		mean;
		double		worst;
		double		blt_mean;
		double		blt_worst;

		p = params_zcdp(CC_BLT_SCALED, 0.5, cases[i].T);
		cc_params_prepare(&p);
		cc_variance_over_horizon(&p, &mean, &worst);
		p = params_zcdp(CC_BLT, 0.5, cases[i].T);
		cc_params_prepare(&p);
		cc_variance_over_horizon(&p, &blt_mean, &blt_worst);
		CHECK(fabs(mean - cases[i].mean) < 1e-3 && fabs(worst - cases[i].worst) < 1e-3 &&
			  mean <= cases[i].was_mean + 1e-4 && worst <= cases[i].was_worst + 1e-4 &&
			  mean < 0.97 * blt_mean && worst < 0.95 * blt_worst,
			  "T %lld: %g / %g (blt %g / %g)", (long long) cases[i].T, mean, worst, blt_mean,
			  blt_worst);
	}
	p = params_zcdp(CC_BLT_SCALED, 0.5, cc_kind_max_horizon(CC_BLT_SCALED));
	cc_params_prepare(&p);
	{
		double		mean;
		double		worst;

		cc_variance_over_horizon(&p, &mean, &worst);
		printf("blt_scaled at 2^40, rho 1/2: mean / worst variance %.2f / %.2f\n", mean, worst);
	}
	CHECK(cc_params_prepare(&p) == CC_OK && cc_state_size(&p) <= CC_STATE_MAX_BYTES &&
		  cc_kind_max_horizon(CC_BLT_SCALED) == INT64_C(1) << 40,
		  "2^40: %zu bytes", cc_state_size(&p));
	p = params_zcdp(CC_BLT_SCALED, 0.5, 1000);
	CHECK(cc_choose(&p, CC_OBJECTIVE_MEAN) == CC_OK && p.kind == CC_BLT_SCALED,
		  "auto at 1000 under zCDP: %s", cc_kind_name(p.kind));

	/* a stored state: a sum past the current stretch or another K is refused */
	p = params_zcdp(CC_BLT_SCALED, 0.5, 1000);
	s = new_state(&p);
	part = cc_state_part(s);
	seeded_rng_init(&r, 94);
	for (int t = 0; t < 10; t++)
		cc_push(s, 1, &r.rng);
	CHECK(cc_state_valid(s, cc_state_bytes(s)), "a state as written");
	cc_wide_set(&part->totals[CC_BLT_SCALED_STRETCHES - 1], 1);
	CHECK(!cc_state_valid(s, cc_state_bytes(s)), "a sum of a later stretch");
	cc_wide_set(&part->totals[CC_BLT_SCALED_STRETCHES - 1], 0);
	part->shift++;
	CHECK(!cc_state_valid(s, cc_state_bytes(s)), "another K");
	free(s);
}

void
test_blt_scaled(void)
{
	test_table();
	test_forms();
	test_classes();
	test_empirical();
	test_figures();
}
