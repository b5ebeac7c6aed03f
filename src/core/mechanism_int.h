/*
 * mechanism_int.h
 *		The state layout shared by the mechanisms, and the interface each one
 *		implements.  Only the core and its unit tests include this file.
 */
#ifndef CC_MECHANISM_INT_H
#define CC_MECHANISM_INT_H

#include "blt.h"
#include "params.h"

/*
 * The common header of every state.  The mechanism's own part follows it
 * directly (cc_state_part); every member is 8 bytes wide so the part is
 * aligned.
 */
struct cc_state
{
	int64_t		size;			/* bytes, header and part */
	cc_params	params;
	int64_t		t;				/* steps pushed */
	int64_t		exact;			/* exact running count */
	int64_t		noisy;			/* release at step t */
	cc_scale	scale;			/* the mechanism's main noise scale; sigma^2
								 * for zCDP kinds */
	double		scale_variance; /* of one draw of that scale, kept for reads */
	double		log_term;		/* ln(2 T / beta): the Gaussian bound's; kept
								 * in the layout by the others */
};

#define cc_state_part(state) ((void *) ((state) + 1))

/* A group of count noise draws of one scale inside a release. */
typedef struct cc_term
{
	int64_t		count;
	cc_scale	scale;
	double		variance;		/* of one draw: cc_dlap_variance(scale) */
} cc_term;

#define CC_MAX_TERMS 2

/*
 * The noise in a release as reads describe it, for a mechanism whose draws
 * are weighted or Gaussian: the release is the exact count plus a noise sum,
 * rounded to an integer at most rounding away from it.  For Gaussian noise
 * the sum is sub-Gaussian with variance proxy `proxy`.
 */
typedef struct cc_noise
{
	double		variance;		/* exact variance of the sum */
	double		rounding;		/* |release - (exact + sum)| <= rounding */
	double		proxy;			/* zCDP: E[exp(l sum)] <= exp(l^2 proxy / 2) */
} cc_noise;

/*
 * The bound's view of the noise (bounds.c).  A piece: count independent
 * discrete Laplace draws of scale 1 / inv_b, each times weight.
 */
typedef struct cc_piece
{
	double		count;
	double		inv_b;
	double		weight;
} cc_piece;

#define CC_TAIL_PIECES 64

/*
 * The noise of a class of segments at the segment's last step, which
 * bounds.c bounds the tail of: an exact part X0 of `exact` draws of scale
 * 1 / exact_inv_b, each times exact_weight (none when exact is 0), plus an
 * independent rest R of pieces and, for honaker, of the `choose` node
 * estimates (node_pieces) of levels from `from` up that are worst at every
 * lambda.  A zCDP class gives its proxy instead.  The error of a release
 * is an integer whose absolute value exceeds m only if |X0 + R| >= m + 1 -
 * rounding.
 */
typedef struct cc_tail
{
	int64_t		exact;
	double		exact_inv_b;
	double		exact_weight;
	int			npieces;
	cc_piece	pieces[CC_TAIL_PIECES];
	int			choose;
	int			from;
	double		rounding;
	bool		segment;		/* a segment of several steps: see bounds.c */
	double		proxy;
} cc_tail;

/* A class of a group's segments: its key and how many segments it covers. */
typedef struct cc_class
{
	int64_t		key;
	int64_t		segments;
} cc_class;

/* No group has more classes, and every class key is below CC_CLASS_KEYS. */
#define CC_MAX_CLASSES 2048
#define CC_CLASS_KEYS 4096

/* The share of its group's budget every segment keeps (bounds.c). */
#define CC_BOUND_FLOOR 0.25

