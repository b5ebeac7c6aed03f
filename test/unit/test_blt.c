/*
 * test_blt.c
 *		The zCDP parameters, and the BLT mechanism against a factorization
 *		computed apart: its closed forms against sums, its sensitivity
 *		against the materialized matrix, its fixed point against a second
 *		implementation, its figures at T = 2^20.
 *
 * Statistical checks here: 1 (the exact sums at rho = 1000, false alarm
 * below 1e-12).  The variance and bound of blt and gaussian_honaker are
 * checked in test_mechanisms.c and test_bounds.c.
 */
#include "unit.h"
#include "mechanism_int.h"
#include "choice.h"
#include "gaussian.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FRACTION_BITS 24
/* far enough that a read there is in another block of mech_blt.c's */
#define BLOCK_STEPS_APART 1000

static int
entry_for(int64_t horizon)
{
	int			k = 0;

	while ((INT64_C(1) << k) < horizon)
		k++;
	return k;
}

/* theta_j and omega_j of a table entry, exact in long double (64 bits) */
static void
entry_values(const cc_blt_entry *e, long double *theta, long double *omega)
{
	for (int j = 0; j < e->buffers; j++)
	{
		theta[j] = 1.0L - ldexpl((long double) e->phi[j], -62);
		omega[j] = ldexpl((long double) e->omega[j], -62);
	}
}

/* b_0 .. b_(n-1) of B = A C^-1: prefix sums of C^-1's impulse response */
void
blt_brute_b(const cc_blt_entry *e, int64_t n, long double *b)
{
	long double theta[CC_BLT_SCALED_BUFFERS];
	long double omega[CC_BLT_SCALED_BUFFERS];
	long double buffer[CC_BLT_SCALED_BUFFERS] = {0};
	long double sum = 0.0L;

	entry_values(e, theta, omega);
	for (int64_t k = 0; k < n; k++)
	{
		long double y = k == 0 ? 1.0L : 0.0L;

		for (int j = 0; j < e->buffers; j++)
			y -= omega[j] * buffer[j];
		for (int j = 0; j < e->buffers; j++)
			buffer[j] = theta[j] * buffer[j] + y;
		sum += y;
		b[k] = sum;
	}
}

double
blt_brute_error(int64_t horizon, int64_t t)
{
	long double *b = malloc(t * sizeof(long double));
	long double sum = 0.0L;

	blt_brute_b(&cc_blt_table[entry_for(horizon)], t, b);
	for (int64_t k = 0; k < t; k++)
		sum += b[k] * b[k];
	free(b);
	return (double) sum;
}

/* c_0 .. c_(n-1): C's first column */
void
blt_brute_c(const cc_blt_entry *e, int64_t n, long double *c)
{
	long double theta[CC_BLT_SCALED_BUFFERS];
	long double omega[CC_BLT_SCALED_BUFFERS];
	long double power[CC_BLT_SCALED_BUFFERS];

	entry_values(e, theta, omega);
	for (int j = 0; j < e->buffers; j++)
		power[j] = 1.0L;
	c[0] = 1.0L;
	for (int64_t k = 1; k < n; k++)
	{
		c[k] = 0.0L;
		for (int j = 0; j < e->buffers; j++)
		{
			c[k] += omega[j] * power[j];
			power[j] *= theta[j];
		}
	}
}

/* E = 1 + (d + sum_j omega_j / phi_j) / F: mech_blt.c's deviation, apart */
static double
deviation(int entry)
{
	const cc_blt_entry *e = &cc_blt_table[entry];
	long double sum = (long double) e->buffers;

	for (int j = 0; j < e->buffers; j++)
		sum += (long double) e->omega[j] / (long double) e->phi[j];
	return (double) (1.0L + ldexpl(sum, -FRACTION_BITS));
}

static bool
close_rel(long double a, long double b, long double tol)
{
	return fabsl(a - b) <= tol * fabsl(b);
}

/*
 * Every entry of the table is a BLT of the kind blt.h assumes: its inverse
 * exists with positive alpha, and B's coefficients are positive and
 * decreasing from 1 (checked over up to 2^16 of them).  Its closed forms
 * agree with sums in long double: the column norm, the step error and the
 * sum of B's coefficients at several steps, the sum of step errors.
 */
