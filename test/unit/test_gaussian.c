/*
 * test_gaussian.c
 *		The discrete Gaussian sampler against its exact distribution.
 *
 * Statistical checks here: 3 at each of 7 scales (chi-square against the
 * exact pmf, empirical variance, symmetry), 2 wrong scales that the
 * chi-square must catch, 10 Bernoulli proportions and 1 run of zeros: 34 of
 * the suite's checks at 2e-9 each (see unit.h), under 7e-8 together.
 */
#include "unit.h"

#include "gaussian.h"

#include <math.h>
#include <stdlib.h>

typedef unsigned __int128 u128;

/*
 * The law of the discrete Gaussian of variance parameter s2, for the tests:
 * weights exp(-x^2 / (2 s2)) summed in long double over |x| <= half (beyond
 * 12 sigma, the weights left out are below 1e-31 of the total), or, for a
 * sigma too large to sum over, the normal law with a continuity correction:
 * by Poisson summation and Euler-Maclaurin its probabilities of half-lines
 * are the discrete Gaussian's within about 1/(24 s2) relatively, 1e-20 at
 * the one such scale here (2^62).
 */
typedef struct dg_law
{
	double		s2;
	int64_t		half;			/* 0 for the normal law */
	long double *below;			/* below[j] = P(X < j - half), j <= 2 half + 1 */
	double		var;
	double		kappa4;
} dg_law;

static void
law_init(dg_law *law, double s2)
{
	double		sigma = sqrt(s2);

	law->s2 = s2;
	law->below = NULL;
	law->half = 0;
	if (sigma > 1e5)
	{
		/* the normal law's variance, fourth cumulant 0 */
		law->var = s2;
		law->kappa4 = 0.0;
		return;
	}
	law->half = (int64_t) ceil(12.0 * sigma) + 5;
	law->below = malloc((2 * law->half + 2) * sizeof(long double));
	{
		long double z = 0.0L;
		long double m2 = 0.0L;
		long double m4 = 0.0L;
		long double var;

		law->below[0] = 0.0L;
		for (int64_t j = 0; j <= 2 * law->half; j++)
		{
			long double x = (long double) (j - law->half);
			long double w = expl(-x * x / (2.0L * (long double) s2));

			z += w;
			m2 += w * x * x;
			m4 += w * x * x * x * x;
			law->below[j + 1] = z;
		}
		for (int64_t j = 0; j <= 2 * law->half + 1; j++)
			law->below[j] /= z;
		var = m2 / z;
		law->var = (double) var;
		law->kappa4 = (double) (m4 / z - 3.0L * var * var);
	}
}

static void
law_free(dg_law *law)
{
	free(law->below);
}

/* P(X < e) */
static double
law_below(const dg_law *law, int64_t e)
{
	if (law->half == 0)
		return (double) (0.5L * erfcl(-((long double) e - 0.5L) /
									  sqrtl(2.0L * (long double) law->s2)));
	if (e < -law->half)
		return 0.0;
	if (e > law->half + 1)
		return 1.0;
	return (double) law->below[e + law->half];
}

enum
{
	MAX_EDGES = 40
};

/*
 * Bins between integer edges about a third of sigma apart out to six sigma,
 * as for the discrete Laplace in test_noise.c, each expecting at least 20 of
 * n draws.
 */
typedef struct dg_bins
{
	int			nedges;
	int64_t		edges[MAX_EDGES];
	double		prob[MAX_EDGES + 1];
} dg_bins;

static void
bins_init(dg_bins *b, const dg_law *law, long n)
{
	double		width = fmax(1.0, sqrt(law->s2) / 3.0);

	b->nedges = 0;
	for (int j = -18; j <= 18; j++)
	{
		int64_t		e = (int64_t) llround(j * width);

		if ((b->nedges == 0 || e > b->edges[b->nedges - 1]) &&
			fmin(law_below(law, e), 1.0 - law_below(law, e)) * n >= 20.0)
			b->edges[b->nedges++] = e;
	}
	for (int i = 0; i <= b->nedges; i++)
	{
		double		lo = i == 0 ? 0.0 : law_below(law, b->edges[i - 1]);
		double		hi = i == b->nedges ? 1.0 : law_below(law, b->edges[i]);

		b->prob[i] = hi - lo;
	}
}

