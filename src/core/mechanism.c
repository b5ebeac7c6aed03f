/*
 * mechanism.c
 *		What all mechanisms share: parameters, dispatch, and error bars.
 */
#include "mechanism_int.h"
#include "gaussian.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* the layout states were stored with before zCDP (see cc_params) */
_Static_assert(sizeof(cc_params) == 64 &&
			   offsetof(cc_params, privacy) == 4 &&
			   offsetof(cc_params, epsilon_units) == 8 &&
			   offsetof(cc_params, rho_units) == 8 &&
			   offsetof(cc_params, horizon) == 24 &&
			   offsetof(cc_params, beta) == 56,
			   "cc_params changed its stored layout");

static const cc_mechanism_ops *const mechanisms[CC_NUM_KINDS] = {
	[CC_SIMPLE_I] = &cc_simple_i_ops,
	[CC_SIMPLE_II] = &cc_simple_ii_ops,
	[CC_TWO_LEVEL] = &cc_two_level_ops,
	[CC_BINARY] = &cc_binary_ops,
	[CC_HYBRID] = &cc_hybrid_ops,
	[CC_HONAKER] = &cc_honaker_ops,
	[CC_SMOOTH_BINARY] = &cc_smooth_binary_ops,
	[CC_GAUSSIAN_HONAKER] = &cc_gaussian_honaker_ops,
	[CC_BLT] = &cc_blt_ops,
};

const cc_mechanism_ops *
cc_mechanism(cc_kind kind)
{
	return mechanisms[kind];
}

bool
cc_kind_from_name(const char *name, cc_kind *kind)
{
	for (int k = 0; k < CC_NUM_KINDS; k++)
	{
		if (strcmp(name, mechanisms[k]->name) == 0)
		{
			*kind = (cc_kind) k;
			return true;
		}
	}
	return false;
}

const char *
cc_kind_name(cc_kind kind)
{
	return mechanisms[kind]->name;
}

bool
cc_kind_needs_horizon(cc_kind kind)
{
	return mechanisms[kind]->needs_horizon;
}

cc_accounting
cc_kind_privacy(cc_kind kind)
{
	return mechanisms[kind]->privacy;
}

int64_t
cc_kind_max_horizon(cc_kind kind)
{
	return mechanisms[kind]->max_horizon ? mechanisms[kind]->max_horizon : CC_MAX_HORIZON;
}

cc_cost
cc_params_cost(const cc_params *params)
{
	cc_cost		cost;

	if (params->privacy != CC_ZCDP)
		return cc_pure_cost(params->epsilon_units);
	cost = cc_zcdp_cost(params->rho_units);
	if (mechanisms[params->kind]->gaussian_pair)
		mechanisms[params->kind]->gaussian_pair(params, &cost.gauss);
	return cost;
}

cc_status
cc_epsilon_units(double epsilon, uint64_t *units)
{
	/* written so that NaN fails too */
	if (!(epsilon >= CC_MIN_EPSILON && epsilon <= CC_MAX_EPSILON))
		return CC_BAD_EPSILON;
	*units = (uint64_t) llround(epsilon * (double) CC_EPSILON_UNITS_PER_ONE);
	return CC_OK;
}

cc_status
cc_rho_units(double rho, uint64_t *units)
{
	if (!(rho >= CC_MIN_RHO && rho <= CC_MAX_RHO))
		return CC_BAD_RHO;
	*units = (uint64_t) llround(rho * (double) CC_RHO_UNITS_PER_ONE);
	return CC_OK;
}

static int64_t
ceil_sqrt(int64_t n)
{
	int64_t		r = (int64_t) sqrt((double) n);

	while (r * r < n)
		r++;
	while (r > 1 && (r - 1) * (r - 1) >= n)
		r--;
	return r;
}