typedef struct cc_mechanism_ops
{
	const char *name;
	cc_accounting privacy;
	bool		needs_horizon;
	int64_t		max_horizon;	/* if below CC_MAX_HORIZON; 0 if not */

	/*
	 * CC_ZCDP kinds: the variance parameter sigma^2 of their discrete
	 * Gaussian draws, for checked parameters, into cc_state.scale;
	 * CC_SCALE_TOO_LARGE if the sampler cannot take it.  The members after
	 * gaussian_noise serve CC_PURE kinds only, but part_size, init, push
	 * and part_valid.
	 */
	cc_status	(*gaussian_sigma2) (const cc_params *params, cc_scale *sigma2);
	/* CC_ZCDP: the release's noise, with its proxy (no terms) */
	void		(*gaussian_noise) (const cc_state *state, cc_noise *noise);

	/*
	 * CC_ZCDP: what the release's noise is and how far neighbours move it
	 * (cc_gauss), for checked parameters; left zero if unknown
	 */
	void		(*gaussian_pair) (const cc_params *params, cc_gauss *gauss);
	/* the main scale, cc_state.scale, is this multiple of sensitivity/epsilon */
	uint64_t	(*main_multiplier) (const cc_params *params);
	/* optional: the largest multiple used, if above the main one; 0 if none fits */
	uint64_t	(*max_multiplier) (const cc_params *params);
	size_t		(*part_size) (const cc_params *params);
	/* optional: set up the part beyond zeroes */
	void		(*init) (cc_state *state);
	/* step state->t has just begun, with item x; set state->noisy */
	cc_status	(*push) (cc_state *state, int64_t x, cc_rng *rng);
	/* the noise draws that make up the current release, each of weight 1 */
	int			(*terms) (const cc_state *state, cc_term *terms);
	/* instead of terms: a release whose draws are weighted */
	void		(*weighted_noise) (const cc_state *state, cc_noise *noise);

	/*
	 * The bound (bounds.c), which every kind implements.  The steps fall
	 * into segments: single steps, unless the release's noise only gains
	 * independent symmetric draws from one step to the next of a segment.
	 * Segments fall into groups that share a failure probability: all of
	 * them with a horizon (group 0), or groups 1, 2, ... without one.  The
	 * segments of a group fall into classes of the same noise at their last
	 * step.  bound_class: the current step's group and class key, below
	 * CC_CLASS_KEYS.
	 */
	void		(*bound_class) (const cc_state *state, int64_t *group, int64_t *key);
	/*
	 * The segments of a group (into *segments) and its classes (into out, at
	 * most CC_MAX_CLASSES; their number is returned).  A class may cover
	 * segments whose noise is only dominated by its tail: see bounds.c.
	 */
	int			(*bound_classes) (const cc_params *params, int64_t group,
								  int64_t *segments, cc_class *out);
	/* the noise of a class */
	void		(*bound_tail) (const cc_params *params, int64_t group, int64_t key,
							   cc_tail *tail);
	/* honaker: the pieces of the estimate of a node of level d */
	int			(*node_pieces) (const cc_params *params, int d, cc_piece *out);
	/* optional: could these bytes, maybe unaligned, be the part at step t? */
	bool		(*part_valid) (const cc_params *params, int64_t t, const void *part);
} cc_mechanism_ops;

extern const cc_mechanism_ops cc_simple_i_ops;
extern const cc_mechanism_ops cc_simple_ii_ops;
extern const cc_mechanism_ops cc_two_level_ops;
extern const cc_mechanism_ops cc_binary_ops;
extern const cc_mechanism_ops cc_hybrid_ops;
extern const cc_mechanism_ops cc_honaker_ops;
extern const cc_mechanism_ops cc_smooth_binary_ops;
extern const cc_mechanism_ops cc_gaussian_honaker_ops;
extern const cc_mechanism_ops cc_blt_ops;
extern const cc_mechanism_ops cc_kary_ops;
extern const cc_mechanism_ops cc_blt_scaled_ops;

/* The dispatch (mechanism.c), for the files above it. */
extern const cc_mechanism_ops *cc_mechanism(cc_kind kind);

/* Multipliers that do not depend on the parameters (scale.c). */
extern uint64_t cc_multiplier_one(const cc_params *params);
extern uint64_t cc_multiplier_two(const cc_params *params);

/*
 * ln E[exp(x X)] for X discrete Laplace of scale 1 / inv_b, |x| < inv_b
 * (+infinity beyond): used by the bound (dlap_tails.c).
 */
extern double cc_dlap_log_mgf(double inv_b, double x);

/*
 * The bound of the current release (bounds.c); noise is the weighted or
 * Gaussian description of it, for the kinds that give one.
 */
extern double cc_bound(const cc_state *state, const cc_noise *noise);

/* How many of 1 .. n have popcount k (classes of tree mechanisms, tree.c). */
extern int64_t cc_count_popcount(int64_t n, int k);

/*
 * bound_classes for tree mechanisms whose step's bound depends on popcount(t)
 * alone: one class per popcount, one segment a step.
 */
extern int	cc_popcount_classes(const cc_params *params, int64_t group, int64_t *segments,
								cc_class *out);

