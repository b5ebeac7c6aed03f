/*
 * exp_bounds.h
 *		exp(-num/den) to any precision with proven bounds, and a uniform real
 *		compared against it, in integer arithmetic only.
 *
 * Pure C: no PostgreSQL headers.  The discrete Gaussian sampler (gaussian.c)
 * draws from a table whose weights are these bounds; its rare draws that
 * fall between a lower and an upper bound are settled by comparing a uniform
 * real, drawn a word at a time, against exp(-num/den) computed to as many
 * bits as the comparison needs.  Nothing here rounds to nearest: every
 * result is a floor or a ceiling, and every bound encloses the true value.
 */
#ifndef CC_EXP_BOUNDS_H
#define CC_EXP_BOUNDS_H

#include <stdbool.h>
#include <stdint.h>

#include "noise.h"

/*
 * The most 64-bit fraction limbs a comparison reaches (2048 bits).  A
 * comparison still undecided there, which has probability below 2^-2000,
 * comes out false.
 */
#define CC_EXP_MAX_LIMBS 32

/*
 * Bounds on exp(-num/den) * 2^shift, den >= 1, 0 <= shift <= 63, as
 * fixed-point numbers of limbs + 1 64-bit words, least significant first:
 * words 0 .. limbs - 1 the fraction, word limbs the integer part.
 * lo <= exp(-num/den) 2^shift <= hi, and hi - lo is a few hundred units of
 * the last place at most.  num = 0 gives lo = hi = 2^shift exactly.
 * 1 <= limbs <= CC_EXP_MAX_LIMBS.
 */
extern void cc_exp_bounds(unsigned __int128 num, uint64_t den, int shift, int limbs,
						  uint64_t *lo, uint64_t *hi);

/*
 * Is offset + U < exp(-num/den) 2^shift, for U uniform on [0, 1) drawn from
 * rng one word at a time, as few as the comparison needs?  Its probability
 * is min(1, max(0, exp(-num/den) 2^shift - offset)).  Same ranges as above.
 */
extern bool cc_uniform_below_exp(cc_rng *rng, uint64_t offset,
								 unsigned __int128 num, uint64_t den, int shift);

#endif							/* CC_EXP_BOUNDS_H */
