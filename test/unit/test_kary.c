/*
 * test_kary.c
 *		The k-ary tree with negative digits (mech_kary.c): its digits and
 *		their counts against brute force, every release against a replay on
 *		the blocks kept apart, the decomposition the privacy argument rests
 *		on, the exact variance against its closed form and against 2 * 10^4
 *		streams, the simultaneous bound, the state's size and checks, the
 *		accuracy targets, and an empirical privacy audit with an adaptive
 *		stream.
 *
 * The statistical checks here use KARY_Z, seven standard deviations (a
 * false alarm of at most 2.6e-12 each), or a binomial tail of 1e-12; 17 of
 * them (9 on the variance, 4 on the bound, 4 in the audit) add under 1e-10
 * to the budget of unit.h's UNIT_Z.
 */
#include "unit.h"
#include "mechanism_int.h"
#include "choice.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KARY_Z 7.0

static cc_params
kary_params(double epsilon, int64_t horizon, int64_t arity)
{
	cc_params	p = params_for(CC_KARY, epsilon, horizon);

	p.has_block = arity > 0;
	p.block = arity;
	return p;
}

static int64_t
ipow(int64_t k, int64_t n)
{
	int64_t		r = 1;

	while (n-- > 0)
		r *= k;
	return r;
}

/* sum |d_j| of t, from cc_kary_digits() (checked by test_digits) */
static int64_t
draws_of(int64_t k, int64_t h, int64_t t)
{
	int64_t		d[CC_KARY_MAX_LEVELS];
	int64_t		s = 0;

	cc_kary_digits(k, h, t, d);
	for (int64_t j = 0; j < h; j++)
		s += llabs(d[j]);
	return s;
}

/* Digits: t = sum d_j k^j with |d_j| <= c, h the fewest levels that do. */
static void
test_digits(void)
{
	static const int64_t arities[] = {3, 5, 7, 13, 19};

	for (size_t a = 0; a < sizeof(arities) / sizeof(arities[0]); a++)
	{
		int64_t		k = arities[a];
		int64_t		c = (k - 1) / 2;
		int64_t		h = cc_kary_levels(k, 3000);
		int			bad = 0;

		CHECK((ipow(k, h) - 1) / 2 >= 3000 && (ipow(k, h - 1) - 1) / 2 < 3000,
			  "levels of k=%lld: %lld", (long long) k, (long long) h);
		for (int64_t t = 0; t <= 3000; t++)
		{
			int64_t		d[CC_KARY_MAX_LEVELS];
			int64_t		value = 0;

			cc_kary_digits(k, h, t, d);
			for (int64_t j = h - 1; j >= 0; j--)
			{
				value = value * k + d[j];
				bad += llabs(d[j]) > c;
			}
			bad += value != t;
		}
		CHECK(bad == 0, "k=%lld: %d bad digits", (long long) k, bad);
	}
}

/* The counts of steps by draws, against a walk over every step. */
static void
test_counts(void)
{
	static const int64_t arities[] = {3, 5, 9, 13, 19, 33, 63};
	static const int64_t horizons[] = {1, 2, 3, 4, 7, 40, 100, 1000, 2187, 3000, 9841};

	for (size_t a = 0; a < sizeof(arities) / sizeof(arities[0]); a++)
		for (size_t i = 0; i < sizeof(horizons) / sizeof(horizons[0]); i++)
		{
			int64_t		k = arities[a];
			int64_t		T = horizons[i];
			int64_t		h = cc_kary_levels(k, T);
			int64_t		counts[CC_KARY_MAX_DRAWS + 1];
			int64_t		brute[CC_KARY_MAX_DRAWS + 1] = {0};
			int64_t		top = cc_kary_draw_counts(k, T, counts);
			int			bad = 0;

			for (int64_t t = 1; t <= T; t++)
				brute[draws_of(k, h, t)]++;
			for (int64_t s = 0; s <= top; s++)
				bad += counts[s] != brute[s];
			CHECK(top == h * (k - 1) / 2 && bad == 0, "counts k=%lld T=%lld: %d differ",
				  (long long) k, (long long) T, bad);
		}
}

