/*
 * mech_blt_scaled.c
 *		The BLT factorization with its inputs scaled by stretches of steps,
 *		for rho-zCDP: blt's mechanism (mech_blt.c) on the items times an
 *		integer multiplier that grows towards the horizon, with the
 *		releases divided back stretch by stretch.
 *
 * Why.  blt adds noise to C x, C a BLT; C's columns are truncations of its
 * first one, so the last steps' columns are much shorter than the first's,
 * and the sensitivity, the first column's norm, leaves them underused.
 * Scaling step j's item by m_j with m_j ||c(T - j + 1)|| about equal
 * (||c(n)||: C's first column over n rows) uses every column fully: the
 * factorization is A = (A D^-1 C^-1) (C D), D = diag(m).  The multipliers are
 * constant on stretches of steps whose distance to the horizon lies in a
 * half-octave, so that the division stays exact: the release path keeps the
 * noisy inputs' running sum of each stretch apart, Y_p, and releases
 * round(sum_p Y_p / m_p).
 *
 * Its BLT.  blt's table (blt_table.c) is made for blt's worst step, and four
 * buffers serve that well; under the scaling every column is used fully
 * and what is left to win is the mean, for which those four buffers leave
 * much (3% at T = 2^20, 40% at 2^40).  So this mechanism has its own table,
 * blt_scaled_table.c, of up to CC_BLT_SCALED_BUFFERS buffers searched for
 * the mean under the scaling (report/blt_scaled_table.c), held to a mean and
 * a worst step no larger than blt's table gives under the same scaling
 * at 32 horizons spread over each entry's range, and to decays no slower than blt's
 * entry's slowest, so that the buffers' magnitudes stay as analysed below.
 * Nothing private rests on the search: any BLT of the kind blt.h describes
 * (positive scales, decays in (0, 1)) has columns that are truncations of
 * its first, which is all the argument below uses.
 *
 * The integer mechanism is blt's, item x_t replaced by y_t = m_t x_t (the
 * fixed point K is folded into the m_t):
 *
 *		u_t = y_t + floor(sum_j floor(omega_j S_j) / F),  S_j <- floor(theta_j S_j) + F y_t
 *		w_t = u_t + z_t,  z_t ~ N_Z(0, sigma^2)
 *		q_t = w_t - floor(sum_j floor(omega_j S'_j) / F),  S'_j <- floor(theta_j S'_j) + F q_t
 *		Y_p <- Y_p + q_t (p the stretch of t),  release_t = round(sum_p Y_p / m_p)
 *
 * Sensitivity.  For streams x and x + v (v >= 0, sum v <= Delta) mech_blt.c's
 * argument gives u(x + v) - u(x) = C (m v) + e with |e_t| < E from v's first
 * step on.  Column j of C D has norm m_j ||c(T - j + 1)||, at most
 * m_p ||c(T - s_p + 1)|| for j in stretch p starting at s_p, so
 *		||u(x + v) - u(x)||_2 <= Delta max_p m_p ||c(T - s_p + 1)|| + E sqrt(T),
 * every norm a closed form of positive terms (blt.c), inflated against
 * rounding; sigma^2 = that^2 / (2 rho) makes w rho-zCDP, and everything
 * released is computed from w alone.  The bound holds whatever the items
 * are, so also for a stream whose later items depend on earlier releases:
 * step t is a discrete Gaussian mechanism whose shift u_t(x + v) - u_t(x)
 * is fixed by the history before its draw (u is causal), of Renyi
 * divergence alpha shift^2 / (2 sigma^2), and the shifts' squares add up to
 * at most the bound above on every history, so the Renyi filter (Feldman
 * and Zrnic 2021) gives the same rho for the adaptive sequence, as for
 * linear mechanisms with Gaussian noise on adaptive streams (Denisov,
 * McMahan, Rush, Smith and Thakurta 2022).
 *
 * Error.  q_t = y_t + (C^-1 (z + eta))_t with |eta_t| < E (mech_blt.c), so
 * the release is (A x)_t + sum_k W_k(t) (z_k + eta_k) rounded, with
 *		W_k(t) = sum_{i=k}^{t} c'_{i-k} / m_i = b_{t-k} / m_{p(t)}
 *				 + sum_{q: k <= e_q < t} delta_q b_{e_q - k},
 * c' C^-1's coefficients, b_n = sum_{i<=n} c'_i B's (blt.h, all positive),
 * e_q stretch q's last step and delta_q = 1/m_q - 1/m_(q+1) >= 0.  The
 * variance is sigma^2's discrete Gaussian variance times sum_k W_k(t)^2,
 * which sums over the pairs of those terms X(u, v) = sum_{n<u} b_n b_{n+v-u},
 * geometric sums again: a read costs a BLT read and one power a buffer (the
 * stretch's sums are prepared once, see stretch_sums()).  The deterministic
 * part is at most E sum_k |W_k(t)| <= E (B(t) / m_p + sum_q delta_q B(e_q)),
 * B(n) = sum_{k<n} b_k, plus the rounding's 1/2.
 *
 * State: the two recurrences' buffers and one running sum a stretch,
 * 16 + 16 (2 CC_BLT_SCALED_BUFFERS + P) bytes, 1584 with P = 82; the
 * multipliers are a function of the parameters.
 */
