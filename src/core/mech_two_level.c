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
 * From t = qB, where block q - 1 has just closed (q noisy block sums), to
 * qB + B - 1 the release only gains item draws: those steps are segment
 * q + 1, a martingale, and its last step's draws bound them all (Doob; see
 * the error bars in mechanism.c).  The horizon T has T / B + 1 segments.
 */
static int
two_level_segment_terms(const cc_state *state, cc_term *terms,
						int64_t *segment, int64_t *segments)
{
	int64_t		block = state->params.block;
	int64_t		horizon = state->params.horizon;
	int64_t		q = state->t / block;
	int64_t		last = q * block + (block - 1);

	if (last > horizon)
		last = horizon;
	*segment = q + 1;
	*segments = horizon / block + 1;
	terms[0].count = q + (last - q * block);
	terms[0].scale = state->scale;
	terms[0].variance = state->scale_variance;
	return 1;
}

const cc_mechanism_ops cc_two_level_ops = {
	.name = "two_level",
	.needs_horizon = true,
	.main_multiplier = cc_multiplier_two,
	.part_size = two_level_size,
	.push = two_level_push,
	.terms = two_level_terms,
	.segment_terms = two_level_segment_terms,
};
