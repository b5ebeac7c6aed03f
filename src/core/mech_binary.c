/*
 * mech_binary.c
 *		The binary tree mechanism (Chan, Shi and Song; Dwork, Naor, Pitassi
 *		and Rothblum), on the tree of tree.c.
 *
 * With L = floor(log2 T) + 1 levels every item is in at most L dyadic
 * intervals, so each interval's sum gets Laplace(L/epsilon) noise.  The
 * release at t sums the noisy intervals of t's binary expansion: popcount(t)
 * draws.  State is O(L): one exact and one noisy sum per level.
 */
#include "mechanism_int.h"

static uint64_t
binary_multiplier(const cc_params *params)
{
	return (uint64_t) cc_tree_levels(params->horizon);
}

static size_t
binary_size(const cc_params *params)
{
	return sizeof(cc_tree) + cc_tree_levels(params->horizon) * sizeof(cc_tree_node);
}

static void
binary_init(cc_state *state)
{
	cc_tree_init(cc_state_part(state), cc_tree_levels(state->params.horizon));
}

static cc_status
binary_push(cc_state *state, int64_t x, cc_rng *rng)
{
	cc_tree    *tree = cc_state_part(state);
	cc_status	status = cc_tree_push(tree, x, state->scale, rng);

	state->noisy = tree->noisy;
	return status;
}

static int
binary_terms(const cc_state *state, cc_term *terms)
{
	terms[0].count = __builtin_popcountll((unsigned long long) state->t);
	terms[0].scale = state->scale;
	terms[0].variance = state->scale_variance;
	return 1;
}

/* The bound: every step a segment, of the class of its popcount. */
static void
binary_bound_class(const cc_state *state, int64_t *group, int64_t *key)
{
	*group = 0;
	*key = __builtin_popcountll((unsigned long long) state->t);
}

/* popcount(t) draws of the main scale, summed exactly */
static void
binary_bound_tail(const cc_params *params, int64_t group, int64_t key, cc_tail *tail)
{
	(void) group;
	cc_tail_exact(tail, key, params, binary_multiplier(params));
}

const cc_mechanism_ops cc_binary_ops = {
	.name = "binary",
	.needs_horizon = true,
	.main_multiplier = binary_multiplier,
	.part_size = binary_size,
	.init = binary_init,
	.push = binary_push,
	.terms = binary_terms,
	.bound_class = binary_bound_class,
	.bound_classes = cc_popcount_classes,
	.bound_tail = binary_bound_tail,
};
