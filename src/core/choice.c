/*
 * choice.c
 *		Mechanism "auto": the mechanism of least mean or worst variance over
 *		the steps of a horizon, from each one's variance at step t.
 *
 * A horizon may be 2^62 steps, so nothing here iterates over t: each
 * mechanism's mean and largest variance over t = 1 .. T comes from a closed
 * form or a walk over the bits of T.  What the forms count is the noise
 * draws in the release at t (each mechanism's terms), or for honaker their
 * weights; the unit tests check every form against the sum over t, and the
 * per-step variances against the states' own.
 */
#include "mechanism_int.h"
#include "choice.h"
#include "gaussian.h"

#include <string.h>

static const char *const objective_names[] = {
	[CC_OBJECTIVE_MEAN] = "mean",
	[CC_OBJECTIVE_WORST] = "worst",
};

bool
cc_objective_from_name(const char *name, cc_objective *objective)
{
	for (int o = 0; o < (int) (sizeof(objective_names) / sizeof(objective_names[0])); o++)
	{
		if (strcmp(name, objective_names[o]) == 0)
		{
			*objective = (cc_objective) o;
			return true;
		}
	}
	return false;
}

const char *
cc_objective_name(cc_objective objective)
{
	return objective_names[objective];
}

/*
 * Variance of one draw of scale multiplier * sensitivity / epsilon, or for a
 * Gaussian kind of its one sigma^2 (the multiplier unused).
 */
static double
draw_variance(const cc_params *p, uint64_t multiplier)
{
	cc_scale	scale;

	if (p->privacy == CC_ZCDP)
	{
		cc_mechanism(p->kind)->gaussian_sigma2(p, &scale);
		return cc_dgauss_variance(scale);
	}
	/* cc_params_prepare() checked the largest multiplier each kind uses */
	cc_scale_make(multiplier * (uint64_t) p->sensitivity, p->epsilon_units,
				  CC_EPSILON_UNITS_PER_ONE, &scale);
	return cc_dlap_variance(scale);
}

static int
bit_length(uint64_t n)
{
	return n == 0 ? 0 : 64 - __builtin_clzll(n);
}

/* How many t in 1 .. n have bit d set: 2^d in every full period 2^(d+1). */
static uint64_t
bit_count(uint64_t n, int d)
{
	uint64_t	period = UINT64_C(2) << d;
	uint64_t	rest = (n + 1) % period;

	return (n + 1) / period * (UINT64_C(1) << d) +
		(rest > (UINT64_C(1) << d) ? rest - (UINT64_C(1) << d) : 0);
}

/* Sum of popcount(t) over t = 1 .. n, n < 2^63. */
static double
popcount_sum(uint64_t n)
{
	unsigned __int128 sum = 0;

	for (int d = 0; d < bit_length(n); d++)
		sum += bit_count(n, d);
	return (double) sum;
}

/*
 * The largest popcount(t) over t = 1 .. n (0 for n = 0): n's own, or all
 * ones below n's top bit.
 */
static int
popcount_max(uint64_t n)
{
	int			below_top = bit_length(n) - 1;
	int			own = __builtin_popcountll(n);

	return n == 0 ? 0 : (own > below_top ? own : below_top);
}

/* Honaker's share of a draw's variance at level d: 2^d / (2^(d+1) - 1). */
static double
honaker_weight(int d)
{
	return (double) (UINT64_C(1) << d) / (double) ((UINT64_C(2) << d) - 1);
}

static double
honaker_share(uint64_t t)
{
	double		share = 0.0;

	for (int d = 0; d < bit_length(t); d++)
		if ((t >> d) & 1)
			share += honaker_weight(d);
	return share;
}

/*
 * The largest share over t = 1 .. n.  Every weight is positive, so below
 * any bit where t leaves a set bit of n clear, t is best all ones: the
 * candidates are n itself and, for each set bit p of n, n with p cleared
 * and every bit below p set.
 */
static double
honaker_share_max(uint64_t n)
{
	double		best = honaker_share(n);

	for (int p = 0; p < bit_length(n); p++)
	{
		uint64_t	t;
		double		share;

		if (((n >> p) & 1) == 0)
			continue;
		t = (n & ~(UINT64_C(1) << p)) | ((UINT64_C(1) << p) - 1);
		share = honaker_share(t);
		if (t >= 1 && share > best)
			best = share;
	}
	return best;
}

/*
 * two_level, block B, t = qB + r: q + r draws.  Over t = 0 .. T, with
 * T = QB + R, the q's sum to B Q(Q - 1)/2 + Q(R + 1) and the r's to
 * Q B(B - 1)/2 + R(R + 1)/2.  The most draws are at T (Q + R) or at the
 * end of the block before T's, QB - 1 (Q - 1 + B - 1).
 */
static void
two_level_draws(uint64_t T, uint64_t B, double *sum, double *most)
{
	uint64_t	Q = T / B;
	uint64_t	R = T % B;
	unsigned __int128 total;

	total = (unsigned __int128) B * Q * (Q - 1) / 2 + (unsigned __int128) Q * (R + 1) +
		(unsigned __int128) Q * B * (B - 1) / 2 + (unsigned __int128) R * (R + 1) / 2;
	*sum = (double) total;
	*most = (double) (Q + R > Q + B - 2 ? Q + R : Q + B - 2);
}