#include "mechanism_int.h"
#include "gaussian.h"

#include <math.h>
#include <string.h>

/* m_p <= 2^31 sqrt(||c(T)||^2) stays below 2^36: buffers below 2^124 */
#define MAX_SHIFT 31
/* E sqrt(T) <= 2^-16 K Delta ||c||, as in mech_blt.c */
#define DEVIATION_BITS 16
#define SAFETY (1.0 + 1e-9)
/* the sum of the stretches' fractions, below 2^-40 off: the rounding's slack */
#define FRACTION_SLACK 1e-9
#define STRETCHES CC_BLT_SCALED_STRETCHES
/* stretches an octave of the distance to the horizon holds */
#define PARTS 2

/* What a horizon and K make of the mechanism: public numbers only. */
typedef struct scaled_forms
{
	int64_t		horizon;		/* the key, with shift */
	int			shift;
	bool		valid;
	int			entry;
	cc_blt_noise noise;			/* B's coefficients */
	double		deviation;		/* E */
	int			stretches;
	int64_t		start[STRETCHES + 1];	/* start[stretches] = T + 1 */
	uint64_t	multiplier[STRETCHES];
	double		inv[STRETCHES]; /* 1 / m_p */
	double		l2;				/* max_p m_p ||c(T - s_p + 1)||, inflated */
	double		l1;				/* the same with C's L1 column norms */
	/* for t in stretch p: sum_{q<p} delta_q X(e_q, t) = level + sum_l tail_l theta_l^(t - s_p) */
	double		level[STRETCHES];
	double		tail[STRETCHES][CC_BLT_MAX_BUFFERS];
	double		earlier[STRETCHES]; /* sum_{q,q'<p} delta_q delta_q' X(e_q, e_q') */
	double		bsums[STRETCHES];	/* sum_{q<p} delta_q B(e_q) */
} scaled_forms;

/*
 * The stretches: step t's distance to the horizon T - t + 1 in
 * (T 2^(-(p+1)/2), T 2^(-p/2)], p = 0 first, the empty ones left out:
 * half-octaves.  Octaves leave 1% more variance at T = 2^20, quarters
 * 0.3% less but twice the state.
 */
static int
stretch_layout(int64_t horizon, int64_t *start)
{
	int			n = 0;

	for (int p = 0; p < 63 * PARTS; p++)
	{
		double		distance = floor((double) horizon * exp2(-(double) p / PARTS));
		int64_t		first = horizon - (int64_t) distance + 1;

		if (distance < 1.0)
			break;

		if (n == 0 || first > start[n - 1])
			start[n++] = first;
	}
	start[n] = horizon + 1;
	return n;
}