cc_status
cc_params_prepare(cc_params *p)
{
	const cc_mechanism_ops *ops = mechanisms[p->kind];
	uint64_t	multiplier;
	cc_scale	scale;

	if (p->privacy != ops->privacy)
		return CC_WRONG_PRIVACY;
	if (p->privacy == CC_PURE &&
		(p->epsilon_units < (uint64_t) llround(CC_MIN_EPSILON * CC_EPSILON_UNITS_PER_ONE) ||
		 p->epsilon_units > (uint64_t) llround(CC_MAX_EPSILON * CC_EPSILON_UNITS_PER_ONE)))
		return CC_BAD_EPSILON;
	if (p->privacy == CC_ZCDP &&
		(p->rho_units < (uint64_t) llround(CC_MIN_RHO * CC_RHO_UNITS_PER_ONE) ||
		 p->rho_units > (uint64_t) llround(CC_MAX_RHO * CC_RHO_UNITS_PER_ONE)))
		return CC_BAD_RHO;
	if (p->has_horizon && (p->horizon < 1 || p->horizon > cc_kind_max_horizon(p->kind)))
		return CC_BAD_HORIZON;
	if (!p->has_horizon && mechanisms[p->kind]->needs_horizon)
		return CC_NEED_HORIZON;
	if (p->sensitivity < 1 || p->sensitivity > CC_MAX_SENSITIVITY)
		return CC_BAD_SENSITIVITY;
	if (!(p->beta > 0.0 && p->beta < 1.0))
		return CC_BAD_BETA;
	if (p->kind == CC_TWO_LEVEL)
	{
		if (!p->has_block)
		{
			p->has_block = true;
			p->block = ceil_sqrt(p->horizon);
		}
		if (p->block < 1 || p->block > p->horizon)
			return CC_BAD_BLOCK;
	}
	else if (p->has_block)
		return CC_BLOCK_NOT_APPLICABLE;

	if (p->privacy == CC_ZCDP)
		return ops->gaussian_sigma2(p, &scale);
	multiplier = ops->max_multiplier ? ops->max_multiplier(p) : ops->main_multiplier(p);
	if (multiplier == 0 ||
		__builtin_mul_overflow(multiplier, (uint64_t) p->sensitivity, &multiplier) ||
		!cc_scale_make(multiplier, p->epsilon_units, CC_EPSILON_UNITS_PER_ONE,
					   &scale))
		return CC_SCALE_TOO_LARGE;
	return CC_OK;
}

uint64_t
cc_multiplier_one(const cc_params *params)
{
	(void) params;
	return 1;
}

uint64_t
cc_multiplier_two(const cc_params *params)
{
	(void) params;
	return 2;
}

size_t
cc_state_size(const cc_params *params)
{
	return sizeof(cc_state) + mechanisms[params->kind]->part_size(params);
}

cc_scale
cc_state_scale(const cc_state *state, uint64_t multiplier)
{
	cc_scale	scale;

	/* cc_params_prepare() checked the largest multiplier the mechanism uses */
	cc_scale_make(multiplier * (uint64_t) state->params.sensitivity,
				  state->params.epsilon_units, CC_EPSILON_UNITS_PER_ONE, &scale);
	return scale;
}

void
cc_state_init(cc_state *state, const cc_params *params)
{
	const cc_mechanism_ops *ops = mechanisms[params->kind];

	memset(state, 0, cc_state_size(params));
	state->size = (int64_t) cc_state_size(params);
	state->params = *params;
	if (params->privacy == CC_ZCDP)
	{
		ops->gaussian_sigma2(params, &state->scale);
		state->scale_variance = cc_dgauss_variance(state->scale);
	}
	else
	{
		state->scale = cc_state_scale(state, ops->main_multiplier(params));
		state->scale_variance = cc_dlap_variance(state->scale);
	}
	if (params->has_horizon)
		state->log_term = log(2.0 * (double) params->horizon / params->beta);
	if (ops->init)
		ops->init(state);
}

size_t
cc_state_bytes(const cc_state *state)
{
	return (size_t) state->size;
}

