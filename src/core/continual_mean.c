/*
 * continual_mean.c
 *		Continual mean estimation under user-level privacy (George, Ramesh,
 *		Singh and Tyagi, arXiv 2212.09980): Algorithm 6 and the naive
 *		Algorithm 2.
 *
 * The stream.  Sample t is x_t in [0, 1] (the declared range, quantized to
 * q_t in 0 .. Q) from user u_t.  A user keeps at most `cap` samples; later
 * ones are dropped.  After every sample the state releases an estimate of the
 * mean of the samples it covers.
 *
 * Neighbours (the paper's, section 2.2): two streams with the same arrival
 * pattern u_1 .. u_T whose samples differ only where u_t is one user, in any
 * number of that user's samples.  What is protected is what a user
 * contributed; when a user contributed, and how often, is treated as public,
 * as in the paper: every count below (which level receives what and when,
 * when a median is taken, how many samples an estimate covers) is a function
 * of the arrival pattern alone.
 *
 * Naive (Algorithm 2).  Every kept sample enters one binary tree (cc_tree of
 * mech_binary.c) of capacity C = min(T, n m) and depth D = floor(log2 C) + 1.
 * A user changes at most m samples, each by at most Q, each sample is in at
 * most one node of each depth, so the user moves the sum of the nodes of each
 * depth by at most m Q, the L1 norm of all nodes by at most D m Q: discrete
 * Laplace of scale D m Q / epsilon on each node is epsilon-DP.  The estimate
 * at t is the tree's noisy prefix sum over the N_t samples kept so far,
 * divided by N_t Q.
 *
 * Withhold (Algorithm 6).  With L = floor(log2 m), a user's samples after the
 * 2^L-th are dropped (they would never be released).  Level 0 receives a
 * user's first sample when it arrives; level l >= 1 receives the sum of the
 * user's samples 2^(l-1) + 1 .. 2^l when the 2^l-th arrives (the exponential
 * withhold-release pattern: the samples in between are withheld, their sum
 * kept in the user's record).  So a user has at most one element in each
 * level, an element of level l sums k_l = max(1, 2^(l-1)) samples, and a user
 * with c samples has 2^floor(log2 c) >= c/2 of them released: at any time at
 * least half of the kept samples of the levels that release are covered
 * (the paper's Claim C.1).  Each level is a binary tree of capacity C_l =
 * min(n, T >> l) (a user needs 2^l samples to reach level l) and depth D_l.
 *
 * Truncation.  The sum of k i.i.d. samples concentrates within sqrt(k)
 * of k mu, much less than its range k Q when k is large: a level l is
 * truncated when 2 h_l < k_l Q for the half-width h_l below.  Its elements
 * are clamped to [c_l - h_l, c_l + h_l] around a centre c_l, so one user
 * moves one element of it by at most 2 h_l.  The centre is a private median
 * (Algorithm 7), taken once, when the level activates; until then the level
 * is inactive and its elements wait in the users' records (the paper's
 * buffers), and enter the tree, clamped, when it activates.  A level that is
 * not truncated needs no median, is active from the start and has
 * sensitivity k_l Q.  (The paper truncates every level l >= 2; a level whose
 * interval would be no narrower than its range gains nothing from it, so it
 * keeps its range and its median's budget goes to the others.)
 *
 * The median of level l (Algorithm 7, Feldman and Steinke's stable median as
 * Levy et al. use it).  Each user offers its first b_u = 2^floor(log2
 * min(c_u, k)) samples (k = k_l, c_u its count): a power of two, at least
 * half of min(c_u, k).  The offers, largest first and then in order of the
 * users' first appearance, fill arrays of k samples; powers of two sorted
 * downwards fill arrays of a power-of-two size exactly, so each user's offer
 * lies in one array (the paper's contiguous arrays may split a user over
 * two: its cost then has sensitivity 2).  The level activates when K full
 * arrays can be formed, a condition on the counts alone: sum_u b_u >= K k
 * (the paper's Line 9; the diversity condition (11) is it holding for every
 * level a user has reached).  With the arrays' sums A_1 .. A_K rounded to the
 * candidates 0, s, 2s, .., (G - 1) s, the cost of candidate j is
 * max(#{i: A_i below j}, #{i: A_i above j}); one user changes one array, so
 * the cost moves by at most 1, and the exponential mechanism, candidate j
 * with probability proportional to exp(-eps' cost(j) / 2), is eps'-DP.  It is
 * sampled exactly: a uniform candidate is accepted with probability
 * exp(-eps' (cost - least cost) / 2), a Bernoulli of a rational exponent
 * (noise.c), until one is.  The centre is c_l = j s.
 *
 * Privacy.  A median spends eps' = epsilon / (2 M) (M truncated levels), a
 * tree epsilon / (2 (L + 1)); without truncated levels a tree spends epsilon
 * / (L + 1).  A tree's scale is D_l * sens_l / (its epsilon), sens_l = 2 h_l
 * or k_l Q: given the centres, one user has at most one element in the tree,
 * in at most one node of each depth, and moves it by at most sens_l.  By
 * (adaptive) basic composition over the M medians and L + 1 trees, whose
 * epsilons sum to epsilon exactly (as fractions of integers), the release is
 * user-level epsilon-DP.  Everything released (the estimate, the covered
 * count, the error bars) is computed from the trees' noisy sums and from
 * counts; the medians' outputs only move the clamps.  This holds whatever
 * the plan's other constants (K, s, G, h): cc_mean_plan_calibrate() derives
 * the scales from them.
 *
 * Error bars (in units of the range), from the paper's proofs of Theorems 3.1
 * and 3.4, with explicit constants; beta is split evenly over four events
 * (two for the naive kind and for plans without truncation):
 *	A. every median is good: each of its K arrays' means is within
 *	   alpha = sqrt(ln(4 M K / beta_A) / (2 k)) of mu (Hoeffding, a union over
 *	   the M K arrays with half of beta_A), and the exponential mechanism
 *	   picks a candidate between the lowest and highest rounded array sums
 *	   (those outside cost K, the median candidate at most K/2: probability
 *	   at most G exp(-eps' ceil(K/2) / 2) <= beta_A / (2 M) by the choice of
 *	   K); then |c_l - k mu Q| <= k Q alpha + s/2;
 *	B. no element is clamped: every user's sum of k samples is within
 *	   Q sqrt(k ln(2 n M / beta_B) / 2) of k mu Q (Hoeffding, a union over
 *	   the n users and M levels), so h_l is that plus k Q alpha + s/2;
 *	C. the noise: each active level's noisy sum at each step is within the
 *	   Chernoff bound of its popcount(elements) draws at delta = beta_C /
 *	   (T (L + 1)) (cc_dlap_sum_bound());
 *	D. the sampling error: the N_t covered samples, i.i.d. (which ones are
 *	   covered depends on the arrival pattern only), have a mean within
 *	   sqrt(ln(2 T / beta_D) / (2 N_t)) of their law's (Hoeffding, a union
 *	   over the T steps).
 * On A and B nothing is clamped, so the release at every step t is within
 *		(sum of C's bounds) / (N_t Q) + sqrt(ln(2 T / beta_D) / (2 N_t))
 *			+ 1 / (2 Q)
 * of mu, the last term for the quantization (each sample rounded to the
 * nearest grid point), simultaneously at every step with probability at least
 * 1 - beta, when the samples are independent draws of one law of mean mu.
 * The stddev released is the exact standard deviation of the noise alone.
 * Where the diversity condition holds N_t >= t/2 and the bound is
 * O(1/sqrt(t) + sqrt(m_t) log / (t epsilon)), the paper's Theorem 3.4.
 *
 * Cost of a user: a record of 16 + 8 (L + 1) bytes (its count, its withheld
 * sum and its element of each level, kept for the medians and the buffers;
 * 16 bytes for the naive kind), whatever the length of the stream.  The
 * state: the plan, one tree per level (16 (D_l + 2) bytes), the bound of
 * each possible number of draws per level, and the median's scratch, G
 * counts.  A sample costs O(1), plus O(L) when a user's count reaches a power
 * of two, plus O(n log k + G) once per truncated level when it activates.
 *
 * No floating point between the random bits and the noisy sums (noise.c);
 * the estimate is that integer sum divided by the public N_t Q, and doubles
 * otherwise only describe the noise or choose the public plan.
 */
