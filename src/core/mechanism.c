/*
 * mechanism.c
 *		The dispatch to the mechanisms: their names, the checking of their
 *		parameters, a state's size, initialization, validity and steps.
 *		The reads are read.c's, above the bound.
 */
#include "mechanism.h"
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
	[CC_KARY] = &cc_kary_ops,
	[CC_BLT_SCALED] = &cc_blt_scaled_ops,
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
	else if (p->kind == CC_KARY)
	{
		cc_status	arity = cc_kary_prepare(p);

		if (arity != CC_OK)
			return arity;
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

size_t
cc_state_size(const cc_params *params)
{
	return sizeof(cc_state) + mechanisms[params->kind]->part_size(params);
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
