/*
 * mech_simple.c
 *		The two simple mechanisms of Chan, Shi and Song.
 *
 * Simple I adds fresh Laplace(T/epsilon) noise to every prefix sum: one item
 * is in up to T released sums.  Simple II adds Laplace(1/epsilon) noise to
 * every item and releases the sum of the noisy items: one item is in one
 * noisy item, and the noise accumulates as t grows.
 */
#include "mechanism_int.h"

static uint64_t
simple_i_multiplier(const cc_params *params)
{
	return (uint64_t) params->horizon;
}

static size_t
no_part(const cc_params *params)
{
	(void) params;
	return 0;
}

static cc_status
simple_i_push(cc_state *state, int64_t x, cc_rng *rng)
{
	(void) x;
	if (!cc_add(state->exact, cc_discrete_laplace(rng, state->scale),
				&state->noisy))
		return CC_OVERFLOW;
	return CC_OK;
}

static int
simple_i_terms(const cc_state *state, cc_term *terms)
{
	terms[0].count = 1;
	terms[0].scale = state->scale;
	terms[0].variance = state->scale_variance;
	return 1;
}

static cc_status
simple_ii_push(cc_state *state, int64_t x, cc_rng *rng)
{
	if (!cc_add(x, cc_discrete_laplace(rng, state->scale), &x) ||
		!cc_add(state->noisy, x, &state->noisy))
		return CC_OVERFLOW;
	return CC_OK;
}

static int
simple_ii_terms(const cc_state *state, cc_term *terms)
{
	terms[0].count = state->t;
	terms[0].scale = state->scale;
	terms[0].variance = state->scale_variance;
	return 1;
}

/*
 * The noise of simple II is a sum of independent draws that only grows: a
 * martingale over all steps.  With a horizon T, one segment: the bound of
 * the T-th step holds for all of them at once (Doob; see the error bars in
 * mechanism.c).  Without one, the segments are [2^(j-1), 2^j - 1], j = 1, 2, ...
 */
static int
simple_ii_segment_terms(const cc_state *state, cc_term *terms,
						int64_t *segment, int64_t *segments)
{
	if (state->params.has_horizon)
	{
		*segment = 1;
		*segments = 1;
		terms[0].count = state->params.horizon;
	}
	else
	{
		int			j = 64 - __builtin_clzll((unsigned long long) state->t);

		*segment = j;
		terms[0].count = (int64_t) ((UINT64_C(1) << j) - 1);
	}
	terms[0].scale = state->scale;
	terms[0].variance = state->scale_variance;
	return 1;
}

const cc_mechanism_ops cc_simple_i_ops = {
	.name = "simple_i",
	.needs_horizon = true,
	.main_multiplier = simple_i_multiplier,
	.part_size = no_part,
	.push = simple_i_push,
	.terms = simple_i_terms,
};

const cc_mechanism_ops cc_simple_ii_ops = {
	.name = "simple_ii",
	.needs_horizon = false,
	.main_multiplier = cc_multiplier_one,
	.part_size = no_part,
	.push = simple_ii_push,
	.terms = simple_ii_terms,
	.segment_terms = simple_ii_segment_terms,
};
