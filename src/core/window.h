/*
 * window.h
 *		Sliding-window counts: at every step t, the number of events in the
 *		last W steps, released continually under event-level epsilon-DP.
 *
 * Pure C: no PostgreSQL headers.  Two constructions (window.c has their
 * arguments):
 *	- CC_WINDOW_TREE: a dyadic tree truncated at level floor(log2 W), so an
 *	  event is in L = floor(log2 W) + 1 nodes, each with discrete Laplace
 *	  noise of scale L Delta / epsilon; a window is the sum of its canonical
 *	  dyadic decomposition (at most 2(L - 1) nodes).  Bolot, Fawaz,
 *	  Muthukrishnan, Nikolov and Taft, "Private decayed predicate sums on
 *	  streams", ICDT 2013 (sliding windows).  Needs no horizon for its
 *	  noise.
 *	- CC_WINDOW_HONAKER: the same tree, each node estimated from its own
 *	  noisy value and its children's estimates by inverse-variance weights
 *	  (Honaker 2015, in the streaming form mech_honaker.c uses): a node of
 *	  level d then has 2^d / (2^(d+1) - 1) of a draw's variance.
 *	- CC_WINDOW_DIFF: the difference c_t - c_(t-W) of the releases of the
 *	  smooth binary mechanism over the horizon (mech_smooth_binary.c), whose
 *	  shared noisy nodes cancel exactly.
 *	- CC_WINDOW_KARY: the k-ary tree with negative digits (mech_kary.c)
 *	  truncated at the h levels width W needs, its top level unbounded, so
 *	  an event is in h blocks of noise scale h Delta / epsilon whatever the
 *	  stream's length; the window is prefix(t) - prefix(t - W), whose
 *	  common blocks cancel exactly (window_kary.c).  k is chosen from the
 *	  public parameters.
 *	- CC_WINDOW_BLOCKS: two levels, every step and every aligned block of K
 *	  steps, each with its own draw of scale 2 Delta / epsilon; the window
 *	  is the least-squares estimate from both levels, block by block, of
 *	  q (K + 1 - q) / (K + 1) draws' variance for the q steps it holds of a
 *	  block (window_blocks.c).  Or three levels, with every aligned
 *	  superblock of K2 blocks too, scale 3 Delta / epsilon, the estimate
 *	  from all three.  The levels and K (K1, K2) are chosen from the public
 *	  parameters.
 * CC_WINDOW_AUTO picks the one of least mean variance over the horizon,
 * from exact per-step formulas.  Noise is drawn when a step is pushed and
 * stored; reading never draws.  The state is one flat block of
 * O(min(W, horizon)) words (kary: W + 1 words and O(k h) more; blocks:
 * 2 (W + 1) + 2 K + W / K + 4, three levels 2 (W + 1) + 2 K1 K2 + W / K1 +
 * K2 + W / (K1 K2) + 8).
 */
#ifndef CC_WINDOW_H
#define CC_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mechanism.h"

typedef enum cc_window_kind
{
	CC_WINDOW_TREE,
	CC_WINDOW_DIFF,
	CC_WINDOW_HONAKER,
	CC_WINDOW_KARY,
	CC_WINDOW_BLOCKS,
	CC_WINDOW_AUTO				/* resolved by cc_window_prepare() */
} cc_window_kind;

/* The widest window (and longest horizon) the state is sized for. */
#define CC_WINDOW_MAX_WIDTH (INT64_C(1) << 40)

typedef struct cc_window_params
{
	cc_window_kind kind;
	int64_t		width;			/* W >= 1; above the horizon, the horizon */
	int64_t		horizon;		/* T >= 1 steps */
	uint64_t	epsilon_units;	/* as cc_params */
	int64_t		sensitivity;	/* events one unit adds to the whole stream */
	double		beta;			/* the bound fails with at most this */
	int64_t		arity;			/* kary: k, chosen by cc_window_prepare() */
	int64_t		block;			/* blocks: K, chosen by cc_window_prepare()
								 * when 0 */
	int64_t		superblock;		/* blocks: 0 for two levels, or K2 >= 2
								 * blocks a superblock (three levels);
								 * chosen with K when K is 0 */
} cc_window_params;

/* blocks: the largest K weighed, and that a caller may name */
#define CC_WINDOW_BLOCKS_MAX_K 2048

/*
 * Check the parameters, clamp the width to the horizon and resolve
 * CC_WINDOW_AUTO: the cc_status of cc_params_prepare() for the same
 * epsilon, horizon, sensitivity and beta (CC_BAD_BLOCK for a width below 1).
 */