/*
 * The reference: block g of level j covers (g k^j, (g + 1) k^j]; entering
 * the level-(j + 1) interval a at t = a k^(j+1) + 1 draws its k blocks
 * g = a k .. a k + k - 1 in order, levels from the lowest, from a copy of
 * the random source.  The release at t walks t's digits from the top:
 * d_j > 0 adds the d_j blocks after the prefix p, d_j < 0 subtracts the
 * |d_j| before it.  The walk also marks every block's steps with its sign:
 * they must sum to 1 on 1 .. t and 0 elsewhere (the decomposition R B = S
 * of docs/kary-privacy.md), and each block must lie in t's interval of the
 * level above (what the state keeps).
 */
typedef struct reference
{
	int64_t		k;
	int64_t		h;
	int64_t		span;			/* k^h: no block reaches past it */
	int64_t    *noise[CC_KARY_MAX_LEVELS];	/* by block */
	int		   *cover;			/* by step, 1 .. span */
	int			bad_cover;
	int			bad_place;
} reference;

static void
reference_draw(reference *r, int64_t t, cc_rng *rng, cc_scale scale)
{
	for (int64_t j = 0; j < r->h; j++)
	{
		int64_t		width = ipow(r->k, j + 1);

		if ((t - 1) % width != 0)
			break;
		for (int64_t g = (t - 1) / width * r->k; g < (t - 1) / width * r->k + r->k; g++)
			r->noise[j][g] = cc_discrete_laplace(rng, scale);
	}
}

static int64_t
reference_noise(reference *r, int64_t t)
{
	int64_t		d[CC_KARY_MAX_LEVELS];
	int64_t		p = 0;
	int64_t		noise = 0;

	memset(r->cover, 0, sizeof(int) * (size_t) (r->span + 1));
	cc_kary_digits(r->k, r->h, t, d);
	for (int64_t j = r->h - 1; j >= 0; j--)
	{
		int64_t		size = ipow(r->k, j);
		int64_t		sign = d[j] > 0 ? 1 : -1;
		int64_t		first = d[j] > 0 ? p / size : p / size + d[j];

		for (int64_t g = first; g < first + llabs(d[j]); g++)
		{
			/* the level above's interval that holds t */
			r->bad_place += g / r->k != (t - 1) / (size * r->k);
			noise += sign * r->noise[j][g];
			for (int64_t s = g * size + 1; s <= (g + 1) * size; s++)
				r->cover[s] += (int) sign;
		}
		p += d[j] * size;
	}
	for (int64_t s = 1; s <= r->span; s++)
		r->bad_cover += r->cover[s] != (s <= t);
	return noise;
}

static void
check_replay(int64_t k, int64_t T, uint64_t seed)
{
	cc_params	p = kary_params(0.8, T, k);
	cc_state   *s = new_state(&p);
	seeded_rng	mech_rng;
	seeded_rng	ref_rng;
	seeded_rng	items_rng;
	reference	r = {.k = k, .h = cc_kary_levels(k, T)};
	int64_t		exact = 0;
	int			bad = 0;
	int			invalid = 0;

	r.span = ipow(k, r.h);
	for (int64_t j = 0; j < r.h; j++)
		r.noise[j] = calloc((size_t) (r.span / ipow(k, j) + k), sizeof(int64_t));
	r.cover = malloc(sizeof(int) * (size_t) (r.span + 1));
	seeded_rng_init(&mech_rng, seed);
	seeded_rng_init(&ref_rng, seed);
	seeded_rng_init(&items_rng, seed + 1);
	for (int64_t t = 1; t <= T; t++)
	{
		int64_t		x = (int64_t) (cc_next_word(&items_rng.rng) % 4);
		cc_release	rel;

		cc_push(s, x, &mech_rng.rng);
		cc_read(s, &rel);
		exact += x;
		reference_draw(&r, t, &ref_rng.rng, s->scale);
		bad += rel.noisy != exact + reference_noise(&r, t);
		invalid += !cc_state_valid(s, cc_state_bytes(s));
	}
	CHECK(bad == 0 && invalid == 0, "replay k=%lld T=%lld: %d releases differ, %d states invalid",
		  (long long) k, (long long) T, bad, invalid);
	CHECK(r.bad_cover == 0, "k=%lld T=%lld: %d steps of the blocks' signed cover are not 1 .. t",
		  (long long) k, (long long) T, r.bad_cover);
	CHECK(r.bad_place == 0, "k=%lld T=%lld: %d blocks outside t's interval of the level above",
		  (long long) k, (long long) T, r.bad_place);
	for (int64_t j = 0; j < r.h; j++)
		free(r.noise[j]);
	free(r.cover);
	free(s);
}

