/*
 * mech_two_level.c
 *		The two-level mechanism of Chan, Shi and Song with block size B.
 *
 * Every completed block's sum gets Laplace(2/epsilon) noise, and so does
 * every item of the block in progress: one item is in one block sum and one
 * noisy item.  At t = qB + r the release is q noisy block sums plus r noisy
 * items.
 */
#include "mechanism_int.h"

typedef struct two_level_part
{
	int64_t		blocks_noisy;	/* noisy sum of the completed blocks */
	int64_t		block_exact;	/* exact sum of the block in progress */
	int64_t		block_noisy;	/* its noisy items, summed */
	int64_t		position;		/* items in the block in progress */
} two_level_part;

static size_t
two_level_size(const cc_params *params)
{
	(void) params;
	return sizeof(two_level_part);
}

static cc_status
two_level_push(cc_state *state, int64_t x, cc_rng *rng)
{
	two_level_part *part = cc_state_part(state);
	int64_t		noisy;

	part->block_exact += x;		/* bounded by the exact total: no overflow */
	if (++part->position == state->params.block)
	{
		/* the block closes: its noisy sum replaces its noisy items */
		if (!cc_add(part->block_exact, cc_discrete_laplace(rng, state->scale), &noisy) ||
			!cc_add(part->blocks_noisy, noisy, &part->blocks_noisy))
			return CC_OVERFLOW;
		part->block_exact = 0;
		part->block_noisy = 0;
		part->position = 0;
	}
	else if (!cc_add(x, cc_discrete_laplace(rng, state->scale), &noisy) ||
			 !cc_add(part->block_noisy, noisy, &part->block_noisy))
		return CC_OVERFLOW;
	if (!cc_add(part->blocks_noisy, part->block_noisy, &state->noisy))
		return CC_OVERFLOW;
	return CC_OK;
}

static int
two_level_terms(const cc_state *state, cc_term *terms)
{
	int64_t		block = state->params.block;

	terms[0].count = state->t / block + state->t % block;
	terms[0].scale = state->scale;
	terms[0].variance = state->scale_variance;
	return 1;
}

/*
 * The bound.  From t = qB, where block q - 1 has just closed (q noisy block
 * sums), to qB + B - 1 the release only gains item draws: those steps are
 * segment q, and the horizon T has T / B + 1 of them.  Its last step has
 * q + (last - qB) draws.  Each segment is its own class, or with more than
 * CC_MAX_CLASSES of them, consecutive segments share a class whose tail is
 * that of the most draws among them (see bounds.c).
 */
static int64_t
segments_per_class(const cc_params *params)
{
	int64_t		segments = params->horizon / params->block + 1;

	return (segments + CC_MAX_CLASSES - 1) / CC_MAX_CLASSES;
}

/* the draws at the last step of segment q */
static int64_t
segment_draws(const cc_params *params, int64_t q)
{
	int64_t		last = q * params->block + (params->block - 1);

	if (last > params->horizon)
		last = params->horizon;
	return q + (last - q * params->block);
}

static void
two_level_bound_class(const cc_state *state, int64_t *group, int64_t *key)
{
	*group = 0;
	*key = state->t / state->params.block / segments_per_class(&state->params);
}

static int
two_level_bound_classes(const cc_params *params, int64_t group, int64_t *segments,
						cc_class *out)
{
	int64_t		total = params->horizon / params->block + 1;
	int64_t		per = segments_per_class(params);
	int			n = 0;

	(void) group;
	*segments = total;
	for (int64_t first = 0; first < total; first += per)
	{
		int64_t		count = total - first < per ? total - first : per;

		out[n] = (cc_class) {n, count};
		n++;
	}
	return n;
}

static void
two_level_bound_tail(const cc_params *params, int64_t group, int64_t key, cc_tail *tail)
{
	int64_t		total = params->horizon / params->block + 1;
	int64_t		last = (key + 1) * segments_per_class(params) - 1;
	int64_t		draws;

	(void) group;
	if (last > total - 1)
		last = total - 1;
	/* draws grow with q, but the horizon may cut the last segment short */
	draws = segment_draws(params, last);
	if (last > key * segments_per_class(params) &&
		segment_draws(params, last - 1) > draws)
		draws = segment_draws(params, last - 1);
	cc_tail_exact(tail, draws, params, 2);
	tail->segment = true;
}

const cc_mechanism_ops cc_two_level_ops = {
	.name = "two_level",
	.needs_horizon = true,
	.main_multiplier = cc_multiplier_two,
	.part_size = two_level_size,
	.push = two_level_push,
	.terms = two_level_terms,
	.bound_class = two_level_bound_class,
	.bound_classes = two_level_bound_classes,
	.bound_tail = two_level_bound_tail,
};
