/*
 * read.c
 *		The release a state reads: its noisy count, the variance its
 *		mechanism describes, and the simultaneous bound of bounds.c.
 *
 * Above both the dispatch (mechanism.c) and the bound in the core's order
 * (README.md): the bound asks the dispatch for each mechanism's classes,
 * so the read, which needs both, sits over them.
 */
#include "mechanism.h"
#include "mechanism_int.h"

void
cc_read(const cc_state *state, cc_release *release)
{
	const cc_mechanism_ops *ops = cc_mechanism(state->params.kind);
	cc_noise	noise = {0};

	release->t = state->t;
	release->noisy = state->noisy;
	release->variance = 0.0;
	release->bound = 0.0;
	if (state->t == 0)
		return;

	if (ops->privacy == CC_ZCDP)
		ops->gaussian_noise(state, &noise);
	else if (ops->weighted_noise)
		ops->weighted_noise(state, &noise);
	else
	{
		cc_term		terms[CC_MAX_TERMS];
		int			nterms = ops->terms(state, terms);

		for (int i = 0; i < nterms; i++)
			noise.variance += (double) terms[i].count * terms[i].variance;
	}
	release->variance = noise.variance;
	release->bound = cc_bound(state, &noise);
}