/*
 * The variance reported: sum |d_j| draws of scale h / epsilon, exactly, and
 * within a factor 1 - 1/(12 b^2) of the closed form 2 h^2 sum |d_j| /
 * epsilon^2 (the discrete Laplace's variance is 2 b^2 - 1/6 + O(1/b^2)).
 */
static void
test_exact_variance(void)
{
	cc_params	p = kary_params(1.0, 1000, 13);
	cc_state   *s = new_state(&p);
	seeded_rng	r;
	int			bad = 0;
	double		lowest = 2.0;

	seeded_rng_init(&r, 77);
	for (int64_t t = 1; t <= 1000; t++)
	{
		cc_release	rel;
		int64_t		draws = draws_of(13, 3, t);
		double		closed = 2.0 * 9.0 * (double) draws;

		cc_push(s, 1, &r.rng);
		cc_read(s, &rel);
		bad += fabs(rel.variance - (double) draws * dlap_var(3.0)) > 1e-9 * rel.variance;
		if (draws > 0 && rel.variance / closed < lowest)
			lowest = rel.variance / closed;
	}
	CHECK(bad == 0, "%d steps report another variance than their draws'", bad);
	CHECK(lowest <= 1.0 && lowest >= 1.0 - 1.0 / (12.0 * 9.0) * 1.01,
		  "variance over closed form down to %.6f", lowest);
	free(s);
}

/*
 * 2 * 10^4 streams of zeros at T = 1000, k = 13: at chosen steps (the one
 * of most draws among them), each sample variance within KARY_Z of the
 * exact one; the kurtosis of a sum of D draws is D times one draw's.  The
 * mean of the sample variances over all steps against the reported mean.
 */
#define STREAMS 20000
static const int64_t kary_steps[] = {1, 6, 7, 13, 500, 777, 939, 1000};

#define NSTEPS (sizeof(kary_steps) / sizeof(kary_steps[0]))

static void
test_empirical_variance(void)
{
	cc_params	p = kary_params(1.0, 1000, 13);
	cc_state   *s = new_state(&p);
	seeded_rng	r;
	double		sq[NSTEPS] = {0};
	double		var[NSTEPS];
	double		all_sq = 0.0;
	double		all_var = 0.0;

	seeded_rng_init(&r, 1313);
	for (int n = 0; n < STREAMS; n++)
	{
		size_t		next = 0;

		cc_state_init(s, &p);
		for (int64_t t = 1; t <= 1000; t++)
		{
			cc_release	rel;

			cc_push(s, 0, &r.rng);
			cc_read(s, &rel);
			all_sq += (double) rel.noisy * (double) rel.noisy;
			if (n == 0)
				all_var += rel.variance;
			if (next < NSTEPS && kary_steps[next] == t)
			{
				sq[next] += (double) rel.noisy * (double) rel.noisy;
				var[next++] = rel.variance;
			}
		}
	}
	for (size_t i = 0; i < NSTEPS; i++)
	{
		double		draws = var[i] / dlap_var(3.0);
		double		sd = sqrt((draws * dlap_kappa4(3.0) + 2.0 * var[i] * var[i]) / STREAMS);

		/* the mean is known to be 0: the sum of squares over n */
		CHECK(fabs(sq[i] / STREAMS - var[i]) <= KARY_Z * sd,
			  "t=%lld: sample variance %.2f, exact %.2f (sd %.2f)",
			  (long long) kary_steps[i], sq[i] / STREAMS, var[i], sd);
	}
	/* over all steps: the steps' squares are correlated; 5% is > 20 sd */
	CHECK(fabs(all_sq / STREAMS / all_var - 1.0) < 0.05, "mean sample variance %.2f, reported %.2f",
		  all_sq / STREAMS / 1000.0, all_var / 1000.0);
	printf("kary k=13 T=1000: mean sample variance over %d streams %.2f, reported %.2f\n",
		   STREAMS, all_sq / STREAMS / 1000.0, all_var / 1000.0);
	free(s);
}

