/*
 * mech_hybrid.c
 *		The hybrid mechanism of Chan, Shi and Song for streams of unknown
 *		length.
 *
 * Half of epsilon goes to the logarithmic mechanism: at every t = 2^k it
 * releases a noisy c_t, adding the items since the previous power of two and
 * one Laplace(2/epsilon) draw.  The other half runs a binary tree over each
 * interval (2^k, 2^(k+1)), of horizon 2^k - 1 and so k levels, with noise
 * Laplace(2k/epsilon); in between, the release is the last logarithmic value
 * plus the tree's.  Every item is in one logarithmic interval and in at most
 * one tree.
 */
#include "mechanism_int.h"

/* The largest k: steps go up to CC_MAX_HORIZON = 2^62. */
#define MAX_TREE_LEVELS 62

typedef struct hybrid_part
{
	int64_t		log_noisy;		/* noisy c at the latest power of two */
	int64_t		pending;		/* exact sum of the items since then */
	int64_t		k;				/* the latest power of two is 2^k */
	cc_scale	tree_scale;		/* Laplace(2k/epsilon) */
	double		tree_variance;	/* of one draw of that scale */
	cc_tree		tree;			/* over (2^k, 2^(k+1)); must stay last */
} hybrid_part;

static int64_t
max_levels(const cc_params *params)
{
	if (params->has_horizon)
		return cc_tree_levels(params->horizon) - 1;
	return MAX_TREE_LEVELS;
}

static uint64_t
hybrid_max_multiplier(const cc_params *params)
{
	int64_t		levels = max_levels(params);

	return 2 * (uint64_t) (levels > 1 ? levels : 1);
}

static size_t
hybrid_size(const cc_params *params)
{
	return sizeof(hybrid_part) + max_levels(params) * sizeof(cc_tree_node);
}

static cc_status
hybrid_push(cc_state *state, int64_t x, cc_rng *rng)
{
	hybrid_part *part = cc_state_part(state);
	int64_t		t = state->t;
	cc_status	status;

	if ((t & (t - 1)) == 0)
	{
		/* t = 2^k: the logarithmic mechanism releases, a new tree begins */
		int64_t		k = __builtin_ctzll((unsigned long long) t);
		int64_t		interval = part->pending + x;	/* part of the exact total */

		if (!cc_add(interval, cc_discrete_laplace(rng, state->scale), &interval) ||
			!cc_add(part->log_noisy, interval, &part->log_noisy))
			return CC_OVERFLOW;
		part->pending = 0;
		part->k = k;
		if (k > 0)
		{
			part->tree_scale = cc_state_scale(state, 2 * (uint64_t) k);
			part->tree_variance = cc_dlap_variance(part->tree_scale);
		}
		cc_tree_init(&part->tree, k);
		state->noisy = part->log_noisy;
		return CC_OK;
	}

	part->pending += x;
	status = cc_tree_push(&part->tree, x, part->tree_scale, rng);
	if (status == CC_OK &&
		!cc_add(part->log_noisy, part->tree.noisy, &state->noisy))
		status = CC_OVERFLOW;
	return status;
}

static int
hybrid_terms(const cc_state *state, cc_term *terms)
{
	const hybrid_part *part = cc_state_part(state);

	terms[0].count = part->k + 1;
	terms[0].scale = state->scale;
	terms[0].variance = state->scale_variance;
	if (part->tree.t == 0)
		return 1;
	terms[1].count = __builtin_popcountll((unsigned long long) part->tree.t);
	terms[1].scale = part->tree_scale;
	terms[1].variance = part->tree_variance;
	return 2;
}

/*
 * The bound: every step a segment.  At t = 2^k + s, 0 <= s < 2^k, the
 * release holds k + 1 logarithmic draws and popcount(s) tree draws of scale
 * 2k / epsilon; its class is the pair, its group 0 with a horizon, k + 1
 * without one (the 2^k steps of [2^k, 2^(k+1))).
 */
static void
hybrid_bound_class(const cc_state *state, int64_t *group, int64_t *key)
{
	int			k = 63 - __builtin_clzll((unsigned long long) state->t);
	int64_t		s = state->t - (INT64_C(1) << k);

	*group = state->params.has_horizon ? 0 : k + 1;
	*key = k * 64 + __builtin_popcountll((unsigned long long) s);
}

/* the classes of the steps 2^k + s, s in [0, n) */
static int
interval_classes(int k, int64_t n, cc_class *out)
{
	int			count = 0;

	out[count++] = (cc_class) {k * 64, 1};
	for (int j = 1; j <= k; j++)
	{
		int64_t		steps = cc_count_popcount(n - 1, j);

		if (steps > 0)
			out[count++] = (cc_class) {k * 64 + j, steps};
	}
	return count;
}

static int
hybrid_bound_classes(const cc_params *params, int64_t group, int64_t *segments,
					 cc_class *out)
{
	int			n = 0;

	if (!params->has_horizon)
	{
		*segments = INT64_C(1) << (group - 1);
		return interval_classes((int) group - 1, *segments, out);
	}
	*segments = params->horizon;
	for (int k = 0; k < cc_tree_levels(params->horizon); k++)
	{
		int64_t		first = INT64_C(1) << k;
		int64_t		steps = params->horizon - first + 1;

		n += interval_classes(k, steps < first ? steps : first, out + n);
	}
	return n;
}

/* the tree's draws summed exactly, the logarithmic ones as the rest */
static void
hybrid_bound_tail(const cc_params *params, int64_t group, int64_t key, cc_tail *tail)
{
	int64_t		k = key / 64;
	int64_t		j = key % 64;
	double		log_inv_b = cc_inverse_scale(cc_params_scale(params, 2));

	(void) group;
	tail->exact_weight = 1.0;
	if (j == 0)
	{
		tail->exact = k + 1;
		tail->exact_inv_b = log_inv_b;
		return;
	}
	tail->exact = j;
	tail->exact_inv_b = cc_inverse_scale(cc_params_scale(params, 2 * (uint64_t) k));
	tail->npieces = 1;
	tail->pieces[0] = (cc_piece) {(double) (k + 1), log_inv_b, 1.0};
}

const cc_mechanism_ops cc_hybrid_ops = {
	.name = "hybrid",
	.needs_horizon = false,
	.main_multiplier = cc_multiplier_two,
	.max_multiplier = hybrid_max_multiplier,
	.part_size = hybrid_size,
	.push = hybrid_push,
	.terms = hybrid_terms,
	.bound_class = hybrid_bound_class,
	.bound_classes = hybrid_bound_classes,
	.bound_tail = hybrid_bound_tail,
};