/*
 * hybrid: at t in [2^k, 2^(k+1)), k + 1 draws of scale 2 and popcount(t -
 * 2^k) of scale 2k, the tree's over (2^k, 2^(k+1)).  One term per k.
 */
static void
hybrid_variance(const cc_params *p, double *sum, double *most)
{
	uint64_t	T = (uint64_t) p->horizon;
	double		log_variance = draw_variance(p, 2);

	*sum = 0.0;
	*most = 0.0;
	for (int k = 0; k < bit_length(T); k++)
	{
		uint64_t	start = UINT64_C(1) << k;
		uint64_t	last = (T < 2 * start - 1 ? T : 2 * start - 1) - start;
		double		tree_variance = k > 0 ? draw_variance(p, 2 * (uint64_t) k) : 0.0;
		double		worst;

		*sum += (double) (last + 1) * (double) (k + 1) * log_variance +
			popcount_sum(last) * tree_variance;
		worst = (double) (k + 1) * log_variance + popcount_max(last) * tree_variance;
		if (worst > *most)
			*most = worst;
	}
}

/* kary: sum |d_j| draws at t, counted by the digits of T (mech_kary.c) */
static void
kary_variance(const cc_params *p, double draw, double *sum, double *most)
{
	int64_t		draws;

	cc_kary_draws_over_horizon(p->block, p->horizon, sum, &draws);
	*sum *= draw;
	*most = (double) draws * draw;
}

void
cc_variance_over_horizon(const cc_params *p, double *mean, double *worst)
{
	uint64_t	T = (uint64_t) p->horizon;
	double		draw;
	double		sum = 0.0;
	double		most = 0.0;

	if (p->kind == CC_BLT)
	{
		cc_blt_variance_over_horizon(p, mean, worst);
		return;
	}
	if (p->kind == CC_BLT_SCALED)
	{
		cc_blt_scaled_variance_over_horizon(p, mean, worst);
		return;
	}
	draw = draw_variance(p, p->privacy == CC_ZCDP ? 0 :
						 cc_mechanism(p->kind)->main_multiplier(p));
	switch (p->kind)
	{
		case CC_SIMPLE_I:
			sum = (double) T * draw;
			most = draw;
			break;
		case CC_SIMPLE_II:
			/* t draws at t: T(T + 1)/2 in all, in exact integers first */
			sum = (double) ((unsigned __int128) T * (T + 1) / 2) * draw;
			most = (double) T * draw;
			break;
		case CC_TWO_LEVEL:
			two_level_draws(T, (uint64_t) p->block, &sum, &most);
			sum *= draw;
			most *= draw;
			break;
		case CC_BINARY:
			sum = popcount_sum(T) * draw;
			most = popcount_max(T) * draw;
			break;
		case CC_HYBRID:
			hybrid_variance(p, &sum, &most);
			break;
		case CC_HONAKER:
		case CC_GAUSSIAN_HONAKER:
			for (int d = 0; d < bit_length(T); d++)
				sum += (double) bit_count(T, d) * honaker_weight(d);
			sum *= draw;
			most = honaker_share_max(T) * draw;
			break;
		case CC_SMOOTH_BINARY:
			/* k draws of scale k at every step: the multiplier is k */
			most = (double) cc_mechanism(p->kind)->main_multiplier(p) * draw;
			sum = (double) T * most;
			break;
		case CC_KARY:
			kary_variance(p, draw, &sum, &most);
			break;
		case CC_BLT:
		case CC_BLT_SCALED:
		case CC_NUM_KINDS:
			break;
	}
	*mean = sum / (double) T;
	*worst = most;
}

cc_status
cc_choose(cc_params *params, cc_objective objective)
{
	cc_params	best;
	double		best_value = 0.0;
	bool		found = false;

	if (!params->has_horizon)
		return CC_NEED_HORIZON;
	if (params->has_block)
		return CC_BLOCK_NOT_APPLICABLE;
	for (int k = 0; k < CC_NUM_KINDS; k++)
	{
		cc_params	candidate = *params;
		cc_status	status;
		double		mean;
		double		worst;
		double		value;

		candidate.kind = (cc_kind) k;
		/*
		 * only the kinds of the privacy the parameters account in, and that
		 * take the horizon
		 */
		if (cc_kind_privacy(candidate.kind) != params->privacy ||
			(params->horizon > cc_kind_max_horizon(candidate.kind) &&
			 params->horizon <= CC_MAX_HORIZON))
			continue;
		status = cc_params_prepare(&candidate);
		if (status == CC_SCALE_TOO_LARGE)
			continue;
		if (status != CC_OK)
			return status;
		cc_variance_over_horizon(&candidate, &mean, &worst);
		value = objective == CC_OBJECTIVE_MEAN ? mean : worst;
		if (!found || value < best_value)
		{
			best = candidate;
			best_value = value;
			found = true;
		}
	}
	/*
	 * simple_ii's scale, at most CC_MAX_SENSITIVITY / CC_MIN_EPSILON, fits;
	 * under zCDP even gaussian_honaker's sigma^2 may not
	 */
	if (!found)
		return CC_SCALE_TOO_LARGE;
	*params = best;
	return CC_OK;
}
