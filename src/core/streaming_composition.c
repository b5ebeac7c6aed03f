/*
 * streaming_composition.c
 *		Theorem 4 of seed 002: the coupled-worlds privacy of a mechanism run
 *		at every step of a stream whose oldest rows are replaced.
 *
 * The proof (seed 002, Lemmas 1 and 2) conditions the composite's output
 * on the oldest block of the last database and peels one step at a time:
 * each earlier step's outputs depend on the rows of the last database only
 * through rows an adversary does not know, which costs at most gamma a step
 * (assumption 3), and the last step costs its own epsilon.  The shifts
 * multiply as (1 - delta_max)^t >= 1 - t delta_max.  The arithmetic here
 * is two operations in doubles, each rounded up so that the bound given is
 * never below the theorem's.
 *
 * IDENTIFICATION
 *	  src/core/streaming_composition.c
 */
#include <math.h>

#include "streaming_composition.h"

/* a * b for a, b >= 0, rounded up (0 only when exact) */
static double
mul_up(double a, double b)
{
	return a == 0 || b == 0 ? 0 : nextafter(a * b, INFINITY);
}

cc_stream_status
cc_streaming_composition(double epsilon_max, double delta_max, double gamma,
						 int64_t steps, cc_stream_bound *bound)
{
	double		later;

	if (!isfinite(epsilon_max) || epsilon_max < 0)
		return CC_STREAM_BAD_EPSILON;
	if (!(delta_max >= 0 && delta_max <= 1))
		return CC_STREAM_BAD_DELTA;
	if (!isfinite(gamma) || gamma < epsilon_max)
		return CC_STREAM_BAD_GAMMA;
	if (steps < 1)
		return CC_STREAM_BAD_STEPS;

	/* conversions round to nearest: one step up bounds an int64 */
	later = nextafter((double) (steps - 1), INFINITY);
	bound->epsilon = steps == 1 || gamma == 0 ? epsilon_max :
		nextafter(epsilon_max + mul_up(later, gamma), INFINITY);
	bound->delta = fmin(1.0, mul_up(nextafter((double) steps, INFINITY), delta_max));
	bound->vacuous = bound->delta >= 1 || isinf(bound->epsilon);
	return CC_STREAM_OK;
}

cc_stream_status
cc_stream_step_epsilon(cc_cost cost, double delta, const cc_allocator *allocator,
					   double *epsilon)
{
	cc_charge	charge;
	cc_privacy_curve *curve;
	cc_region_status status;

	if (!(delta >= 0 && delta <= 1))
		return CC_STREAM_BAD_DELTA;
	cc_charge_of_cost(cost, 1, &charge);
	status = cc_privacy_curve_build(&charge, 1, allocator, &curve);
	if (status == CC_REGION_NO_MEMORY)
		return CC_STREAM_NO_MEMORY;
	if (status != CC_REGION_OK)
		return CC_STREAM_BAD_COST;
	*epsilon = cc_privacy_curve_epsilon(curve, delta);
	cc_privacy_curve_free(curve);
	return CC_STREAM_OK;
}