static void
test_table(void)
{
	enum
	{
		BRUTE = 1 << 20
	};
	static long double b[BRUTE];
	static long double c[BRUTE];
	int			bad_entries = 0;
	int			bad_forms = 0;

	for (int k = 0; k < CC_BLT_ENTRIES; k++)
	{
		const cc_blt_entry *e = &cc_blt_table[k];
		cc_blt		blt;
		cc_blt_noise noise;
		int64_t		n = k <= 20 ? INT64_C(1) << k : 1 << 16;
		long double norm2 = 0.0L;
		long double squares = 0.0L;
		long double coefficients = 0.0L;
		long double error_sum = 0.0L;
		bool		ok = e->buffers >= 1 && e->buffers <= CC_BLT_BUFFERS;

		for (int j = (int) e->buffers; ok && j < CC_BLT_BUFFERS; j++)
			ok = e->phi[j] == 0 && e->omega[j] == 0;
		cc_blt_of_entry(e, &blt);
		if (!ok || !cc_blt_noise_of(&blt, &noise))
		{
			bad_entries++;
			continue;
		}
		blt_brute_b(&cc_blt_table[k], n, b);
		blt_brute_c(&cc_blt_table[k], n, c);
		for (int64_t i = 0; i < n; i++)
		{
			double		coefficient_sum;
			double		form;

			norm2 += c[i] * c[i];
			squares += b[i] * b[i];
			coefficients += b[i];
			error_sum += squares;
			ok &= b[i] > 0.0L && (i == 0 ? b[i] == 1.0L : b[i] <= b[i - 1]);
			if (!((i + 1) % 997 == 0 || i + 1 == n || i < 5))
				continue;
			form = cc_blt_step_error(&noise, (double) (i + 1), &coefficient_sum);
			if (!close_rel(form, squares, 1e-11) || !close_rel(coefficient_sum, coefficients, 1e-11) ||
				!close_rel(cc_blt_column_norm2(&blt, (double) (i + 1)), norm2, 1e-11))
			{
				if (bad_forms++ < 5)
					fprintf(stderr, "entry %d, t = %lld: step error %.15g (sum %.15Lg), "
							"coefficients %.15g (%.15Lg), column %.15g (%.15Lg)\n",
							k, (long long) i + 1, form, squares, coefficient_sum, coefficients,
							cc_blt_column_norm2(&blt, (double) (i + 1)), norm2);
			}
		}
		if (!close_rel(cc_blt_error_sum(&noise, (double) n), error_sum, 1e-11) && bad_forms++ < 5)
			fprintf(stderr, "entry %d: error sum %.15g (sum %.15Lg)\n", k,
					cc_blt_error_sum(&noise, (double) n), error_sum);
		bad_entries += !ok;
	}
	CHECK(bad_entries == 0, "%d table entries not invertible BLTs with decreasing positive b_k",
		  bad_entries);
	CHECK(bad_forms == 0, "%d closed forms differ from the sums", bad_forms);
}

/*
 * The sensitivity against the materialized C for small horizons: every
 * column's norm (the first is the largest), then the calibration of the
 * state: sigma^2 at least (K Delta ||c|| + E sqrt(T))^2 / (2 rho), and not
 * above it by more than rounding; K the least power of two for which E
 * sqrt(T) is at most 2^-16 of K Delta ||c||, or where that K's sigma^2 would
 * be more than the sampler takes (2^62), the largest below whose sigma^2 it
 * takes.
 */
static void
test_sensitivity(void)
{
	static const int64_t horizons[] = {1, 2, 3, 5, 8, 13, 64, 100, 1000};
	static const struct
	{
		int64_t		sensitivity;
		double		rho;
	}			cases[] = {{1, 0.5}, {3, 2.0}, {1000, 0.01}, {1, 1000.0}, {1000000, 1e-6}};
	int			bad_columns = 0;
	int			bad_calibrations = 0;

	for (size_t h = 0; h < sizeof(horizons) / sizeof(horizons[0]); h++)
	{
		int64_t		T = horizons[h];
		int			k = entry_for(T);
		long double *c = malloc(T * sizeof(long double));
		long double most = 0.0L;
		cc_blt		blt;

		cc_blt_of_entry(&cc_blt_table[k], &blt);
		blt_brute_c(&cc_blt_table[k], T, c);
		/* column i holds c_0 .. c_(T-1-i): its norm by summing the matrix */
		for (int64_t i = 0; i < T; i++)
		{
			long double col = 0.0L;

			for (int64_t row = i; row < T; row++)
				col += c[row - i] * c[row - i];
			if (col > most)
			{
				most = col;
				bad_columns += i != 0;
			}
		}
		bad_columns += !close_rel(cc_blt_column_norm2(&blt, (double) T), most, 1e-12);

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		{
			cc_params	p = params_zcdp(CC_BLT, cases[i].rho, T);
			cc_state   *s;
			const cc_blt_part *part;
			long double l2;
			long double needed;
			long double doubled;
			long double sigma2;
			long double small;

			p.sensitivity = cases[i].sensitivity;
			s = new_state(&p);
			part = cc_state_part(s);
			l2 = ldexpl(cases[i].sensitivity * sqrtl(most), (int) part->shift) +
				deviation(k) * sqrtl((long double) T);
			needed = l2 * l2 / (2.0L * (long double) p.rho_units / 1e9L);
			sigma2 = (long double) s->scale.num / (long double) s->scale.den;
			/* and with K doubled, sigma^2 would pass 2^62 */
			l2 = ldexpl(cases[i].sensitivity * sqrtl(most), (int) part->shift + 1) +
				deviation(k) * sqrtl((long double) T);
			doubled = l2 * l2 / (2.0L * (long double) p.rho_units / 1e9L);
			/* E sqrt(T) against K Delta ||c||, and against it with K halved */
			small = deviation(k) * sqrtl((long double) T) /
				ldexpl(cases[i].sensitivity * sqrtl(most), (int) part->shift - 16);
			if (!(sigma2 >= needed && sigma2 <= needed * (1.0L + 1e-8L) && part->entry == k &&
				  part->shift >= 0 && part->shift <= 32 &&
				  (small <= 1.0L + 1e-8L ?
				   part->shift == 0 || part->shift == 32 || 2.0L * small > 1.0L - 1e-8L :
				   part->shift == 32 || doubled > ldexpl(1.0L, 62) * (1.0L - 1e-8L))))
			{
				if (bad_calibrations++ < 5)
					fprintf(stderr, "blt T = %lld, Delta %lld, rho %g: sigma^2 %.12Lg for %.12Lg, "
							"K 2^%lld\n", (long long) T, (long long) p.sensitivity, cases[i].rho,
							sigma2, needed, (long long) part->shift);
			}
			free(s);
		}
		free(c);
	}
	CHECK(bad_columns == 0, "%d horizons where the first column is not the largest or its form is off",
		  bad_columns);
	CHECK(bad_calibrations == 0, "%d sigma^2 not calibrated to the sensitivity", bad_calibrations);
}

