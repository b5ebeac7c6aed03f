/*
 * mech_blt.c
 *		The matrix factorization mechanism with a buffered linear Toeplitz
 *		(BLT) matrix, for rho-zCDP, with discrete Gaussian noise and integer
 *		arithmetic only.
 *
 * A factorization A = B C of the prefix sums releases B (C x + z) = A x + B z:
 * the noise z is added to C x, whose sensitivity is C's largest column norm,
 * and B correlates it.  With C a BLT (blt.h) both C x and C^-1 w are computed
 * with a few buffers, and for T = 2^20 four buffers come within 3% of the
 * square-root factorization's worst variance (report/blt_table.c).
 *
 * Why not simply A x + B z with integer z.  C has irrational entries, so C x
 * and C x' of neighbouring streams differ by a vector that is not on the
 * integer lattice; a discrete Gaussian z puts C x + z and C x' + z on
 * disjoint lattices, and anyone holding A x + B z can compute
 * B^-1 (A x + B z) = C x + z, whose fractional parts tell the two apart.  The
 * Gaussian mechanism's proof needs continuous noise there, and continuous
 * noise cannot be drawn exactly.
 *
 * What is done instead: C x is computed in fixed point, K = 2^shift units
 * to a count, by integer recurrences with flooring, into an integer vector
 * u(x) with |u(x) - K C x| bounded; the private value is w = u(x) + z with z
 * exact discrete Gaussian on the integers; and everything released is
 * computed from w alone (post-processing).  With theta_j = 1 - phi_j and
 * omega_j the table's exact dyadic numbers and F = 2^24 extra fraction bits
 * in the buffers, step t does
 *
 *		u_t = K x_t + floor(sum_j floor(omega_j S_j) / F)
 *		S_j <- floor(theta_j S_j) + F K x_t				(the data path)
 *		w_t = u_t + z_t,  z_t ~ N_Z(0, sigma^2)
 *		q_t = w_t - floor(sum_j floor(omega_j S'_j) / F)
 *		S'_j <- floor(theta_j S'_j) + F q_t				(the release path)
 *		Y <- Y + q_t,  release_t = round(Y / K)
 *
 * Sensitivity.  For streams x and x + v (v >= 0, sum v <= Delta), each floor
 * differs between the two runs by less than 1 from the exact difference, and
 * a buffer sums its differences with weights theta^k: u(x + v) - u(x) =
 * K C v + e with |e_t| < E = 1 + (d + sum_j omega_j / phi_j) / F at every t
 * from v's first step on, and e = 0 before.  So
 *		||u(x + v) - u(x)||_2 <= K Delta ||c|| + E sqrt(T)
 * (||c||: C's first column over T rows, its largest), the L2 sensitivity of
 * the integer vector u, and sigma^2 = that^2 / (2 rho) makes w rho-zCDP
 * (gaussian.h).  The closed forms of blt.c are in doubles; every one is a
 * sum of positive terms accurate to a few units in the last place, and the
 * bound is inflated by 1e-9 (and rounded up to sigma^2's fraction) so that
 * privacy is never overstated.  K is the least power of two for which the
 * E sqrt(T) term is at most 2^-16 of K Delta ||c|| (so it costs at most
 * 3.1e-5 of the variance; K = 2^25 at T = 2^20, Delta = 1), but at most
 * 2^32 and at most what keeps sigma^2 within the sampler's 2^62, which
 * binds from about T = 2^30 and leaves the term 1.5e-3 at 2^40.
 *
 * Error.  The same argument on the release path: q_t = K x_t + e_t with
 * e = C^-1 (z + eta), |eta_t| < E, so Y_t = K (A x)_t + (B z)_t + (B eta)_t
 * with B = A C^-1, whose coefficients b_k are positive (blt.h).  The release
 * is A x plus (B z)_t / K, plus at most E sum_{k<t} b_k / K (3.2e-5 at 2^20,
 * 3e-3 at 2^40), plus the rounding's 1/2.  The variance reported is the exact one of
 * (B z)_t / K, sigma^2's discrete Gaussian variance times sum_{k<t} b_k^2 /
 * K^2; the bound adds the two deterministic terms.
 *
 * State: the two recurrences' buffers and Y as 128-bit integers, 288 bytes
 * in all with the header.  No floating point touches x, z or the buffers.
 */