#include "continual_mean.h"
#include "mechanism_int.h"

#include <math.h>
#include <string.h>

/* A user's record; element[l] is set once its count reaches 2^l. */
typedef struct cc_mean_user
{
	int64_t		count;			/* samples kept */
	int64_t		withheld;		/* their sum since the last power of two */
	int64_t		element[];		/* withhold kind: one per level */
} cc_mean_user;

struct cc_mean
{
	int64_t		size;			/* bytes of the whole state */
	cc_mean_plan plan;
	int64_t		t;				/* samples pushed */
	int64_t		users;			/* distinct users */
	int64_t		max_count;		/* most samples kept from one user */
	int64_t		dropped;		/* samples past their user's cap */
	int64_t		included;		/* samples the active trees cover */
	int64_t		exact;			/* their exact (clamped) sum */
	int64_t		noisy;			/* the active trees' noisy sums, summed */
	uint64_t	active;			/* bit l: level l releases */
	/* for each inactive truncated level, what its median could pool */
	int64_t		pooled[CC_MEAN_MAX_LEVELS];
	int64_t		centre[CC_MEAN_MAX_LEVELS];
	/* byte offsets in the state of each level's tree and bound table */
	int64_t		tree_at[CC_MEAN_MAX_LEVELS];
	int64_t		bound_at[CC_MEAN_MAX_LEVELS];
	int64_t		scratch_at;		/* the median's max_grid counts */
};

