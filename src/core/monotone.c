/*
 * monotone.c
 *		Outputs that look like counts: the isotonic projection of a whole
 *		released series, and the clamp of a mean.
 *
 * True running counts are non-negative and non-decreasing, so projecting a
 * noisy series onto that convex set (weighted least squares, weights the
 * inverse variances of its steps) never moves it farther from the truth in
 * that norm, and a bound holding at every step at once still holds with
 * the largest of the steps' bounds: each output is a weighted mean of raw
 * values over an interval of steps around it (the max-min formula of
 * isotonic regression), then clamped at 0, which only moves it toward a
 * true count.  Pool adjacent violators computes it in O(n); clamping the
 * isotonic fit at 0 is the projection onto the set with the constraint
 * x >= 0 added (the fit is non-decreasing, so only a prefix is clamped).
 */
#include "monotone.h"

/* Merge the last block into the one before it: pooled weighted mean. */
static void
pool_last(cc_pav_block *blocks, int64_t *nblocks)
{
	cc_pav_block *a = &blocks[*nblocks - 2];
	const cc_pav_block *b = &blocks[*nblocks - 1];
	double		weight = a->weight + b->weight;

	a->level = (a->level * a->weight + b->level * b->weight) / weight;
	a->weight = weight;
	a->size += b->size;
	(*nblocks)--;
}

void
cc_monotone_series(double *y, const double *weight, int64_t n, cc_pav_block *blocks)
{
	int64_t		nblocks = 0;
	int64_t		i = 0;

	for (int64_t t = 0; t < n; t++)
	{
		blocks[nblocks].level = y[t];
		blocks[nblocks].weight = weight[t];
		blocks[nblocks].size = 1;
		nblocks++;
		while (nblocks > 1 && blocks[nblocks - 2].level > blocks[nblocks - 1].level)
			pool_last(blocks, &nblocks);
	}
	for (int64_t b = 0; b < nblocks; b++)
	{
		double		level = blocks[b].level < 0 ? 0 : blocks[b].level;

		for (int64_t k = 0; k < blocks[b].size; k++)
			y[i++] = level;
	}
}

double
cc_clamp(double x, double lo, double hi)
{
	if (x < lo)
		return lo;
	if (x > hi)
		return hi;
	return x;
}
