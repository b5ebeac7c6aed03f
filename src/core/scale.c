/*
 * scale.c
 *		The noise scales the mechanisms of pure epsilon share: the scale of
 *		a multiple of sensitivity/epsilon, and its inverse for the bound.
 *
 * Below every mechanism in the core's order (README.md), so that each
 * mechanism and the bound take their scales from here and not from the
 * dispatch in mechanism.c or from bounds.c above them.
 */
#include "mechanism_int.h"

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

cc_scale
cc_params_scale(const cc_params *params, uint64_t multiplier)
{
	cc_scale	scale;

	/* cc_params_prepare() checked the largest multiplier the mechanism uses */
	cc_scale_make(multiplier * (uint64_t) params->sensitivity,
				  params->epsilon_units, CC_EPSILON_UNITS_PER_ONE, &scale);
	return scale;
}

cc_scale
cc_state_scale(const cc_state *state, uint64_t multiplier)
{
	return cc_params_scale(&state->params, multiplier);
}

double
cc_inverse_scale(cc_scale b)
{
	/* num and den may have more bits than a double: three roundings */
	return (double) b.den / (double) b.num * (1.0 - 0x1p-50);
}

/*
 * A bound's tail of count draws of the scale multiplier * sensitivity /
 * epsilon, summed exactly (1. at the head of bounds.c): what the tree and
 * simple mechanisms' classes are.
 */
void
cc_tail_exact(cc_tail *tail, int64_t count, const cc_params *params,
			  uint64_t multiplier)
{
	tail->exact = count;
	tail->exact_inv_b = cc_inverse_scale(cc_params_scale(params, multiplier));
	tail->exact_weight = 1.0;
}