#include "mechanism_int.h"
#include "gaussian.h"

#include <math.h>
#include <string.h>

#define FRACTION_BITS 24
/* K F <= 2^56: buffers stay below 2^119 for counts below 2^63 */
#define MAX_SHIFT 32
/* E sqrt(T) <= 2^-16 K Delta ||c||: see blt_plan_of() */
#define DEVIATION_BITS 16
/*
 * The table's last entry; beyond it the fixed point's E sqrt(T) term would
 * cost more than the 1.5e-3 of the variance it costs there.
 */
#define BLT_MAX_HORIZON (INT64_C(1) << (CC_BLT_ENTRIES - 1))
/* against rounding in the closed forms, which is a few units in 2^-53 */
#define SAFETY (1.0 + 1e-9)

/* What the parameters make of the mechanism: public numbers only. */
typedef struct blt_plan
{
	int			entry;
	int			shift;
	cc_scale	sigma2;
} blt_plan;

/* A read's decays come by blocks of 2^BLOCK_BITS steps: see decays_at(). */
#define BLOCK_BITS 6
#define BLOCK_STEPS (1 << BLOCK_BITS)

/* B's coefficients and E, for each table entry: computed once per process */
typedef struct entry_forms
{
	bool		ready;
	bool		valid;
	cc_blt_noise noise;
	double		deviation;		/* E */
	/* 1 - theta_j^k for k < BLOCK_STEPS, k the row */
	double		within[BLOCK_STEPS][CC_BLT_MAX_BUFFERS];
} entry_forms;

static entry_forms forms[CC_BLT_ENTRIES];

/* Entry k serves the horizons (2^(k-1), 2^k]. */
int
cc_blt_entry_for(int64_t horizon)
{
	return horizon == 1 ? 0 : 64 - __builtin_clzll((unsigned long long) (horizon - 1));
}

/*
 * E = 1 + (d + sum_j omega_j / phi_j) / F of the head of the file, inflated
 * against rounding: the bound on a run's floors for the BLT's buffers.
 */
double
cc_blt_deviation(const cc_blt *blt)
{
	double		scales = (double) blt->buffers;

	for (int j = 0; j < blt->buffers; j++)
		scales += blt->omega[j] / blt->phi[j];
	return (1.0 + ldexp(scales, -FRACTION_BITS)) * SAFETY;
}

static const entry_forms *
forms_of(int entry)
{
	entry_forms *f = &forms[entry];

	if (!f->ready)
	{
		cc_blt		blt;

		cc_blt_of_entry(&cc_blt_table[entry], &blt);
		f->valid = cc_blt_noise_of(&blt, &f->noise);
		f->deviation = cc_blt_deviation(&blt);
		if (f->valid)
			for (int k = 0; k < BLOCK_STEPS; k++)
				cc_blt_decays(&f->noise, (double) k, f->within[k]);
		f->ready = true;
	}
	return f;
}

/*
 * The entry, K and sigma^2 for checked parameters: sigma^2 for the L2
 * sensitivity K Delta ||c|| + E sqrt(T) of the head of the file.  K is the
 * least power of two for which E sqrt(T) is at most 2^-DEVIATION_BITS of
 * K Delta ||c|| (the fixed point then costs at most 3.1e-5 of the
 * variance), and at most MAX_SHIFT and what the sampler takes.  Why not the
 * largest K: sigma grows with K, and as it nears 2^31 the sampler's uniform
 * draws below t and 2 t^2 take their division path a third of the time, and
 * its acceptance test needs 128 bits; at T = 10^6, rho 1, a core step costs
 * 11% more with the largest K (2^30) than with 2^25.
 */