bool
cc_state_valid(const void *bytes, size_t len)
{
	cc_state	header;
	cc_params	params;

	if (len < sizeof(cc_state) || len > CC_STATE_MAX_BYTES)
		return false;
	memcpy(&header, bytes, sizeof(header));
	params = header.params;
	/* prepared parameters are a fixed point of cc_params_prepare() */
	if ((unsigned) params.kind >= CC_NUM_KINDS ||
		cc_params_prepare(&params) != CC_OK ||
		params.has_block != header.params.has_block ||
		params.block != header.params.block)
		return false;
	if (header.size != (int64_t) len || cc_state_size(&params) != len ||
		header.t < 0 || header.exact < 0 ||
		(params.has_horizon && header.t > params.horizon))
		return false;
	/* a part whose contents index the state is checked by its mechanism */
	return !mechanisms[params.kind]->part_valid ||
		mechanisms[params.kind]->part_valid(&params, header.t,
											(const char *) bytes + sizeof(cc_state));
}

const cc_params *
cc_state_params(const cc_state *state)
{
	return &state->params;
}

cc_status
cc_push(cc_state *state, int64_t item, cc_rng *rng)
{
	int64_t		limit = state->params.has_horizon ? state->params.horizon : CC_MAX_HORIZON;
	int64_t		exact;

	if (item < 0)
		return CC_NEGATIVE_ITEM;
	if (state->t >= limit)
		return CC_PAST_HORIZON;
	if (!cc_add(state->exact, item, &exact))
		return CC_OVERFLOW;
	state->t++;
	state->exact = exact;
	return mechanisms[state->params.kind]->push(state, item, rng);
}

int64_t
cc_exact_count(const cc_state *state)
{
	return state->exact;
}

/*
 * Error bars.
 *
 * `bound` must hold for all steps at once: P(some t has |noisy_t - exact_t|
 * > bound_t) <= beta.  The steps fall into segments (every step its own,
 * unless the mechanism says otherwise: see segment_terms), each segment gets
 * a failure probability delta, and a union bound over the segments sums
 * them to at most beta:
 *	- with a horizon of S segments, delta = beta / S;
 *	- without one, segment s is in group g = floor(log2 s) + 1 of 2^(g-1)
 *	  segments, and gets delta = 6 beta / (pi^2 g^2 2^(g-1)): a group gets
 *	  6 beta / (pi^2 g^2), which sums to beta over g >= 1.  (Per group rather
 *	  than 6 beta / (pi^2 s^2) per segment: a larger delta for late steps,
 *	  and one value for a whole group, which the cache below relies on.)
 *
 * Inside a segment the noise Z_t of the release is a sum of independent
 * draws that only gains draws from one step to the next, so it is a
 * martingale, exp(lambda Z_t) a non-negative submartingale, and Doob's
 * maximal inequality gives, with Z_e the noise at the segment's last step,
 *		P(max over the segment of Z_t >= a) <= E[exp(lambda Z_e)] exp(-lambda a)
 * for every lambda > 0: the Chernoff bound of the last step alone covers the
 * whole segment.  The draws are symmetric, so -Z_t is one too, and twice
 * that bounds |Z_t|.  With a single step per segment this is the ordinary
 * Chernoff bound.
 *
 * E[exp(lambda Z_e)] is exact: the product of the draws' moment generating
 * functions (cc_dlap_log_mgf()).  a(lambda) = (ln E[exp(lambda Z_e)] +
 * ln(2 / delta)) / lambda makes the two-sided bound exactly delta, for every
 * lambda in the domain, so a numerical search for the best lambda can only
 * lose tightness, never validity: the bound is the smallest a(lambda) that
 * the search evaluates, inflated by 1e-9 against rounding in the sums.
 *
 * Noise from integer draws is an integer, so P(|Z| > ceil(a) - 1) =
 * P(|Z| >= ceil(a)) <= P(|Z| >= a): the bound is ceil(a) - 1.  A single draw
 * has an exact tail, P(|X| >= m) = 2 p^m / (1 + p) for m >= 1, p = e^(-1/b),
 * which Chernoff overstates by a factor of about e a / (2 b): used instead.
 * A release with weighted draws (honaker) is not an integer before its
 * rounding, which adds its own at most 1/2.
 *
 * Cost.  The bound depends on the state only through the parameters, the
 * number of draws of each scale in the segment's last step, and the group of
 * the segment without a horizon: that is the key of a small cache, so a
 * window computes it once per distinct key (popcount(t) for binary; once
 * for simple_ii with a horizon; once per block for two_level) and every
 * other read costs a lookup.  The cache is per process and holds only
 * numbers derived from public parameters.
 */

