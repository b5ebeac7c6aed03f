/*
 * preview.c
 *		What a release would show at each step, without data or secure
 *		randomness (see preview.h).
 *
 * IDENTIFICATION
 *	  src/core/preview.c
 */
#include <string.h>

#include "preview.h"

/* splitmix64 (Steele, Lea and Flood 2014): a fixed sequence, not a secret */
static void
preview_refill(cc_rng *rng)
{
	cc_preview *preview = rng->ctx;

	for (int i = 0; i < CC_PREVIEW_WORDS; i++)
	{
		uint64_t	z = (preview->seed += UINT64_C(0x9E3779B97F4A7C15));

		z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
		preview->words[i] = z ^ (z >> 31);
	}
	rng->words = preview->words;
	rng->next = 0;
	rng->count = CC_PREVIEW_WORDS;
}

void
cc_preview_init(cc_preview *preview, cc_state *state, const cc_params *params)
{
	memset(preview, 0, sizeof(*preview));
	preview->state = state;
	preview->rng.refill = preview_refill;
	preview->rng.ctx = preview;
	cc_state_init(state, params);
}

cc_status
cc_preview_next(cc_preview *preview, cc_release *release)
{
	/* a zero moves no running count: overflow cannot happen */
	cc_status	status = cc_push(preview->state, 0, &preview->rng);

	if (status != CC_OK)
		return status;
	cc_read(preview->state, release);
	release->noisy = 0;
	return CC_OK;
}
