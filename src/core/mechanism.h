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

#include "params.h"

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