/* What n draws at one scale showed. */
typedef struct dg_sample
{
	double		chi2;
	double		var;
	long		positive;
	long		negative;
	long		refused;
} dg_sample;

static dg_sample
draw_and_bin(seeded_rng *r, cc_scale sigma2, const dg_bins *b, long n)
{
	long		counts[MAX_EDGES + 1] = {0};
	double		sum = 0.0;
	double		sumsq = 0.0;
	dg_sample	s = {0};

	for (long k = 0; k < n; k++)
	{
		int64_t		x = 0;
		int			bin = 0;

		if (cc_dgauss_draw(&r->rng, sigma2, &x) != CC_OK)
			s.refused++;
		while (bin < b->nedges && x >= b->edges[bin])
			bin++;
		counts[bin]++;
		sum += (double) x;
		sumsq += (double) x * (double) x;
		s.positive += x > 0;
		s.negative += x < 0;
	}
	for (int i = 0; i <= b->nedges; i++)
	{
		double		e = b->prob[i] * (double) n;

		s.chi2 += (counts[i] - e) * (counts[i] - e) / e;
	}
	s.var = sumsq / n - (sum / n) * (sum / n);
	return s;
}

/*
 * n draws of variance parameter num/den against the exact law: chi-square,
 * variance (the fourth cumulant from the law), as many positive values as
 * negative ones, and cc_dgauss_variance().  With wrong_num/wrong_den, n more
 * draws from that scale must fail the same chi-square.
 */
static void
check_dgauss(seeded_rng *r, uint64_t num, uint64_t den, long n,
			 uint64_t wrong_num, uint64_t wrong_den)
{
	cc_scale	sigma2 = {num, den};
	dg_law		law;
	dg_bins		b;
	dg_sample	s;
	double		threshold;

	law_init(&law, (double) num / (double) den);
	bins_init(&b, &law, n);
	threshold = chi2_threshold(b.nedges);
	s = draw_and_bin(r, sigma2, &b, n);
	CHECK(s.refused == 0, "sigma^2 %llu/%llu refused", (unsigned long long) num,
		  (unsigned long long) den);
	CHECK(s.chi2 < threshold, "sigma^2 %llu/%llu: chi2 %g over %d bins (threshold %g)",
		  (unsigned long long) num, (unsigned long long) den, s.chi2, b.nedges + 1, threshold);
	CHECK(variance_consistent(s.var, law.var, law.kappa4, n),
		  "sigma^2 %llu/%llu: variance %g, expected %g", (unsigned long long) num,
		  (unsigned long long) den, s.var, law.var);
	CHECK(fabs((double) (s.positive - s.negative)) <= UNIT_Z * sqrt((double) (s.positive + s.negative)),
		  "sigma^2 %llu/%llu: %ld positive, %ld negative", (unsigned long long) num,
		  (unsigned long long) den, s.positive, s.negative);
	CHECK(fabs(cc_dgauss_variance(sigma2) - law.var) <= 1e-12 * law.var,
		  "cc_dgauss_variance(%llu/%llu) = %.17g, exact %.17g", (unsigned long long) num,
		  (unsigned long long) den, cc_dgauss_variance(sigma2), law.var);
	if (wrong_num != 0)
	{
		dg_sample	w = draw_and_bin(r, (cc_scale) {wrong_num, wrong_den}, &b, n);

		CHECK(w.chi2 >= threshold,
			  "sigma^2 %llu/%llu drawn as %llu/%llu passes: chi2 %g (threshold %g)",
			  (unsigned long long) num, (unsigned long long) den,
			  (unsigned long long) wrong_num, (unsigned long long) wrong_den,
			  w.chi2, threshold);
	}
	printf("dgauss sigma^2 %-10.6g chi2 %6.1f over %2d bins (threshold %5.1f), "
		   "variance %.6g (exact %.6g)\n",
		   law.s2, s.chi2, b.nedges + 1, threshold, s.var, law.var);
	law_free(&law);
}

