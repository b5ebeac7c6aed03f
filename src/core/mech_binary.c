/*
 * mech_binary.c
 *		The binary tree mechanism (Chan, Shi and Song; Dwork, Naor, Pitassi
 *		and Rothblum) and the tree it shares with the hybrid mechanism.
 *
 * With L = floor(log2 T) + 1 levels every item is in at most L dyadic
 * intervals, so each interval's sum gets Laplace(L/epsilon) noise.  The
 * release at t sums the noisy intervals of t's binary expansion: popcount(t)
 * draws.  State is O(L): one exact and one noisy sum per level.
 */
#include "mechanism_int.h"

int64_t
cc_tree_levels(int64_t n)
{
	return 64 - __builtin_clzll((unsigned long long) n);
}

void
cc_tree_init(cc_tree *tree, int64_t levels)
{
	tree->levels = levels;
	tree->t = 0;
	tree->noisy = 0;
	for (int64_t i = 0; i < levels; i++)
		cc_tree_nodes(tree)[i] = (cc_tree_node)
		{
			0, 0
		};
}

cc_status
cc_tree_push(cc_tree *tree, int64_t x, cc_scale scale, cc_rng *rng)
{
	cc_tree_node *node = cc_tree_nodes(tree);
	int64_t		t = ++tree->t;
	int			closing = __builtin_ctzll((unsigned long long) t);
	int64_t		exact = x;
	int64_t		dropped = 0;

	/*
	 * Step t closes the interval of level ctz(t), which covers the intervals
	 * below it (the set low bits of t - 1) and x.  Their noisy sums leave the
	 * release and the new node's enters it.
	 */
	for (int i = 0; i < closing; i++)
	{
		exact += node[i].exact; /* a part of the exact total: cannot overflow */
		if (!cc_add(dropped, node[i].noisy, &dropped))
			return CC_OVERFLOW;
		node[i].exact = 0;
		node[i].noisy = 0;
	}
	node[closing].exact = exact;
	if (!cc_add(exact, cc_discrete_laplace(rng, scale), &node[closing].noisy) ||
		__builtin_sub_overflow(tree->noisy, dropped, &tree->noisy) ||
		!cc_add(tree->noisy, node[closing].noisy, &tree->noisy))
		return CC_OVERFLOW;
	return CC_OK;
}

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
	tail->exact = key;
	tail->exact_inv_b = cc_inverse_scale(cc_params_scale(params, binary_multiplier(params)));
	tail->exact_weight = 1.0;
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
