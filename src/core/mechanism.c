/*
 * mechanism.c
 *		What all mechanisms share: parameters, dispatch, and error bars.
 */
#include "mechanism_int.h"

#include <math.h>
#include <string.h>

#define PI_SQUARED 9.8696044010893586

static const cc_mechanism_ops *const mechanisms[CC_NUM_KINDS] = {
	[CC_SIMPLE_I] = &cc_simple_i_ops,
	[CC_SIMPLE_II] = &cc_simple_ii_ops,
	[CC_TWO_LEVEL] = &cc_two_level_ops,
	[CC_BINARY] = &cc_binary_ops,
	[CC_HYBRID] = &cc_hybrid_ops,
	[CC_HONAKER] = &cc_honaker_ops,
	[CC_SMOOTH_BINARY] = &cc_smooth_binary_ops,
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

cc_status
cc_epsilon_units(double epsilon, uint64_t *units)
{
	/* written so that NaN fails too */
	if (!(epsilon >= CC_MIN_EPSILON && epsilon <= CC_MAX_EPSILON))
		return CC_BAD_EPSILON;
	*units = (uint64_t) llround(epsilon * (double) CC_EPSILON_UNITS_PER_ONE);
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
	uint64_t	multiplier;
	cc_scale	scale;

	if (p->epsilon_units < (uint64_t) llround(CC_MIN_EPSILON * CC_EPSILON_UNITS_PER_ONE) ||
		p->epsilon_units > (uint64_t) llround(CC_MAX_EPSILON * CC_EPSILON_UNITS_PER_ONE))
		return CC_BAD_EPSILON;
	if (p->has_horizon && (p->horizon < 1 || p->horizon > CC_MAX_HORIZON))
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

	multiplier = mechanisms[p->kind]->max_multiplier ?
		mechanisms[p->kind]->max_multiplier(p) :
		mechanisms[p->kind]->main_multiplier(p);
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
	state->scale = cc_state_scale(state, ops->main_multiplier(params));
	state->scale_variance = cc_dlap_variance(state->scale);
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
 * ln(2/delta), where delta is the failure probability given to step t: beta/T
 * for a declared horizon T, and 6 beta / (pi^2 t^2) otherwise, which sums to
 * beta over all t >= 1.  The union bound then covers every step at once.
 */
static double
log_two_over_delta(const cc_state *state)
{
	const cc_params *p = &state->params;
	double		t = (double) state->t;

	if (p->has_horizon)
		return state->log_term;
	return log(PI_SQUARED * t * t / (3.0 * p->beta));
}

/* The noise of a release made of unweighted terms (see cc_noise). */
static void
noise_of_terms(const cc_state *state, cc_noise *noise)
{
	cc_term		terms[CC_MAX_TERMS];
	int			nterms = mechanisms[state->params.kind]->terms(state, terms);

	for (int i = 0; i < nterms; i++)
	{
		double		b = cc_scale_value(terms[i].scale);

		if (terms[i].count == 0)
			continue;
		noise->variance += (double) terms[i].count * terms[i].variance;
		noise->sum_b2 += (double) terms[i].count * b * b;
		if (b > noise->b_max)
			noise->b_max = b;
	}
}

void
cc_read(const cc_state *state, cc_release *release)
{
	const cc_mechanism_ops *ops = mechanisms[state->params.kind];
	cc_noise	noise = {0};
	double		log_term;
	double		nu_squared;

	release->t = state->t;
	release->noisy = state->noisy;
	release->variance = 0.0;
	release->bound = 0.0;
	if (state->t == 0)
		return;

	if (ops->weighted_noise)
		ops->weighted_noise(state, &noise);
	else
		noise_of_terms(state, &noise);
	release->variance = noise.variance;

	/*
	 * Chan, Shi and Song (2011), Corollary 2.9: for a sum Y of independent
	 * Laplace(b_i), nu >= sqrt(sum b_i^2) and nu >= b_max sqrt(ln(2/delta)),
	 * P(|Y| > nu sqrt(8 ln(2/delta))) <= delta.  It rests on the moment
	 * generating function E[exp(hX)] <= 1 / (1 - b^2 h^2), which discrete
	 * Laplace noise of scale b satisfies too (sinh(x)/x is increasing).
	 *
	 * A weighted draw w X, X of scale b, has E[exp(h w X)] <= 1 / (1 - (w b)^2
	 * h^2): the same bound as a draw of scale |w| b, which is all the proof
	 * uses of each draw.  So the corollary holds for weighted sums with b_i
	 * replaced by |w_i| b_i, as cc_noise gives them.  A release rounded to an
	 * integer moves by at most noise.rounding more.
	 *
	 * Computed as sqrt(8 ln(2/delta) nu^2): one square root a read.
	 */
	log_term = log_two_over_delta(state);
	nu_squared = noise.b_max * noise.b_max * log_term;
	if (noise.sum_b2 > nu_squared)
		nu_squared = noise.sum_b2;
	release->bound = sqrt(8.0 * log_term * nu_squared) + noise.rounding;
}