/* P(Binomial(n, prob) >= f) < 1e-12 from this f on */
static int
binomial_alarm(int n, double prob)
{
	double		tail = 0.0;

	for (int f = n; f >= 0; f--)
	{
		tail += exp(lgamma(n + 1.0) - lgamma(f + 1.0) - lgamma(n - f + 1.0) +
					f * log(prob) + (n - f) * log1p(-prob));
		if (tail >= 1e-12)
			return f + 1;
	}
	return 0;
}

/*
 * The bound holds for all steps at once: over 2000 streams of T steps, the
 * streams with some step beyond it number fewer than a binomial of beta
 * reaches but once in 10^12; and 0.6 of it is exceeded more often than that
 * (the bound is not loose).
 */
static void
check_coverage(int64_t T, int64_t arity, uint64_t seed)
{
	cc_params	p = kary_params(1.0, T, arity);
	cc_state   *s = new_state(&p);
	seeded_rng	r;
	int			over = 0;
	int			over_small = 0;
	int			alarm = binomial_alarm(2000, p.beta);

	seeded_rng_init(&r, seed);
	for (int n = 0; n < 2000; n++)
	{
		bool		out = false;
		bool		out_small = false;

		cc_state_init(s, &p);
		for (int64_t t = 1; t <= T; t++)
		{
			cc_release	rel;

			cc_push(s, 0, &r.rng);
			cc_read(s, &rel);
			out |= fabs((double) rel.noisy) > rel.bound;
			out_small |= fabs((double) rel.noisy) > 0.6 * rel.bound;
		}
		over += out;
		over_small += out_small;
	}
	CHECK(over < alarm, "T=%lld k=%lld: %d of 2000 streams beyond the bound",
		  (long long) T, (long long) p.block, over);
	CHECK(over_small >= alarm, "T=%lld k=%lld: 0.6 x the bound exceeded by %d streams only",
		  (long long) T, (long long) p.block, over_small);
	free(s);
}

/*
 * The state: within CC_STATE_MAX_BYTES for the choice at every horizon 2^i
 * and for every k a caller may give; refused when even, below 3 or too
 * large; damaged digits, shares or noise refused when read back.
 */