/*
 * The inverse of a scale, rounded down: tails only grow with the scale
 * (scale.c).
 */
extern double cc_inverse_scale(cc_scale b);

/*
 * A bound on the sum of count independent discrete Laplace draws of one
 * scale (dlap_tails.c): |sum| <= the result with probability at least
 * 1 - delta, log_term = ln(2 / delta).  For other mechanisms built on trees
 * (continual_mean.c).
 */
extern double cc_dlap_sum_bound(int64_t count, cc_scale scale, double log_term);

/*
 * The scale multiplier * sensitivity / epsilon; the parameters were checked
 * (scale.c).
 */
extern cc_scale cc_state_scale(const cc_state *state, uint64_t multiplier);
extern cc_scale cc_params_scale(const cc_params *params, uint64_t multiplier);

/* A tail of count draws of that scale, summed exactly (scale.c). */
extern void cc_tail_exact(cc_tail *tail, int64_t count, const cc_params *params,
						  uint64_t multiplier);

/*
 * The binary tree of Chan, Shi and Song (tree.c), used by the binary and
 * hybrid mechanisms.  Node i holds the exact and noisy sums of the latest
 * closed dyadic interval of length 2^i; only nodes for the set bits of t are
 * live.  A node's noise is drawn once, when the node closes, and kept until
 * the node is replaced by the next interval of its level.
 */
typedef struct cc_tree_node
{
	int64_t		exact;
	int64_t		noisy;
} cc_tree_node;

typedef struct cc_tree
{
	int64_t		levels;
	int64_t		t;				/* steps pushed into this tree */
	int64_t		noisy;			/* sum of the live nodes' noisy sums */
	/* followed by levels cc_tree_node */
} cc_tree;

#define cc_tree_nodes(tree) ((cc_tree_node *) ((tree) + 1))

/* floor(log2 n) + 1: levels needed for a horizon of n steps */
extern int64_t cc_tree_levels(int64_t n);
extern void cc_tree_init(cc_tree *tree, int64_t levels);
extern cc_status cc_tree_push(cc_tree *tree, int64_t x, cc_scale scale,
							  cc_rng *rng);

/*
 * The Honaker mechanism's state (mech_honaker.c): the release's sums over
 * the live nodes, then one node a level.  A node is the latest closed dyadic
 * interval of its level d, live for the set bits of t only (the others are
 * all zero); its estimate is whole + frac / D_d, exactly, with
 * D_d = 2^(d+1) - 1.
 */
typedef struct cc_honaker_part
{
	int64_t		live_whole;		/* the live nodes' wholes, summed */
	uint64_t	live_fixed;		/* and their fractions, in fixed point
								 * (honaker_fixed) */
	/* followed by one cc_honaker_node a level */
} cc_honaker_part;

typedef struct cc_honaker_node
{
	int64_t		exact;			/* exact sum of its interval */
	int64_t		whole;
	int64_t		frac;			/* 0 <= frac < D_d */
} cc_honaker_node;

#define cc_honaker_nodes(part) ((cc_honaker_node *) ((part) + 1))

/*
 * The smooth binary mechanism's state (mech_smooth_binary.c): the leaf of
 * the current release, l_(t+1), and the node of each of its set bits (zero
 * at the other bits).  A leaf has h bits, up to 66.
 */
typedef struct cc_smooth_part
{
	int64_t		height;			/* h; the leaves' weight k is h / 2 */
	uint64_t	leaf_low;		/* its low 64 bits */
	uint64_t	leaf_high;		/* and the others */
	/* followed by height cc_tree_node */
} cc_smooth_part;

#define cc_smooth_nodes(part) ((cc_tree_node *) ((part) + 1))

/*
 * The next leaf of weight h/2 (the first is 2^(h/2) - 1), and how many noisy
 * nodes the releases at two leaves do not share: the draws of their
 * difference (window.c).
 */
extern unsigned __int128 cc_smooth_next_leaf(unsigned __int128 leaf);
extern int	cc_smooth_unshared(unsigned __int128 later, unsigned __int128 earlier);

/*
 * An int128 as two words: states are only 8-byte aligned (palloc), and
 * __int128 wants 16.  Read and written through cc_wide_get / cc_wide_set.
 */
typedef struct cc_wide
{
	uint64_t	lo;
	int64_t		hi;
} cc_wide;

