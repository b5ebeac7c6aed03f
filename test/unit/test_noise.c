/*
 * test_noise.c
 *		The samplers against their exact distributions.
 */
#include "unit.h"

#include <math.h>
#include <stdlib.h>

/* chi-square statistic of observed counts against expected probabilities */
static double
chi_square(const long *observed, const double *prob, int bins, long n)
{
	double		stat = 0.0;

	for (int i = 0; i < bins; i++)
	{
		double		e = prob[i] * (double) n;

		stat += (observed[i] - e) * (observed[i] - e) / e;
	}
	return stat;
}

static void
test_uniform(void)
{
	seeded_rng r;
	enum
	{
		N = 700000, BINS = 7
	};
	long		counts[BINS] = {0};
	double		prob[BINS];
	uint64_t	big = UINT64_C(12297829382473034410);	/* 2/3 of 2^64 */
	long		low = 0;
	double		stat;

	seeded_rng_init(&r, 1);
	for (long i = 0; i < N; i++)
		counts[cc_uniform_below(&r.rng, BINS)]++;
	for (int i = 0; i < BINS; i++)
		prob[i] = 1.0 / BINS;
	stat = chi_square(counts, prob, BINS, N);
	CHECK(stat < chi2_threshold(BINS - 1), "chi2 %g", stat);

	/*
	 * Without rejection, a modulus of 2/3 of 2^64 would put two thirds of
	 * the draws in its lower half.
	 */
	for (long i = 0; i < N; i++)
		low += cc_uniform_below(&r.rng, big) < big / 2;
	CHECK(fabs(low - N / 2.0) < UNIT_Z * sqrt(N / 4.0), "low half %ld of %d", low, N);

	CHECK(cc_uniform_below(&r.rng, 1) == 0, "n = 1");

	/* the same below 2^32, where a draw takes 32 bits, and at its edges */
	{
		uint64_t	big32 = UINT64_C(2863311530);	/* 2/3 of 2^32 */
		long		low32 = 0;
		long		top = 0;

		for (long i = 0; i < N; i++)
			low32 += cc_uniform_below(&r.rng, big32) < big32 / 2;
		CHECK(fabs(low32 - N / 2.0) < UNIT_Z * sqrt(N / 4.0), "low half %ld of %d (32 bits)",
			  low32, N);
		for (long i = 0; i < N; i++)
			top += cc_uniform_below(&r.rng, UINT32_MAX) >= UINT32_MAX / 2;
		CHECK(fabs(top - N / 2.0) < UNIT_Z * sqrt(N / 4.0), "top half %ld of %d (2^32 - 1)",
			  top, N);
		top = 0;
		for (long i = 0; i < N; i++)
			top += cc_uniform_below(&r.rng, UINT64_C(1) << 32) >= UINT64_C(1) << 31;
		CHECK(fabs(top - N / 2.0) < UNIT_Z * sqrt(N / 4.0), "top half %ld of %d (2^32)", top, N);
	}

	/* single bits: as many ones as zeros, and no pattern across words' ends */
	{
		long		ones = 0;
		long		pairs_equal = 0;
		bool		previous = false;

		for (long i = 0; i < N; i++)
		{
			bool		bit = cc_random_bit(&r.rng);

			ones += bit;
			pairs_equal += i > 0 && bit == previous;
			previous = bit;
		}
		CHECK(fabs(ones - N / 2.0) < UNIT_Z * sqrt(N / 4.0), "%ld ones in %d bits", ones, N);
		CHECK(fabs(pairs_equal - (N - 1) / 2.0) < UNIT_Z * sqrt(N / 4.0),
			  "%ld equal neighbours in %d bits", pairs_equal, N);
	}
}

static void
test_bernoulli_exp(void)
{
	/*
	 * {1, 1} and the cases above 1 go through Bernoulli(exp(-1)) by its
	 * table of k <= 6; b up to 3037000499 decides the first two trials in
	 * one draw (the next case is just above); the last two overflow b * k
	 * from k = 3 and k = 2: both ways of drawing
	 */
	static const uint64_t cases[][2] = {{0, 1}, {0, 2}, {1, 2}, {1, 3}, {1, 1}, {5, 2}, {7, 1}, {1000001, 1000000},
	{3000000000, 3037000500},
	{UINT64_C(1) << 62, UINT64_C(3) << 61}, {UINT64_C(1) << 62, UINT64_C(1) << 63}};
	seeded_rng r;
	const long	n = 400000;

	seeded_rng_init(&r, 2);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		double		p = exp(-(double) cases[c][0] / (double) cases[c][1]);
		long		hits = 0;

		for (long i = 0; i < n; i++)
			hits += cc_bernoulli_exp(&r.rng, cases[c][0], cases[c][1]);
		CHECK(fabs(hits - n * p) <= UNIT_Z * sqrt(n * p * (1 - p)) + 1e-9,
			  "exp(-%llu/%llu): %ld hits of %ld, expected %g",
			  (unsigned long long) cases[c][0], (unsigned long long) cases[c][1],
			  hits, n, n * p);
	}
}

/* P(X >= k) for discrete Laplace with p = exp(-1/b), k >= 1 */
static double
dlap_upper_tail(double b, int64_t k)
{
	double		p = exp(-1.0 / b);

	return exp(-(double) k / b) / (1.0 + p);
}

/* P(X < e) for an integer edge e */
static double
dlap_cdf_below(double b, int64_t e)
{
	if (e <= 0)
		return dlap_upper_tail(b, 1 - e);
	return 1.0 - dlap_upper_tail(b, e);
}