extern cc_status cc_window_prepare(cc_window_params *params);

extern const char *cc_window_kind_name(cc_window_kind kind);
extern bool cc_window_kind_from_name(const char *name, cc_window_kind *kind);

typedef struct cc_window cc_window;

/* Bytes of state for prepared parameters. */
extern size_t cc_window_size(const cc_window_params *params);
extern void cc_window_init(cc_window *window, const cc_window_params *params);

/* Push the next step's item; CC_NEGATIVE_ITEM and CC_PAST_HORIZON change nothing. */
extern cc_status cc_window_push(cc_window *window, int64_t item, cc_rng *rng);

/*
 * The release at the current step: the noisy window count, its exact
 * variance, and a bound holding at every step of the horizon at once with
 * probability 1 - beta (a union bound: beta / T a step).
 */
extern void cc_window_read(const cc_window *window, cc_release *release);

/*
 * The noisy values summed by the release at the current step: draws (tree,
 * difference, kary) or node estimates (honaker); blocks: the draws of
 * the blocks it touches, K + 1 a block.
 */
extern int64_t cc_window_draws(const cc_window *window);

/*
 * The variance of one draw, and the mean and largest variance over steps
 * 1 .. T, from the exact per-step numbers of draws and levels (O(T log W)
 * time; kary O((W + k^(h-1)) h), by its period).
 */
extern double cc_window_draw_variance(const cc_window_params *params);
extern void cc_window_variances(const cc_window_params *params, double *mean,
								double *worst);

/* The number of nodes of the tree's decomposition of the window at t. */
extern int64_t cc_window_tree_nodes(int64_t width, int64_t t);

/*
 * kary (window_kary.c): x rounded to the nearest multiple of power (odd);
 * the number of draws in the window at t for k = arity; and their sum
 * over steps 1 .. horizon and their largest number, in O((W + k^(h-1)) h).
 */
extern int64_t cc_window_kary_round(int64_t x, int64_t power);
extern int64_t cc_window_kary_draws_at(int64_t arity, int64_t width, int64_t t);
extern void cc_window_kary_draws_over_horizon(int64_t arity, int64_t width, int64_t horizon,
											  double *sum, int64_t *most);

/*
 * blocks (window_blocks.c), K1 = block, K2 = super (0: two levels): the
 * blocks the window at t touches; the variance of the window at t over one
 * draw's; its sum over steps 1 .. horizon and its largest value, in
 * O(K1 max(K2, 1)); the K of least mean variance for two levels (0 if none
 * fits 1 .. CC_WINDOW_BLOCKS_MAX_K) and the (K1, K2) for three (false if
 * none fits); the log moment generating function, at lambda, of a block's
 * share of the noise when the window holds q of its steps (two levels), and
 * of a superblock's when it holds its steps lo .. hi (three), for draws of
 * inverse scale inv_b.
 */
typedef struct cc_window_span
{
	int64_t		first;			/* the blocks of the window's first step */
	int64_t		last;			/* and of its last (t's) */
	int64_t		q_first;		/* the window's steps in block first */
	int64_t		q_last;			/* in block last, 0 if it is first */
	int64_t		full;			/* the blocks between them */
} cc_window_span;

extern void cc_window_blocks_span(int64_t width, int64_t block, int64_t t,
								  cc_window_span *span);
extern double cc_window_blocks_units(int64_t width, int64_t block, int64_t super, int64_t t);
extern void cc_window_blocks_over_horizon(int64_t width, int64_t block, int64_t super,
										  int64_t horizon, double *sum, double *most);
extern int64_t cc_window_blocks_choose(int64_t width, int64_t horizon);
extern bool cc_window_blocks_choose_three(int64_t width, int64_t horizon, int64_t *block,
										  int64_t *super);
extern double cc_window_blocks_log_mgf(double inv_b, int64_t block, int64_t q, double lambda);
extern double cc_window_blocks_super_log_mgf(double inv_b, int64_t block, int64_t super,
											 int64_t lo, int64_t hi, double lambda);

/*
 * For tests: the tree's nodes closed by the last step, their noisy values
 * (before any estimate) into values (one a level, lowest first, at most
 * 64); 0 for CC_WINDOW_DIFF.
 */
extern int	cc_window_closed_nodes(const cc_window *window, int64_t *values);

#endif							/* CC_WINDOW_H */
