/*
 * streaming_composition.h
 *		The seed's bound for a mechanism run at every step of a stream whose
 *		oldest rows are replaced (seed 002, Theorem 4).
 *
 * Pure C: no PostgreSQL headers.  Rows are drawn independently from one
 * distribution; each step a fraction c of the database, its oldest rows,
 * is replaced, so a row lives 1/c steps.  A mechanism M run on the database
 * of each step is (epsilon_max, delta_max) coupled-worlds private given the
 * rows that outlive the step (the seed's assumptions 1 and 2), and the
 * influence of those rows is bounded by gamma (assumption 3):
 *
 *		P[M(X) = y | z] / P[M(alt X) = y | z'] <= e^gamma for all z, z', y
 *
 * (and the same with X and alt X swapped, for the bound to hold both ways).
 * Then running M for t steps is (epsilon_t, delta_t) coupled-worlds
 * private with
 *
 *		epsilon_t = epsilon_max + (t - 1) gamma,	delta_t = t delta_max.
 *
 * Taking z = z' in assumption 3 shows gamma >= epsilon_max, so epsilon_t >=
 * t epsilon_max: never better than basic composition of worst-case DP
 * guarantees.  The bound is for per-step guarantees that are only
 * distributional (coupled worlds), which do not compose by addition: steps
 * that share rows are correlated (test_streaming_composition.c has a
 * stream whose steps are each 0-private and whose composition is not).
 */
#ifndef CC_STREAMING_COMPOSITION_H
#define CC_STREAMING_COMPOSITION_H

#include <stdbool.h>
#include <stdint.h>

#include "accounting.h"
#include "privacy_region.h"

typedef enum cc_stream_status
{
	CC_STREAM_OK = 0,
	CC_STREAM_BAD_EPSILON,		/* epsilon_max not finite and >= 0 */
	CC_STREAM_BAD_DELTA,		/* delta_max outside [0, 1] */
	CC_STREAM_BAD_GAMMA,		/* gamma not finite, or below epsilon_max,
								 * which assumption 3 at z = z' forbids */
	CC_STREAM_BAD_STEPS,		/* steps below 1 */
	CC_STREAM_BAD_COST,			/* a per-step release's curve cannot be
								 * built (privacy_region.h) */
	CC_STREAM_NO_MEMORY
} cc_stream_status;

typedef struct cc_stream_bound
{
	double		epsilon;		/* epsilon_max + (steps - 1) gamma, rounded up */
	double		delta;			/* min(1, steps delta_max), rounded up */
	bool		vacuous;		/* delta is 1 or epsilon infinite: the bound
								 * says nothing */
} cc_stream_bound;

/* Theorem 4's bound for steps steps, or why the inputs are refused. */
extern cc_stream_status cc_streaming_composition(double epsilon_max,
												 double delta_max,
												 double gamma, int64_t steps,
												 cc_stream_bound *bound);

/*
 * The per-step (epsilon_max, delta_max) of one release of cost (a
 * mechanism's cc_params_cost()) at delta_max = delta: the least epsilon of
 * its privacy curve (privacy_region.h) there.  A worst-case guarantee over
 * neighbouring databases holds conditionally on any rows (a mixture of
 * neighbouring pairs), so it is a coupled-worlds one too.  +infinity when
 * no epsilon reaches delta.
 */
extern cc_stream_status cc_stream_step_epsilon(cc_cost cost, double delta,
											   const cc_allocator *allocator,
											   double *epsilon);

#endif							/* CC_STREAMING_COMPOSITION_H */