#define EPSILON_DEN UINT64_C(1000000000)
#define MIN_EPSILON_UNITS UINT64_C(1000)
#define MAX_EPSILON_UNITS UINT64_C(1000000000000)
#define MAX_PER_USER ((INT64_C(1) << 40) - 1)

static int
floor_log2(int64_t x)
{
	return 63 - __builtin_clzll((unsigned long long) x);
}

static cc_tree *
level_tree(const cc_mean *state, int l)
{
	return (cc_tree *) ((char *) state + state->tree_at[l]);
}

static const double *
level_bounds(const cc_mean *state, int l)
{
	return (const double *) ((const char *) state + state->bound_at[l]);
}

static cc_mean_user *
user_record(const cc_mean *state, void *users, int64_t slot)
{
	return (cc_mean_user *) ((char *) users + slot * (int64_t) cc_mean_user_bytes(&state->plan));
}

/*
 * The spacing of a median's candidates: about the arrays' spread k Q alpha
 * (the rounding then adds at most half of it), at least 1, and coarse enough
 * that G stays within CC_MEAN_MAX_GRID.
 */
static int64_t
median_spacing(int64_t k, int64_t q, double alpha)
{
	double		s = floor((double) k * (double) q * alpha);
	int64_t		coarsest = (k * q + CC_MEAN_MAX_GRID - 2) / (CC_MEAN_MAX_GRID - 1);

	if (!(s >= 1.0))
		s = 1.0;
	if (s > (double) (k * q))
		s = (double) (k * q);
	return (int64_t) s > coarsest ? (int64_t) s : coarsest;
}

/* candidates 0, s, .., (G - 1) s reaching past k Q */
static int64_t
median_grid(int64_t k, int64_t q, int64_t s)
{
	return (k * q + s - 1) / s + 1;
}

/*
 * The median's constants of level l when M levels are truncated (A and B in
 * the head comment).  False when truncation would not pay: an interval no
 * narrower than the range, or more arrays than the stream can ever fill.
 */
static bool
plan_median(cc_mean_plan *plan, int l, int64_t medians)
{
	const cc_mean_params *p = &plan->params;
	cc_mean_level *lv = &plan->level[l];
	double		k = (double) lv->block;
	double		q = (double) p->resolution;
	double		beta_a = p->beta / 4.0;
	double		beta_b = p->beta / 4.0;
	double		m = (double) medians;
	double		eps = (double) p->epsilon_units / (double) EPSILON_DEN / (2.0 * m);
	double		alpha;
	double		arrays;
	double		h;
	int64_t		grid_max;

	/* G from the narrowest grid any K >= 2 gives: an upper bound on G */
	alpha = sqrt(log(8.0 * m / beta_a) / (2.0 * k));
	grid_max = median_grid(lv->block, p->resolution,
						   median_spacing(lv->block, p->resolution, alpha));
	arrays = 2.0 * ceil(2.0 / eps * log(2.0 * m * (double) grid_max / beta_a));
	if (arrays > (double) CC_MEAN_MAX_ARRAYS || arrays > (double) p->users ||
		arrays * k > (double) p->horizon)
		return false;

	alpha = sqrt(log(4.0 * m * arrays / beta_a) / (2.0 * k));
	lv->arrays = (int64_t) arrays;
	lv->spacing = median_spacing(lv->block, p->resolution, alpha);
	lv->grid = median_grid(lv->block, p->resolution, lv->spacing);
	h = ceil(q * sqrt(k * log(2.0 * (double) p->users * m / beta_b) / 2.0) +
			 k * q * alpha + (double) lv->spacing / 2.0);
	if (!(2.0 * h < k * q))
		return false;
	lv->half_width = (int64_t) h;
	return true;
}

