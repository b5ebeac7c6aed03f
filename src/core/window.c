/*
 * window.c
 *		Sliding-window counts under event-level epsilon-DP: a truncated
 *		dyadic tree, differences of smooth binary running counts, or
 *		differences of a truncated k-ary tree's prefixes.
 *
 * The window at step t is the steps max(1, t - W + 1) .. t; an event is in
 * W windows, and a release of every window is post-processing of what the
 * construction draws, so one epsilon pays for the whole series.
 *
 * Tree (Bolot, Fawaz, Muthukrishnan, Nikolov and Taft, ICDT 2013).  Levels
 * j = 0 .. L - 1, L = floor(log2 W) + 1: node (j, i) holds the steps
 * i 2^j + 1 .. (i + 1) 2^j.  An event is in one node a level, L nodes, so
 * adding or removing a unit's Delta events moves the vector of all nodes by
 * at most L Delta in L1, and discrete Laplace noise of scale L Delta /
 * epsilon on each node makes the vector, and everything computed from it,
 * epsilon-DP.  No window needs a node larger than W, hence the truncation.
 * A window is the sum of its canonical decomposition, taken greedily from
 * its first step: the largest aligned node that fits, at most two a level
 * (fewer than 2L).  A node's noise is drawn once, when its last step is
 * pushed; a level keeps its last floor(W / 2^j) + 1 nodes, all that a
 * window can use.
 *
 * Honaker.  The same noisy nodes, post-processed: a node of level d closed
 * at t is estimated from its noisy value A (variance v) and the sum B of
 * its two children's estimates (variance 2 v_(d-1)) by inverse-variance
 * weights, est = (2^d A + (2^d - 1) B) / D_d with D_d = 2^(d+1) - 1, of
 * variance v_d = v 2^d / D_d (v_0 = v).  Unrolled, est is the sum over
 * k = 0 .. d of the 2^k draws of level d - k below it, each weighted
 * 2^(d-k) / D_d.  Children close before their parent and are in their
 * level's ring then, and D_(d-1) est_(d-1) is an integer, so the state
 * keeps each estimate's numerator D_d est exactly (128 bits); a window
 * sums its decomposition's estimates, of disjoint subtrees and so
 * independent, and is rounded to the nearest integer: the wholes exactly,
 * the fractions (fewer than 2L, each below 1) in long double, so the
 * release is within 1/2 + 1e-15 of the exact count plus the noise.  Its
 * bound is Chernoff's on the weighted draws, at the best of a fixed grid
 * of lambdas (each one gives a valid bound), with the log moment
 * generating function of each level's estimate tabulated at init.
 *
 * Differences.  The smooth binary mechanism releases c_t, epsilon-DP over
 * the horizon; c_t - c_(t-W) (c_t alone for t <= W) is post-processing.
 * Both are sums of stored noisy nodes, and the nodes they share cancel
 * exactly, in integers: the difference carries the draws of the nodes they
 * do not share (cc_smooth_unshared), each of the mechanism's one scale.
 *
 * Both releases are the exact window count plus a sum of independent
 * discrete Laplace draws of one scale, so the variance is the number of
 * draws times one draw's, exactly, and the bound is cc_dlap_sum_bound() of
 * that sum at failure probability beta / T (a union bound over the steps).
 *
 * k-ary.  The blocks of mech_kary.c's tree, truncated at h levels for W
 * (window_kary.c has which blocks a window names): a unit's items are in one
 * block a level, h blocks, so discrete Laplace noise of scale h Delta /
 * epsilon on each block makes the blocks epsilon-DP, and each release is
 * post-processing of them (docs/kary-privacy.md has the argument for
 * streams that depend on earlier releases).  The state keeps the noisy
 * prefix(x) of the last W + 1 steps, and the window is prefix(t) -
 * prefix(t - W), its common blocks cancelling exactly in integers; the
 * noise of prefix(t) is the top level's draws so far plus, at each lower
 * level j, the signed draws of the blocks between p_(j+1)(t) and p_j(t),
 * all within the 2c blocks around p_(j+1)(t): a level keeps their prefix
 * sums, drawn when p_(j+1)(t) moves (each block is drawn once: p_(j+1)
 * never comes back).  Also a sum of independent draws of one scale.
 *
 * Blocks.  Every step and every aligned block of K steps has its own draw
 * of scale 2 Delta / epsilon (an event is in two nodes), and the window is
 * the least-squares estimate from both levels (window_blocks.c has why):
 * K + 1 times it is K + 1 times the window's steps' draws plus, for each
 * block holding q of its steps, q E_b, E_b = the block's draw minus its
 * steps' draws.  A block draws all of its K + 1 when it starts; the state
 * keeps the prefixes of the exact counts and of the steps' draws for the
 * last W + 1 steps and the prefixes of E_b for the blocks a window can
 * touch, so the numerator is exact in integers and rounded to the nearest
 * once.  Its bound is Chernoff's on the weighted draws, cached by t mod K
 * from W on (the window's blocks repeat with period K).  With superblocks
 * (three levels, scale 3 Delta / epsilon), a superblock draws all of its
 * blocks and its own when it starts, the state keeps the prefixes of its
 * F_S too, and the numerator is over D1 D2 (window_blocks.c); the period
 * is K1 K2.
 *
 * IDENTIFICATION
 *	  src/core/window.c
 */
#include <math.h>
#include <string.h>

#include "mechanism_int.h"
#include "window.h"

#define MAX_LEVELS 41			/* floor(log2 CC_WINDOW_MAX_WIDTH) + 1 */
#define MAX_DRAWS 128			/* tree: under 2 MAX_LEVELS; diff: 2 h/2 <= 66;
								 * kary: k is chosen so */
#define KARY_MAX_CHOICE 63		/* kary: the largest k weighed */
#define GRID 64					/* honaker: lambdas tried by the bound */
#define ROUNDING (0.5 + 1e-12)	/* honaker: |release - (exact + noise)| */

