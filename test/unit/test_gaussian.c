/*
 * test_gaussian.c
 *		The discrete Gaussian sampler against its exact distribution.
 *
 * Statistical checks here: 3 at each of 7 scales (chi-square against the
 * exact pmf, empirical variance, symmetry), 2 wrong scales that the
 * chi-square must catch, 4 chi-squares of coarse tables and 1 wrong scale,
 * 4 Bernoulli proportions and 1 run of zeros: 33 of the suite's checks at
 * 2e-9 each (see unit.h), under 7e-8 together.
 */
#include "unit.h"

#include "exp_bounds.h"
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

/* n draws of sigma2, from table when it is not NULL */
static dg_sample
draw_and_bin(seeded_rng *r, cc_scale sigma2, const cc_dgauss_table *table,
			 const dg_bins *b, long n)
{
	long		counts[MAX_EDGES + 1] = {0};
	double		sum = 0.0;
	double		sumsq = 0.0;
	dg_sample	s = {0};

	for (long k = 0; k < n; k++)
	{
		int64_t		x = 0;
		int			bin = 0;

		if (table != NULL)
			x = cc_dgauss_table_draw(&r->rng, table);
		else if (cc_dgauss_draw(&r->rng, sigma2, &x) != CC_OK)
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
	s = draw_and_bin(r, sigma2, NULL, &b, n);
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
		dg_sample	w = draw_and_bin(r, (cc_scale) {wrong_num, wrong_den}, NULL, &b, n);

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

/*
 * A table of units of 2^-unit_bits against the exact law (one chi-square):
 * with 2 bits a bucket has a few units, so that most draws end in a
 * comparison with exp_bounds.c's bounds or in the tail, which real tables
 * (56 bits) reach once in 2^50 draws.  Its scale must be caught as well.
 */
static void
check_table(seeded_rng *r, uint64_t num, uint64_t den, int unit_bits, long n,
			uint64_t wrong_num, uint64_t wrong_den)
{
	cc_dgauss_table table;
	dg_law		law;
	dg_bins		b;
	dg_sample	s;
	double		threshold;

	CHECK(cc_dgauss_table_build((cc_scale) {num, den}, unit_bits, &table) == CC_OK,
		  "table of %llu/%llu refused", (unsigned long long) num, (unsigned long long) den);
	law_init(&law, (double) num / (double) den);
	bins_init(&b, &law, n);
	threshold = chi2_threshold(b.nedges);
	s = draw_and_bin(r, table.sigma2, &table, &b, n);
	CHECK(s.chi2 < threshold, "table of %llu/%llu, %d bits: chi2 %g over %d bins (threshold %g)",
		  (unsigned long long) num, (unsigned long long) den, unit_bits, s.chi2,
		  b.nedges + 1, threshold);
	if (wrong_num != 0)
	{
		cc_dgauss_table wrong;
		dg_sample	w;

		cc_dgauss_table_build((cc_scale) {wrong_num, wrong_den}, unit_bits, &wrong);
		w = draw_and_bin(r, wrong.sigma2, &wrong, &b, n);
		CHECK(w.chi2 >= threshold, "table of %llu/%llu passes as %llu/%llu: chi2 %g",
			  (unsigned long long) wrong_num, (unsigned long long) wrong_den,
			  (unsigned long long) num, (unsigned long long) den, w.chi2);
	}
	printf("dgauss table sigma^2 %-10.6g %d-bit units, %2d buckets, scaled by 2^%d: "
		   "chi2 %6.1f over %2d bins (threshold %5.1f)\n", law.s2, unit_bits, table.entries,
		   table.scale_bits, s.chi2, b.nedges + 1, threshold);
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

	/*
	 * Coarse tables: sigma^2 below 1, where the tail starts at 2; 21/2, a
	 * gaussian_honaker's at T = 10^6 and rho 1; 64, the largest unscaled
	 * (its N set by the tail's halving); 1000, scaled by 4.
	 */
	check_table(&r, 1, 3, 2, n, 0, 0);
	check_table(&r, 21, 2, 2, n, 0, 0);
	check_table(&r, 64, 1, 3, n, 0, 0);
	check_table(&r, 1000, 1, 2, n, 1100, 1);

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

/* e^-1 to 256 bits (bc: scale=80; obase=16; e(-1)), most significant first */
static const uint64_t EXP_MINUS_ONE[4] = {
	UINT64_C(0x5E2D58D8B3BCDF1A), UINT64_C(0xBADEC7829054F90D),
	UINT64_C(0xDA9805AAB56C7733), UINT64_C(0x3024B9D0A507DAED)
};

/* x <= y over n words, least significant first */
static bool
words_at_most(const uint64_t *x, const uint64_t *y, int n)
{
	for (int i = n - 1; i >= 0; i--)
		if (x[i] != y[i])
			return x[i] < y[i];
	return true;
}

/* hi - lo in units of the last place, or UINT64_MAX if that is 2^64 or more */
static uint64_t
width_of(const uint64_t *lo, const uint64_t *hi, int n)
{
	uint64_t	borrow = 0;
	uint64_t	low = 0;

	for (int i = 0; i < n; i++)
	{
		unsigned __int128 d = (unsigned __int128) hi[i] - lo[i] - borrow;

		if (i == 0)
			low = (uint64_t) d;
		else if ((uint64_t) d != 0)
			return UINT64_MAX;
		borrow = (uint64_t) (d >> 64) & 1;
	}
	return borrow ? UINT64_MAX : low;
}

/* floor of x y for fixed-point x, y of 4 fraction limbs and 1 integer word */
static void
product_floor(const uint64_t *x, const uint64_t *y, uint64_t *out)
{
	uint64_t	p[10] = {0};

	for (int i = 0; i < 5; i++)
	{
		uint64_t	carry = 0;

		for (int k = 0; k < 5; k++)
		{
			unsigned __int128 t = (unsigned __int128) x[i] * y[k] + p[i + k] + carry;

			p[i + k] = (uint64_t) t;
			carry = (uint64_t) (t >> 64);
		}
		p[i + 5] = carry;
	}
	for (int i = 0; i < 5; i++)
		out[i] = p[i + 4];
}

/*
 * Bounds on exp(-num/den): they enclose e^-1's digits, long double's exp,
 * each other across precisions and the product of two exponentials, and
 * are at most 512 units apart.
 */
static void
test_exp_bounds(void)
{
	uint64_t	lo[CC_EXP_MAX_LIMBS + 1];
	uint64_t	hi[CC_EXP_MAX_LIMBS + 1];
	uint64_t	e[4];
	int			bad = 0;
	seeded_rng	r;

	/* e^-1 at 3 limbs against its 192 first bits (and the next 64) */
	cc_exp_bounds(1, 1, 0, 3, lo, hi);
	for (int i = 0; i < 3; i++)
		e[2 - i] = EXP_MINUS_ONE[i];
	e[3] = 0;
	CHECK(words_at_most(lo, e, 4) && !words_at_most(hi, e, 4) && width_of(lo, hi, 4) <= 512,
		  "e^-1 bounds %016llx..%016llx against %016llx", (unsigned long long) lo[0],
		  (unsigned long long) hi[0], (unsigned long long) e[0]);
	/* exp(0) is exact: 2^shift */
	cc_exp_bounds(0, 7, 5, 2, lo, hi);
	CHECK(lo[2] == 32 && hi[2] == 32 && lo[0] == 0 && hi[1] == 0, "exp(0) 2^5 not exact");

	seeded_rng_init(&r, 64);
	for (int c = 0; c < 3000; c++)
	{
		uint64_t	den = 1 + cc_next_word(&r.rng) % (c % 3 == 0 ? 1000 : UINT64_C(1) << 62);
		unsigned __int128 num = (unsigned __int128) den * (cc_next_word(&r.rng) % 50) +
			cc_next_word(&r.rng) % den;
		int			shift = c % 4 == 0 ? 0 : (int) (cc_next_word(&r.rng) % 64);
		long double v = ldexpl(expl(-(long double) num / (long double) den), shift);
		long double l;
		long double h;
		uint64_t	lo8[CC_EXP_MAX_LIMBS + 1];
		uint64_t	hi8[CC_EXP_MAX_LIMBS + 1];

		/*
		 * one limb: within 2^-55 of long double's exp, whose argument is
		 * rounded to 64 bits (2^-58 relatively for num/den up to 50)
		 */
		cc_exp_bounds(num, den, shift, 1, lo, hi);
		l = (long double) lo[1] + ldexpl((long double) lo[0], -64);
		h = (long double) hi[1] + ldexpl((long double) hi[0], -64);
		bad += !(l <= v * (1 + 0x1p-55L) + 0x1p-62L && h >= v * (1 - 0x1p-55L) - 0x1p-62L &&
				 width_of(lo, hi, 2) <= 512);
		/* eight limbs, truncated to two, inside two limbs' bounds */
		cc_exp_bounds(num, den, shift, 2, lo, hi);
		cc_exp_bounds(num, den, shift, 8, lo8, hi8);
		bad += !(words_at_most(lo, lo8 + 6, 3) && words_at_most(hi8 + 6, hi, 3) &&
				 width_of(lo8, hi8, 9) <= 512);
	}
	CHECK(bad == 0, "%d cases of exp bounds wrong", bad);

	/* exp(-a/b) exp(-c/b) against exp(-(a + c)/b) at 4 limbs: the bounds meet */
	bad = 0;
	for (int c = 0; c < 1000; c++)
	{
		uint64_t	den = 1 + cc_next_word(&r.rng) % (UINT64_C(1) << 40);
		unsigned __int128 a = cc_next_word(&r.rng) % (den * UINT64_C(20));
		unsigned __int128 b = cc_next_word(&r.rng) % (den * UINT64_C(20));
		uint64_t	alo[5],
					ahi[5],
					blo[5],
					bhi[5],
					slo[5],
					shi[5],
					plo[5],
					phi[5];

		cc_exp_bounds(a, den, 0, 4, alo, ahi);
		cc_exp_bounds(b, den, 0, 4, blo, bhi);
		cc_exp_bounds(a + b, den, 0, 4, slo, shi);
		product_floor(alo, blo, plo);
		product_floor(ahi, bhi, phi);
		phi[0]++;				/* a ceiling; phi[0] is far from overflowing */
		bad += !(words_at_most(plo, shi, 5) && words_at_most(slo, phi, 5));
	}
	CHECK(bad == 0, "%d products of exp bounds disagree", bad);
}

/* a source that yields the words given, then fails the test */
static void
scripted_refill(cc_rng *rng)
{
	(void) rng;
	fprintf(stderr, "scripted source exhausted\n");
	exit(1);
}

/*
 * offset + U < exp(-num/den) 2^shift: its frequency (4 statistical checks),
 * and words that agree with e^-1 for 64 and 128 bits, which only 2 and 4
 * limbs settle.
 */
static void
test_uniform_below_exp(void)
{
	static const struct
	{
		uint64_t	offset;
		uint64_t	num;
		uint64_t	den;
		int			shift;
		double		p;
	}			cases[] = {
		{0, 1, 1, 0, 0.36787944117144233},	/* e^-1 */
		{1, 1, 1, 2, 0.47151776468576931},	/* 4 e^-1 - 1 */
		{0, 7, 2, 5, 0.96631626951418999},	/* 32 exp(-3.5) */
		{3, 30, 1000, 2, 0.88178131320841600},	/* 4 exp(-0.03) - 3 */
	};
	seeded_rng	r;
	const long	n = 200000;
	uint64_t	words[8];
	cc_rng		scripted = {words, 0, 0, scripted_refill, NULL, 0, 0};

	seeded_rng_init(&r, 65);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		long		hits = 0;
		double		p = cases[c].p;

		for (long i = 0; i < n; i++)
			hits += cc_uniform_below_exp(&r.rng, cases[c].offset, cases[c].num, cases[c].den,
										 cases[c].shift);
		CHECK(fabs(hits - n * p) <= UNIT_Z * sqrt(n * p * (1 - p)),
			  "uniform below exp case %zu: %ld of %ld, expected %g", c, hits, n, n * p);
	}
	/* certain outcomes: 4 e^-1 - 2 < 0, exp(0) - 0 = 1, exp(0) - 1 = 0 */
	CHECK(!cc_uniform_below_exp(&r.rng, 2, 1, 1, 2) && cc_uniform_below_exp(&r.rng, 0, 0, 1, 0) &&
		  !cc_uniform_below_exp(&r.rng, 1, 0, 1, 0), "certain comparisons wrong");

	/* U = e^-1's first 64 bits, then 0 or all ones: settled at 2 limbs */
	words[0] = EXP_MINUS_ONE[0];
	words[1] = 0;
	scripted.count = 2;
	CHECK(cc_uniform_below_exp(&scripted, 0, 1, 1, 0) && scripted.next == 2,
		  "below e^-1 by its second word: %d words", scripted.next);
	words[1] = UINT64_MAX;
	scripted.next = 0;
	CHECK(!cc_uniform_below_exp(&scripted, 0, 1, 1, 0) && scripted.next == 2,
		  "above e^-1 by its second word: %d words", scripted.next);
	/* its first 128 bits: 4 limbs */
	words[1] = EXP_MINUS_ONE[1];
	words[2] = EXP_MINUS_ONE[2] - 1;
	words[3] = 0;
	scripted.count = 4;
	scripted.next = 0;
	CHECK(cc_uniform_below_exp(&scripted, 0, 1, 1, 0) && scripted.next == 4,
		  "below e^-1 by its third word: %d words", scripted.next);
	words[2] = EXP_MINUS_ONE[2] + 1;
	scripted.next = 0;
	CHECK(!cc_uniform_below_exp(&scripted, 0, 1, 1, 0) && scripted.next == 4,
		  "above e^-1 by its third word: %d words", scripted.next);
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

/* The least i with ends[i] > u, by a plain scan. */
static int
scanned_bucket(const cc_dgauss_table *t, uint64_t u)
{
	int			i = 0;

	while (t->ends[i] <= u)
		i++;
	return i;
}

/*
 * The guided lookup finds the bucket a plain scan finds: at both sides of
 * every bucket's end, at every guide's first unit and at random units, for
 * tables of small and large totals (units of 2 bits to 56), scaled or not.
 */
static void
test_bucket_lookup(void)
{
	static const cc_scale scales[] = {{1, 3}, {21, 2}, {64, 1}, {65, 1}, {1000, 1},
	{UINT64_C(1) << 52, 1}, {1, CC_DGAUSS_MAX_PART}};
	static const int unit_bits[] = {2, 3, 17, CC_DGAUSS_UNIT_BITS};
	static cc_dgauss_table t;
	seeded_rng	r;
	int			bad = 0;
	long		checked = 0;

	seeded_rng_init(&r, 64);
	for (size_t s = 0; s < sizeof(scales) / sizeof(scales[0]); s++)
		for (size_t b = 0; b < sizeof(unit_bits) / sizeof(unit_bits[0]); b++)
		{
			uint64_t	units[3 * CC_DGAUSS_SEARCH + (1 << CC_DGAUSS_GUIDE_BITS) + 1000];
			int			n = 0;

			if (cc_dgauss_table_build(scales[s], unit_bits[b], &t) != CC_OK)
			{
				bad++;
				continue;
			}
			for (int i = 0; i <= t.entries; i++)
			{
				units[n++] = t.ends[i] - 1;
				if (t.ends[i] < t.total)
					units[n++] = t.ends[i];
			}
			for (int k = 0; k < (1 << CC_DGAUSS_GUIDE_BITS); k++)
				if (((uint64_t) k << t.guide_shift) < t.total)
					units[n++] = (uint64_t) k << t.guide_shift;
			for (int k = 0; k < 1000; k++)
				units[n++] = cc_uniform_below(&r.rng, t.total);
			for (int k = 0; k < n; k++, checked++)
				if (cc_dgauss_bucket(&t, units[k]) != scanned_bucket(&t, units[k]))
				{
					if (bad++ < 5)
						fprintf(stderr, "sigma^2 %llu/%llu, %d-bit units: unit %llu in bucket %d, not %d\n",
								(unsigned long long) scales[s].num,
								(unsigned long long) scales[s].den, unit_bits[b],
								(unsigned long long) units[k],
								cc_dgauss_bucket(&t, units[k]), scanned_bucket(&t, units[k]));
				}
		}
	CHECK(bad == 0 && checked > 5000, "%d of %ld units in the wrong bucket", bad, checked);
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
	test_parameters();
	test_variance();
	test_exp_bounds();
	test_uniform_below_exp();
	test_bucket_lookup();
	test_distribution();
}