bool
cc_mean_plan_truncate(cc_mean_plan *plan, int64_t medians)
{
	if (plan->params.kind != CC_MEAN_WITHHOLD || medians < 0 ||
		(medians > 0 && medians > plan->levels - 2))
		return false;
	for (int l = 0; l < plan->levels; l++)
	{
		cc_mean_level *lv = &plan->level[l];

		lv->truncated = l >= plan->levels - medians;
		lv->half_width = lv->arrays = lv->spacing = lv->grid = 0;
		if (lv->truncated && !plan_median(plan, l, medians))
			return false;
	}
	return true;
}

/*
 * Which levels to truncate.  Truncation pays at the top levels, whose ranges
 * k Q grow faster than their intervals (h ~ sqrt(k)); but any median halves
 * every tree's budget.  So: the top M levels for the M (0 .. L - 1) whose
 * plan has the least noise, sum over the levels of depth * scale^2 (the
 * variance of a release holding half the nodes of every level), among those
 * where each of the M levels passes plan_median().
 */
static void
plan_truncation(cc_mean_plan *plan)
{
	cc_mean_plan best = *plan;
	double		least = INFINITY;

	for (int64_t medians = 0; medians <= plan->levels - 2 || medians == 0; medians++)
	{
		cc_mean_plan candidate = *plan;
		double		noise = 0.0;

		if (!cc_mean_plan_truncate(&candidate, medians) ||
			cc_mean_plan_calibrate(&candidate) != CC_MEAN_OK)
			continue;
		for (int l = 0; l < plan->levels; l++)
		{
			double		scale = cc_scale_value(candidate.level[l].scale);

			noise += (double) candidate.level[l].depth * scale * scale;
		}
		if (noise < least)
		{
			least = noise;
			best = candidate;
		}
	}
	*plan = best;
}

cc_mean_status
cc_mean_plan_make(const cc_mean_params *params, cc_mean_plan *plan)
{
	const cc_mean_params *p = params;

	if (p->epsilon_units < MIN_EPSILON_UNITS || p->epsilon_units > MAX_EPSILON_UNITS)
		return CC_MEAN_BAD_EPSILON;
	if (p->resolution < 1 || p->resolution > CC_MEAN_MAX_RESOLUTION)
		return CC_MEAN_BAD_RESOLUTION;
	if (p->horizon < 1 || p->horizon > CC_MEAN_MAX_SUM / p->resolution)
		return CC_MEAN_BAD_HORIZON;
	if (p->users < 1 || p->users > p->horizon)
		return CC_MEAN_BAD_USERS;
	if (p->per_user < 1 || p->per_user > p->horizon || p->per_user > MAX_PER_USER)
		return CC_MEAN_BAD_PER_USER;
	if (!(p->beta > 0.0 && p->beta < 1.0))
		return CC_MEAN_BAD_BETA;

	memset(plan, 0, sizeof(*plan));
	plan->params = *p;
	if (p->kind == CC_MEAN_NAIVE)
	{
		int64_t		capacity;

		plan->levels = 1;
		plan->cap = p->per_user;
		if (__builtin_mul_overflow(p->users, p->per_user, &capacity) || capacity > p->horizon)
			capacity = p->horizon;
		plan->level[0].block = 1;
		plan->level[0].capacity = capacity;
		plan->level[0].depth = cc_tree_levels(capacity);
	}
	else
	{
		int			top = floor_log2(p->per_user);

		plan->levels = top + 1;
		plan->cap = INT64_C(1) << top;
		for (int l = 0; l < plan->levels; l++)
		{
			cc_mean_level *lv = &plan->level[l];
			int64_t		reach = p->horizon >> l;

			lv->block = l == 0 ? 1 : INT64_C(1) << (l - 1);
			lv->capacity = reach < p->users ? reach : p->users;
			lv->depth = cc_tree_levels(lv->capacity);
		}
		plan_truncation(plan);
	}

	return cc_mean_plan_calibrate(plan);
}