/*
 * The state: this header, then the construction's part.
 *	tree: open[L] (the exact sums of the nodes still open), then level j's
 *		  ring of floor(W / 2^j) + 1 noisy nodes, node i at i mod its size
 *	honaker: the same, each node a numerator D_j est in two words
 *	diff: the ring of W + 1 noisy running counts (c_t at t mod (W + 1)),
 *		  then the smooth binary state
 *	kary: the ring of W + 1 noisy prefix(x), the top level's draws and
 *		  their sum, then for each level j < h - 1 its centre p_(j+1) / k^j
 *		  and the k prefix sums of its 2c draws (k + 1 words)
 *	blocks: see blocks_words()
 */
struct cc_window
{
	cc_window_params params;
	int64_t		size;
	int64_t		t;
	int64_t		noisy;			/* the release at t */
	int64_t		draws;			/* its number of draws */
	double		bound;			/* its bound */
	int64_t		levels;			/* tree: L; kary: h */
	int64_t		exact;			/* kary: the exact running count */
	cc_scale	scale;			/* of every draw */
	double		draw_variance;
	double		log_term;		/* ln(2 T / beta) */
	uint64_t	then_low;		/* diff: l_(t-W+1), the leaf of c_(t-W) */
	uint64_t	then_high;
	int64_t		ring[MAX_LEVELS];	/* trees: level j's ring, from part */
	int64_t		raw[MAX_LEVELS];	/* trees: the last noisy node closed */
	double		units;			/* variance of the release / draw_variance */
	double		bounds[MAX_DRAWS + 1];	/* by draws; NaN until needed */
	double		lambda[GRID];	/* honaker: lambdas, and the log mgf of */
	double		log_mgf[MAX_LEVELS][GRID];	/* a level's estimate at them */
};

#define window_part(w) ((int64_t *) ((w) + 1))

static const char *const kind_names[] = {
	[CC_WINDOW_TREE] = "tree",
	[CC_WINDOW_DIFF] = "difference",
	[CC_WINDOW_HONAKER] = "honaker",
	[CC_WINDOW_KARY] = "kary",
	[CC_WINDOW_BLOCKS] = "blocks",
	[CC_WINDOW_AUTO] = "auto",
};

const char *
cc_window_kind_name(cc_window_kind kind)
{
	return kind_names[kind];
}

bool
cc_window_kind_from_name(const char *name, cc_window_kind *kind)
{
	for (int k = 0; k <= CC_WINDOW_AUTO; k++)
		if (strcmp(name, kind_names[k]) == 0)
		{
			*kind = (cc_window_kind) k;
			return true;
		}
	return false;
}

/* The smooth binary parameters of the differences. */
static cc_params
smooth_params(const cc_window_params *params)
{
	cc_params	p;

	memset(&p, 0, sizeof(p));
	p.kind = CC_SMOOTH_BINARY;
	p.privacy = CC_PURE;
	p.epsilon_units = params->epsilon_units;
	p.has_horizon = true;
	p.horizon = params->horizon;
	p.sensitivity = params->sensitivity;
	p.beta = params->beta;
	return p;
}

static int64_t
tree_levels(const cc_window_params *params)
{
	return cc_tree_levels(params->width);
}

static cc_scale
tree_scale(const cc_window_params *params)
{
	cc_scale	scale;

	/* cc_window_prepare() checked that it fits */
	cc_scale_make((uint64_t) tree_levels(params) * (uint64_t) params->sensitivity,
				  params->epsilon_units, CC_EPSILON_UNITS_PER_ONE, &scale);
	return scale;
}

/*
 * The level of the next node of the decomposition of positions p .. t - 1
 * (step s at position s - 1): the largest aligned at p that fits, at most
 * top.
 */
static int64_t
next_level(int64_t p, int64_t t, int64_t top)
{
	int64_t		j = p == 0 ? top : __builtin_ctzll((unsigned long long) p);

	if (j > top)
		j = top;
	while (p + (INT64_C(1) << j) > t)
		j--;
	return j;
}

/* D_d = 2^(d+1) - 1: an estimate of level d has 2^d / D_d of a draw's variance */
static int64_t
honaker_den(int64_t d)
{
	return (INT64_C(2) << d) - 1;
}

static double
honaker_units(int64_t d)
{
	return (double) (INT64_C(1) << d) / (double) honaker_den(d);
}

static bool
is_tree(cc_window_kind kind)
{
	return kind == CC_WINDOW_TREE || kind == CC_WINDOW_HONAKER;
}

/* kary: h Delta / epsilon for the chosen k, if it fits */
static bool
kary_scale(const cc_window_params *params, int64_t arity, cc_scale *scale)
{
	return cc_scale_make((uint64_t) cc_kary_levels(arity, params->width) *
						 (uint64_t) params->sensitivity,
						 params->epsilon_units, CC_EPSILON_UNITS_PER_ONE, scale);
}

/* blocks: its levels, two, or three with superblocks */
static int64_t
blocks_levels(const cc_window_params *params)
{
	return params->superblock > 0 ? 3 : 2;
}

/* blocks: levels Delta / epsilon (a unit is in one node a level), if it fits */
static bool
blocks_scale(const cc_window_params *params, cc_scale *scale)
{
	return cc_scale_make((uint64_t) blocks_levels(params) * (uint64_t) params->sensitivity,
						 params->epsilon_units, CC_EPSILON_UNITS_PER_ONE, scale);
}

double
cc_window_draw_variance(const cc_window_params *params)
{
	cc_scale	scale;

	if (is_tree(params->kind))
		return cc_dlap_variance(tree_scale(params));
	else if (params->kind == CC_WINDOW_KARY)
	{
		kary_scale(params, params->arity, &scale);
		return cc_dlap_variance(scale);
	}
	else if (params->kind == CC_WINDOW_BLOCKS)
	{
		blocks_scale(params, &scale);
		return cc_dlap_variance(scale);
	}
	else
	{
		cc_params	p = smooth_params(params);

		return cc_dlap_variance(cc_params_scale(&p, cc_smooth_binary_ops.main_multiplier(&p)));
	}
}