/*
 * A second implementation of the fixed point, for the replay: the product
 * floor(s m / 2^62) by another split, s = a 2^62 + r with 0 <= r < 2^62, so
 * that it is a m + floor(r m / 2^62).
 */
static __int128
ref_scale(__int128 s, uint64_t m)
{
	__int128	a = s >> 62;
	__int128	r = s - a * ((__int128) 1 << 62);

	return a * (__int128) m + (__int128) (((unsigned __int128) r * m) >> 62);
}

typedef struct ref_path
{
	__int128	buffer[CC_BLT_BUFFERS];
} ref_path;

/* floor(sum_j floor(omega_j S_j) / F), then the decay and F times the input */
static __int128
ref_read(const cc_blt_entry *e, const ref_path *path)
{
	__int128	sum = 0;

	for (int j = 0; j < e->buffers; j++)
		sum += ref_scale(path->buffer[j], e->omega[j]);
	/* floor division by F, written as one */
	return (sum - (((sum % (1 << FRACTION_BITS)) + (1 << FRACTION_BITS)) % (1 << FRACTION_BITS))) /
		(1 << FRACTION_BITS);
}

static void
ref_update(const cc_blt_entry *e, ref_path *path, __int128 input)
{
	for (int j = 0; j < e->buffers; j++)
		path->buffer[j] = ref_scale(path->buffer[j], CC_BLT_ONE - e->phi[j]) +
			input * (1 << FRACTION_BITS);
}

/* u_t for the data path: K x_t plus the buffers' read, then the update */
static __int128
ref_data_step(const cc_blt_entry *e, ref_path *path, int shift, int64_t x)
{
	__int128	kx = (__int128) x * ((__int128) 1 << shift);
	__int128	u = kx + ref_read(e, path);

	ref_update(e, path, kx);
	return u;
}

/*
 * Replay the mechanism's draws: a copy of its random source draws one
 * discrete Gaussian a step, and the second implementation computes u, w,
 * q, both paths' buffers, the total and the release from the head of
 * mech_blt.c.  Items up to 2^40 make the buffers use their high words.
 */
static void
replay(cc_params p, uint64_t seed, int64_t steps, int max_bits)
{
	seeded_rng	mech_rng;
	seeded_rng	ref_rng;
	seeded_rng	items_rng;
	cc_state   *s = new_state(&p);
	const cc_blt_part *part = cc_state_part(s);
	const cc_blt_entry *e = &cc_blt_table[part->entry];
	int			shift = (int) part->shift;
	ref_path	data = {{0}};
	ref_path	noisy = {{0}};
	__int128	total = 0;
	int			bad_buffers = 0;
	int			bad_releases = 0;

	seeded_rng_init(&mech_rng, seed);
	seeded_rng_init(&ref_rng, seed);
	seeded_rng_init(&items_rng, seed + 1);
	for (int64_t t = 1; t <= steps; t++)
	{
		int64_t		x = (int64_t) (cc_next_word(&items_rng.rng) >>
								   (64 - 1 - (int) cc_uniform_below(&items_rng.rng, max_bits)));
		int64_t		z;
		__int128	w;
		__int128	q;
		__int128	release;

		cc_push(s, x, &mech_rng.rng);
		w = ref_data_step(e, &data, shift, x);
		cc_dgauss_draw(&ref_rng.rng, s->scale, &z);
		w += z;
		q = w - ref_read(e, &noisy);
		ref_update(e, &noisy, q);
		total += q;
		/* round(total / K), halves up: floor((2 total + K) / (2 K)) */
		release = 2 * total + ((__int128) 1 << shift);
		release = release >= 0 ? release / ((__int128) 2 << shift) :
			-((-release + ((__int128) 2 << shift) - 1) / ((__int128) 2 << shift));
		for (int j = 0; j < CC_BLT_BUFFERS; j++)
			bad_buffers += cc_wide_get(&part->data[j]) != (j < e->buffers ? data.buffer[j] : 0) ||
				cc_wide_get(&part->noisy[j]) != (j < e->buffers ? noisy.buffer[j] : 0);
		bad_releases += cc_wide_get(&part->total) != total || s->noisy != (int64_t) release;
	}
	CHECK(bad_buffers == 0, "blt (K 2^%d): %d buffer reads differ from the replay", shift, bad_buffers);
	CHECK(bad_releases == 0, "blt (K 2^%d): %d totals or releases differ from the replay",
		  shift, bad_releases);
	CHECK(cc_next_word(&mech_rng.rng) == cc_next_word(&ref_rng.rng),
		  "blt drew other than one discrete Gaussian a step");
	free(s);
}