/*
 * Can level l of the plan be calibrated: its tree holds every element the
 * level can receive, and a truncated level's grid of candidates covers
 * every array sum?
 */
static bool
level_plan_valid(const cc_mean_plan *plan, int l)
{
	const cc_mean_params *p = &plan->params;
	const cc_mean_level *lv = &plan->level[l];
	bool		naive = p->kind == CC_MEAN_NAIVE;
	int64_t		range;
	int64_t		reach = naive ? p->horizon : p->horizon >> l;
	int64_t		needed = p->users;

	/*
	 * The tree must hold every element the level can receive: its depth is
	 * the most nodes one element is in.
	 */
	if (naive && __builtin_mul_overflow(p->users, p->per_user, &needed))
		needed = reach;
	if (needed > reach)
		needed = reach;
	if (lv->block < 1 || lv->capacity < needed || lv->capacity < 1 ||
		lv->depth != cc_tree_levels(lv->capacity) ||
		__builtin_mul_overflow(lv->block, p->resolution, &range))
		return false;
	if (!lv->truncated)
		return true;
	/* every array sum, 0 .. range, within s/2 of a candidate */
	return !(naive || lv->half_width < 0 || lv->half_width > range ||
			 lv->arrays < 1 || lv->arrays > CC_MEAN_MAX_ARRAYS ||
			 lv->spacing < 1 || lv->grid < 1 || lv->grid > CC_MEAN_MAX_GRID ||
			 (lv->grid - 1) * lv->spacing < range);
}

/* Level l's sensitivity, and the noise scale and variance of its tree. */
static cc_mean_status
level_calibrate(cc_mean_plan *plan, int l)
{
	const cc_mean_params *p = &plan->params;
	cc_mean_level *lv = &plan->level[l];
	uint64_t	multiplier;

	if (p->kind == CC_MEAN_NAIVE)
	{
		if (__builtin_mul_overflow(p->per_user, p->resolution, &lv->sensitivity))
			return CC_MEAN_SCALE_TOO_LARGE;
	}
	else if (lv->truncated)
		lv->sensitivity = 2 * lv->half_width;
	else
		lv->sensitivity = lv->block * p->resolution;
	/* a clamp of width 0 leaves nothing to protect; keep a scale >= 1 */
	if (lv->sensitivity < 1)
		lv->sensitivity = 1;
	if (__builtin_mul_overflow((uint64_t) lv->depth, (uint64_t) lv->sensitivity, &multiplier) ||
		__builtin_mul_overflow(multiplier, plan->tree_share, &multiplier) ||
		!cc_scale_make(multiplier, p->epsilon_units, EPSILON_DEN, &lv->scale))
		return CC_MEAN_SCALE_TOO_LARGE;
	lv->variance = cc_dlap_variance(lv->scale);
	return CC_MEAN_OK;
}

cc_mean_status
cc_mean_plan_calibrate(cc_mean_plan *plan)
{
	const cc_mean_params *p = &plan->params;
	bool		naive = p->kind == CC_MEAN_NAIVE;
	int64_t		medians = 0;
	double		beta_share;

	if (plan->levels < 1 || plan->levels > CC_MEAN_MAX_LEVELS || (naive && plan->levels != 1))
		return CC_MEAN_BAD_PLAN;
	plan->max_grid = 0;
	for (int l = 0; l < plan->levels; l++)
	{
		if (!level_plan_valid(plan, l))
			return CC_MEAN_BAD_PLAN;
		if (!plan->level[l].truncated)
			continue;
		medians++;
		if (plan->level[l].grid > plan->max_grid)
			plan->max_grid = plan->level[l].grid;
	}
	plan->medians = medians;
	plan->median_share = (uint64_t) (2 * medians);
	plan->tree_share = naive ? 1 : (uint64_t) (medians > 0 ? 2 * plan->levels : plan->levels);
	/* beta over events A, B (with truncation), C and D */
	beta_share = p->beta / (medians > 0 ? 4.0 : 2.0);
	plan->noise_log_term = log(2.0 * (double) p->horizon * (double) plan->levels / beta_share);
	plan->stat_log_term = log(2.0 * (double) p->horizon / beta_share);

	for (int l = 0; l < plan->levels; l++)
	{
		cc_mean_status status = level_calibrate(plan, l);

		if (status != CC_MEAN_OK)
			return status;
	}
	return CC_MEAN_OK;
}

