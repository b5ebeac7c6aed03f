/*
 * gaussian.h
 *		Exact discrete Gaussian noise from an injected source of random bits.
 *
 * Pure C: no PostgreSQL headers.  The discrete Gaussian of variance parameter
 * sigma^2 puts P(X = x) proportional to exp(-x^2 / (2 sigma^2)) on every
 * integer x.  It is drawn from a table of the weights' proven bounds, the
 * rare draws between a lower and an upper bound settled by comparing a
 * uniform with the weight computed to as many bits as needed (gaussian.c,
 * exp_bounds.c), all in integer arithmetic, so that no floating-point
 * rounding can bias or leak through the noise.  Doubles appear only in
 * cc_dgauss_variance(), which describes the noise for error bars.
 */
#ifndef CC_GAUSSIAN_H
#define CC_GAUSSIAN_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"				/* cc_status, CC_RHO_UNITS_PER_ONE */
#include "noise.h"

/*
 * sigma^2 is held exactly as a cc_scale num / den, reduced or not, with both
 * parts between 1 and CC_DGAUSS_MAX_PART.  In that range every product the
 * sampler forms fits in 128 bits (see gaussian.c); sigma^2 is at most 2^62
 * (sigma about 2.1e9).
 */
#define CC_DGAUSS_MAX_PART (UINT64_C(1) << 62)

/*
 * Can the sampler take sigma2?  CC_OK, or CC_SCALE_TOO_LARGE for a part
 * that is 0 or above CC_DGAUSS_MAX_PART: a noise parameter outside what the
 * samplers can draw exactly.  No other status, so that the glue's report of
 * statuses needs no new case.
 */
extern cc_status cc_dgauss_check(cc_scale sigma2);

/*
 * One draw of the discrete Gaussian with variance parameter sigma2 into *out;
 * returns cc_dgauss_check(sigma2) and draws only when that is CC_OK.  Values
 * stay far inside int64: |x| above 2^40 has probability about exp(-2^17) at
 * the largest sigma^2.
 */
extern cc_status cc_dgauss_draw(cc_rng *rng, cc_scale sigma2, int64_t *out);

/*
 * The variance parameter for rho-zCDP: the smallest sigma^2 the sampler takes
 * that is at least l2_squared / (2 rho), for a query of squared L2
 * sensitivity at most l2_squared whose values are integers, rho =
 * rho_units * 1e-9.  The multivariate discrete Gaussian with independent
 * coordinates of parameter sigma^2 is then (Delta^2 / (2 sigma^2))-zCDP for
 * integer shifts of norm Delta (Canonne, Kamath and Steinke 2020,
 * Theorem 14).  CC_SCALE_TOO_LARGE when no sigma^2 fits the sampler.
 */
extern cc_status cc_gaussian_sigma2(unsigned __int128 l2_squared, uint64_t rho_units,
									cc_scale *sigma2);

/*
 * The exact variance of the discrete Gaussian, below sigma^2 for small
 * sigma^2 (0.2150 at sigma^2 = 1/4, 1 - 2e-7 at 1), equal to it within double
 * precision from sigma^2 = 4 on.  For error bars only; 0 when sigma2 is
 * refused by cc_dgauss_check().
 */
extern double cc_dgauss_variance(cc_scale sigma2);

/*
 * The table a draw reads (gaussian.c), built once for a sigma^2 and kept:
 * buckets of magnitudes 0 .. entries - 1 and the tail's, in units of
 * 2^-unit_bits; magnitudes are scaled by 2^scale_bits above sigma^2 = 64.
 * Exposed for the unit tests, which build tables of coarse units so that
 * most draws take the exact comparisons that real ones take once in 2^50.
 */
#define CC_DGAUSS_UNIT_BITS 56
#define CC_DGAUSS_SEARCH 128	/* at most 73 buckets: 72 and the tail's */
#define CC_DGAUSS_GUIDE_BITS 8

typedef struct cc_dgauss_table
{
	cc_scale	sigma2;			/* as given */
	uint64_t	n;				/* sigma^2 = n / d in lowest terms */
	uint64_t	d;
	uint64_t	table_d;		/* d 4^scale_bits: weights exp(-i^2 table_d / 2n) */
	int			unit_bits;
	int			scale_bits;
	int			entries;		/* magnitudes with a bucket; the tail's is next */
	int			guide_shift;	/* unit u's guide is guide[u >> guide_shift] */
	uint64_t	total;			/* units in all buckets */
	uint64_t	ends[CC_DGAUSS_SEARCH];	/* cumulative; UINT64_MAX past the tail's */
	uint64_t	sure[CC_DGAUSS_SEARCH];	/* units that accept without a comparison */
	/* guide[k]: the bucket of unit k 2^guide_shift, where u's search starts */
	uint8_t		guide[1 << CC_DGAUSS_GUIDE_BITS];
} cc_dgauss_table;

/*
 * The bucket of unit u < total: the least i with ends[i] > u, found from
 * its guide (Chen and Asau's indexed search), so in a step or two: a guide
 * covers total / 2^CC_DGAUSS_GUIDE_BITS units, most within one bucket.
 */
static inline int
cc_dgauss_bucket(const cc_dgauss_table *table, uint64_t u)
{
	int			i = table->guide[u >> table->guide_shift];

	while (table->ends[i] <= u)
		i++;
	return i;
}

/* CC_OK, or cc_dgauss_check()'s refusal, or a unit_bits outside 2 .. 56 */
extern cc_status cc_dgauss_table_build(cc_scale sigma2, int unit_bits,
									   cc_dgauss_table *table);
extern int64_t cc_dgauss_table_draw(cc_rng *rng, const cc_dgauss_table *table);

#endif							/* CC_GAUSSIAN_H */