/* The release's variance at t over a draw's for a tree: its nodes' share. */
static double
tree_units(const cc_window_params *params, int64_t t, int64_t *nodes)
{
	int64_t		top = tree_levels(params) - 1;
	double		units = 0;

	*nodes = 0;
	for (int64_t p = t > params->width ? t - params->width : 0; p < t; ++*nodes)
	{
		int64_t		j = next_level(p, t, top);

		units += params->kind == CC_WINDOW_HONAKER ? honaker_units(j) : 1.0;
		p += INT64_C(1) << j;
	}
	return units;
}

int64_t
cc_window_tree_nodes(int64_t width, int64_t t)
{
	cc_window_params p = {.kind = CC_WINDOW_TREE,.width = width};
	int64_t		nodes;

	tree_units(&p, t, &nodes);
	return nodes;
}

/* The variance at every step 1 .. T over a draw's, to visit(units, arg). */
static void
each_step_units(const cc_window_params *params, void (*visit) (double units, void *arg),
				void *arg)
{
	if (is_tree(params->kind))
	{
		int64_t		nodes;

		for (int64_t t = 1; t <= params->horizon; t++)
			visit(tree_units(params, t, &nodes), arg);
	}
	else
	{
		cc_params	p = smooth_params(params);
		int64_t		k = (int64_t) cc_smooth_binary_ops.main_multiplier(&p);
		unsigned __int128 first = ((unsigned __int128) 1 << k) - 1;
		unsigned __int128 now = first;
		unsigned __int128 then = first;

		for (int64_t t = 1; t <= params->horizon; t++)
		{
			now = cc_smooth_next_leaf(now);
			if (t > params->width)
				then = cc_smooth_next_leaf(then);
			visit((double) (t > params->width ? cc_smooth_unshared(now, then) : k), arg);
		}
	}
}

typedef struct unit_stats
{
	double		sum;
	double		most;
} unit_stats;

static void
add_units(double units, void *arg)
{
	unit_stats *stats = arg;

	stats->sum += units;
	if (units > stats->most)
		stats->most = units;
}

void
cc_window_variances(const cc_window_params *params, double *mean, double *worst)
{
	unit_stats	stats = {0, 0};
	double		v = cc_window_draw_variance(params);

	if (params->kind == CC_WINDOW_KARY)
	{
		int64_t		most;

		cc_window_kary_draws_over_horizon(params->arity, params->width, params->horizon,
										  &stats.sum, &most);
		stats.most = (double) most;
	}
	else if (params->kind == CC_WINDOW_BLOCKS)
		cc_window_blocks_over_horizon(params->width, params->block, params->superblock,
									  params->horizon, &stats.sum, &stats.most);
	else
		each_step_units(params, add_units, &stats);
	*mean = stats.sum / (double) params->horizon * v;
	*worst = stats.most * v;
}

/*
 * kary: the odd k of least mean variance over the horizon, from the public
 * parameters only, among those whose scale fits and whose releases sum at
 * most MAX_DRAWS draws (k = 3 does at every width).
 */
static bool
kary_choose(cc_window_params *params)
{
	double		best = INFINITY;

	params->arity = 0;
	for (int64_t k = 3; k <= KARY_MAX_CHOICE; k += 2)
	{
		cc_scale	scale;
		double		sum;
		int64_t		most;

		if (!kary_scale(params, k, &scale))
			continue;
		cc_window_kary_draws_over_horizon(k, params->width, params->horizon, &sum, &most);
		if (most <= MAX_DRAWS && sum * cc_dlap_variance(scale) < best)
		{
			best = sum * cc_dlap_variance(scale);
			params->arity = k;
		}
	}
	return params->arity != 0;
}

/* blocks: the mean variance over the horizon of K1 = block and K2 = super */
static double
blocks_mean(const cc_window_params *params, int64_t block, int64_t super)
{
	cc_window_params p = *params;
	double		mean,
				worst;

	p.kind = CC_WINDOW_BLOCKS;
	p.block = block;
	p.superblock = super;
	cc_window_variances(&p, &mean, &worst);
	return mean;
}

/*
 * blocks: the K1 (and K2) named (cc_window_prepare() checked their range),
 * or, from the public parameters only, two levels' best K or three levels'
 * best (K1, K2), whichever has the less mean variance (a third level's
 * draws have (3/2)^2 times the variance, its windows far fewer); false when the
 * scale does not fit.
 */
static bool
blocks_choose(cc_window_params *params)
{
	cc_window_params three = *params;
	cc_scale	scale;

	if (params->block == 0)
	{
		params->superblock = 0;
		if (!blocks_scale(params, &scale))
			return false;
		params->block = cc_window_blocks_choose(params->width, params->horizon);
		if (cc_window_blocks_choose_three(params->width, params->horizon, &three.block,
										  &three.superblock) &&
			blocks_scale(&three, &scale) &&
			blocks_mean(&three, three.block, three.superblock) <
			blocks_mean(params, params->block, 0))
		{
			params->block = three.block;
			params->superblock = three.superblock;
		}
	}
	return blocks_scale(params, &scale);
}

/* auto: the kind of least mean variance (blocks only if it fits) */
static cc_window_kind
auto_choose(cc_window_params *params)
{
	cc_window_kind best = CC_WINDOW_TREE;
	double		best_mean = INFINITY;
	bool		blocks = blocks_choose(params);

	for (int k = 0; k < CC_WINDOW_AUTO; k++)
	{
		double		mean,
					worst;

		if (k == CC_WINDOW_BLOCKS && !blocks)
			continue;
		params->kind = (cc_window_kind) k;
		cc_window_variances(params, &mean, &worst);
		if (mean < best_mean)
		{
			best = params->kind;
			best_mean = mean;
		}
	}
	return best;
}