/* The stretch of step t, 1 <= t <= T. */
static int
stretch_of(const scaled_forms *f, int64_t t)
{
	int			lo = 0;
	int			hi = f->stretches - 1;

	while (lo < hi)
	{
		int			mid = (lo + hi + 1) / 2;

		if (f->start[mid] <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* C's first column's L1 norm over n rows: 1 + sum_j omega_j sum_{k<n-1} theta_j^k */
static double
column_l1(const cc_blt *blt, double n)
{
	double		sum = 1.0;

	for (int j = 0; j < blt->buffers; j++)
		sum += blt->omega[j] * cc_geometric_sum(blt->phi[j], n - 1.0);
	return sum;
}

/*
 * m_p = floor(K ||c(T)|| / ||c(T - s_p + 1)||): every stretch's longest
 * column about K ||c(T)||, and m_p growing with p.  The norms the
 * sensitivity takes are recomputed from the m_p as they are.
 */
static void
stretch_multipliers(scaled_forms *f, const cc_blt *blt)
{
	double		top = cc_blt_column_norm2(blt, (double) f->horizon);

	f->l2 = 0.0;
	f->l1 = 0.0;
	for (int p = 0; p < f->stretches; p++)
	{
		double		rows = (double) (f->horizon - f->start[p] + 1);
		double		norm2 = cc_blt_column_norm2(blt, rows);
		double		m = floor(ldexp(sqrt(top / norm2), f->shift));

		f->multiplier[p] = (uint64_t) m;
		if (p > 0 && f->multiplier[p] < f->multiplier[p - 1])
			f->multiplier[p] = f->multiplier[p - 1];
		f->inv[p] = 1.0 / (double) f->multiplier[p];
		f->l2 = fmax(f->l2, (double) f->multiplier[p] * sqrt(norm2 * SAFETY) * SAFETY);
		f->l1 = fmax(f->l1, (double) f->multiplier[p] * column_l1(blt, rows) * SAFETY);
	}
}

/* theta_l^k for k >= 0 */
static double
decay_power(const cc_blt_noise *noise, int l, double k)
{
	return exp(k * noise->log_theta[l]);
}

/*
 * The head of the file's sums over the stretches before each one, from the
 * stretch before: with e the last step of stretch p and n its length,
 *		X(e_q, t) = beta^2 e_q + beta sum_j alpha_j G_j(e_q)
 *					+ sum_l theta_l^(t - e_q) alpha_l (beta G_l(e_q) + sum_j alpha_j G_jl(e_q)),
 * G the geometric sums of theta_j and theta_j theta_l over e_q terms.
 */
static void
stretch_sums(scaled_forms *f)
{
	const cc_blt_noise *nz = &f->noise;

	memset(f->tail[0], 0, sizeof(f->tail[0]));
	f->level[0] = f->earlier[0] = f->bsums[0] = 0.0;
	for (int p = 0; p + 1 < f->stretches; p++)
	{
		double		e = (double) (f->start[p + 1] - 1);
		double		n = (double) (f->start[p + 1] - f->start[p]);
		double		delta = f->inv[p] - f->inv[p + 1];
		double		cross = f->level[p];
		double		flat = nz->beta * nz->beta * e;
		double		bsum;
		double		squares = cc_blt_step_error(nz, e, &bsum);

		for (int l = 0; l < nz->buffers; l++)
		{
			double		g = cc_geometric_sum(nz->phi[l], e);
			double		pairs = nz->beta * g;

			for (int j = 0; j < nz->buffers; j++)
				pairs += nz->alpha[j] *
					cc_geometric_sum(nz->phi[j] + nz->phi[l] - nz->phi[j] * nz->phi[l], e);
			cross += f->tail[p][l] * decay_power(nz, l, n - 1.0);
			flat += nz->beta * nz->alpha[l] * g;
			f->tail[p + 1][l] = decay_power(nz, l, n) * f->tail[p][l] +
				delta * decay_power(nz, l, 1.0) * nz->alpha[l] * pairs;
		}
		f->earlier[p + 1] = f->earlier[p] + 2.0 * delta * cross + delta * delta * squares;
		f->level[p + 1] = f->level[p] + delta * flat;
		f->bsums[p + 1] = f->bsums[p] + delta * bsum;
	}
}

/* The forms for a horizon and K = 2^shift, kept for the last pair asked. */
static const scaled_forms *
forms_for(int64_t horizon, int shift)
{
	static scaled_forms f = {.horizon = -1};
	cc_blt		blt;

	if (f.horizon == horizon && f.shift == shift)
		return &f;
	f.horizon = horizon;
	f.shift = shift;
	f.entry = cc_blt_entry_for(horizon);
	cc_blt_of_entry(&cc_blt_scaled_table[f.entry], &blt);
	f.valid = cc_blt_noise_of(&blt, &f.noise);
	f.deviation = cc_blt_deviation(&blt);
	f.stretches = stretch_layout(horizon, f.start);
	if (f.valid)
	{
		stretch_multipliers(&f, &blt);
		stretch_sums(&f);
	}
	return &f;
}

/*
 * K = 2^shift and sigma^2 for checked parameters: as mech_blt.c chooses
 * them, for the L2 sensitivity Delta l2 + E sqrt(T) of the head of the file.
 */
static cc_status
plan_search(const cc_params *p, int *shift, cc_scale *sigma2)
{
	double		horizon = (double) p->horizon;
	cc_blt_noise noise;
	cc_blt		blt;
	double		least;

	/* l2 is about K ||c(T)||, and m_0 = K: K from ||c(T)|| */
	cc_blt_of_entry(&cc_blt_scaled_table[cc_blt_entry_for(p->horizon)], &blt);
	if (!cc_blt_noise_of(&blt, &noise))
		return CC_SCALE_TOO_LARGE;
	least = ceil(log2(ldexp(cc_blt_deviation(&blt) * sqrt(horizon), DEVIATION_BITS) /
					  ((double) p->sensitivity * sqrt(cc_blt_column_norm2(&blt, horizon)))));
	for (*shift = (int) fmax(0.0, fmin(least, MAX_SHIFT)); *shift >= 0; (*shift)--)
	{
		const scaled_forms *f = forms_for(p->horizon, *shift);
		double		l2;

		l2 = (double) p->sensitivity * f->l2 + f->deviation * sqrt(horizon);
		if (cc_gaussian_sigma2((unsigned __int128) ceil(l2 * l2 * SAFETY), p->rho_units,
							   sigma2) == CC_OK)
			return CC_OK;
	}
	return CC_SCALE_TOO_LARGE;
}

/*
 * plan_search()'s answer, kept for the last parameters asked: a bound reads
 * it for each of its classes, and where sigma^2 must shrink K the search
 * builds the forms of each K it passes.
 */
static cc_status
scaled_plan_of(const cc_params *p, int *shift, cc_scale *sigma2)
{
	static struct
	{
		int64_t		horizon;
		int64_t		sensitivity;
		uint64_t	rho_units;
		cc_status	status;
		int			shift;
		cc_scale	sigma2;
	}			last = {.horizon = -1};

	if (last.horizon != p->horizon || last.sensitivity != p->sensitivity ||
		last.rho_units != p->rho_units)
	{
		last.status = plan_search(p, &last.shift, &last.sigma2);
		last.horizon = p->horizon;
		last.sensitivity = p->sensitivity;
		last.rho_units = p->rho_units;
	}
	*shift = last.shift;
	*sigma2 = last.sigma2;
	return last.status;
}

static cc_status
scaled_sigma2(const cc_params *params, cc_scale *sigma2)
{
	int			shift;

	return scaled_plan_of(params, &shift, sigma2);
}

/*
 * What moves between neighbours (privacy_region.c), as blt_pair() says: the
 * absolute moves of u add up to at most Delta l1 + Delta E T over at most
 * Delta T coordinates.
 */
static void
scaled_pair(const cc_params *p, cc_gauss *gauss)
{
	int			shift;
	cc_scale	sigma2;
	const scaled_forms *f;
	double		delta = (double) p->sensitivity;
	double		l1;

	memset(gauss, 0, sizeof(*gauss));
	if (scaled_plan_of(p, &shift, &sigma2) != CC_OK)
		return;
	f = forms_for(p->horizon, shift);
	l1 = (delta * f->l1 + delta * f->deviation * (double) p->horizon) * SAFETY /
		cc_scale_value(sigma2) * SAFETY;
	if (!(l1 * (double) CC_RHO_UNITS_PER_ONE < 0x1p62))
		return;
	gauss->sigma2 = sigma2;
	gauss->coordinates = (uint64_t) p->horizon * (uint64_t) p->sensitivity;
	gauss->shift = 0;
	gauss->l1_units = (uint64_t) ceil(l1 * (double) CC_RHO_UNITS_PER_ONE) + 1;
}

static size_t
scaled_size(const cc_params *params)
{
	(void) params;
	return sizeof(cc_blt_scaled_part);
}

static void
scaled_init(cc_state *state)
{
	cc_blt_scaled_part *part = cc_state_part(state);
	int			shift;
	cc_scale	sigma2;

	scaled_plan_of(&state->params, &shift, &sigma2);
	part->entry = cc_blt_entry_for(state->params.horizon);
	part->shift = shift;
}

/*
 * round(sum_{p<=last} Y_p / m_p): the floors exactly, their remainders'
 * fractions in doubles (each below 1, the sum within FRACTION_SLACK).
 */
static bool
scaled_release(const scaled_forms *f, const cc_blt_scaled_part *part, int last,
			   int64_t *out)
{
	__int128	whole = 0;
	double		fraction = 0.0;

	for (int p = 0; p <= last; p++)
	{
		__int128	sum = cc_wide_get(&part->totals[p]);
		__int128	m = (__int128) f->multiplier[p];
		__int128	q = sum / m;
		__int128	r = sum % m;

		if (r < 0)
		{
			q--;
			r += m;
		}
		whole += q;
		fraction += (double) r * f->inv[p];
	}
	whole += (__int128) floor(fraction + 0.5);
	if (whole < INT64_MIN || whole > INT64_MAX)
		return false;
	*out = (int64_t) whole;
	return true;
}

static cc_status
scaled_push(cc_state *state, int64_t x, cc_rng *rng)
{
	cc_blt_scaled_part *part = cc_state_part(state);
	const cc_blt_entry *e = &cc_blt_scaled_table[part->entry];
	const scaled_forms *f = forms_for(state->params.horizon, (int) part->shift);
	int			p = stretch_of(f, state->t);
	__int128	y = (__int128) x * (__int128) f->multiplier[p];
	__int128	w;
	__int128	q;
	__int128	total;
	int64_t		z;

	/* the data path: u_t, then C's buffers take the scaled item */
	w = y + cc_blt_buffers_read(e, part->data);
	if (!cc_blt_buffers_update(e, part->data, y))
		return CC_OVERFLOW;
	/* cc_params_prepare() checked sigma2: the draw cannot fail */
	cc_dgauss_draw(rng, state->scale, &z);
	w += z;

	/* the release path, from w alone */
	q = w - cc_blt_buffers_read(e, part->noisy);
	if (!cc_blt_buffers_update(e, part->noisy, q) ||
		__builtin_add_overflow(cc_wide_get(&part->totals[p]), q, &total))
		return CC_OVERFLOW;
	cc_wide_set(&part->totals[p], total);
	return scaled_release(f, part, p, &state->noisy) ? CC_OK : CC_OVERFLOW;
}

/*
 * sum_k W_k(t)^2 for noise of variance 1, the X part's t taken at from (the
 * part falls with t, the rest grows: a class's bound takes it at its first
 * step), and into *deviation the head of the file's sum_k |W_k(t)| bound.
 */
static double
squares_at(const scaled_forms *f, int64_t t, int64_t from, double *deviation)
{
	const cc_blt_noise *nz = &f->noise;
	int			p = stretch_of(f, t);
	double		bsum;
	double		squares = cc_blt_step_error(nz, (double) t, &bsum);
	double		cross = f->level[p];

	for (int l = 0; l < nz->buffers; l++)
		cross += f->tail[p][l] * decay_power(nz, l, (double) (from - f->start[p]));
	*deviation = bsum * f->inv[p] + f->bsums[p];
	return f->inv[p] * f->inv[p] * squares + 2.0 * f->inv[p] * cross + f->earlier[p];
}

static void
noise_between(const cc_params *params, int shift, cc_scale sigma2, double sigma2_variance,
			  int64_t from, int64_t t, cc_noise *noise)
{
	const scaled_forms *f = forms_for(params->horizon, shift);
	double		deviation;
	double		squares = squares_at(f, t, from, &deviation);

	noise->variance = sigma2_variance * squares;
	noise->proxy = cc_scale_value(sigma2) * squares;
	noise->rounding = 0.5 + FRACTION_SLACK + f->deviation * deviation * SAFETY;
}

static void
scaled_noise(const cc_state *state, cc_noise *noise)
{
	const cc_blt_scaled_part *part = cc_state_part(state);

	noise_between(&state->params, (int) part->shift, state->scale, state->scale_variance,
				  state->t, state->t, noise);
}

/*
 * The bound's classes: runs of at most `per` steps inside one stretch, at
 * most CC_MAX_CLASSES of them; class k's steps from class_steps().
 */
static int64_t
steps_per_class(const cc_params *params)
{
	int64_t		room = CC_MAX_CLASSES - STRETCHES;

	return (params->horizon + room - 1) / room;
}

/* Class `key`'s first and last steps: the classes of each stretch in turn. */
static void
class_steps(const scaled_forms *f, int64_t per, int64_t key, int64_t *first, int64_t *last)
{
	for (int p = 0; p < f->stretches; p++)
	{
		int64_t		length = f->start[p + 1] - f->start[p];
		int64_t		count = (length + per - 1) / per;

		if (key < count || p == f->stretches - 1)
		{
			*first = f->start[p] + key * per;
			*last = *first + per - 1 < f->start[p + 1] - 1 ? *first + per - 1 : f->start[p + 1] - 1;
			return;
		}
		key -= count;
	}
}

static int
scaled_bound_classes(const cc_params *params, int64_t group, int64_t *segments,
					 cc_class *out)
{
	int			shift;
	cc_scale	sigma2;
	const scaled_forms *f;
	int64_t		per = steps_per_class(params);
	int			n = 0;

	(void) group;
	*segments = params->horizon;
	scaled_plan_of(params, &shift, &sigma2);
	f = forms_for(params->horizon, shift);
	for (int p = 0; p < f->stretches; p++)
		for (int64_t first = f->start[p]; first < f->start[p + 1]; first += per)
		{
			int64_t		left = f->start[p + 1] - first;

			out[n] = (cc_class) {n, left < per ? left : per};
			n++;
		}
	return n;
}

/* A class's tail: the X part at its first step, the rest at its last. */
static void
scaled_bound_tail(const cc_params *params, int64_t group, int64_t key, cc_tail *tail)
{
	int			shift;
	cc_scale	sigma2;
	cc_noise	noise;
	int64_t		first;
	int64_t		last;

	(void) group;
	scaled_plan_of(params, &shift, &sigma2);
	class_steps(forms_for(params->horizon, shift), steps_per_class(params), key, &first, &last);
	noise_between(params, shift, sigma2, 0.0, first, last, &noise);
	tail->proxy = noise.proxy;
	tail->rounding = noise.rounding;
}

/* The plan the parameters make, and untouched sums past the stretches'. */
static bool
scaled_part_valid(const cc_params *params, int64_t t, const void *bytes)
{
	cc_blt_scaled_part part;
	int			shift;
	cc_scale	sigma2;
	const scaled_forms *f;

	memcpy(&part, bytes, sizeof(part));
	if (scaled_plan_of(params, &shift, &sigma2) != CC_OK ||
		part.entry != cc_blt_entry_for(params->horizon) || part.shift != shift)
		return false;
	f = forms_for(params->horizon, shift);
	for (int j = (int) cc_blt_scaled_table[part.entry].buffers; j < CC_BLT_SCALED_BUFFERS; j++)
		if (cc_wide_get(&part.data[j]) != 0 || cc_wide_get(&part.noisy[j]) != 0)
			return false;
	for (int p = t > 0 ? stretch_of(f, t) + 1 : 0; p < STRETCHES; p++)
		if (cc_wide_get(&part.totals[p]) != 0)
			return false;
	return true;
}

uint64_t
cc_blt_scaled_multiplier(int64_t horizon, int shift, int64_t t)
{
	const scaled_forms *f = forms_for(horizon, shift);

	return f->multiplier[stretch_of(f, t)];
}

/*
 * The mean from the sums over each stretch's steps (cc_blt_error_sum() for
 * the squares, geometric sums for the X part), the largest from the
 * classes' bounds, which at T <= CC_MAX_CLASSES - STRETCHES are the steps.
 */
void
cc_blt_scaled_variance_over_horizon(const cc_params *params, double *mean, double *worst)
{
	int			shift;
	cc_scale	sigma2;
	const scaled_forms *f;
	const cc_blt_noise *nz;
	double		unit;
	double		sum = 0.0;
	cc_class	classes[CC_MAX_CLASSES];
	int64_t		segments;
	int			n;

	scaled_plan_of(params, &shift, &sigma2);
	f = forms_for(params->horizon, shift);
	nz = &f->noise;
	unit = cc_dgauss_variance(sigma2);
	for (int p = 0; p < f->stretches; p++)
	{
		double		length = (double) (f->start[p + 1] - f->start[p]);
		double		cross = length * f->level[p];

		for (int l = 0; l < nz->buffers; l++)
			cross += f->tail[p][l] * cc_geometric_sum(nz->phi[l], length);
		sum += f->inv[p] * f->inv[p] * (cc_blt_error_sum(nz, (double) (f->start[p + 1] - 1)) -
										 cc_blt_error_sum(nz, (double) (f->start[p] - 1))) +
			2.0 * f->inv[p] * cross + length * f->earlier[p];
	}
	*mean = unit * sum / (double) params->horizon;
	*worst = 0.0;
	n = scaled_bound_classes(params, 0, &segments, classes);
	for (int k = 0; k < n; k++)
	{
		int64_t		first;
		int64_t		last;
		double		deviation;

		class_steps(f, steps_per_class(params), k, &first, &last);
		*worst = fmax(*worst, unit * squares_at(f, last, first, &deviation));
	}
}

const cc_mechanism_ops cc_blt_scaled_ops = {
	.name = "blt_scaled",
	.privacy = CC_ZCDP,
	.needs_horizon = true,
	.max_horizon = INT64_C(1) << (CC_BLT_ENTRIES - 1),
	.gaussian_sigma2 = scaled_sigma2,
	.gaussian_noise = scaled_noise,
	.gaussian_pair = scaled_pair,
	.bound_classes = scaled_bound_classes,
	.bound_tail = scaled_bound_tail,
	.part_size = scaled_size,
	.init = scaled_init,
	.push = scaled_push,
	.part_valid = scaled_part_valid,
};
