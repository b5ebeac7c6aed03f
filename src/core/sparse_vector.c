/*
 * sparse_vector.c
 *		AboveThreshold, c times, over the sum of a stream's last increments
 *		(sparse_vector.h).
 *
 * Why the scales: a run of AboveThreshold at epsilon' answers for epsilon'
 * with threshold noise of scale 2 D / epsilon' and query noise of scale
 * 4 D / epsilon' (Dwork and Roth, Theorem 3.23); c runs at epsilon' =
 * epsilon / c compose to epsilon.  The comparison is exact: int64 values
 * compared in 128 bits.
 */
#include "sparse_vector.h"

#include <string.h>

#include "core.h"

#define CC_SVT_MAGIC 0x53565431	/* "SVT1" */

bool
cc_svt_params_ok(const cc_svt_params *params)
{
	cc_scale	scale;

	return params->epsilon_units > 0 && params->sensitivity >= 1 &&
		params->max_positives >= 1 && params->max_positives <= CC_SVT_MAX_POSITIVES &&
		params->window >= 1 && params->window <= CC_SVT_MAX_WINDOW &&
		params->sensitivity <= INT64_MAX / (4 * CC_SVT_MAX_POSITIVES) &&
		cc_scale_make(4 * (uint64_t) params->max_positives * (uint64_t) params->sensitivity,
					  params->epsilon_units, CC_EPSILON_UNITS_PER_ONE, &scale);
}

size_t
cc_svt_bytes(int32_t window)
{
	return sizeof(cc_svt) + sizeof(int64_t) * (size_t) window;
}

bool
cc_svt_valid(const void *bytes, size_t len)
{
	cc_svt		head;

	if (len < sizeof(cc_svt))
		return false;
	memcpy(&head, bytes, sizeof(cc_svt));
	return head.magic == CC_SVT_MAGIC && cc_svt_params_ok(&head.params) &&
		len == cc_svt_bytes(head.params.window) &&
		head.positives >= 0 && head.positives <= head.params.max_positives && head.steps >= 0;
}

/* The scale mult * c * D / epsilon. */
static cc_scale
svt_scale(const cc_svt_params *params, uint64_t mult)
{
	cc_scale	scale = {1, 1};

	(void) cc_scale_make(mult * (uint64_t) params->max_positives * (uint64_t) params->sensitivity,
						 params->epsilon_units, CC_EPSILON_UNITS_PER_ONE, &scale);
	return scale;
}

cc_scale
cc_svt_threshold_scale(const cc_svt_params *params)
{
	return svt_scale(params, 2);
}

cc_scale
cc_svt_query_scale(const cc_svt_params *params)
{
	return svt_scale(params, 4);
}

/* A run begins: T + rho, saturated at the ends of int64 (never reached). */
static void
draw_threshold(cc_svt *svt, cc_rng *rng)
{
	int64_t		rho = cc_discrete_laplace(rng, cc_svt_threshold_scale(&svt->params));

	if (__builtin_add_overflow(svt->params.threshold, rho, &svt->noisy_threshold))
		svt->noisy_threshold = rho > 0 ? INT64_MAX : INT64_MIN;
}

void
cc_svt_start(cc_svt *svt, const cc_svt_params *params, cc_rng *rng)
{
	memset(svt, 0, cc_svt_bytes(params->window));
	svt->magic = CC_SVT_MAGIC;
	svt->params = *params;
	draw_threshold(svt, rng);
}

cc_svt_answer
cc_svt_query(cc_svt *svt, int64_t q, cc_rng *rng)
{
	int64_t		nu;

	if (svt->positives >= svt->params.max_positives)
		return CC_SVT_STOPPED;
	nu = cc_discrete_laplace(rng, cc_svt_query_scale(&svt->params));
	if ((__int128) q + nu < (__int128) svt->noisy_threshold)
		return CC_SVT_BELOW;
	if (++svt->positives < svt->params.max_positives)
		draw_threshold(svt, rng);
	return CC_SVT_ABOVE;
}

cc_svt_answer
cc_svt_step(cc_svt *svt, int64_t increment, cc_rng *rng)
{
	int64_t    *slot = &svt->ring[svt->steps % svt->params.window];
	int64_t		sum;

	if (svt->positives >= svt->params.max_positives)
		return CC_SVT_STOPPED;
	if (__builtin_sub_overflow(svt->sum, *slot, &sum) ||
		__builtin_add_overflow(sum, increment, &sum))
		return CC_SVT_OVERFLOW;
	svt->sum = sum;
	*slot = increment;
	svt->steps++;
	return cc_svt_query(svt, svt->sum, rng);
}
