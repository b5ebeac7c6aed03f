/*
 * continual_mean.h
 *		Continual mean estimation under user-level privacy: George, Ramesh,
 *		Singh and Tyagi, "Continual mean estimation under user-level privacy"
 *		(arXiv 2212.09980), Algorithm 6 (exponential withhold-release with a
 *		binary mechanism per level, each truncated around a private median)
 *		and their naive baseline, Algorithm 2.
 *
 * Pure C: no PostgreSQL headers.  A stream of samples, each in a declared
 * range and each from a user, goes in one sample at a time; after each one
 * the state releases an estimate of the mean, with its error bars.  The
 * privacy argument, the split of epsilon and what a user costs are written at
 * the top of continual_mean.c.
 *
 * Samples are quantized: the range [lo, hi] becomes the integers 0 ..
 * resolution (cc_mean_quantize()), so that every sum the noise protects is
 * an integer and the noise is the exact discrete Laplace of noise.h.
 * Estimates and error bars are in units of the range: 0 is lo, 1 is hi.
 *
 * The state is one flat block (cc_mean_size()).  The users' records are kept
 * by the caller, in one array of cc_mean_user_bytes() each, indexed by a slot
 * the caller gives each distinct user in order of first appearance (0, 1,
 * ...): the core never allocates.
 */
#ifndef CC_CONTINUAL_MEAN_H
#define CC_CONTINUAL_MEAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noise.h"

typedef enum cc_mean_kind
{
	CC_MEAN_WITHHOLD,			/* Algorithm 6 */
	CC_MEAN_NAIVE				/* Algorithm 2: every sample into one tree */
} cc_mean_kind;

typedef enum cc_mean_status
{
	CC_MEAN_OK = 0,
	CC_MEAN_BAD_EPSILON,		/* outside [1e-6, 1000] */
	CC_MEAN_BAD_HORIZON,		/* outside [1, CC_MEAN_MAX_SUM / resolution] */
	CC_MEAN_BAD_USERS,			/* outside [1, horizon] */
	CC_MEAN_BAD_PER_USER,		/* outside [1, min(horizon, 2^40)] */
	CC_MEAN_BAD_RESOLUTION,		/* outside [1, CC_MEAN_MAX_RESOLUTION] */
	CC_MEAN_BAD_BETA,			/* not strictly between 0 and 1 */
	CC_MEAN_BAD_PLAN,			/* a level's constants out of range */
	CC_MEAN_SCALE_TOO_LARGE,	/* a noise scale above CC_MAX_SCALE */
	CC_MEAN_PAST_HORIZON,		/* one sample more than the horizon */
	CC_MEAN_TOO_MANY_USERS,		/* one user more than declared */
	CC_MEAN_BAD_SAMPLE,			/* a quantized sample outside [0, resolution] */
	CC_MEAN_BAD_USER,			/* a slot beyond the next new one */
	CC_MEAN_OVERFLOW			/* a noisy sum beyond int64 (noise beyond
								 * 2^62: probability below exp(-9000)); the
								 * state must then be discarded */
} cc_mean_status;

#define CC_MEAN_MAX_RESOLUTION (INT64_C(1) << 24)
/*
 * horizon * resolution at most: every sum, clamped elements included (at
 * most twice their range), and the noise on it stay within int64
 */
#define CC_MEAN_MAX_SUM (INT64_C(1) << 60)
/* per_user below 2^40: at most 41 levels */
#define CC_MEAN_MAX_LEVELS 41
/* a median's candidates: a coarser grid beyond (the truncation widens) */
#define CC_MEAN_MAX_GRID 4096
/* a median's arrays: a level that would need more is not truncated */
#define CC_MEAN_MAX_ARRAYS (INT64_C(1) << 24)

typedef struct cc_mean_params
{
	cc_mean_kind kind;
	uint64_t	epsilon_units;	/* epsilon = units * 1e-9, for the whole
								 * release */
	int64_t		horizon;		/* T: most samples */
	int64_t		users;			/* n: most distinct users */
	int64_t		per_user;		/* m: most samples a user contributes; later
								 * ones are dropped (withhold: past the
								 * largest power of two <= m, since they
								 * would never be released) */
	int64_t		resolution;		/* Q: grid steps across the range */
	double		beta;			/* the bound fails with at most this
								 * probability, over the whole stream */
} cc_mean_params;

/*
 * One level: the binary mechanism of the elements of one size.  Level 0 takes
 * a user's first sample, level l >= 1 the sum of its samples 2^(l-1) + 1 ..
 * 2^l, released when the 2^l-th arrives.  The naive kind has one level that
 * takes every sample.
 */
typedef struct cc_mean_level
{
	int64_t		block;			/* samples in an element: 1, 1, 2, 4, ... */
	int64_t		capacity;		/* most elements: min(users, horizon >> l) */
	int64_t		depth;			/* the tree's levels, floor(log2 capacity)+1 */
	bool		truncated;		/* clamped around a private median */
	int64_t		half_width;		/* truncated: h, elements are clamped to
								 * [c - h, c + h], c the median's output */
	int64_t		arrays;			/* truncated: K, the median's arrays */
	int64_t		spacing;		/* truncated: s, between the median's
								 * candidates 0, s, 2s, ... */
	int64_t		grid;			/* truncated: G, the number of candidates */
	int64_t		sensitivity;	/* most one user moves the sum of one tree
								 * level's nodes: 2h if truncated, else block
								 * * Q (naive: per_user * Q) */
	cc_scale	scale;			/* depth * sensitivity / (its epsilon) */
	double		variance;		/* of one draw of that scale */
} cc_mean_level;