static void
test_state(void)
{
	cc_params	p;
	cc_state   *s;
	seeded_rng	r;
	int			too_big = 0;
	unsigned char copy[CC_STATE_MAX_BYTES];
	size_t		len;

	for (int i = 0; i <= 62; i++)
	{
		p = kary_params(1.0, INT64_C(1) << i, 0);
		too_big += cc_params_prepare(&p) != CC_OK || cc_state_size(&p) > CC_STATE_MAX_BYTES ||
			p.block % 2 == 0 || p.block < 3;
	}
	CHECK(too_big == 0, "%d horizons without a fitting k", too_big);
	p = kary_params(1.0, INT64_C(1) << 62, 9);
	CHECK(cc_params_prepare(&p) == CC_OK && cc_state_size(&p) <= CC_STATE_MAX_BYTES,
		  "k=9 at 2^62: %zu bytes", cc_state_size(&p));
	p = kary_params(1.0, INT64_C(1) << 62, 11);
	CHECK(cc_params_prepare(&p) == CC_BAD_BLOCK, "k=11 at 2^62 does not fit");
	p = kary_params(1.0, 1000, 4);
	CHECK(cc_params_prepare(&p) == CC_BAD_BLOCK, "even k");
	p.block = 1;
	CHECK(cc_params_prepare(&p) == CC_BAD_BLOCK, "k=1");
	p.block = -3;
	CHECK(cc_params_prepare(&p) == CC_BAD_BLOCK, "k=-3");
	p.block = 255;
	CHECK(cc_params_prepare(&p) == CC_BAD_BLOCK, "k=255");
	p = kary_params(1.0, 0, 0);
	CHECK(cc_params_prepare(&p) == CC_NEED_HORIZON, "kary without a horizon");
	p = kary_params(1.0, 1 << 20, 0);
	s = new_state(&p);
	CHECK(p.block == 19 && cc_state_size(&p) == 1000, "2^20: k=%lld, %zu bytes",
		  (long long) p.block, cc_state_size(&p));
	seeded_rng_init(&r, 5);
	for (int t = 0; t < 400; t++)
		cc_push(s, 1, &r.rng);
	len = cc_state_bytes(s);
	memcpy(copy, s, len);
	CHECK(cc_state_valid(copy, len), "a state read back");
	/* the part: arity, levels, noise, draws, then level 0's digit, share, prefix */
	for (size_t word = 0; word < 7; word++)
	{
		int64_t		v;

		memcpy(copy, s, len);
		memcpy(&v, copy + sizeof(cc_state) + word * 8, 8);
		v += 1;
		memcpy(copy + sizeof(cc_state) + word * 8, &v, 8);
		CHECK(!cc_state_valid(copy, len), "word %zu of the part damaged", word);
	}
	free(s);
}

/*
 * The targets at epsilon 1: the mean variance of the k chosen at most 1.02
 * times its closed form 2 h^2 mean(sum |d_j|) and at most 180, 455 and 1205
 * at T = 1000, 2^14 and 2^20, and "auto" picks kary there.
 */
static void
test_targets(void)
{
	static const int64_t horizons[] = {1000, 1 << 14, 1 << 20};
	static const double targets[] = {180.0, 455.0, 1205.0};

	for (int i = 0; i < 3; i++)
	{
		cc_params	p = kary_params(1.0, horizons[i], 0);
		cc_params	a = params_for(CC_BINARY, 1.0, horizons[i]);
		double		mean;
		double		worst;
		double		sum;
		int64_t		most;
		int64_t		h;

		cc_params_prepare(&p);
		h = cc_kary_levels(p.block, p.horizon);
		cc_variance_over_horizon(&p, &mean, &worst);
		cc_kary_draws_over_horizon(p.block, p.horizon, &sum, &most);
		CHECK(mean <= targets[i] && mean <= 1.02 * 2.0 * h * h * sum / (double) p.horizon,
			  "T=%lld: mean variance %.2f", (long long) p.horizon, mean);
		CHECK(cc_choose(&a, CC_OBJECTIVE_MEAN) == CC_OK && a.kind == CC_KARY && a.block == p.block,
			  "auto at T=%lld: %s", (long long) p.horizon, cc_kind_name(a.kind));
		printf("kary T=%-8lld k=%-2lld h=%lld: mean variance %.2f (closed form %.2f), worst %.1f, state %zu bytes\n",
			   (long long) p.horizon, (long long) p.block, (long long) h, mean,
			   2.0 * h * h * sum / (double) p.horizon, worst, cc_state_size(&p));
	}
}