/*
 * The lemma the sensitivity rests on, on the second implementation (which
 * the replay ties to the mechanism): for streams x and x + v, v >= 0 summing
 * to at most Delta, u(x + v) - u(x) is K C v within E at every step, so its
 * norm is within the L2 sensitivity sigma^2 was calibrated for.  v is Delta
 * at one step, or spread over a few; both runs start from random streams.
 */
static void
test_fixed_point(void)
{
	enum
	{
		T = 600
	};
	static const struct
	{
		int64_t		sensitivity;
		double		rho;
	}			cases[] = {{1, 0.5}, {1000, 0.01}, {3, 100.0}};
	seeded_rng	r;
	int			bad_steps = 0;
	int			bad_norms = 0;
	int			bad_l1 = 0;
	double		largest = 0.0;
	double		l1_used = 0.0;

	seeded_rng_init(&r, 70);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		cc_params	p = params_zcdp(CC_BLT, cases[i].rho, T);
		cc_state   *s;
		const cc_blt_part *part;
		const cc_blt_entry *e;
		static long double c[T];
		double		limit;
		double		l2;
		cc_gauss	g;

		p.sensitivity = cases[i].sensitivity;
		g = cc_params_cost(&p).gauss;
		s = new_state(&p);
		part = cc_state_part(s);
		e = &cc_blt_table[part->entry];
		blt_brute_c(&cc_blt_table[part->entry], T, c);
		limit = deviation((int) part->entry);
		l2 = sqrt(2.0 * cc_scale_value(s->scale) * (double) p.rho_units / 1e9);
		for (int trial = 0; trial < 40; trial++)
		{
			static int64_t x[T + 1];
			static int64_t v[T + 1];
			ref_path	a = {{0}};
			ref_path	b = {{0}};
			int64_t		left = p.sensitivity;
			int			parts = 1 + trial % 4;
			long double norm2 = 0.0L;
			long double l1 = 0.0L;

			for (int t = 1; t <= T; t++)
			{
				x[t] = (int64_t) cc_uniform_below(&r.rng, trial % 2 ? 1000000 : 3);
				v[t] = 0;
			}
			for (int n = 0; n < parts; n++)
			{
				int64_t		amount = n == parts - 1 ? left :
					(int64_t) cc_uniform_below(&r.rng, (uint64_t) left + 1);

				v[1 + cc_uniform_below(&r.rng, T)] += amount;
				left -= amount;
			}
			for (int t = 1; t <= T; t++)
			{
				__int128	diff = ref_data_step(e, &b, (int) part->shift, x[t] + v[t]) -
					ref_data_step(e, &a, (int) part->shift, x[t]);
				long double linear = 0.0L;
				long double gap;

				for (int from = 1; from <= t; from++)
					linear += c[t - from] * v[from];
				gap = fabsl((long double) diff - ldexpl(linear, (int) part->shift));
				if (gap > largest)
					largest = (double) gap;
				bad_steps += !(gap < limit);
				norm2 += (long double) diff * (long double) diff;
				l1 += fabsl((long double) diff);
			}
			bad_norms += !(sqrtl(norm2) <= l2);
			/* what the charge records for the privacy curve (cc_gauss) */
			l1 /= (long double) g.sigma2.num / (long double) g.sigma2.den;
			bad_l1 += !(l1 <= (long double) g.l1_units * 1e-9L && g.shift == 0 &&
						g.coordinates == (uint64_t) (T * p.sensitivity) &&
						g.sigma2.num == s->scale.num && g.sigma2.den == s->scale.den);
			l1_used = fmax(l1_used, (double) (l1 / ((long double) g.l1_units * 1e-9L)));
		}
		free(s);
	}
	CHECK(bad_steps == 0, "%d steps where u(x + v) - u(x) is farther than E from K C v", bad_steps);
	CHECK(bad_norms == 0, "%d neighbouring streams beyond the calibrated L2 sensitivity", bad_norms);
	CHECK(bad_l1 == 0, "%d neighbouring streams beyond the L1 bound the charge records", bad_l1);
	/* a unit's whole contribution at the first step moves C's first column */
	CHECK(l1_used > 0.5, "the L1 bound is %g times the largest seen", 1 / l1_used);
	/* the fixed point's rounding is there: E is not a bound on nothing */
	CHECK(largest > 0.5, "largest rounding gap %g", largest);
}