#define PI_SQUARED 9.8696044010893586
#define LN_2 0.69314718055994531
#define BOUND_SAFETY (1.0 + 1e-9)

double
cc_dlap_log_mgf(double inv_b, double x)
{
	/*
	 * E[exp(x X)] = (1 - p)^2 / ((1 - p e^x) (1 - p e^-x)); the denominator
	 * is (1 - p)^2 - 2 p (cosh x - 1), and (1 - p)^2 / p = 4 sinh^2(1/(2b)),
	 * so ln E[exp(x X)] = -ln(1 - r^2) with r = sinh(x/2) / sinh(1/(2b)).
	 * This form keeps full relative precision for small x, where the
	 * direct one cancels (honaker multiplies it by up to 2^61 draws).
	 */
	double		r = sinh(0.5 * x) / sinh(0.5 * inv_b);

	if (!(fabs(r) < 1.0))
		return INFINITY;
	return -log1p(-r * r);
}

/* The noise of the release at the end of a segment, as the tail needs it. */
typedef struct tail
{
	int			nterms;
	double		count[CC_MAX_TERMS];
	double		inv_b[CC_MAX_TERMS];
	/* or, for weighted draws: the sum of `nodes` nodes' estimates */
	const cc_mechanism_ops *weighted;
	int64_t		nodes;
	int64_t		levels;
	double		weighted_inv_b;
	double		lambda_max;		/* the moment generating function is finite
								 * below it */
} tail;

/*
 * ln E[exp(lambda Z)].  For weighted nodes the levels of the nodes summed are
 * not in the key, so this takes, at each lambda, the `nodes` largest of the
 * levels' values: at least the value of any set of that many nodes, hence an
 * upper bound on the moment generating function of every release with that
 * many nodes.
 */
static double
tail_log_mgf(const tail *tl, double lambda)
{
	double		sum = 0.0;

	if (tl->weighted)
	{
		double		node[64];

		for (int d = 0; d < tl->levels; d++)
		{
			double		v = tl->weighted->node_log_mgf(d, lambda, tl->weighted_inv_b);
			int			i = d;

			/* insertion, largest first */
			while (i > 0 && node[i - 1] < v)
			{
				node[i] = node[i - 1];
				i--;
			}
			node[i] = v;
		}
		for (int64_t i = 0; i < tl->nodes; i++)
			sum += node[i];
		return sum;
	}
	for (int i = 0; i < tl->nterms; i++)
		sum += tl->count[i] * cc_dlap_log_mgf(tl->inv_b[i], lambda);
	return sum;
}

/* a(lambda) at lambda = lambda_max e^x, keeping the smallest seen in *best */
static double
half_width_at(const tail *tl, double log_term, double x, double *best)
{
	double		lambda = tl->lambda_max * exp(x);
	double		a = (tail_log_mgf(tl, lambda) + log_term) / lambda;

	if (a < *best)
		*best = a;
	return a;
}

/*
 * The smallest a(lambda) = (ln E[exp(lambda Z)] + log_term) / lambda found:
 * a is quasi-convex in lambda (its derivative has the sign of
 * lambda psi'(lambda) - psi(lambda) - log_term, which increases, psi being
 * convex), so a golden-section search over ln(lambda) finds its minimum.
 * ln(lambda / lambda_max) from -30 up covers every optimum: it is about
 * -ln(b sqrt(draws)) >= -23 at most 2^62 draws.
 */
static double
chernoff_half_width(const tail *tl, double log_term)
{
	const double golden = 0.61803398874989485;
	double		lo = -30.0;
	double		hi = 0.0;
	double		x1 = hi - golden * (hi - lo);
	double		x2 = lo + golden * (hi - lo);
	double		best = INFINITY;
	double		f1 = half_width_at(tl, log_term, x1, &best);
	double		f2 = half_width_at(tl, log_term, x2, &best);

	for (int i = 0; i < 64; i++)
	{
		if (f1 <= f2)
		{
			hi = x2;
			x2 = x1;
			f2 = f1;
			x1 = hi - golden * (hi - lo);
			f1 = half_width_at(tl, log_term, x1, &best);
		}
		else
		{
			lo = x1;
			x1 = x2;
			f1 = f2;
			x2 = lo + golden * (hi - lo);
			f2 = half_width_at(tl, log_term, x2, &best);
		}
	}
	return best * BOUND_SAFETY;
}