void
cc_mean_tree_epsilon(const cc_mean_plan *plan, uint64_t *num, uint64_t *den)
{
	*num = plan->params.epsilon_units;
	*den = EPSILON_DEN * plan->tree_share;
}

void
cc_mean_median_epsilon(const cc_mean_plan *plan, uint64_t *num, uint64_t *den)
{
	*num = plan->median_share ? plan->params.epsilon_units : 0;
	*den = EPSILON_DEN * (plan->median_share ? plan->median_share : 1);
}

size_t
cc_mean_size(const cc_mean_plan *plan)
{
	size_t		size = sizeof(cc_mean);

	for (int l = 0; l < plan->levels; l++)
		size += sizeof(cc_tree) + (size_t) plan->level[l].depth * sizeof(cc_tree_node) +
			(size_t) (plan->level[l].depth + 1) * sizeof(double);
	return size + (size_t) plan->max_grid * sizeof(int64_t);
}

size_t
cc_mean_user_bytes(const cc_mean_plan *plan)
{
	size_t		elements = plan->params.kind == CC_MEAN_NAIVE ? 0 : (size_t) plan->levels;

	return sizeof(cc_mean_user) + elements * sizeof(int64_t);
}

void
cc_mean_init(cc_mean *state, const cc_mean_plan *plan)
{
	int64_t		at = sizeof(cc_mean);

	memset(state, 0, cc_mean_size(plan));
	state->size = (int64_t) cc_mean_size(plan);
	state->plan = *plan;
	for (int l = 0; l < plan->levels; l++)
	{
		const cc_mean_level *lv = &plan->level[l];
		double	   *bounds;

		state->tree_at[l] = at;
		cc_tree_init(level_tree(state, l), lv->depth);
		at += sizeof(cc_tree) + lv->depth * sizeof(cc_tree_node);
		state->bound_at[l] = at;
		bounds = (double *) ((char *) state + at);
		for (int64_t draws = 0; draws <= lv->depth; draws++)
			bounds[draws] = cc_dlap_sum_bound(draws, lv->scale, plan->noise_log_term);
		at += (lv->depth + 1) * sizeof(double);
		if (!lv->truncated)
			state->active |= UINT64_C(1) << l;
	}
	state->scratch_at = at;
}

const cc_mean_plan *
cc_mean_state_plan(const cc_mean *state)
{
	return &state->plan;
}

int64_t
cc_mean_users(const cc_mean *state)
{
	return state->users;
}

bool
cc_mean_quantize(double x, double lo, double hi, int64_t resolution, int64_t *q)
{
	double		v;

	if (isnan(x) || !(lo < hi) || !isfinite(lo) || !isfinite(hi))
		return false;
	if (x <= lo)
		v = 0.0;
	else if (x >= hi)
		v = (double) resolution;
	else
		v = nearbyint((x - lo) / (hi - lo) * (double) resolution);
	if (v < 0.0)
		v = 0.0;
	if (v > (double) resolution)
		v = (double) resolution;
	*q = (int64_t) v;
	return true;
}

/* One element into the tree of level l, clamped if the level is truncated. */
static cc_mean_status
level_push(cc_mean *state, int l, int64_t value, cc_rng *rng)
{
	const cc_mean_level *lv = &state->plan.level[l];
	cc_tree    *tree = level_tree(state, l);
	int64_t		before = tree->noisy;

	if (lv->truncated)
	{
		int64_t		low = state->centre[l] - lv->half_width;
		int64_t		high = state->centre[l] + lv->half_width;

		value = value < low ? low : value > high ? high : value;
	}
	if (cc_tree_push(tree, value, lv->scale, rng) != CC_OK ||
		!cc_add(state->noisy, tree->noisy - before, &state->noisy))
		return CC_MEAN_OVERFLOW;
	state->exact += value;
	state->included += lv->block;
	return CC_MEAN_OK;
}

/*
 * The cost of candidate j, max(#arrays below it, #arrays above it), from the
 * cumulative counts of the arrays' rounded sums.
 */