cc_status
cc_window_prepare(cc_window_params *params)
{
	cc_params	p = smooth_params(params);
	cc_status	status = cc_params_prepare(&p);
	cc_scale	scale;

	if (status != CC_OK)
		return status;
	if (params->horizon > CC_WINDOW_MAX_WIDTH)
		return CC_BAD_HORIZON;
	if (params->width < 1)
		return CC_BAD_BLOCK;
	if (params->width > params->horizon)
		params->width = params->horizon;
	if (!cc_scale_make((uint64_t) tree_levels(params) * (uint64_t) params->sensitivity,
					   params->epsilon_units, CC_EPSILON_UNITS_PER_ONE, &scale))
		return CC_SCALE_TOO_LARGE;
	if ((params->kind == CC_WINDOW_KARY || params->kind == CC_WINDOW_AUTO) &&
		!kary_choose(params))
		return CC_SCALE_TOO_LARGE;
	if (params->block < 0 || params->block > CC_WINDOW_BLOCKS_MAX_K ||
		params->superblock < 0 || params->superblock == 1 ||
		params->superblock > CC_WINDOW_BLOCKS_MAX_K)
		return CC_BAD_BLOCK;
	if (params->kind == CC_WINDOW_BLOCKS && !blocks_choose(params))
		return CC_SCALE_TOO_LARGE;
	if (params->kind == CC_WINDOW_AUTO)
		params->kind = auto_choose(params);
	return CC_OK;
}

/* Words of a tree's rings: sum over levels of floor(W / 2^j) + 1 nodes. */
static int64_t
tree_ring_words(const cc_window_params *params)
{
	int64_t		n = 0;

	for (int64_t j = 0; j < tree_levels(params); j++)
		n += (params->width >> j) + 1;
	return params->kind == CC_WINDOW_HONAKER ? 2 * n : n;
}

/* kary: words after the ring: the top level's two, then k + 1 a lower level */
static int64_t
kary_words(const cc_window_params *params)
{
	return 2 + (cc_kary_levels(params->arity, params->width) - 1) * (params->arity + 1);
}

/* blocks: the steps drawn at once, a block's K or a superblock's K1 K2 */
static int64_t
blocks_period(const cc_window_params *params)
{
	return params->superblock > 0 ? params->block * params->superblock : params->block;
}

/*
 * blocks: the ring of the blocks' excess prefixes, W / K + 4 blocks and, with
 * superblocks, the K2 drawn ahead; the ring of the superblocks' F prefixes,
 * W / (K1 K2) + 4 (none for two levels).
 */
static int64_t
blocks_ring(const cc_window_params *params)
{
	return params->width / params->block + 4 + params->superblock;
}

static int64_t
blocks_super_ring(const cc_window_params *params)
{
	return params->superblock > 0 ? params->width / blocks_period(params) + 4 : 0;
}

/*
 * blocks: words after the header: the rings of the exact counts' and the
 * steps' draws' prefixes (W + 1 each), the current period's step draws,
 * the rings of the blocks' excess and the superblocks' F prefixes, and a
 * period of cached bounds.
 */
static int64_t
blocks_words(const cc_window_params *params)
{
	return 2 * (params->width + 1) + 2 * blocks_period(params) + blocks_ring(params) +
		blocks_super_ring(params);
}

size_t
cc_window_size(const cc_window_params *params)
{
	if (is_tree(params->kind))
		return sizeof(cc_window) +
			(size_t) (tree_levels(params) + tree_ring_words(params)) * sizeof(int64_t);
	else if (params->kind == CC_WINDOW_KARY)
		return sizeof(cc_window) +
			(size_t) (params->width + 1 + kary_words(params)) * sizeof(int64_t);
	else if (params->kind == CC_WINDOW_BLOCKS)
		return sizeof(cc_window) + (size_t) blocks_words(params) * sizeof(int64_t);
	else
	{
		cc_params	p = smooth_params(params);

		cc_params_prepare(&p);
		return sizeof(cc_window) + (size_t) (params->width + 1) * sizeof(int64_t) +
			cc_state_size(&p);
	}
}

/* kary: the top level's words, after the ring */
static int64_t *
kary_top(const cc_window *w)
{
	return window_part(w) + w->params.width + 1;
}

/* kary: level j's centre and prefix sums, j < h - 1 */
static int64_t *
kary_level(const cc_window *w, int64_t j)
{
	return kary_top(w) + 2 + j * (w->params.arity + 1);
}

/* blocks: the parts of the state, in the order of blocks_words() */
static int64_t *
blocks_counts(const cc_window *w)
{
	return window_part(w);
}

static int64_t *
blocks_noise(const cc_window *w)
{
	return window_part(w) + w->params.width + 1;
}

static int64_t *
blocks_draws(const cc_window *w)
{
	return blocks_noise(w) + w->params.width + 1;
}

static int64_t *
blocks_excess(const cc_window *w)
{
	return blocks_draws(w) + blocks_period(&w->params);
}

static int64_t *
blocks_super(const cc_window *w)
{
	return blocks_excess(w) + blocks_ring(&w->params);
}

static double *
blocks_bounds(const cc_window *w)
{
	return (double *) (blocks_super(w) + blocks_super_ring(&w->params));
}

static cc_state *
diff_smooth(const cc_window *w)
{
	return (cc_state *) (window_part(w) + w->params.width + 1);
}

/* Level j's slot of node i in its ring: a word, or two for honaker. */
static int64_t *
tree_slot(const cc_window *w, int64_t j, int64_t i)
{
	int64_t		n = i % ((w->params.width >> j) + 1);

	return window_part(w) + w->ring[j] + (w->params.kind == CC_WINDOW_HONAKER ? 2 * n : n);
}

/*
 * honaker: the lambdas of the bound's grid, up to the pole of the heaviest
 * weight above level 0 (2/3 of a draw, at level 1; beyond 1/b, a level 0
 * node's log mgf is infinite and the lambda is passed over), and the log
 * mgf of an estimate of each level there: the sum over k of 2^k draws
 * weighted 2^(d-k) / D_d.
 */