static cc_status
blt_plan_of(const cc_params *p, blt_plan *plan)
{
	const entry_forms *f;
	cc_blt		blt;
	double		column;
	double		least;

	plan->entry = cc_blt_entry_for(p->horizon);
	f = forms_of(plan->entry);
	if (!f->valid)
		return CC_SCALE_TOO_LARGE;
	cc_blt_of_entry(&cc_blt_table[plan->entry], &blt);
	column = sqrt(cc_blt_column_norm2(&blt, (double) p->horizon) * SAFETY);
	least = ceil(log2(ldexp(f->deviation * sqrt((double) p->horizon), DEVIATION_BITS) /
					  ((double) p->sensitivity * column)));
	for (plan->shift = (int) fmax(0.0, fmin(least, MAX_SHIFT)); plan->shift >= 0; plan->shift--)
	{
		double		l2 = ldexp((double) p->sensitivity * column, plan->shift) +
			f->deviation * sqrt((double) p->horizon);

		/*
		 * l2 < 2^57: its square fits 128 bits, and ceil keeps it an upper
		 * bound; a sigma^2 too large for the sampler tries a smaller K
		 */
		if (cc_gaussian_sigma2((unsigned __int128) ceil(l2 * l2 * SAFETY), p->rho_units,
							   &plan->sigma2) == CC_OK)
			return CC_OK;
	}
	return CC_SCALE_TOO_LARGE;
}

static cc_status
blt_sigma2(const cc_params *params, cc_scale *sigma2)
{
	blt_plan	plan;
	cc_status	status = blt_plan_of(params, &plan);

	*sigma2 = plan.sigma2;
	return status;
}

/*
 * What moves between neighbours (privacy_region.c uses it): the integer
 * vector u moves by K C v + e, |e_t| < E (the head of the file), so the
 * absolute moves add up to at most K Delta ||c||_1 + E T, ||c||_1 = 1 +
 * sum_j omega_j sum_{k<T-1} theta_j^k the largest column's L1 norm, and at
 * most T coordinates move.  Across the streams of the groups of one
 * release, when a unit's contribution to all of them together is at most
 * Delta, at most Delta streams move, each by its share of Delta plus its
 * own e: K Delta ||c||_1 + Delta E T and Delta T coordinates, recorded so.
 * Their squares add up to at most l2^2, for which sigma^2 was calibrated:
 * 2 rho sigma^2 at most.
 */
static void
blt_pair(const cc_params *p, cc_gauss *gauss)
{
	blt_plan	plan;
	cc_blt		blt;
	double		l1;
	double		column = 1.0;
	double		delta = (double) p->sensitivity;
	double		horizon = (double) p->horizon;

	memset(gauss, 0, sizeof(*gauss));
	if (blt_plan_of(p, &plan) != CC_OK)
		return;
	cc_blt_of_entry(&cc_blt_table[plan.entry], &blt);
	for (int j = 0; j < blt.buffers; j++)
		column += blt.omega[j] * cc_geometric_sum(blt.phi[j], horizon - 1.0);
	l1 = (ldexp(delta * column, plan.shift) + delta * forms_of(plan.entry)->deviation * horizon) *
		SAFETY / cc_scale_value(plan.sigma2) * SAFETY;
	/* far beyond any useful bound: left unknown */
	if (!(l1 * (double) CC_RHO_UNITS_PER_ONE < 0x1p62))
		return;
	gauss->sigma2 = plan.sigma2;
	gauss->coordinates = (uint64_t) p->horizon * (uint64_t) p->sensitivity;
	gauss->shift = 0;
	gauss->l1_units = (uint64_t) ceil(l1 * (double) CC_RHO_UNITS_PER_ONE) + 1;
}

static size_t
blt_size(const cc_params *params)
{
	(void) params;
	return sizeof(cc_blt_part);
}

static void
blt_init(cc_state *state)
{
	cc_blt_part *part = cc_state_part(state);
	blt_plan	plan;

	blt_plan_of(&state->params, &plan);
	part->entry = plan.entry;
	part->shift = plan.shift;
}

/*
 * floor(s m / 2^62) for |s| < 2^126 and 0 <= m < 2^62: with s = h 2^64 + l,
 * 0 <= l < 2^64, it is 4 h m + floor(l m / 2^62), the first term an integer.
 */
static inline __int128
scale_down(__int128 s, uint64_t m)
{
	__int128	high = s >> 64;
	unsigned __int128 low = (uint64_t) s;

	return high * (__int128) m * 4 + (__int128) ((low * m) >> 62);
}