/*
 * At rho = 1000 and T = 100 the release's noise before rounding has a
 * standard deviation below 0.06 and E sum b_k / K below 1e-6: P(|noise| >=
 * 0.49) <= 2 exp(-0.49^2 / (2 proxy)) < 1e-14 a step, checked from the
 * variance the state reports, so every release is the exact count but with
 * probability below 1e-12.
 */
static void
test_exact_at_huge_rho(void)
{
	seeded_rng	r;
	cc_params	p = params_zcdp(CC_BLT, 1000.0, 100);
	cc_state   *s = new_state(&p);
	int64_t		exact = 0;
	int			bad = 0;
	double		most = 0.0;

	seeded_rng_init(&r, 71);
	for (int64_t t = 1; t <= 100; t++)
	{
		int64_t		x = (int64_t) cc_uniform_below(&r.rng, 1000);
		cc_release	rel;

		exact += x;
		cc_push(s, x, &r.rng);
		cc_read(s, &rel);
		bad += s->noisy != exact;
		if (rel.variance > most)
			most = rel.variance;
	}
	CHECK(0.49 * 0.49 / (2.0 * most * 1.001) > 33.0, "noise too large for the check: %g", most);
	CHECK(bad == 0, "%d inexact sums at rho 1000", bad);
	free(s);
}