static void
honaker_grid(cc_window *w)
{
	double		inv_b = cc_inverse_scale(w->scale);
	double		pole = inv_b / honaker_units(1);

	for (int i = 0; i < GRID; i++)
		w->lambda[i] = pole * (1.0 - pow(0.9, i + 1));
	for (int64_t d = 0; d < w->levels; d++)
		for (int i = 0; i < GRID; i++)
		{
			double		sum = 0;

			for (int64_t k = 0; k <= d; k++)
				sum += (double) (INT64_C(1) << k) *
					cc_dlap_log_mgf(inv_b, w->lambda[i] * (double) (INT64_C(1) << (d - k)) /
									(double) honaker_den(d));
			w->log_mgf[d][i] = sum;
		}
}

/*
 * blocks: the lambdas of the bound's grid, below the pole (every weight is
 * below 1), the log mgf of a full block (two levels) or superblock (three)
 * at each, and no bound cached.
 */
static void
blocks_init(cc_window *w)
{
	int64_t		block = w->params.block;
	int64_t		super = w->params.superblock;
	double		inv_b;

	w->levels = blocks_levels(&w->params);
	blocks_scale(&w->params, &w->scale);
	inv_b = cc_inverse_scale(w->scale);
	for (int i = 0; i < GRID; i++)
	{
		w->lambda[i] = inv_b * (1.0 - pow(0.9, i + 1));
		w->log_mgf[0][i] = super > 0 ?
			cc_window_blocks_super_log_mgf(inv_b, block, super, 1, block * super, w->lambda[i]) :
			cc_window_blocks_log_mgf(inv_b, block, block, w->lambda[i]);
	}
	for (int64_t i = 0; i < blocks_period(&w->params); i++)
		blocks_bounds(w)[i] = NAN;
}

void
cc_window_init(cc_window *w, const cc_window_params *params)
{
	memset(w, 0, cc_window_size(params));
	w->params = *params;
	w->size = (int64_t) cc_window_size(params);
	w->log_term = log(2.0 * (double) params->horizon / params->beta);
	for (int i = 0; i <= MAX_DRAWS; i++)
		w->bounds[i] = NAN;
	if (is_tree(params->kind))
	{
		int64_t		offset;

		w->levels = tree_levels(params);
		w->scale = tree_scale(params);
		offset = w->levels;
		for (int64_t j = 0; j < w->levels; j++)
		{
			w->ring[j] = offset;
			offset += ((params->width >> j) + 1) * (params->kind == CC_WINDOW_HONAKER ? 2 : 1);
		}
		if (params->kind == CC_WINDOW_HONAKER)
			honaker_grid(w);
	}
	else if (params->kind == CC_WINDOW_KARY)
	{
		w->levels = cc_kary_levels(params->arity, params->width);
		kary_scale(params, params->arity, &w->scale);
		/* no centre yet: every level draws at the first step */
		for (int64_t j = 0; j + 1 < w->levels; j++)
			kary_level(w, j)[0] = -1;
	}
	else if (params->kind == CC_WINDOW_BLOCKS)
		blocks_init(w);
	else
	{
		cc_params	p = smooth_params(params);
		int64_t		k;

		cc_params_prepare(&p);
		cc_state_init(diff_smooth(w), &p);
		w->scale = diff_smooth(w)->scale;
		k = (int64_t) cc_smooth_binary_ops.main_multiplier(&p);
		w->then_low = (uint64_t) (((unsigned __int128) 1 << k) - 1);
		w->then_high = (uint64_t) ((((unsigned __int128) 1 << k) - 1) >> 64);
	}
	w->draw_variance = cc_dlap_variance(w->scale);
}

/*
 * honaker: the numerator D_j est of node i of level j from its noisy value:
 * 2^j A plus its children's numerators (D_(j-1) times their estimates).
 */
static void
honaker_close(cc_window *w, int64_t j, int64_t i, int64_t noisy)
{
	__int128	num = (__int128) noisy * ((__int128) 1 << j);
	cc_wide    *slot = (cc_wide *) tree_slot(w, j, i);

	if (j > 0)
		num += cc_wide_get((cc_wide *) tree_slot(w, j - 1, 2 * i)) +
			cc_wide_get((cc_wide *) tree_slot(w, j - 1, 2 * i + 1));
	cc_wide_set(slot, num);
}

/*
 * honaker: the release, rounded to nearest, and its bound: Chernoff's at
 * the best lambda of the grid for the window's levels.
 */
static cc_status
honaker_window(cc_window *w)
{
	__int128	whole = 0;
	long double frac = 0;
	double		best = INFINITY;
	int64_t		count[MAX_LEVELS] = {0};
	int64_t		j;

	for (int64_t p = w->t > w->params.width ? w->t - w->params.width : 0; p < w->t;
		 p += INT64_C(1) << j)
	{
		__int128	num;
		__int128	q;
		__int128	r;

		j = next_level(p, w->t, w->levels - 1);
		num = cc_wide_get((cc_wide *) tree_slot(w, j, p >> j));
		q = num / honaker_den(j);
		r = num % honaker_den(j);
		if (r < 0)
		{
			q -= 1;
			r += honaker_den(j);
		}
		whole += q;
		frac += (long double) r / (long double) honaker_den(j);
		count[j]++;
	}
	whole += (__int128) llroundl(frac);
	if (whole > INT64_MAX || whole < INT64_MIN)
		return CC_OVERFLOW;
	w->noisy = (int64_t) whole;

	for (int i = 0; i < GRID; i++)
	{
		double		log_mgf = 0;

		for (int64_t d = 0; d < w->levels; d++)
			if (count[d] > 0)
				log_mgf += (double) count[d] * w->log_mgf[d][i];
		best = fmin(best, (w->log_term + log_mgf) / w->lambda[i]);
	}
	/* the noise is below best but with beta / T; the error is an integer */
	w->bound = fmax(0.0, ceil(best * (1.0 + 1e-9) + ROUNDING) - 1.0);
	return CC_OK;
}