/*
 * One step of C (or of C^-1) on the buffers: the buffers' read, floor(sum_j
 * floor(omega_j S_j) / F), then the decay and F times the step's input.
 */
__int128
cc_blt_buffers_read(const cc_blt_entry *e, const cc_wide *buffer)
{
	__int128	sum = 0;

	for (int j = 0; j < e->buffers; j++)
		sum += scale_down(cc_wide_get(&buffer[j]), e->omega[j]);
	return sum >> FRACTION_BITS;
}

bool
cc_blt_buffers_update(const cc_blt_entry *e, cc_wide *buffer, __int128 input)
{
	__int128	in = input * ((__int128) 1 << FRACTION_BITS);

	for (int j = 0; j < e->buffers; j++)
	{
		__int128	next;

		if (__builtin_add_overflow(scale_down(cc_wide_get(&buffer[j]), CC_BLT_ONE - e->phi[j]),
								   in, &next) ||
			next >= ((__int128) 1 << 125) || next <= -((__int128) 1 << 125))
			return false;
		cc_wide_set(&buffer[j], next);
	}
	return true;
}

static cc_status
blt_push(cc_state *state, int64_t x, cc_rng *rng)
{
	cc_blt_part *part = cc_state_part(state);
	const cc_blt_entry *e = &cc_blt_table[part->entry];
	__int128	k_x = (__int128) x << part->shift;
	__int128	w;
	__int128	q;
	__int128	total;
	__int128	half = ((__int128) 1 << part->shift) >> 1;
	__int128	release;
	int64_t		z;

	/* the data path: u_t, then C's buffers take the item */
	w = k_x + cc_blt_buffers_read(e, part->data);
	if (!cc_blt_buffers_update(e, part->data, k_x))
		return CC_OVERFLOW;
	/* cc_params_prepare() checked sigma2: the draw cannot fail */
	cc_dgauss_draw(rng, state->scale, &z);
	w += z;

	/* the release path, from w alone */
	q = w - cc_blt_buffers_read(e, part->noisy);
	if (!cc_blt_buffers_update(e, part->noisy, q) ||
		__builtin_add_overflow(cc_wide_get(&part->total), q, &total))
		return CC_OVERFLOW;
	cc_wide_set(&part->total, total);
	release = (total + half) >> part->shift;
	if (release < INT64_MIN || release > INT64_MAX)
		return CC_OVERFLOW;
	state->noisy = (int64_t) release;
	return CC_OK;
}

/*
 * e_j = 1 - theta_j^t for a read at step t.  A window reads every step in
 * turn, and an expm1 a buffer at each was half of its read: with t = b + k,
 * b the start of t's block, 1 - theta^t = (1 - theta^b) + theta^b (1 -
 * theta^k), the first term computed once for the block (kept while reads
 * stay in it) and the last from the entry's table.  A sum of positive terms,
 * so as accurate as the expm1 itself, and the same for a t however the reads
 * reached it.
 */
static void
decays_at(const entry_forms *f, int entry, int64_t t, double *e)
{
	static struct
	{
		int			entry;
		int64_t		block;
		double		e[CC_BLT_MAX_BUFFERS];
	}			last = {.entry = -1};
	int64_t		block = t >> BLOCK_BITS;
	const double *within = f->within[t & (BLOCK_STEPS - 1)];

	if (last.entry != entry || last.block != block)
	{
		cc_blt_decays(&f->noise, (double) (block << BLOCK_BITS), last.e);
		last.entry = entry;
		last.block = block;
	}
	for (int j = 0; j < f->noise.buffers; j++)
		e[j] = last.e[j] + (1.0 - last.e[j]) * within[j];
}

/*
 * The head of the file's error at step t: (B z)_t / K, the deviation, the
 * rounding.
 */