/* Parameters of the zCDP kinds, and states read back from storage. */
static void
test_params_and_states(void)
{
	static const double bad_rho[] = {0.0, -1.0, 1e-7, 1000.5, NAN, INFINITY};
	uint64_t	units;
	cc_params	p;
	cc_scale	sigma2;
	seeded_rng	r;
	cc_state   *s;
	char	   *copy;
	size_t		size;

	for (size_t i = 0; i < sizeof(bad_rho) / sizeof(bad_rho[0]); i++)
		CHECK(cc_rho_units(bad_rho[i], &units) == CC_BAD_RHO, "rho %g", bad_rho[i]);
	CHECK(cc_rho_units(0.5, &units) == CC_OK && units == 500000000, "0.5 -> %llu",
		  (unsigned long long) units);

	/* the privacy notion must match the kind's, both ways */
	p = params_for(CC_BLT, 1.0, 100);
	CHECK(cc_params_prepare(&p) == CC_WRONG_PRIVACY, "blt with epsilon");
	p = params_for(CC_GAUSSIAN_HONAKER, 1.0, 100);
	CHECK(cc_params_prepare(&p) == CC_WRONG_PRIVACY, "gaussian_honaker with epsilon");
	p = params_zcdp(CC_HONAKER, 1.0, 100);
	CHECK(cc_params_prepare(&p) == CC_WRONG_PRIVACY, "honaker with rho");
	p = params_zcdp(CC_BLT, 1.0, 100);
	p.privacy = (cc_accounting) 7;
	CHECK(cc_params_prepare(&p) == CC_WRONG_PRIVACY, "privacy 7");
	CHECK(cc_kind_privacy(CC_BLT) == CC_ZCDP && cc_kind_privacy(CC_GAUSSIAN_HONAKER) == CC_ZCDP &&
		  cc_kind_privacy(CC_SMOOTH_BINARY) == CC_PURE, "kinds' privacy");
	p = params_zcdp(CC_BLT, 0.25, 100);
	CHECK(cc_params_cost(&p).accounting == CC_ZCDP && cc_params_cost(&p).units == 250000000,
		  "a blt release costs its rho");
	p = params_for(CC_HONAKER, 0.25, 100);
	CHECK(cc_params_cost(&p).accounting == CC_PURE && cc_params_cost(&p).units == 250000000,
		  "a honaker release costs its epsilon");

	p = params_zcdp(CC_BLT, 1.0, 100);
	p.rho_units = 999;
	CHECK(cc_params_prepare(&p) == CC_BAD_RHO, "rho units 999");
	p.rho_units = 1000 * CC_RHO_UNITS_PER_ONE + 1;
	CHECK(cc_params_prepare(&p) == CC_BAD_RHO, "rho above 1000");
	p = params_zcdp(CC_BLT, 1.0, 0);
	CHECK(cc_params_prepare(&p) == CC_NEED_HORIZON, "blt without horizon");
	p = params_zcdp(CC_GAUSSIAN_HONAKER, 1.0, 0);
	CHECK(cc_params_prepare(&p) == CC_NEED_HORIZON, "gaussian_honaker without horizon");
	p = params_zcdp(CC_BLT, 1.0, (INT64_C(1) << 40) + 1);
	CHECK(cc_params_prepare(&p) == CC_BAD_HORIZON && cc_kind_max_horizon(CC_BLT) == INT64_C(1) << 40,
		  "blt past 2^40");
	p = params_zcdp(CC_BLT, 1.0, INT64_C(1) << 40);
	CHECK(cc_params_prepare(&p) == CC_OK && cc_state_size(&p) == 288, "blt at 2^40: %zu bytes",
		  cc_state_size(&p));
	p = params_zcdp(CC_BLT, 1.0, 1);
	CHECK(cc_params_prepare(&p) == CC_OK && cc_state_size(&p) == 288, "blt at 1: %zu bytes",
		  cc_state_size(&p));
	p = params_zcdp(CC_BLT, 1.0, 100);
	p.has_block = true;
	p.block = 3;
	CHECK(cc_params_prepare(&p) == CC_BLOCK_NOT_APPLICABLE, "blt with a block");
	p = params_zcdp(CC_GAUSSIAN_HONAKER, 1e-6, CC_MAX_HORIZON);
	p.sensitivity = CC_MAX_SENSITIVITY;
	CHECK(cc_params_prepare(&p) == CC_SCALE_TOO_LARGE, "63 (10^6)^2 / 2e-6 above 2^62");
	p.sensitivity = 100000;
	CHECK(cc_params_prepare(&p) == CC_OK && cc_state_size(&p) <= CC_STATE_MAX_BYTES,
		  "gaussian_honaker at 2^62");

	/* gaussian_honaker: sigma^2 = L Delta^2 / (2 rho), exactly */
	p = params_zcdp(CC_GAUSSIAN_HONAKER, 0.3, 1000);
	p.sensitivity = 7;
	s = new_state(&p);
	CHECK((unsigned __int128) s->scale.num * 3 == (unsigned __int128) s->scale.den * 10 * 49 * 5,
		  "gaussian_honaker sigma^2 %llu/%llu, not 10 * 49 / 0.6",
		  (unsigned long long) s->scale.num, (unsigned long long) s->scale.den);
	free(s);

	/* rounding sigma^2 up: never below l2^2 / (2 rho), and by little */
	CHECK(cc_gaussian_sigma2(5, 500000000, &sigma2) == CC_OK &&
		  sigma2.num == UINT64_C(5000000000) && sigma2.den == 1000000000, "exact sigma^2");
	for (int i = 0; i < 4; i++)
	{
		static const uint64_t l2[] = {(UINT64_C(1) << 40) + 1, (UINT64_C(1) << 45) + 12345,
		UINT64_C(3) << 50, UINT64_C(12345678901234567)};
		static const uint64_t rho[] = {1000, 1000000000, UINT64_C(1000000000000), 10000000000};
		unsigned __int128 num = (unsigned __int128) l2[i] * CC_RHO_UNITS_PER_ONE;
		unsigned __int128 den = 2 * (unsigned __int128) rho[i];

		/* num above 2^62: rounded; cross products below 2^104 */
		CHECK(cc_gaussian_sigma2(l2[i], rho[i], &sigma2) == CC_OK &&
			  sigma2.num <= CC_DGAUSS_MAX_PART && sigma2.den <= CC_DGAUSS_MAX_PART &&
			  (unsigned __int128) sigma2.num * den >= num * sigma2.den &&
			  (double) sigma2.num / (double) sigma2.den <= (double) num / (double) den * (1.0 + 1e-12),
			  "l2^2 %llu, rho units %llu: %llu/%llu", (unsigned long long) l2[i],
			  (unsigned long long) rho[i], (unsigned long long) sigma2.num,
			  (unsigned long long) sigma2.den);
	}
	CHECK(cc_gaussian_sigma2((unsigned __int128) 1 << 62, 1, &sigma2) == CC_SCALE_TOO_LARGE &&
		  cc_gaussian_sigma2(0, 1, &sigma2) == CC_SCALE_TOO_LARGE, "sigma^2 refused");

	/* states read back: as written, then damaged */
	seeded_rng_init(&r, 72);
	p = params_zcdp(CC_BLT, 0.5, 1000);
	s = new_state(&p);
	for (int i = 0; i < 20; i++)
		cc_push(s, i, &r.rng);
	size = cc_state_bytes(s);
	copy = malloc(size);
	CHECK(cc_state_valid(s, size), "a blt state as written");
	memcpy(copy, s, size);
	((cc_blt_part *) cc_state_part((cc_state *) copy))->entry = 9;
	CHECK(!cc_state_valid(copy, size), "a blt state of another entry");
	memcpy(copy, s, size);
	((cc_blt_part *) cc_state_part((cc_state *) copy))->shift--;
	CHECK(!cc_state_valid(copy, size), "a blt state of another K");
	memcpy(copy, s, size);
	((cc_state *) copy)->params.privacy = CC_PURE;
	CHECK(!cc_state_valid(copy, size), "a blt state claiming pure DP");
	memcpy(copy, s, size);
	((cc_state *) copy)->params.rho_units = 7;
	CHECK(!cc_state_valid(copy, size), "a blt state with rho below the minimum");
	memcpy(copy, s, size);
	((cc_state *) copy)->params.kind = CC_HONAKER;
	CHECK(!cc_state_valid(copy, size), "a blt state read as honaker");
	memcpy(copy, s, size);
	((cc_state *) copy)->params.horizon = 10;
	CHECK(!cc_state_valid(copy, size), "a blt state past its horizon");
	free(copy);
	free(s);

	/* an entry with fewer buffers: the unused ones must stay zero */
	p = params_zcdp(CC_BLT, 0.5, 1);
	s = new_state(&p);
	cc_push(s, 5, &r.rng);
	size = cc_state_bytes(s);
	copy = malloc(size);
	CHECK(cc_blt_table[0].buffers < CC_BLT_BUFFERS && cc_state_valid(s, size), "blt at T = 1");
	memcpy(copy, s, size);
	cc_wide_set(&((cc_blt_part *) cc_state_part((cc_state *) copy))->noisy[CC_BLT_BUFFERS - 1], 1);
	CHECK(!cc_state_valid(copy, size), "a blt state with a buffer past its entry's");
	free(copy);
	free(s);

	p = params_zcdp(CC_GAUSSIAN_HONAKER, 0.5, 100);
	s = new_state(&p);
	cc_push(s, 1, &r.rng);
	size = cc_state_bytes(s);
	copy = malloc(size);
	memcpy(copy, s, size);
	((cc_state *) copy)->params.privacy = CC_PURE;
	CHECK(cc_state_valid(s, size) && !cc_state_valid(copy, size),
		  "a gaussian_honaker state claiming pure DP");
	free(copy);
	free(s);
}