/* The bound for a tail and ln(2 / delta), as the head of this section says. */
static double
tail_bound(const tail *tl, double log_term, double rounding)
{
	double		a = chernoff_half_width(tl, log_term);
	double		bound;

	if (tl->weighted)
		return a + rounding;

	bound = ceil(a) - 1.0;
	if (tl->nterms == 1 && tl->count[0] == 1.0)
	{
		/* the smallest m with 2 p^(m+1) / (1 + p) <= delta */
		double		inv_b = tl->inv_b[0];
		double		exact = ceil((log_term - log1p(exp(-inv_b))) / inv_b * BOUND_SAFETY) - 1.0;

		if (exact < bound)
			bound = exact;
	}
	return bound > 0.0 ? bound : 0.0;
}

double
cc_dlap_sum_bound(int64_t count, cc_scale scale, double log_term)
{
	tail		tl;

	if (count == 0)
		return 0.0;
	memset(&tl, 0, sizeof(tl));
	tl.nterms = 1;
	tl.count[0] = (double) count;
	tl.inv_b[0] = 1.0 / cc_scale_value(scale);
	tl.lambda_max = tl.inv_b[0];
	return tail_bound(&tl, log_term, 0.0);
}

/* What the bound of a step depends on; every member 8 bytes, no padding. */
typedef struct bound_key
{
	int64_t		kind;
	int64_t		epsilon_units;
	int64_t		horizon;		/* -1 without one */
	int64_t		block;
	int64_t		sensitivity;
	double		beta;
	int64_t		count[CC_MAX_TERMS];	/* draws of each scale; or nodes */
	int64_t		group;			/* without a horizon */
} bound_key;

typedef struct bound_entry
{
	bound_key	key;
	double		bound;
} bound_entry;

#define BOUND_CACHE_SIZE 64		/* a power of two */

/* Zeroed: epsilon_units 0 is never a prepared parameter, so never a hit. */
static bound_entry bound_cache[BOUND_CACHE_SIZE];

static uint32_t
bound_key_hash(const bound_key *key)
{
	uint64_t	h = (uint64_t) key->kind;
	uint64_t	beta_bits;

	memcpy(&beta_bits, &key->beta, sizeof(beta_bits));
	h = h * UINT64_C(0x9e3779b97f4a7c15) + key->epsilon_units;
	h = h * UINT64_C(0x9e3779b97f4a7c15) + (uint64_t) key->horizon;
	h = h * UINT64_C(0x9e3779b97f4a7c15) + (uint64_t) key->block;
	h = h * UINT64_C(0x9e3779b97f4a7c15) + (uint64_t) key->sensitivity;
	h = h * UINT64_C(0x9e3779b97f4a7c15) + beta_bits;
	h = h * UINT64_C(0x9e3779b97f4a7c15) + (uint64_t) key->count[0];
	h = h * UINT64_C(0x9e3779b97f4a7c15) + (uint64_t) key->count[1];
	h = h * UINT64_C(0x9e3779b97f4a7c15) + (uint64_t) key->group;
	return (uint32_t) (h >> 40);
}

/*
 * The bound at the current step.  terms are the current step's draws (for
 * unweighted mechanisms), noise its weighted description (for the others).
 */
