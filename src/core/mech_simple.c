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

/* simple I: every step a segment of one class, one draw of scale T / epsilon */
static void
simple_i_bound_class(const cc_state *state, int64_t *group, int64_t *key)
{
	(void) state;
	*group = 0;
	*key = 1;
}

static int
simple_i_bound_classes(const cc_params *params, int64_t group, int64_t *segments,
					   cc_class *out)
{
	(void) group;
	*segments = params->horizon;
	out[0] = (cc_class) {1, params->horizon};
	return 1;
}

static void
simple_i_bound_tail(const cc_params *params, int64_t group, int64_t key, cc_tail *tail)
{
	(void) group;
	(void) key;
	cc_tail_exact(tail, 1, params, simple_i_multiplier(params));
}

/*
 * The noise of simple II is a sum of independent draws that only grows: a
 * martingale over all steps.  With a horizon T, one segment (class 0) whose
 * last step has T draws (see bounds.c).  Without one, segment j holds the steps
 * [2^(j-1), 2^j - 1], whose last has 2^j - 1 draws; group g holds the
 * segments [2^(g-1), 2^g), each a class of its own.
 */
static int
segment_of(int64_t t)
{
	return 64 - __builtin_clzll((unsigned long long) t);
}

static void
simple_ii_bound_class(const cc_state *state, int64_t *group, int64_t *key)
{
	if (state->params.has_horizon)
	{
		*group = 0;
		*key = 0;
		return;
	}
	*key = segment_of(state->t);
	*group = segment_of(*key);
}

static int
simple_ii_bound_classes(const cc_params *params, int64_t group, int64_t *segments,
						cc_class *out)
{
	int			n = 0;

	if (params->has_horizon)
	{
		*segments = 1;
		out[0] = (cc_class) {0, 1};
		return 1;
	}
	/* segments up to that of the last step, 2^62 */
	for (int64_t j = INT64_C(1) << (group - 1); j < (INT64_C(1) << group) &&
		 j <= segment_of(CC_MAX_HORIZON); j++)
		out[n++] = (cc_class) {j, 1};
	*segments = n;
	return n;
}

static void
simple_ii_bound_tail(const cc_params *params, int64_t group, int64_t key, cc_tail *tail)
{
	(void) group;
	cc_tail_exact(tail, params->has_horizon ? params->horizon : (int64_t) ((UINT64_C(1) << key) - 1),
				  params, 1);
	tail->segment = true;
}

const cc_mechanism_ops cc_simple_i_ops = {
	.name = "simple_i",
	.needs_horizon = true,
	.main_multiplier = simple_i_multiplier,
	.part_size = no_part,
	.push = simple_i_push,
	.terms = simple_i_terms,
	.bound_class = simple_i_bound_class,
	.bound_classes = simple_i_bound_classes,
	.bound_tail = simple_i_bound_tail,
};

const cc_mechanism_ops cc_simple_ii_ops = {
	.name = "simple_ii",
	.needs_horizon = false,
	.main_multiplier = cc_multiplier_one,
	.part_size = no_part,
	.push = simple_ii_push,
	.terms = simple_ii_terms,
	.bound_class = simple_ii_bound_class,
	.bound_classes = simple_ii_bound_classes,
	.bound_tail = simple_ii_bound_tail,
};