/*
 * Mean and worst variance over the horizon from the closed forms against the
 * states' own reports summed over every step, for every horizon up to 300,
 * and mechanism "auto" under zCDP.
 */
static void
test_over_horizon(void)
{
	seeded_rng	r;
	int			bad = 0;
	cc_params	p;

	seeded_rng_init(&r, 73);
	for (int kind = 0; kind < CC_NUM_KINDS; kind++)
		for (int64_t T = 1; T <= 300 && cc_kind_privacy((cc_kind) kind) == CC_ZCDP; T++)
		{
			cc_params	q = params_zcdp((cc_kind) kind, 0.5, T);
			cc_state   *s = new_state(&q);
			long double sum = 0.0L;
			double		most = 0.0;
			double		mean;
			double		worst;

			for (int64_t t = 1; t <= T; t++)
			{
				cc_release rel;

				cc_push(s, 0, &r.rng);
				cc_read(s, &rel);
				sum += rel.variance;
				if (rel.variance > most)
					most = rel.variance;
			}
			cc_variance_over_horizon(&q, &mean, &worst);
			if (!close_rel(mean, sum / T, 1e-9) || !close_rel(worst, most, 1e-9))
			{
				if (bad++ < 5)
					fprintf(stderr, "%s T = %lld: mean %.12g (sum %.12Lg), worst %.12g (%.12g)\n",
							cc_kind_name((cc_kind) kind), (long long) T, mean, sum / T, worst, most);
			}
			free(s);
		}
	CHECK(bad == 0, "%d zCDP closed forms over the horizon differ from the sums", bad);

	p = params_zcdp(CC_SIMPLE_I, 0.5, INT64_C(1) << 20);
	CHECK(cc_choose(&p, CC_OBJECTIVE_WORST) == CC_OK && p.kind == CC_BLT_SCALED &&
		  p.privacy == CC_ZCDP, "zCDP auto at 2^20: %s", cc_kind_name(p.kind));
	p = params_zcdp(CC_SIMPLE_I, 0.5, INT64_C(1) << 41);
	CHECK(cc_choose(&p, CC_OBJECTIVE_MEAN) == CC_OK && p.kind == CC_GAUSSIAN_HONAKER,
		  "zCDP auto at 2^41: %s", cc_kind_name(p.kind));
	p = params_zcdp(CC_SIMPLE_I, 1e-6, CC_MAX_HORIZON);
	p.sensitivity = CC_MAX_SENSITIVITY;
	CHECK(cc_choose(&p, CC_OBJECTIVE_MEAN) == CC_SCALE_TOO_LARGE, "zCDP auto, nothing fits");
	p = params_for(CC_SIMPLE_I, 1.0, INT64_C(1) << 20);
	CHECK(cc_choose(&p, CC_OBJECTIVE_WORST) == CC_OK && cc_kind_privacy(p.kind) == CC_PURE,
		  "pure auto picked %s", cc_kind_name(p.kind));
}

/*
 * The figures of issue 13 at T = 2^20, rho = 1/2, sensitivity 1: the
 * square-root factorization's worst variance (sum_{k<T} c_k^2)^2, with
 * c_k = C(2k, k) / 4^k, about 30.0; blt's worst at most 36 and 1.2 times
 * that, from the closed form and from a state run over every step; and
 * gaussian_honaker's.
 */
