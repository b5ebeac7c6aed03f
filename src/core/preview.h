/*
 * preview.h
 *		What a release would show at each step (its t, variance and bound),
 *		from its public parameters alone: no data, no secure randomness.
 *
 * Pure C: no PostgreSQL headers.  A mechanism's variance and bound at step t
 * are public functions of t and its parameters, which cc_read() computes
 * from a state at step t.  A preview moves a state on by pushing zeros, with
 * noise from a fixed-seed pseudo-random sequence (splitmix64), never shown
 * and never from the source real releases draw from: so a preview shows
 * exactly the variance and bound a release with the same parameters shows,
 * reads nothing and costs nothing.
 */
#ifndef CC_PREVIEW_H
#define CC_PREVIEW_H

#include "mechanism.h"

#define CC_PREVIEW_WORDS 64

typedef struct cc_preview
{
	cc_state   *state;			/* the caller's, cc_state_size() bytes */
	cc_rng		rng;
	uint64_t	seed;
	uint64_t	words[CC_PREVIEW_WORDS];
} cc_preview;

/* Start a preview of prepared parameters in state. */
extern void cc_preview_init(cc_preview *preview, cc_state *state, const cc_params *params);

/*
 * The next step's release: t, variance and bound as a release shows them,
 * noisy 0.  CC_PAST_HORIZON after the last step of a declared horizon.
 */
extern cc_status cc_preview_next(cc_preview *preview, cc_release *release);

#endif							/* CC_PREVIEW_H */
