/*
 * params.h
 *		The types of the mechanisms' interface: the kinds, their parameters,
 *		a release, and the opaque state.
 *
 * Pure C: no PostgreSQL headers.  Apart from mechanism.h, which declares the
 * functions, so that mechanism_int.h, which the mechanisms and the dispatch
 * in mechanism.c include, need not include the dispatch's own header.
 */
#ifndef CC_PARAMS_H
#define CC_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accounting.h"
#include "core.h"
#include "noise.h"

/* The longest horizon, and the most one unit may add to a stream. */
#define CC_MAX_HORIZON (INT64_C(1) << 62)
#define CC_MAX_SENSITIVITY INT64_C(1000000)

/*
 * No state is larger, whatever its parameters (kary chooses its arity to
 * fit).
 */
#define CC_STATE_MAX_BYTES 2048

typedef enum cc_kind
{
	CC_SIMPLE_I,				/* fresh noise on every prefix sum */
	CC_SIMPLE_II,				/* noise on every item */
	CC_TWO_LEVEL,				/* noisy blocks plus noisy items */
	CC_BINARY,					/* dyadic tree of noisy partial sums */
	CC_HYBRID,					/* log mechanism plus a tree per [2^k, 2^(k+1)) */
	CC_HONAKER,					/* dyadic tree, Honaker's estimates of its nodes */
	CC_SMOOTH_BINARY,			/* a tree's leaves of Hamming weight h/2 only */
	CC_GAUSSIAN_HONAKER,		/* honaker with discrete Gaussian noise (zCDP) */
	CC_BLT,						/* a BLT matrix factorization (zCDP) */
	CC_KARY,					/* k-ary tree with negative digits */
	CC_BLT_SCALED,				/* blt, its inputs scaled by stretches (zCDP) */
	CC_NUM_KINDS
} cc_kind;

/*
 * privacy sits in what was padding after kind, and rho_units shares the
 * bytes of epsilon_units: the layout, which states carry into storage, is
 * the one written before zCDP, whose padding every caller zeroed (memset),
 * and zero is CC_PURE.
 */
typedef struct cc_params
{
	cc_kind		kind;
	cc_accounting privacy;		/* the kind's own (pure: discrete Laplace,
								 * zCDP: discrete Gaussian), or
								 * cc_params_prepare() refuses, so that a
								 * caller who accounts in epsilon cannot get
								 * a Gaussian mechanism by its name alone */
	union
	{
		uint64_t	epsilon_units;	/* CC_PURE: epsilon = epsilon_units *
									 * 1e-9 */
		uint64_t	rho_units;	/* CC_ZCDP: rho = rho_units * 1e-9 */
	};
	bool		has_horizon;
	int64_t		horizon;		/* number of steps, when declared */
	bool		has_block;
	int64_t		block;			/* two_level block size; kary's arity k */
	int64_t		sensitivity;	/* most that one protected unit adds to the
								 * whole stream */
	double		beta;			/* the bound fails with at most this
								 * probability */
} cc_params;

/* One release: step t, the noisy running count and its error. */
typedef struct cc_release
{
	int64_t		t;
	int64_t		noisy;
	double		variance;		/* exact variance of noisy - exact */
	double		bound;			/* |noisy - exact| <= bound for all steps at
								 * once, with probability at least 1 - beta:
								 * a proven upper bound on the tail (see
								 * the head of bounds.c), never an
								 * approximation */
} cc_release;

typedef struct cc_state cc_state;

#endif							/* CC_PARAMS_H */