static void
noise_at(int entry, int shift, cc_scale sigma2, double sigma2_variance, int64_t t,
		 cc_noise *noise)
{
	const entry_forms *f = forms_of(entry);
	double		e[CC_BLT_MAX_BUFFERS];
	double		coefficients;
	double		squares;

	/*
	 * 1 / K and 1 / K^2, powers of two (shift <= MAX_SHIFT): multiplying by
	 * them is dividing by K and K^2, exactly, without a division or a call,
	 * for a window reads this at every row
	 */
	double		inv_k = 1.0 / (double) (UINT64_C(1) << shift);
	double		inv_k2 = inv_k * inv_k;

	decays_at(f, entry, t, e);
	squares = cc_blt_step_error_of(&f->noise, (double) t, e, &coefficients);
	noise->variance = sigma2_variance * squares * inv_k2;
	noise->proxy = cc_scale_value(sigma2) * squares * inv_k2;
	noise->rounding = 0.5 + f->deviation * coefficients * SAFETY * inv_k;
}

static void
blt_noise(const cc_state *state, cc_noise *noise)
{
	const cc_blt_part *part = cc_state_part(state);

	noise_at((int) part->entry, (int) part->shift, state->scale, state->scale_variance,
			 state->t, noise);
}

/*
 * The bound's classes: the steps in runs of equal length, CC_MAX_CLASSES at
 * most; a run's tail is that of its last step, whose proxy and rounding are
 * the run's largest (b_k > 0: both grow with t).
 */
static int64_t
steps_per_class(const cc_params *params)
{
	return (params->horizon + CC_MAX_CLASSES - 1) / CC_MAX_CLASSES;
}

static int
blt_bound_classes(const cc_params *params, int64_t group, int64_t *segments,
				  cc_class *out)
{
	int64_t		per = steps_per_class(params);
	int			n = 0;

	(void) group;
	*segments = params->horizon;
	for (int64_t first = 1; first <= params->horizon; first += per)
	{
		int64_t		left = params->horizon - first + 1;

		out[n] = (cc_class) {n, left < per ? left : per};
		n++;
	}
	return n;
}

static void
blt_bound_tail(const cc_params *params, int64_t group, int64_t key, cc_tail *tail)
{
	blt_plan	plan;
	cc_noise	noise;
	int64_t		last = (key + 1) * steps_per_class(params);

	(void) group;
	blt_plan_of(params, &plan);
	noise_at(plan.entry, plan.shift, plan.sigma2, 0.0,
			 last < params->horizon ? last : params->horizon, &noise);
	tail->proxy = noise.proxy;
	tail->rounding = noise.rounding;
}

/* The plan the parameters make, and untouched buffers past the entry's. */
static bool
blt_part_valid(const cc_params *params, int64_t t, const void *bytes)
{
	cc_blt_part part;
	blt_plan	plan;

	(void) t;
	memcpy(&part, bytes, sizeof(part));
	if (blt_plan_of(params, &plan) != CC_OK ||
		part.entry != plan.entry || part.shift != plan.shift)
		return false;
	for (int j = (int) cc_blt_table[plan.entry].buffers; j < CC_BLT_BUFFERS; j++)
		if (cc_wide_get(&part.data[j]) != 0 || cc_wide_get(&part.noisy[j]) != 0)
			return false;
	return true;
}

void
cc_blt_variance_over_horizon(const cc_params *params, double *mean, double *worst)
{
	blt_plan	plan;
	const entry_forms *f;
	double		unit;

	blt_plan_of(params, &plan);
	f = forms_of(plan.entry);
	unit = cc_dgauss_variance(plan.sigma2) / ldexp(1.0, 2 * plan.shift);
	/* b_k^2 > 0: the variance grows with t, and the last step is the worst */
	*worst = unit * cc_blt_step_error(&f->noise, (double) params->horizon, NULL);
	*mean = unit * cc_blt_error_sum(&f->noise, (double) params->horizon) /
		(double) params->horizon;
}

const cc_mechanism_ops cc_blt_ops = {
	.name = "blt",
	.privacy = CC_ZCDP,
	.needs_horizon = true,
	.max_horizon = BLT_MAX_HORIZON,
	.gaussian_sigma2 = blt_sigma2,
	.gaussian_noise = blt_noise,
	.gaussian_pair = blt_pair,
	.bound_classes = blt_bound_classes,
	.bound_tail = blt_bound_tail,
	.part_size = blt_size,
	.init = blt_init,
	.push = blt_push,
	.part_valid = blt_part_valid,
};
