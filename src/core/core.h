/*
 * core.h
 *		What every file of the core shares: the status codes its functions
 *		return, the exact units in which epsilon and rho are held, and the
 *		allocator a caller passes.
 *
 * Pure C: no PostgreSQL headers.  The bottom of the core's one-way order
 * (README.md): it includes nothing of the core, so the samplers, the
 * accounting and the mechanisms can all return a cc_status.
 */
#ifndef CC_CORE_H
#define CC_CORE_H

#include <stddef.h>
#include <stdint.h>

typedef enum cc_status
{
	CC_OK = 0,
	CC_BAD_EPSILON,				/* outside [CC_MIN_EPSILON, CC_MAX_EPSILON] */
	CC_NEED_HORIZON,			/* this mechanism needs a horizon */
	CC_BAD_HORIZON,				/* outside [1, cc_kind_max_horizon()] */
	CC_BAD_BLOCK,				/* outside [1, horizon] */
	CC_BLOCK_NOT_APPLICABLE,	/* a block size for another mechanism */
	CC_BAD_SENSITIVITY,			/* outside [1, CC_MAX_SENSITIVITY] */
	CC_BAD_BETA,				/* not strictly between 0 and 1 */
	CC_SCALE_TOO_LARGE,			/* noise scale above CC_MAX_SCALE, or
								 * sigma^2 above 2^62 */
	CC_NEGATIVE_ITEM,			/* a stream item below zero */
	CC_PAST_HORIZON,			/* one step more than the horizon */
	CC_OVERFLOW,				/* a running count beyond int64 */
	CC_BAD_RHO,					/* outside [CC_MIN_RHO, CC_MAX_RHO] */
	CC_WRONG_PRIVACY			/* a mechanism of the other privacy notion */
} cc_status;

/* Epsilon is held exactly, in units of 1e-9. */
#define CC_EPSILON_UNITS_PER_ONE UINT64_C(1000000000)
#define CC_MIN_EPSILON 1e-6
#define CC_MAX_EPSILON 1e3

/* Rho is held exactly too, in units of 1e-9, over the same range. */
#define CC_RHO_UNITS_PER_ONE UINT64_C(1000000000)
#define CC_MIN_RHO 1e-6
#define CC_MAX_RHO 1e3

/*
 * Where a privacy curve's memory comes from (privacy_region.h): palloc in a
 * memory context for the glue (an ereport out of palloc leaves the blocks to
 * the context), malloc when NULL is passed.  alloc returning NULL fails the
 * build cleanly.
 */
typedef struct cc_allocator
{
	void	   *(*alloc) (void *ctx, size_t size);
	void		(*release) (void *ctx, void *ptr);
	void	   *ctx;
} cc_allocator;

#endif							/* CC_CORE_H */