/*
 * Everything that follows from the parameters: public, fixed before the first
 * sample.  Each tree spends epsilon / tree_share, each median epsilon /
 * median_share; levels / tree_share + medians / median_share = 1.
 */
typedef struct cc_mean_plan
{
	cc_mean_params params;
	int64_t		levels;			/* L + 1 (naive: 1) */
	int64_t		cap;			/* samples kept per user: 2^L (naive: m) */
	int64_t		medians;		/* M: truncated levels */
	uint64_t	tree_share;		/* 2 (L + 1) with medians, else L + 1 */
	uint64_t	median_share;	/* 2 M, or 0 */
	double		noise_log_term; /* ln(2 / delta) of each level's noise at
								 * each step */
	double		stat_log_term;	/* ln(2 / delta) of the sampling error at
								 * each step */
	int64_t		max_grid;		/* largest G, the median's scratch */
	cc_mean_level level[CC_MEAN_MAX_LEVELS];
} cc_mean_plan;

/*
 * Check parameters and compute the plan.  cc_mean_plan_calibrate() is its
 * last step: from the levels' truncation, half-widths and tree depths, the
 * sensitivities, the split of epsilon and the noise scales.  Privacy rests on
 * that step alone, whatever the other constants are (the unit tests change
 * them to reach truncation on small streams, then calibrate again).
 */
extern cc_mean_status cc_mean_plan_make(const cc_mean_params *params,
										cc_mean_plan *plan);
extern cc_mean_status cc_mean_plan_calibrate(cc_mean_plan *plan);

/*
 * Truncate exactly the top `medians` levels of a withhold plan, each with the
 * constants of the analysis (continual_mean.c, error bars); false if one of
 * them would not gain (an interval as wide as its range, or more arrays than
 * the stream can fill).  cc_mean_plan_make() takes the number of medians
 * whose plan has the least noise; calibrate after calling this.
 */
extern bool cc_mean_plan_truncate(cc_mean_plan *plan, int64_t medians);

/* Epsilon of one tree and of one median, as exact fractions num / den. */
extern void cc_mean_tree_epsilon(const cc_mean_plan *plan, uint64_t *num,
								 uint64_t *den);
extern void cc_mean_median_epsilon(const cc_mean_plan *plan, uint64_t *num,
								   uint64_t *den);

typedef struct cc_mean cc_mean;

/* Bytes of the state for a plan (without the users' records). */
extern size_t cc_mean_size(const cc_mean_plan *plan);

/* Bytes of one user's record: 16 + 8 (L + 1) (naive: 16). */
extern size_t cc_mean_user_bytes(const cc_mean_plan *plan);

extern void cc_mean_init(cc_mean *state, const cc_mean_plan *plan);
extern const cc_mean_plan *cc_mean_state_plan(const cc_mean *state);

/* A sample in [lo, hi] (clamped to it) on the grid 0 .. resolution. */
extern bool cc_mean_quantize(double x, double lo, double hi,
							 int64_t resolution, int64_t *q);

/*
 * The next sample, q in 0 .. resolution, from the user of slot user: a slot
 * seen before, or the next new one (cc_mean_users(state)), whose record the
 * caller has made room for at users + slot * cc_mean_user_bytes() and the
 * core initializes.  Errors leave the state and the records as they were.
 */
extern cc_mean_status cc_mean_push(cc_mean *state, void *users, int64_t user,
								   int64_t q, cc_rng *rng);

/* Distinct users so far: the next new user's slot. */
extern int64_t cc_mean_users(const cc_mean *state);

/* The release after the samples pushed so far. */
typedef struct cc_mean_release
{
	int64_t		t;				/* samples pushed */
	int64_t		included;		/* N_t: samples the estimate covers */
	int64_t		dropped;		/* past their user's cap */
	int64_t		max_count;		/* M_t: most samples kept from one user */
	bool		diverse;		/* every level up to floor(log2 M_t) is
								 * active: the paper's diversity condition,
								 * as this plan has it */
	uint64_t	active;			/* bit l: level l releases */
	bool		has_estimate;	/* included > 0 */
	double		estimate;		/* the noisy mean, in range units */
	double		stddev;			/* exact standard deviation of its noise */
	double		bound;			/* |estimate - mu| <= bound at every step at
								 * once with probability >= 1 - beta, when
								 * the samples are independent draws of one
								 * law of mean mu (see continual_mean.c) */
} cc_mean_release;

extern void cc_mean_read(const cc_mean *state, cc_mean_release *release);

/*
 * Raw values, for privileged callers and tests only: the exact sum of the
 * (truncated) elements the estimate covers, in grid units, and the noisy sum.
 */
extern int64_t cc_mean_exact_sum(const cc_mean *state);
extern int64_t cc_mean_noisy_sum(const cc_mean *state);

/* One level's raw state, for privileged callers and tests only. */
typedef struct cc_mean_level_state
{
	bool		active;
	int64_t		elements;		/* in its tree */
	int64_t		exact;			/* their exact (clamped) sum */
	int64_t		centre;			/* truncated and active: the median's c */
	int64_t		pooled;			/* truncated and inactive: samples its
								 * median could pool so far */
} cc_mean_level_state;

extern void cc_mean_level_read(const cc_mean *state, int l,
							   cc_mean_level_state *out);

#endif							/* CC_CONTINUAL_MEAN_H */