static double
simultaneous_bound(const cc_state *state, cc_term *terms, int nterms,
				   const cc_noise *noise)
{
	const cc_params *p = &state->params;
	const cc_mechanism_ops *ops = mechanisms[p->kind];
	int64_t		segment = state->t;
	int64_t		segments = p->has_horizon ? p->horizon : 0;
	bound_key	key;
	bound_entry *entry;
	tail		tl;
	double		log_term;

	if (ops->segment_terms)
		nterms = ops->segment_terms(state, terms, &segment, &segments);

	memset(&key, 0, sizeof(key));
	key.kind = p->kind;
	key.epsilon_units = (int64_t) p->epsilon_units;
	key.horizon = p->has_horizon ? p->horizon : -1;
	key.block = p->has_block ? p->block : 0;
	key.sensitivity = p->sensitivity;
	key.beta = p->beta;
	if (ops->weighted_noise)
		key.count[0] = noise->nodes;
	else
		for (int i = 0; i < nterms; i++)
			key.count[i] = terms[i].count;
	key.group = p->has_horizon ? 0 : 64 - __builtin_clzll((unsigned long long) segment);

	entry = &bound_cache[bound_key_hash(&key) & (BOUND_CACHE_SIZE - 1)];
	if (memcmp(&entry->key, &key, sizeof(key)) == 0)
		return entry->bound;

	/* a miss: ln(2 / delta) for the segment, as above */
	if (p->has_horizon)
		log_term = log(2.0 * (double) segments / p->beta);
	else
	{
		double		g = (double) key.group;

		log_term = log(PI_SQUARED * g * g / (3.0 * p->beta)) + (g - 1.0) * LN_2;
	}

	memset(&tl, 0, sizeof(tl));
	if (ops->weighted_noise)
	{
		tl.weighted = ops;
		tl.nodes = noise->nodes;
		tl.levels = noise->levels;
		tl.weighted_inv_b = 1.0 / cc_scale_value(state->scale);
		/* a level-0 node holds one draw of weight 1, the largest weight */
		tl.lambda_max = tl.weighted_inv_b;
	}
	else
	{
		tl.lambda_max = INFINITY;
		for (int i = 0; i < nterms; i++)
		{
			if (terms[i].count == 0)
				continue;
			tl.count[tl.nterms] = (double) terms[i].count;
			tl.inv_b[tl.nterms] = 1.0 / cc_scale_value(terms[i].scale);
			if (tl.inv_b[tl.nterms] < tl.lambda_max)
				tl.lambda_max = tl.inv_b[tl.nterms];
			tl.nterms++;
		}
	}
	entry->key = key;
	entry->bound = tl.lambda_max == INFINITY ? 0.0 :
		tail_bound(&tl, log_term, noise->rounding);
	return entry->bound;
}

/*
 * The bound of a Gaussian mechanism: its noise before rounding is a weighted
 * sum of independent discrete Gaussian draws, each sub-Gaussian with variance
 * proxy its sigma^2 (Canonne, Kamath and Steinke 2020, Corollary 9), so the
 * sum is sub-Gaussian with proxy sum w^2 sigma^2 and P(|Z| >= a) <=
 * 2 exp(-a^2 / (2 proxy)).  Every step of the horizon T gets delta = beta / T
 * (a union bound over the steps, as above): a = sqrt(2 proxy ln(2 T / beta)),
 * which state->log_term holds, and then the rounding.
 */
static double
gaussian_bound(const cc_state *state, const cc_noise *noise)
{
	return sqrt(2.0 * noise->proxy * state->log_term) * BOUND_SAFETY + noise->rounding;
}

void
cc_read(const cc_state *state, cc_release *release)
{
	const cc_mechanism_ops *ops = mechanisms[state->params.kind];
	cc_noise	noise = {0};
	cc_term		terms[CC_MAX_TERMS];
	int			nterms = 0;

	release->t = state->t;
	release->noisy = state->noisy;
	release->variance = 0.0;
	release->bound = 0.0;
	if (state->t == 0)
		return;

	if (ops->privacy == CC_ZCDP)
	{
		ops->gaussian_noise(state, &noise);
		release->variance = noise.variance;
		release->bound = gaussian_bound(state, &noise);
		return;
	}
	if (ops->weighted_noise)
		ops->weighted_noise(state, &noise);
	else
	{
		nterms = ops->terms(state, terms);
		for (int i = 0; i < nterms; i++)
			noise.variance += (double) terms[i].count * terms[i].variance;
	}
	release->variance = noise.variance;
	release->bound = simultaneous_bound(state, terms, nterms, &noise);
}
