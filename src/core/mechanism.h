/*
 * mechanism.h
 *		Continual-release mechanisms as streaming state machines.
 *
 * Pure C: no PostgreSQL headers.  A stream x_1, x_2, ... of non-negative
 * counts goes in one step at a time; after each step the state holds the
 * noisy running count c_t = x_1 + ... + x_t together with what is needed to
 * describe its error.  A state is one flat block of memory without pointers,
 * so it can live in an aggregate context, in shared memory or on disk as it
 * is.
 *
 * Noise is drawn when a step is pushed and stored in the state; reading a
 * release never draws.  That is what keeps a noisy value from being redrawn:
 * whoever holds the state decides when it is discarded.
 */
#ifndef CC_MECHANISM_H
#define CC_MECHANISM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accounting.h"
#include "noise.h"

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
	CC_NUM_KINDS
} cc_kind;

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
#define CC_MAX_HORIZON (INT64_C(1) << 62)
#define CC_MAX_SENSITIVITY INT64_C(1000000)

/* Rho is held exactly too, in units of 1e-9, over the same range. */
#define CC_RHO_UNITS_PER_ONE UINT64_C(1000000000)
#define CC_MIN_RHO 1e-6
#define CC_MAX_RHO 1e3

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
	int64_t		block;			/* two_level block size */
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
								 * mechanism.c, error bars), never an
								 * approximation */
} cc_release;

typedef struct cc_state cc_state;

extern bool cc_kind_from_name(const char *name, cc_kind *kind);
extern const char *cc_kind_name(cc_kind kind);
extern bool cc_kind_needs_horizon(cc_kind kind);
extern cc_accounting cc_kind_privacy(cc_kind kind);
/* The longest horizon the kind takes: CC_MAX_HORIZON but for blt. */
extern int64_t cc_kind_max_horizon(cc_kind kind);

/*
 * What a release with these prepared parameters costs, in its kind's own
 * accounting: its epsilon, or its rho with what its noise is (cc_gauss).
 * What every caller charges.
 */
extern cc_cost cc_params_cost(const cc_params *params);

/* Round epsilon to the nearest 1e-9; CC_BAD_EPSILON outside the range. */
extern cc_status cc_epsilon_units(double epsilon, uint64_t *units);

/* Round rho to the nearest 1e-9; CC_BAD_RHO outside the range. */
extern cc_status cc_rho_units(double rho, uint64_t *units);

/* Check parameters and fill the defaults (block = ceil(sqrt(horizon))). */
extern cc_status cc_params_prepare(cc_params *params);

/* Bytes of state for prepared parameters: O(log horizon) at most. */
extern size_t cc_state_size(const cc_params *params);

/* No state is larger, whatever its parameters. */
#define CC_STATE_MAX_BYTES 2048

/* The bytes of an initialized state, to store it as it is. */
extern size_t cc_state_bytes(const cc_state *state);

/*
 * Could len bytes be a state this core wrote (consistent size, parameters
 * and step)?  For states read back from storage: a damaged one is refused.
 */
extern bool cc_state_valid(const void *bytes, size_t len);
extern void cc_state_init(cc_state *state, const cc_params *params);
extern const cc_params *cc_state_params(const cc_state *state);

/*
 * Push the next step's item.  CC_NEGATIVE_ITEM and CC_PAST_HORIZON leave the
 * state as it was; after CC_OVERFLOW the state must be discarded.
 */
extern cc_status cc_push(cc_state *state, int64_t item, cc_rng *rng);

/* The release at the current step (t = 0 before the first push). */
extern void cc_read(const cc_state *state, cc_release *release);

/* The exact running count: raw data, for privileged callers only. */
extern int64_t cc_exact_count(const cc_state *state);

#endif							/* CC_MECHANISM_H */