/*
 * Draw n values of scale num/den, bin them between integer edges about a
 * third of a scale apart out to six scales, and compare with the exact pmf.
 */
static void
check_dlap_distribution(seeded_rng *r, uint64_t num, uint64_t den, long n)
{
	enum
	{
		MAX_EDGES = 40
	};
	cc_scale	scale = {num, den};
	double		b = (double) num / (double) den;
	double		width = fmax(1.0, b / 3.0);
	int64_t		edges[MAX_EDGES];
	int			nedges = 0;
	long		counts[MAX_EDGES + 1] = {0};
	double		prob[MAX_EDGES + 1];
	double		sum = 0.0;
	double		sumsq = 0.0;
	double		stat;

	for (int j = -18; j <= 18; j++)
	{
		int64_t		e = (int64_t) llround(j * width);

		/* keep bins whose expectation is at least 20 */
		if ((nedges == 0 || e > edges[nedges - 1]) &&
			fmin(dlap_cdf_below(b, e), 1.0 - dlap_cdf_below(b, e)) * n >= 20.0)
			edges[nedges++] = e;
	}
	for (int i = 0; i <= nedges; i++)
	{
		double		lo = i == 0 ? 0.0 : dlap_cdf_below(b, edges[i - 1]);
		double		hi = i == nedges ? 1.0 : dlap_cdf_below(b, edges[i]);

		prob[i] = hi - lo;
	}
	for (long k = 0; k < n; k++)
	{
		int64_t		x = cc_discrete_laplace(&r->rng, scale);
		int			bin = 0;

		while (bin < nedges && x >= edges[bin])
			bin++;
		counts[bin]++;
		sum += (double) x;
		sumsq += (double) x * (double) x;
	}
	stat = chi_square(counts, prob, nedges + 1, n);
	CHECK(stat < chi2_threshold(nedges), "scale %llu/%llu: chi2 %g over %d bins (threshold %g)",
		  (unsigned long long) num, (unsigned long long) den, stat, nedges + 1,
		  chi2_threshold(nedges));
	CHECK(variance_consistent(sumsq / n - (sum / n) * (sum / n), dlap_var(b), dlap_kappa4(b), n),
		  "scale %g: variance %g, expected %g", b, sumsq / n, dlap_var(b));
	CHECK(fabs(cc_dlap_variance(scale) - dlap_var(b)) <= 1e-9 * dlap_var(b),
		  "cc_dlap_variance(%g) = %g, expected %g", b, cc_dlap_variance(scale), dlap_var(b));
}

/*
 * Draws of two scales in turn, so that the factor the sampler keeps for the
 * last scale changes at every draw: each scale's variance must be its own.
 */
static void
test_alternating_scales(seeded_rng *r)
{
	const cc_scale scales[2] = {{5, 1}, {997, 3}};
	const long	n = 400000;
	double		sumsq[2] = {0.0, 0.0};

	for (long k = 0; k < 2 * n; k++)
	{
		double		x = (double) cc_discrete_laplace(&r->rng, scales[k & 1]);

		sumsq[k & 1] += x * x;
	}
	for (int i = 0; i < 2; i++)
	{
		double		b = (double) scales[i].num / (double) scales[i].den;

		CHECK(variance_consistent(sumsq[i] / n, dlap_var(b), dlap_kappa4(b), n),
			  "alternating scales, scale %g: variance %g, expected %g", b, sumsq[i] / n,
			  dlap_var(b));
	}
}

static void
test_discrete_laplace(void)
{
	seeded_rng r;

	seeded_rng_init(&r, 3);
	check_dlap_distribution(&r, 1, 1, 400000);
	check_dlap_distribution(&r, 2, 1, 400000);	/* Bernoulli(0/2) and (1/2) */
	check_dlap_distribution(&r, 1, 3, 400000);	/* mostly zeros */
	check_dlap_distribution(&r, 3, 2, 400000);
	check_dlap_distribution(&r, 11, 1, 400000);
	check_dlap_distribution(&r, 1000000007, 1000, 400000);	/* large t and s */
	/* the last t whose two draws are one uniform, and the first that is not */
	check_dlap_distribution(&r, 1290, 1, 400000);
	check_dlap_distribution(&r, 1290, 7, 400000);
	check_dlap_distribution(&r, 1291, 1, 400000);
	test_alternating_scales(&r);
}

static void
test_scale_make(void)
{
	cc_scale	s;

	/* 11 / 0.5 = 22, reduced */
	CHECK(cc_scale_make(11, 500000000, 1000000000, &s) && s.num == 22 && s.den == 1,
		  "11/0.5 gave %llu/%llu", (unsigned long long) s.num, (unsigned long long) s.den);
	/* 3 / 0.7 = 30/7 */
	CHECK(cc_scale_make(3, 700000000, 1000000000, &s) && s.num == 30 && s.den == 7,
		  "3/0.7 gave %llu/%llu", (unsigned long long) s.num, (unsigned long long) s.den);
	CHECK(!cc_scale_make(UINT64_MAX / 2, 1000, 1000000000, &s), "overflow accepted");
	CHECK(!cc_scale_make(2000000000, 1000, 1000000000, &s), "scale 2e15 accepted");
	CHECK(cc_scale_make(1000000000, 1000, 1000000000, &s), "scale 1e15 refused");
	CHECK(cc_scale_make(1000000000, 1000000, 1000000000, &s), "scale 1e12 refused");
}

void
test_noise(void)
{
	test_uniform();
	test_bernoulli_exp();
	test_discrete_laplace();
	test_scale_make();
}