/* Close the tree's nodes that end at step t and sum the window's nodes. */
static cc_status
tree_push(cc_window *w, int64_t x, cc_rng *rng)
{
	int64_t    *open = window_part(w);
	int64_t		t = w->t;
	int64_t		p = t > w->params.width ? t - w->params.width : 0;
	int64_t		noisy = 0;

	for (int64_t j = 0; j < w->levels; j++)
	{
		if (!cc_add(open[j], x, &open[j]))
			return CC_OVERFLOW;
		if ((t & ((INT64_C(1) << j) - 1)) == 0)
		{
			int64_t		i = (t >> j) - 1;

			if (!cc_add(open[j], cc_discrete_laplace(rng, w->scale), &w->raw[j]))
				return CC_OVERFLOW;
			if (w->params.kind == CC_WINDOW_HONAKER)
				honaker_close(w, j, i, w->raw[j]);
			else
				*tree_slot(w, j, i) = w->raw[j];
			open[j] = 0;
		}
	}
	w->units = tree_units(&w->params, t, &w->draws);
	if (w->params.kind == CC_WINDOW_HONAKER)
		return honaker_window(w);
	for (int64_t j; p < t; p += INT64_C(1) << j)
	{
		j = next_level(p, t, w->levels - 1);
		if (!cc_add(noisy, *tree_slot(w, j, p >> j), &noisy))
			return CC_OVERFLOW;
	}
	w->noisy = noisy;
	return CC_OK;
}

static cc_status
diff_push(cc_window *w, int64_t x, cc_rng *rng)
{
	cc_state   *smooth = diff_smooth(w);
	const cc_smooth_part *part = cc_state_part(smooth);
	int64_t    *counts = window_part(w);
	int64_t		ring = w->params.width + 1;
	cc_status	status = cc_push(smooth, x, rng);
	unsigned __int128 now;
	unsigned __int128 then;

	if (status != CC_OK)
		return status;
	counts[w->t % ring] = smooth->noisy;
	now = ((unsigned __int128) part->leaf_high << 64) | part->leaf_low;
	then = ((unsigned __int128) w->then_high << 64) | w->then_low;
	if (w->t <= w->params.width)
	{
		w->noisy = smooth->noisy;
		w->draws = part->height / 2;
	}
	else
	{
		then = cc_smooth_next_leaf(then);
		w->then_low = (uint64_t) then;
		w->then_high = (uint64_t) (then >> 64);
		w->draws = cc_smooth_unshared(now, then);
		if (__builtin_sub_overflow(smooth->noisy, counts[(w->t - w->params.width) % ring],
								   &w->noisy))
			return CC_OVERFLOW;
	}
	w->units = (double) w->draws;
	return CC_OK;
}

/* kary: p_(j+1)(t) moved: the 2c draws around it, as prefix sums */
static cc_status
kary_redraw(cc_window *w, int64_t *level, int64_t centre, cc_rng *rng)
{
	level[0] = centre;
	level[1] = 0;
	for (int64_t i = 1; i < w->params.arity; i++)
		if (!cc_add(level[i], cc_discrete_laplace(rng, w->scale), &level[i + 1]))
			return CC_OVERFLOW;
	return CC_OK;
}

/* kary: the noise of prefix(t), drawing the blocks it reaches first */
static cc_status
kary_noise(cc_window *w, cc_rng *rng, int64_t *noise)
{
	int64_t    *top = kary_top(w);
	int64_t		c = (w->params.arity - 1) / 2;
	int64_t		power = 1;

	for (int64_t j = 0; j + 1 < w->levels; j++)
		power *= w->params.arity;
	/* the top level's blocks [0, p_(h-1)(t)) */
	for (; top[0] < cc_window_kary_round(w->t, power) / power; top[0]++)
		if (!cc_add(top[1], cc_discrete_laplace(rng, w->scale), &top[1]))
			return CC_OVERFLOW;
	*noise = top[1];
	power = 1;
	for (int64_t j = 0; j + 1 < w->levels; j++, power *= w->params.arity)
	{
		int64_t    *level = kary_level(w, j);
		int64_t		centre = cc_window_kary_round(w->t, power * w->params.arity) / power;
		int64_t		digit = cc_window_kary_round(w->t, power) / power - centre;
		cc_status	status = level[0] == centre ? CC_OK : kary_redraw(w, level, centre, rng);

		/* the blocks between the centre and centre + digit, signed */
		if (status != CC_OK)
			return status;
		if (!cc_add(*noise, level[1 + c + digit] - level[1 + c], noise))
			return CC_OVERFLOW;
	}
	return CC_OK;
}

/* kary: the noisy prefix(t) into the ring, the window the difference */
static cc_status
kary_push(cc_window *w, int64_t x, cc_rng *rng)
{
	int64_t    *ring = window_part(w);
	int64_t		ring_size = w->params.width + 1;
	int64_t		noise;
	cc_status	status;

	if (!cc_add(w->exact, x, &w->exact))
		return CC_OVERFLOW;
	status = kary_noise(w, rng, &noise);
	if (status != CC_OK)
		return status;
	if (!cc_add(w->exact, noise, &ring[w->t % ring_size]))
		return CC_OVERFLOW;
	w->noisy = ring[w->t % ring_size];
	if (w->t > w->params.width &&
		__builtin_sub_overflow(w->noisy, ring[(w->t - w->params.width) % ring_size], &w->noisy))
		return CC_OVERFLOW;
	w->draws = cc_window_kary_draws_at(w->params.arity, w->params.width, w->t);
	w->units = (double) w->draws;
	return CC_OK;
}

/*
 * blocks: block b's K step draws into steps, then its own, and the prefix
 * of the blocks' excesses E_b = Z_b - s_b (s_b the sum of its steps'
 * draws); with superblocks, adds M_b = K1 E_b + D1 s_b to *m (D1 = K1 + 1).
 */