static void
test_distribution(void)
{
	seeded_rng	r;
	const long	n = 200000;

	seeded_rng_init(&r, 61);
	/*
	 * The wrong scales (10% more variance) give the chi-square a
	 * noncentrality of about 1000 at n = 200000 over 5 and 24 bins, against
	 * thresholds of 51 and 89: the chance that they pass is below 1e-100.
	 */
	check_dgauss(&r, 1, 4, n, 11, 40);	/* t = 1, mostly 0 and +-1 */
	check_dgauss(&r, 1, 1, n, 0, 0);
	check_dgauss(&r, 10, 1, n, 0, 0);
	check_dgauss(&r, 1000, 1, n, 1100, 1);
	check_dgauss(&r, 2000, 3, n, 0, 0);

	/*
	 * Parts near 2^62 (sigma^2 about 1e6): q is about 2^125, so the
	 * Bernoullis take their 128-bit paths (a^2 above 2^128, rare here, has
	 * its own cases in test_bernoulli_wide()).
	 */
	check_dgauss(&r, CC_DGAUSS_MAX_PART - 1, UINT64_C(4611686018427), n, 0, 0);
	/* the largest sigma^2, 2^62: t = 2^31 + 1 */
	check_dgauss(&r, CC_DGAUSS_MAX_PART, 1, n, 0, 0);

	/* the smallest, 2^-62: P(X != 0) is about 2 exp(-2^61) */
	{
		long		nonzero = 0;

		for (long k = 0; k < 20000; k++)
		{
			int64_t		x = 1;

			cc_dgauss_draw(&r.rng, (cc_scale) {1, CC_DGAUSS_MAX_PART}, &x);
			nonzero += x != 0;
		}
		CHECK(nonzero == 0, "sigma^2 2^-62: %ld nonzero values", nonzero);
	}
}

static void
test_bernoulli_wide(void)
{
	/* Bernoulli(exp(-num/den)) with 128-bit parts */
	static const struct
	{
		u128		num;
		u128		den;
	}			exp_cases[] = {
		{(u128) 1 << 100, ((u128) 3 << 99) + 1},	/* den above 2^64, rejection */
		{((u128) 5 << 100) + 1, ((u128) 1 << 102) + 3},	/* above 1 */
		{((u128) 1 << 126) + 12345, ((u128) 3 << 125) + 7},	/* den k overflows at 3 */
		{1, ((u128) 1 << 127) - 1},	/* about 1 */
		{(u128) 1 << 127, ((u128) 1 << 64) + 1},	/* about exp(-2^63) */
	};

	/* Bernoulli(exp(-a^2/q)) */
	static const struct
	{
		u128		a;
		u128		q;
	}			square_cases[] = {
		{3, 20},				/* a^2 < q: one draw */
		{5, 3},					/* a^2 formed: exp(-1) eight times, then exp(-1/3) */
		{((u128) 1 << 64) + 12345, ((u128) 1 << 127) + 1},	/* a^2 above 2^128: m draws */
		{(u128) 3 << 62, ((u128) 5 << 123) + 7},	/* a^2 formed, near 2^127: 3.6 */
		{(u128) 1 << 100, (u128) 1 << 127},	/* exp(-2^73) */
	};
	seeded_rng	r;
	const long	n = 200000;

	seeded_rng_init(&r, 62);
	for (size_t c = 0; c < sizeof(exp_cases) / sizeof(exp_cases[0]); c++)
	{
		double		p = exp(-(double) exp_cases[c].num / (double) exp_cases[c].den);
		long		hits = 0;

		for (long i = 0; i < n; i++)
			hits += cc_bernoulli_exp_wide(&r.rng, exp_cases[c].num, exp_cases[c].den);
		CHECK(fabs(hits - n * p) <= UNIT_Z * sqrt(n * p * (1 - p)) + 1e-9,
			  "wide case %zu: %ld hits of %ld, expected %g", c, hits, n, n * p);
	}
	for (size_t c = 0; c < sizeof(square_cases) / sizeof(square_cases[0]); c++)
	{
		double		a = (double) square_cases[c].a;
		double		p = exp(-a * a / (double) square_cases[c].q);
		long		hits = 0;

		for (long i = 0; i < n; i++)
			hits += cc_bernoulli_exp_square(&r.rng, square_cases[c].a, square_cases[c].q);
		CHECK(fabs(hits - n * p) <= UNIT_Z * sqrt(n * p * (1 - p)) + 1e-9,
			  "square case %zu: %ld hits of %ld, expected %g", c, hits, n, n * p);
	}
	CHECK(cc_bernoulli_exp_square(&r.rng, 0, 1), "exp(0)");
}