/*
 * The audit (docs/kary-privacy.md).  T = 4, k = 3: h = 2 levels, scale 2 /
 * epsilon.  D and D' differ at step 1 only (0 or 1); the stream after it is
 * adaptive: x_2 = 3 when y_1 >= 1, else 0, x_3 = x_4 = 0.  Step 1 lies in
 * block [1] and in block [1, 3], and y_1 = x_1 + z_[1], y_3 = x_1 + x_2 +
 * x_3 + z_[1,3]: event `up`, y_1 >= 1 and y_3 - x_2(y_1) >= 1, has
 * probability ratio exactly e^epsilon between D' and D, the largest any
 * event may have; `down`, y_1 <= 0 and y_3 - x_2(y_1) <= 0, the same from D
 * to D'.  Neither may exceed e^epsilon beyond sampling error, and a
 * mechanism drawing at half its scale (doctored after its state is made)
 * must be caught.
 */
#define AUDIT_RUNS 200000

static void
audit_run(const cc_params *p, int64_t first, bool doctored, cc_state *s, cc_rng *rng,
		  bool *up, bool *down)
{
	cc_release	y1,
				y3;
	int64_t		x2;

	cc_state_init(s, p);
	if (doctored)
		s->scale.den *= 2;
	cc_push(s, first, rng);
	cc_read(s, &y1);
	x2 = y1.noisy >= 1 ? 3 : 0;
	cc_push(s, x2, rng);
	cc_push(s, 0, rng);
	cc_read(s, &y3);
	cc_push(s, 0, rng);
	*up = y1.noisy >= 1 && y3.noisy - x2 >= 1;
	*down = y1.noisy <= 0 && y3.noisy - x2 <= 0;
}

/* x - e^eps y, in standard deviations of the two binomial counts */
static double
excess(long x, long y, double epsilon)
{
	double		n = AUDIT_RUNS;
	double		w = exp(epsilon);
	double		sd = sqrt(x * (1.0 - x / n) + w * w * y * (1.0 - y / n));

	return (x - w * y) / (sd > 0.0 ? sd : 1.0);
}

static void
check_audit(bool doctored)
{
	cc_params	p = kary_params(1.0, 4, 3);
	cc_state   *s = new_state(&p);
	seeded_rng	r;
	long		up[2] = {0, 0};
	long		down[2] = {0, 0};

	seeded_rng_init(&r, doctored ? 99 : 98);
	for (int world = 0; world < 2; world++)
		for (int n = 0; n < AUDIT_RUNS; n++)
		{
			bool		u,
						d;

			audit_run(&p, world, doctored, s, &r.rng, &u, &d);
			up[world] += u;
			down[world] += d;
		}
	if (doctored)
		CHECK(excess(up[1], up[0], 1.0) > KARY_Z,
			  "half the noise not caught: up %ld against %ld", up[1], up[0]);
	else
	{
		CHECK(excess(up[1], up[0], 1.0) <= KARY_Z, "up: %ld in D', %ld in D (%.2f sd)",
			  up[1], up[0], excess(up[1], up[0], 1.0));
		CHECK(excess(down[0], down[1], 1.0) <= KARY_Z, "down: %ld in D, %ld in D' (%.2f sd)",
			  down[0], down[1], excess(down[0], down[1], 1.0));
		/* tight: the ratio is e^epsilon, not less */
		CHECK(excess(up[1], up[0], 0.9) > KARY_Z, "up's ratio %.3f is not near e",
			  (double) up[1] / (double) up[0]);
		printf("kary audit: P(up) %ld/%ld against %ld/%ld, ratio %.3f (e = 2.718)\n",
			   up[1], (long) AUDIT_RUNS, up[0], (long) AUDIT_RUNS,
			   (double) up[1] / (double) up[0]);
	}
	free(s);
}

void
test_kary(void)
{
	test_digits();
	test_counts();
	check_replay(3, 250, 1);
	check_replay(5, 700, 2);
	check_replay(13, 1000, 3);
	check_replay(19, 400, 4);
	test_exact_variance();
	test_empirical_variance();
	check_coverage(1000, 13, 8);
	check_coverage(300, 3, 9);
	test_state();
	test_targets();
	check_audit(false);
	check_audit(true);
}