static void
test_figures(void)
{
	const int64_t T = INT64_C(1) << 20;
	cc_params	bp = params_zcdp(CC_BLT, 0.5, T);
	cc_params	hp = params_zcdp(CC_GAUSSIAN_HONAKER, 0.5, T);
	cc_state   *s = new_state(&bp);
	seeded_rng	r;
	long double c = 1.0L;
	long double column = 0.0L;
	double		root;
	double		mean;
	double		worst;
	double		h_mean;
	double		h_worst;
	long double sum = 0.0L;
	double		most = 0.0;
	int64_t		most_at = 0;

	for (int64_t k = 0; k < T; k++)
	{
		column += c * c;
		c *= (2.0L * k + 1.0L) / (2.0L * k + 2.0L);
	}
	root = (double) (column * column);
	cc_variance_over_horizon(&bp, &mean, &worst);
	cc_params_prepare(&hp);
	cc_variance_over_horizon(&hp, &h_mean, &h_worst);

	seeded_rng_init(&r, 74);
	for (int64_t t = 1; t <= T; t++)
	{
		cc_release rel;

		cc_push(s, 0, &r.rng);
		cc_read(s, &rel);
		sum += rel.variance;
		if (rel.variance > most)
		{
			most = rel.variance;
			most_at = t;
		}
	}
	printf("T = 2^20, rho 0.5: blt variance worst %.3f mean %.3f, %zu bytes; square root "
		   "factorization worst %.3f; gaussian_honaker worst %.2f mean %.2f, %zu bytes\n",
		   worst, mean, cc_state_bytes(s), root, h_worst, h_mean, cc_state_size(&hp));
	CHECK(fabs(root - 30.02) < 0.01, "square root factorization %g", root);
	CHECK(worst <= 36.0 && worst <= 1.2 * root, "blt worst %g", worst);
	CHECK(close_rel(most, worst, 1e-9) && most_at == T && close_rel(sum / T, mean, 1e-9),
		  "blt state worst %g at %lld, mean %g", most, (long long) most_at, (double) (sum / T));
	CHECK(worst < h_worst && mean < h_mean, "blt against gaussian_honaker");
	free(s);
}

/*
 * A read's variance comes from decays kept by blocks of steps (mech_blt.c):
 * against the closed form at every step of a window's first 10^5 and at
 * 10^5 scattered steps, to a few units in the last place (the closed form
 * is itself that close to the sums, test_table), with every table entry's
 * blocks first reached mid-block; and a step read again after others gives
 * the very same value.
 */
static void
test_reads_by_block(void)
{
	seeded_rng	r;
	int			bad = 0;
	int			unequal = 0;

	seeded_rng_init(&r, 79);
	for (int k = 1; k < CC_BLT_ENTRIES; k++)
	{
		cc_params	p = params_zcdp(CC_BLT, 0.5, INT64_C(1) << k);
		cc_state   *s = new_state(&p);
		const cc_blt_part *part = cc_state_part(s);
		cc_blt		blt;
		cc_blt_noise noise;
		double		unit = s->scale_variance / ldexp(1.0, 2 * (int) part->shift);
		int64_t		steps = p.horizon < 100000 ? p.horizon : 100000;

		cc_blt_of_entry(&cc_blt_table[k], &blt);
		cc_blt_noise_of(&blt, &noise);
		for (int64_t i = 0; i < steps + 1000; i++)
		{
			/* in order, then scattered (from 37, mid-block, for the first) */
			int64_t		t = i < steps ? i + 1 :
				(i == steps ? 37 : 1 + (int64_t) cc_uniform_below(&r.rng, (uint64_t) p.horizon));
			cc_release	rel;
			cc_release	again;

			s->t = t;
			cc_read(s, &rel);
			if (!close_rel(rel.variance, unit * cc_blt_step_error(&noise, (double) t, NULL), 1e-13) &&
				bad++ < 5)
				fprintf(stderr, "entry %d, t = %lld: read %.17g, closed form %.17g\n", k,
						(long long) t, rel.variance,
						unit * cc_blt_step_error(&noise, (double) t, NULL));
			if (i >= steps)
			{
				s->t = t + BLOCK_STEPS_APART;
				cc_read(s, &again);
				s->t = t;
				cc_read(s, &again);
				unequal += again.variance != rel.variance || again.bound != rel.bound;
			}
		}
		free(s);
	}
	CHECK(bad == 0, "%d reads differ from the closed form", bad);
	CHECK(unequal == 0, "%d reads gave another value the second time", unequal);
}

void
test_blt(void)
{
	cc_params	p;

	test_table();
	test_sensitivity();
	p = params_zcdp(CC_BLT, 0.5, 3000);
	replay(p, 60, 3000, 41);
	p = params_zcdp(CC_BLT, 0.01, 1000);
	p.sensitivity = 1000;
	replay(p, 62, 1000, 8);
	test_fixed_point();
	test_exact_at_huge_rho();
	test_params_and_states();
	test_over_horizon();
	test_reads_by_block();
	test_figures();
}