static void
test_isqrt(void)
{
	static const uint64_t edges[] = {UINT64_MAX, UINT64_MAX - 1, UINT64_C(1) << 62,
		(UINT64_C(1) << 62) - 1, UINT64_C(0xFFFFFFFE00000001),	/* (2^32 - 1)^2 */
	UINT64_C(0xFFFFFFFE00000000), UINT64_C(4611686018427387903) / UINT64_C(4611686018427)};
	int			bad = 0;

	for (uint64_t x = 0; x < (UINT64_C(1) << 20); x++)
	{
		uint64_t	s = cc_isqrt(x);

		bad += !(s * s <= x && (s + 1) * (s + 1) > x);
	}
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
	{
		u128		s = cc_isqrt(edges[i]);

		bad += !(s * s <= edges[i] && (s + 1) * (s + 1) > edges[i]);
	}
	CHECK(bad == 0, "%d wrong integer square roots", bad);
}

static void
test_parameters(void)
{
	static const cc_scale refused[] = {{0, 1}, {1, 0}, {0, 0},
		{CC_DGAUSS_MAX_PART + 1, 1}, {1, CC_DGAUSS_MAX_PART + 1},
	{UINT64_MAX, UINT64_MAX}, {UINT64_MAX, 1}};
	static const cc_scale accepted[] = {{1, 1}, {CC_DGAUSS_MAX_PART, 1},
		{1, CC_DGAUSS_MAX_PART}, {CC_DGAUSS_MAX_PART, CC_DGAUSS_MAX_PART}};
	seeded_rng	r;

	seeded_rng_init(&r, 63);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
	{
		int64_t		x = 42;
		int			next = r.rng.next;

		CHECK(cc_dgauss_check(refused[i]) == CC_SCALE_TOO_LARGE &&
			  cc_dgauss_draw(&r.rng, refused[i], &x) == CC_SCALE_TOO_LARGE &&
			  x == 42 && r.rng.next == next && cc_dgauss_variance(refused[i]) == 0.0,
			  "sigma^2 %llu/%llu accepted", (unsigned long long) refused[i].num,
			  (unsigned long long) refused[i].den);
	}
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
	{
		int64_t		x;

		CHECK(cc_dgauss_check(accepted[i]) == CC_OK &&
			  cc_dgauss_draw(&r.rng, accepted[i], &x) == CC_OK,
			  "sigma^2 %llu/%llu refused", (unsigned long long) accepted[i].num,
			  (unsigned long long) accepted[i].den);
	}
}

/* cc_dgauss_variance() on both sides of its switch of sums, at 16 */
static void
test_variance(void)
{
	static const cc_scale scales[] = {{1, 100}, {1, 4}, {1, 2}, {1, 1}, {2, 1}, {4, 1},
	{31, 2}, {16, 1}, {33, 2}, {17, 1}, {100, 1}, {2000, 3}, {1000000, 1}};
	int			bad = 0;

	for (size_t i = 0; i < sizeof(scales) / sizeof(scales[0]); i++)
	{
		dg_law		law;
		double		v = cc_dgauss_variance(scales[i]);

		law_init(&law, (double) scales[i].num / (double) scales[i].den);
		if (!(fabs(v - law.var) <= 1e-13 * law.var))
		{
			bad++;
			fprintf(stderr, "cc_dgauss_variance(%llu/%llu) = %.17g, exact %.17g\n",
					(unsigned long long) scales[i].num,
					(unsigned long long) scales[i].den, v, law.var);
		}
		law_free(&law);
	}
	CHECK(bad == 0, "%d wrong variances", bad);
	/* 0.2149... at 1/4: well below sigma^2 */
	CHECK(fabs(cc_dgauss_variance((cc_scale) {1, 4}) - 0.2150) < 1e-3, "variance at 1/4 %g",
		  cc_dgauss_variance((cc_scale) {1, 4}));
}

void
test_gaussian(void)
{
	test_isqrt();
	test_parameters();
	test_variance();
	test_bernoulli_wide();
	test_distribution();
}