static cc_status
blocks_open_block(cc_window *w, int64_t b, int64_t *steps, int64_t *m, cc_rng *rng)
{
	int64_t    *excess = blocks_excess(w);
	int64_t		ring = blocks_ring(&w->params);
	int64_t		block = w->params.block;
	int64_t		sum = 0;
	int64_t		own,
				m_b,
				d_sum;

	for (int64_t i = 0; i < block; i++)
	{
		steps[i] = cc_discrete_laplace(rng, w->scale);
		if (!cc_add(sum, steps[i], &sum))
			return CC_OVERFLOW;
	}
	own = cc_discrete_laplace(rng, w->scale);
	if (__builtin_sub_overflow(own, sum, &own) ||
		!cc_add(excess[b % ring], own, &excess[(b + 1) % ring]))
		return CC_OVERFLOW;
	if (w->params.superblock == 0)
		return CC_OK;
	if (__builtin_mul_overflow(own, block, &m_b) ||
		__builtin_mul_overflow(sum, block + 1, &d_sum) ||
		!cc_add(m_b, d_sum, &m_b) || !cc_add(*m, m_b, m))
		return CC_OVERFLOW;
	return CC_OK;
}

/*
 * blocks: a period starts at step t: its blocks (one, or a superblock's K2)
 * draw their steps' and their own, then a superblock its own Z_S and the
 * prefix of F_S = D1 Z_S - sum of its blocks' M_b.
 */
static cc_status
blocks_open(cc_window *w, int64_t t, cc_rng *rng)
{
	int64_t		block = w->params.block;
	int64_t		super = w->params.superblock;
	int64_t		count = super > 0 ? super : 1;
	int64_t		m = 0;
	int64_t		f;

	for (int64_t j = 0; j < count; j++)
		if (blocks_open_block(w, (t - 1) / block + j, blocks_draws(w) + j * block, &m,
							  rng) != CC_OK)
			return CC_OVERFLOW;
	if (super > 0)
	{
		int64_t    *prefix = blocks_super(w);
		int64_t		ring = blocks_super_ring(&w->params);
		int64_t		s = (t - 1) / blocks_period(&w->params);

		if (__builtin_mul_overflow(cc_discrete_laplace(rng, w->scale), block + 1, &f) ||
			__builtin_sub_overflow(f, m, &f) ||
			!cc_add(prefix[s % ring], f, &prefix[(s + 1) % ring]))
			return CC_OVERFLOW;
	}
	return CC_OK;
}

/* blocks: E_b from the ring of their prefixes */
static __int128
blocks_excess_of(const cc_window *w, int64_t b)
{
	const int64_t *excess = blocks_excess(w);
	int64_t		ring = blocks_ring(&w->params);

	return (__int128) excess[(b + 1) % ring] - excess[b % ring];
}

/*
 * blocks: the window's noise times K + 1 (window_blocks.c): K + 1 times
 * its steps' draws (steps_draws), plus q E_b for each block holding q of
 * its steps.
 */
static __int128
blocks_numerator(const cc_window *w, const cc_window_span *span, int64_t steps_draws)
{
	const int64_t *excess = blocks_excess(w);
	int64_t		ring = blocks_ring(&w->params);
	__int128	num = (__int128) (w->params.block + 1) * steps_draws;

	num += (__int128) span->q_first * blocks_excess_of(w, span->first);
	if (span->q_last > 0)
		num += (__int128) span->q_last * blocks_excess_of(w, span->last);
	if (span->full > 0)
		num += (__int128) w->params.block *
			((__int128) excess[span->last % ring] - excess[(span->first + 1) % ring]);
	return num;
}

/* blocks: D2 = K1 K2 + K1 + 1 with superblocks, 1 without */
static int64_t
blocks_d2(const cc_window_params *params)
{
	return params->superblock > 0 ? blocks_period(params) + params->block + 1 : 1;
}

/*
 * blocks: the window's noise times D1 D2 (window_blocks.c): D2 times the
 * two levels' numerator, plus P_S F_S for each superblock holding P_S of
 * its steps (sspan: the window's superblocks).
 */
static __int128
blocks_super_numerator(const cc_window *w, const cc_window_span *span,
					   const cc_window_span *sspan, int64_t steps_draws)
{
	const int64_t *prefix = blocks_super(w);
	int64_t		ring = blocks_super_ring(&w->params);
	__int128	num = blocks_numerator(w, span, steps_draws);

	if (w->params.superblock == 0)
		return num;
	num *= blocks_d2(&w->params);
	num += (__int128) sspan->q_first *
		((__int128) prefix[(sspan->first + 1) % ring] - prefix[sspan->first % ring]);
	if (sspan->q_last > 0)
		num += (__int128) sspan->q_last *
			((__int128) prefix[(sspan->last + 1) % ring] - prefix[sspan->last % ring]);
	if (sspan->full > 0)
		num += (__int128) blocks_period(&w->params) *
			((__int128) prefix[sspan->last % ring] - prefix[(sspan->first + 1) % ring]);
	return num;
}

/* num / d rounded to nearest, halves up (d > 0) */
static __int128
round_quotient(__int128 num, int64_t d)
{
	__int128	twice = 2 * num + d;
	__int128	q = twice / (2 * (__int128) d);

	if (twice % (2 * (__int128) d) != 0 && twice < 0)
		q--;
	return q;
}

/*
 * blocks: the log mgf at grid point i of the window's noise: its full
 * blocks' (or superblocks') and its partial ones' shares.  A superblock's
 * window part is its last q_first steps, its first q_last, or, alone, the
 * steps lo .. t in it.
 */