static int64_t
median_cost(const int64_t *cumulative, int64_t arrays, int64_t j)
{
	int64_t		below = j > 0 ? cumulative[j - 1] : 0;
	int64_t		above = arrays - cumulative[j];

	return below > above ? below : above;
}

/*
 * The median of level l (head comment): pack the users' offers into arrays,
 * count the rounded array sums, and draw a candidate by the exponential
 * mechanism.
 */
static int64_t
level_median(cc_mean *state, void *users, int l, cc_rng *rng)
{
	const cc_mean_plan *plan = &state->plan;
	const cc_mean_level *lv = &plan->level[l];
	int64_t    *cumulative = (int64_t *) ((char *) state + state->scratch_at);
	int			top = floor_log2(lv->block);
	int64_t		done = 0;
	int64_t		sum = 0;
	int64_t		filled = 0;
	int64_t		least;
	uint64_t	den = 2 * plan->median_share * EPSILON_DEN;

	memset(cumulative, 0, lv->grid * sizeof(int64_t));
	for (int j = top; j >= 0 && done < lv->arrays; j--)
	{
		for (int64_t u = 0; u < state->users && done < lv->arrays; u++)
		{
			cc_mean_user *rec = user_record(state, users, u);
			int64_t		offer = rec->count < lv->block ? rec->count : lv->block;
			int64_t		prefix = 0;

			if (floor_log2(offer) != j)
				continue;
			/* the sum of its first 2^j samples */
			for (int i = 0; i <= j; i++)
				prefix += rec->element[i];
			sum += prefix;
			filled += INT64_C(1) << j;
			if (filled == lv->block)
			{
				cumulative[(sum + lv->spacing / 2) / lv->spacing]++;
				done++;
				sum = filled = 0;
			}
		}
	}

	for (int64_t j = 1; j < lv->grid; j++)
		cumulative[j] += cumulative[j - 1];
	least = lv->arrays;
	for (int64_t j = 0; j < lv->grid; j++)
	{
		int64_t		cost = median_cost(cumulative, lv->arrays, j);

		if (cost < least)
			least = cost;
	}
	for (;;)
	{
		int64_t		j = (int64_t) cc_uniform_below(rng, (uint64_t) lv->grid);
		uint64_t	excess = (uint64_t) (median_cost(cumulative, lv->arrays, j) - least);

		/*
		 * exp(-eps' excess / 2), eps' = epsilon / median_share: the
		 * numerator is at most 1e12 * 2^24 < 2^64 (CC_MEAN_MAX_ARRAYS).
		 */
		if (cc_bernoulli_exp(rng, plan->params.epsilon_units * excess, den))
			return j * lv->spacing;
	}
}

/* Level l can now form its arrays: take its median, then empty its buffer. */
static cc_mean_status
level_activate(cc_mean *state, void *users, int l, cc_rng *rng)
{
	int64_t		reach = INT64_C(1) << l;

	state->centre[l] = level_median(state, users, l, rng);
	state->active |= UINT64_C(1) << l;
	for (int64_t u = 0; u < state->users; u++)
	{
		cc_mean_user *rec = user_record(state, users, u);
		cc_mean_status status;

		if (rec->count < reach)
			continue;
		status = level_push(state, l, rec->element[l], rng);
		if (status != CC_MEAN_OK)
			return status;
	}
	return CC_MEAN_OK;
}

/* Why this sample cannot be pushed, or CC_MEAN_OK. */
static cc_mean_status
push_refusal(const cc_mean *state, int64_t user, int64_t q)
{
	const cc_mean_plan *plan = &state->plan;

	if (q < 0 || q > plan->params.resolution)
		return CC_MEAN_BAD_SAMPLE;
	if (user < 0 || user > state->users)
		return CC_MEAN_BAD_USER;
	if (user == state->users && state->users == plan->params.users)
		return CC_MEAN_TOO_MANY_USERS;
	if (state->t == plan->params.horizon)
		return CC_MEAN_PAST_HORIZON;
	return CC_MEAN_OK;
}

/*
 * The user's count reached 2^l: release what it withheld to level l, grow
 * its offers to the medians above, and start the levels whose medians now
 * have their arrays.
 */
