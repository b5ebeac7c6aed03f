/*
 * sparse_vector.h
 *		The sparse vector technique over a window of a stream: AboveThreshold
 *		with a noisy threshold, for up to c positives, then it stops.
 *
 * Dwork and Roth's Sparse (The Algorithmic Foundations of Differential
 * Privacy, 3.6, Algorithms 1 and 2): c runs of AboveThreshold, each at
 * epsilon / c, so that the whole answers for epsilon (pure), however many
 * queries it is asked.  Each run draws a threshold noise rho of scale
 * 2 c D / epsilon once, and a fresh noise nu of scale 4 c D / epsilon for each
 * query q; it answers above when q + nu >= T + rho, and then the next run
 * begins with a new rho.  D is each query's sensitivity.  The noise is
 * discrete Laplace (noise.c): the queries are integers, and the proof's
 * shifts (rho by D, the positive query's nu by 2 D) are integers too.
 *
 * The query here is the sum of a stream's last `window` increments (a
 * counter's per-step counts), which a person's D events change by at most D.
 * The state is flat and self-contained, so the server can store it.
 */
#ifndef CC_SPARSE_VECTOR_H
#define CC_SPARSE_VECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noise.h"

/* The longest window, in steps. */
#define CC_SVT_MAX_WINDOW 10000
/* The most positives one alert may answer. */
#define CC_SVT_MAX_POSITIVES 1000

typedef struct cc_svt_params
{
	uint64_t	epsilon_units;	/* the whole epsilon, CC_EPSILON_UNITS_PER_ONE a unit */
	int64_t		sensitivity;	/* D: of each query, >= 1 */
	int64_t		threshold;		/* T */
	int32_t		max_positives;	/* c, 1 to CC_SVT_MAX_POSITIVES */
	int32_t		window;			/* steps summed, 1 to CC_SVT_MAX_WINDOW */
} cc_svt_params;

typedef struct cc_svt
{
	uint32_t	magic;
	int32_t		positives;		/* answered so far; c of them: stopped */
	cc_svt_params params;
	int64_t		noisy_threshold;	/* T + rho of the current run */
	int64_t		steps;			/* increments pushed */
	int64_t		sum;			/* of the last window increments */
	int64_t		ring[];		/* the last window increments, by step modulo window */
} cc_svt;

typedef enum cc_svt_answer
{
	CC_SVT_BELOW,
	CC_SVT_ABOVE,
	CC_SVT_STOPPED,				/* c positives answered: nothing more */
	CC_SVT_OVERFLOW				/* the window's sum overflows */
} cc_svt_answer;

/* Are the parameters valid, and their noise scales within the samplers'? */
extern bool cc_svt_params_ok(const cc_svt_params *params);

/* The bytes of a state with this window. */
extern size_t cc_svt_bytes(int32_t window);

/* Is this a state cc_svt_start made (as stored, possibly damaged)? */
extern bool cc_svt_valid(const void *bytes, size_t len);

/* Start a state (cc_svt_bytes of room) with the first run's threshold. */
extern void cc_svt_start(cc_svt *svt, const cc_svt_params *params, cc_rng *rng);

/* The noise scales: of the threshold (2 c D / epsilon), of a query (4 c D / epsilon). */
extern cc_scale cc_svt_threshold_scale(const cc_svt_params *params);
extern cc_scale cc_svt_query_scale(const cc_svt_params *params);

/*
 * Ask whether q is above the threshold: one query of the current run.  A
 * positive ends the run; the next begins with a fresh threshold noise, and
 * the c-th stops the state.
 */
extern cc_svt_answer cc_svt_query(cc_svt *svt, int64_t q, cc_rng *rng);

/*
 * Push a step's increment (>= 0) and ask whether the sum of the last window
 * increments is above the threshold.
 */
extern cc_svt_answer cc_svt_step(cc_svt *svt, int64_t increment, cc_rng *rng);

#endif							/* CC_SPARSE_VECTOR_H */