static inline __int128
cc_wide_get(const cc_wide *w)
{
	return (__int128) ((unsigned __int128) (uint64_t) w->hi << 64 | w->lo);
}

static inline void
cc_wide_set(cc_wide *w, __int128 v)
{
	w->lo = (uint64_t) v;
	w->hi = (int64_t) (v >> 64);
}

/*
 * The BLT mechanism's state (mech_blt.c): its table entry and fixed-point
 * scale K = 2^shift (both a function of the parameters, kept for reads and
 * checked by cc_state_valid), the running sum of the noisy items times K,
 * and the buffers of the two recurrences, in units of 1 / (K F).
 */
typedef struct cc_blt_part
{
	int64_t		entry;
	int64_t		shift;
	cc_wide		total;
	cc_wide		data[CC_BLT_BUFFERS];	/* C applied to the items */
	cc_wide		noisy[CC_BLT_BUFFERS];	/* C^-1 applied to the noisy w */
} cc_blt_part;

/* blt's mean and largest variance over t = 1 .. horizon (choice.c) */
extern void cc_blt_variance_over_horizon(const cc_params *params, double *mean,
										 double *worst);

/*
 * The k-ary tree with negative digits (mech_kary.c).  A fitting state has at
 * most CC_KARY_MAX_LEVELS levels and CC_KARY_MAX_DRAWS draws in a release.
 */
#define CC_KARY_MAX_LEVELS 40
#define CC_KARY_MAX_DRAWS 128

/* h, the fewest levels with (k^h - 1) / 2 >= horizon */
extern int64_t cc_kary_levels(int64_t arity, int64_t horizon);
/* the h balanced base-k digits of t, lowest first, each in [-(k-1)/2, (k-1)/2] */
extern void cc_kary_digits(int64_t arity, int64_t levels, int64_t t, int64_t *digits);
/*
 * counts[s]: how many t in 1 .. horizon have s draws (sum |d_j|), for s up
 * to the returned h (k - 1) / 2; k must fit (cc_kary_prepare)
 */
extern int64_t cc_kary_draw_counts(int64_t arity, int64_t horizon, int64_t *counts);
/* their sum and the most draws at a step (choice.c) */
extern void cc_kary_draws_over_horizon(int64_t arity, int64_t horizon, double *sum,
									   int64_t *most);
/*
 * For cc_params_prepare(): check the arity given in block (odd, at least 3,
 * a state within CC_STATE_MAX_BYTES: else CC_BAD_BLOCK), or set the one of
 * least mean variance over the horizon.
 */
extern cc_status cc_kary_prepare(cc_params *params);
/* mech_blt.c's pieces that mech_blt_scaled.c runs too */
extern int	cc_blt_entry_for(int64_t horizon);
/* mech_blt.c's E for a BLT of a table, inflated against rounding */
extern double cc_blt_deviation(const cc_blt *blt);
/* a step of C or C^-1 on the buffers: their read, then the decay and input */
extern __int128 cc_blt_buffers_read(const cc_blt_entry *e, const cc_wide *buffer);
extern bool cc_blt_buffers_update(const cc_blt_entry *e, cc_wide *buffer, __int128 input);

/*
 * The scaled BLT's state (mech_blt_scaled.c): its table's entry, K and buffers,
 * and the running sum of the noisy scaled items of each stretch of steps
 * (at most two a bit of the horizon, 2^40 at most, and one more).
 */
#define CC_BLT_SCALED_STRETCHES 82

typedef struct cc_blt_scaled_part
{
	int64_t		entry;
	int64_t		shift;
	cc_wide		data[CC_BLT_SCALED_BUFFERS];
	cc_wide		noisy[CC_BLT_SCALED_BUFFERS];
	cc_wide		totals[CC_BLT_SCALED_STRETCHES];
} cc_blt_scaled_part;

/* m_t for a horizon and K = 2^shift: what the unit tests check apart */
extern uint64_t cc_blt_scaled_multiplier(int64_t horizon, int shift, int64_t t);

/* blt_scaled's mean and largest variance over t = 1 .. horizon (choice.c) */
extern void cc_blt_scaled_variance_over_horizon(const cc_params *params, double *mean,
												double *worst);

/* a + b into *sum, false on overflow */
static inline bool
cc_add(int64_t a, int64_t b, int64_t *sum)
{
	return !__builtin_add_overflow(a, b, sum);
}

#endif							/* CC_MECHANISM_INT_H */
