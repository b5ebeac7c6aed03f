/*
 * monotone.h
 *		Post-processing of released values into outputs that look like what
 *		they estimate: running counts that are non-negative and
 *		non-decreasing, means inside their range.
 *
 * Everything here reads only released values and public parameters, so it
 * costs no privacy (post-processing): a release's epsilon or rho covers it.
 * A counter's online form (the running maximum of its releases, clamped at
 * 0) is computed where its releases are read, in SQL (counters/counter.c).
 */
#ifndef CC_MONOTONE_H
#define CC_MONOTONE_H

#include <stdint.h>

/* One block of pooled adjacent values: their weighted mean and weight. */
typedef struct cc_pav_block
{
	double		level;
	double		weight;
	int64_t		size;
} cc_pav_block;

/*
 * Project y[0..n-1] in place onto the non-negative non-decreasing series
 * nearest in the norm weighted by weight[] (each > 0): pool adjacent
 * violators, then clamp at 0.  blocks holds n entries of scratch.  O(n).
 */
extern void cc_monotone_series(double *y, const double *weight, int64_t n,
							   cc_pav_block *blocks);

/* x clamped to [lo, hi] (lo <= hi). */
extern double cc_clamp(double x, double lo, double hi);

#endif							/* CC_MONOTONE_H */