static cc_mean_status
release_withheld(cc_mean *state, void *users, cc_mean_user *rec, int64_t count,
				 cc_rng *rng)
{
	const cc_mean_plan *plan = &state->plan;
	int			l = floor_log2(count);

	rec->element[l] = rec->withheld;
	rec->withheld = 0;
	for (int v = l + 1; v < plan->levels; v++)
	{
		/* its offer to the median of level v grows from count/2 to count */
		if (plan->level[v].truncated && !(state->active >> v & 1) &&
			plan->level[v].block >= count)
			state->pooled[v] += count - count / 2;
	}
	if (state->active >> l & 1)
	{
		cc_mean_status status = level_push(state, l, rec->element[l], rng);

		if (status != CC_MEAN_OK)
			return status;
	}
	for (int v = 0; v < plan->levels; v++)
	{
		const cc_mean_level *lv = &plan->level[v];

		if (lv->truncated && !(state->active >> v & 1) &&
			state->pooled[v] / lv->block >= lv->arrays)
		{
			cc_mean_status status = level_activate(state, users, v, rng);

			if (status != CC_MEAN_OK)
				return status;
		}
	}
	return CC_MEAN_OK;
}

cc_mean_status
cc_mean_push(cc_mean *state, void *users, int64_t user, int64_t q, cc_rng *rng)
{
	const cc_mean_plan *plan = &state->plan;
	cc_mean_status status = push_refusal(state, user, q);
	cc_mean_user *rec;
	int64_t		count;

	if (status != CC_MEAN_OK)
		return status;
	rec = user_record(state, users, user);
	if (user == state->users)
	{
		memset(rec, 0, cc_mean_user_bytes(plan));
		state->users++;
	}
	state->t++;
	if (rec->count == plan->cap)
	{
		state->dropped++;
		return CC_MEAN_OK;
	}
	count = ++rec->count;
	if (count > state->max_count)
		state->max_count = count;
	if (plan->params.kind == CC_MEAN_NAIVE)
		return level_push(state, 0, q, rng);

	/* at most cap * Q <= T Q <= CC_MEAN_MAX_SUM */
	rec->withheld += q;
	if ((count & (count - 1)) != 0)
		return CC_MEAN_OK;
	return release_withheld(state, users, rec, count, rng);
}

void
cc_mean_read(const cc_mean *state, cc_mean_release *release)
{
	const cc_mean_plan *plan = &state->plan;
	double		q = (double) plan->params.resolution;
	double		variance = 0.0;
	double		noise = 0.0;
	double		n;
	uint64_t	reached;

	memset(release, 0, sizeof(*release));
	release->t = state->t;
	release->included = state->included;
	release->dropped = state->dropped;
	release->max_count = state->max_count;
	release->active = state->active;
	reached = state->max_count > 0 ?
		(UINT64_C(2) << floor_log2(state->max_count)) - 1 : 0;
	release->diverse = plan->params.kind == CC_MEAN_NAIVE || (state->active & reached) == reached;
	if (state->included == 0)
		return;

	for (int l = 0; l < plan->levels; l++)
	{
		int			draws;

		if (!(state->active >> l & 1))
			continue;
		draws = __builtin_popcountll((unsigned long long) level_tree(state, l)->t);
		variance += draws * plan->level[l].variance;
		noise += level_bounds(state, l)[draws];
	}
	n = (double) state->included;
	release->has_estimate = true;
	release->estimate = (double) state->noisy / (n * q);
	release->stddev = sqrt(variance) / (n * q);
	release->bound = noise / (n * q) + sqrt(plan->stat_log_term / (2.0 * n)) + 0.5 / q;
}

int64_t
cc_mean_exact_sum(const cc_mean *state)
{
	return state->exact;
}

int64_t
cc_mean_noisy_sum(const cc_mean *state)
{
	return state->noisy;
}

void
cc_mean_level_read(const cc_mean *state, int l, cc_mean_level_state *out)
{
	const cc_tree *tree = level_tree(state, l);

	memset(out, 0, sizeof(*out));
	out->active = (state->active >> l & 1) != 0;
	out->elements = tree->t;
	/* the live nodes, those of the set bits of t, cover every element */
	for (int64_t d = 0; d < tree->levels; d++)
		if (tree->t >> d & 1)
			out->exact += cc_tree_nodes(tree)[d].exact;
	out->centre = state->centre[l];
	out->pooled = state->pooled[l];
}