static double
blocks_log_mgf(const cc_window *w, const cc_window_span *span, const cc_window_span *sspan,
			   int64_t lo, int i)
{
	double		inv_b = cc_inverse_scale(w->scale);
	int64_t		block = w->params.block;
	int64_t		super = w->params.superblock;
	int64_t		n = blocks_period(&w->params);

	if (super == 0)
		return (double) span->full * w->log_mgf[0][i] +
			cc_window_blocks_log_mgf(inv_b, block, span->q_first, w->lambda[i]) +
			cc_window_blocks_log_mgf(inv_b, block, span->q_last, w->lambda[i]);
	if (sspan->q_last == 0)
		return cc_window_blocks_super_log_mgf(inv_b, block, super, (lo - 1) % n + 1,
											  (w->t - 1) % n + 1, w->lambda[i]);
	return (double) sspan->full * w->log_mgf[0][i] +
		cc_window_blocks_super_log_mgf(inv_b, block, super, n - sspan->q_first + 1, n,
									   w->lambda[i]) +
		cc_window_blocks_super_log_mgf(inv_b, block, super, 1, sspan->q_last, w->lambda[i]);
}

/*
 * blocks: the bound of the window's noise, Chernoff's at the best lambda of
 * the grid, plus the rounding; the error is an integer.
 */
static double
blocks_bound(const cc_window *w, const cc_window_span *span, const cc_window_span *sspan,
			 int64_t lo)
{
	double		best = INFINITY;

	for (int i = 0; i < GRID; i++)
		best = fmin(best, (w->log_term + blocks_log_mgf(w, span, sspan, lo, i)) / w->lambda[i]);
	return fmax(0.0, ceil(best * (1.0 + 1e-9) + ROUNDING) - 1.0);
}

/*
 * blocks: the window's variance, draws and bound; the bound is periodic in
 * t from W on (window_blocks.c), cached by t mod the period.
 */
static void
blocks_spread(cc_window *w, const cc_window_span *span, const cc_window_span *sspan, int64_t lo)
{
	int64_t		period = blocks_period(&w->params);
	int64_t		t = w->t;

	w->units = cc_window_blocks_units(w->params.width, w->params.block, w->params.superblock, t);
	if (w->params.superblock > 0)
		w->draws = (period + w->params.superblock + 1) * (sspan->last - sspan->first + 1);
	else
		w->draws = (w->params.block + 1) * (span->last - span->first + 1);
	if (t < w->params.width)
		w->bound = blocks_bound(w, span, sspan, lo);
	else
	{
		double	   *cached = &blocks_bounds(w)[(t - 1) % period];

		if (isnan(*cached))
			*cached = blocks_bound(w, span, sspan, lo);
		w->bound = *cached;
	}
}

/*
 * blocks: the prefixes of the exact counts and of the steps' draws into
 * their rings, the window the rounded estimate.
 */
static cc_status
blocks_push(cc_window *w, int64_t x, cc_rng *rng)
{
	int64_t    *counts = blocks_counts(w);
	int64_t    *noise = blocks_noise(w);
	int64_t		ring = w->params.width + 1;
	int64_t		period = blocks_period(&w->params);
	int64_t		t = w->t;
	int64_t		lo = t > w->params.width ? t - w->params.width + 1 : 1;
	int64_t		exact,
				steps_draws;
	__int128	noisy;
	cc_window_span span,
				sspan;

	if ((t - 1) % period == 0 && blocks_open(w, t, rng) != CC_OK)
		return CC_OVERFLOW;
	if (!cc_add(counts[(t - 1) % ring], x, &counts[t % ring]) ||
		!cc_add(noise[(t - 1) % ring], blocks_draws(w)[(t - 1) % period], &noise[t % ring]) ||
		__builtin_sub_overflow(counts[t % ring], counts[(lo - 1) % ring], &exact) ||
		__builtin_sub_overflow(noise[t % ring], noise[(lo - 1) % ring], &steps_draws))
		return CC_OVERFLOW;
	cc_window_blocks_span(w->params.width, w->params.block, t, &span);
	cc_window_blocks_span(w->params.width, period, t, &sspan);
	noisy = exact + round_quotient(blocks_super_numerator(w, &span, &sspan, steps_draws),
								   (w->params.block + 1) * blocks_d2(&w->params));
	if (noisy > INT64_MAX || noisy < INT64_MIN)
		return CC_OVERFLOW;
	w->noisy = (int64_t) noisy;
	blocks_spread(w, &span, &sspan, lo);
	return CC_OK;
}

cc_status
cc_window_push(cc_window *w, int64_t item, cc_rng *rng)
{
	cc_status	status;

	if (item < 0)
		return CC_NEGATIVE_ITEM;
	if (w->t >= w->params.horizon)
		return CC_PAST_HORIZON;
	w->t++;
	if (is_tree(w->params.kind))
		status = tree_push(w, item, rng);
	else if (w->params.kind == CC_WINDOW_KARY)
		status = kary_push(w, item, rng);
	else if (w->params.kind == CC_WINDOW_BLOCKS)
		status = blocks_push(w, item, rng);
	else
		status = diff_push(w, item, rng);
	if (status != CC_OK || w->params.kind == CC_WINDOW_HONAKER ||
		w->params.kind == CC_WINDOW_BLOCKS)
		return status;
	/* equal draws of one scale: the bound of their sum, by their number */
	if (isnan(w->bounds[w->draws]))
		w->bounds[w->draws] = cc_dlap_sum_bound(w->draws, w->scale, w->log_term);
	w->bound = w->bounds[w->draws];
	return CC_OK;
}

void
cc_window_read(const cc_window *w, cc_release *release)
{
	release->t = w->t;
	release->noisy = w->noisy;
	release->variance = w->units * w->draw_variance;
	release->bound = w->bound;
}

int64_t
cc_window_draws(const cc_window *w)
{
	return w->draws;
}

int
cc_window_closed_nodes(const cc_window *w, int64_t *values)
{
	int			n = 0;

	if (!is_tree(w->params.kind) || w->t == 0)
		return 0;
	for (int64_t j = 0; j < w->levels && (w->t & ((INT64_C(1) << j) - 1)) == 0; j++)
		values[n++] = w->raw[j];
	return n;
}
