/*
 * mech_honaker.c
 *		The binary tree with Honaker's inverse-variance estimates of its nodes,
 *		in the streaming form of tensorflow_privacy's EfficientTreeAggregator
 *		(Honaker 2015, "Efficient use of differentially private binary trees";
 *		Kairouz et al. 2021, "Practical and private (deep) learning without
 *		sampling or shuffling", appendix on the efficient tree).
 *
 * Every dyadic interval of the stream, at every level 0 .. L - 1 with
 * L = floor(log2 T) + 1, gets one noisy sum n with Laplace(L/epsilon) noise.
 * An item is in L intervals, one a level, so this is the binary mechanism's
 * privacy for the same epsilon; it draws about twice as often, because it
 * uses every node of the tree where the binary mechanism uses only the nodes
 * it releases.
 *
 * A closed node's noisy sum and its two children's estimates are independent
 * measurements of its sum, and weighing them by their inverse variances gives
 * the best unbiased combination.  With sigma^2 the variance of one draw and
 * D_d = 2^(d+1) - 1, a node at level d gets
 *		E_d = (2^d n + D_(d-1) (E_left + E_right)) / D_d,
 * of variance v_d = sigma^2 2^d / D_d: sigma^2 for a leaf (E_0 = n), going
 * down to sigma^2 / 2 high up.  Only the node's own subtree enters its
 * estimate (its ancestors close later), so an estimate is final when its node
 * closes: that is the streaming form.  The release at t sums the estimates of
 * the nodes of t's binary expansion, as the binary mechanism sums their noisy
 * values, so its variance is sigma^2 times the sum over the set bits d of t
 * of 2^d / D_d.  The state keeps that sum over the live nodes as it goes: a
 * step takes off the nodes it closes below its new one and adds the new one,
 * so a release costs the same at every t, whatever the popcount of t.
 *
 * Exactness.  D_d E_d = 2^d n + D_(d-1) E_left + D_(d-1) E_right is an
 * integer, so every estimate is kept exactly as whole + frac / D_d; the noise
 * itself is drawn with integers only.  The weights make the release
 * fractional: it is rounded to the nearest integer, post-processing of the
 * stored values.  The live nodes' fractions are summed in fixed point, each
 * frac / D_d taken down to a multiple of 2^-57 (honaker_fixed): integers,
 * so that a node closed leaves the sum exactly as it entered it.  The sum
 * of at most 63 of them errs by less than 63 * 2^-57 < 1e-15, so the
 * rounding can differ from the exact one only for an estimate within 1e-15
 * of a half-integer (never exactly one: the denominators are odd), by one,
 * which the bound's margin in bounds.c covers.  The variance reported is
 * the exact one of the estimate before rounding; the integer released is
 * within 1/2 of that estimate, so its standard deviation is within 1/2 of
 * the one reported (about 1/12 more variance, in practice), and the bound
 * counts the 1/2.
 *
 * gaussian_honaker is the same tree with discrete Gaussian noise for rho-zCDP.
 * The node sums form a vector in which an item is in L nodes, one a level;
 * a unit adding up to Delta to the stream moves each level's nodes by at most
 * Delta in all, so by at most Delta in L2 norm, and the whole vector by at
 * most sqrt(L) Delta: every node gets sigma^2 = L Delta^2 / (2 rho).  The
 * estimates and their weights are the ones above (inverse-variance weights
 * depend on the variances' ratios only), and the variance reported is
 * sigma^2's exact discrete Gaussian variance times the same share.
 */
#include "mechanism_int.h"
#include "gaussian.h"

#include <math.h>
#include <string.h>

/* D_d = 2^(d+1) - 1, for levels up to 62 (a horizon of 2^62) */
static inline uint64_t
denominator(int d)
{
	return (UINT64_C(2) << d) - 1;
}

/* 1 / D_d for every level, folded by the compiler: the shares and weights */
#define INVERSE(d) (1.0 / (double) ((UINT64_C(2) << (d)) - 1))
#define INVERSE4(d) INVERSE(d), INVERSE(d + 1), INVERSE(d + 2), INVERSE(d + 3)
#define INVERSE16(d) INVERSE4(d), INVERSE4(d + 4), INVERSE4(d + 8), INVERSE4(d + 12)
static const double inverse_denominator[64] = {
	INVERSE16(0), INVERSE16(16), INVERSE16(32), INVERSE16(48)
};

/*
 * The share of a draw's variance in the release at t, sum over the set bits
 * d of t of 2^d / D_d, by bytes of t: share_by_byte[i][v] sums the levels
 * 8i + j for the set bits j of v.  Filled at the first use.
 */
static double share_by_byte[8][256];
static bool share_ready;

static inline double
share_of(uint64_t t)
{
	double		share = 0.0;

	if (!share_ready)
	{
		for (int i = 0; i < 8; i++)
			for (int v = 0; v < 256; v++)
			{
				share_by_byte[i][v] = 0.0;
				for (int j = 0; j < 8; j++)
					if ((v >> j) & 1)
						share_by_byte[i][v] += (double) (UINT64_C(1) << (8 * i + j)) *
							inverse_denominator[8 * i + j];
			}
		share_ready = true;
	}
	for (int i = 0; t != 0; i++, t >>= 8)
		share += share_by_byte[i][t & 255];
	return share;
}

/* Levels of the tree, as for the binary mechanism. */
static uint64_t
honaker_multiplier(const cc_params *params)
{
	return (uint64_t) cc_tree_levels(params->horizon);
}

static size_t
honaker_size(const cc_params *params)
{
	return sizeof(cc_honaker_part) +
		cc_tree_levels(params->horizon) * sizeof(cc_honaker_node);
}

/*
 * n = q D_d + r with 0 <= r < D_d, into whole and frac; false if q is beyond
 * int64.  Nearly always n fits int64, and one machine division does.
 */
static inline bool
floor_divide(__int128 n, int d, int64_t *q, int64_t *r)
{
	__int128	wide_q;
	__int128	wide_r;

	if (d == 0)
	{
		wide_q = n;
		wide_r = 0;
	}
	else if (n >= INT64_MIN && n <= INT64_MAX)
	{
		int64_t		narrow = (int64_t) n;

		/*
		 * Constant divisors for the levels that close most often (15 steps
		 * in 16 close at most level 4), which the compiler turns into
		 * multiplications
		 */
		switch (d)
		{
			case 1:
				wide_q = narrow / 3;
				break;
			case 2:
				wide_q = narrow / 7;
				break;
			case 3:
				wide_q = narrow / 15;
				break;
			case 4:
				wide_q = narrow / 31;
				break;
			default:
				wide_q = narrow / (int64_t) denominator(d);
		}
		wide_r = narrow - (int64_t) wide_q * (int64_t) denominator(d);
	}
	else
	{
		wide_q = n / (__int128) denominator(d);
		wide_r = n % (__int128) denominator(d);
	}
	/* C truncates toward zero */
	if (wide_r < 0)
	{
		wide_r += denominator(d);
		wide_q--;
	}
	if (wide_q < INT64_MIN || wide_q > INT64_MAX)
		return false;
	*q = (int64_t) wide_q;
	*r = (int64_t) wide_r;
	return true;
}

/*
 * frac / D_d in fixed point with FIXED_BITS bits after the point, rounded
 * down: floor(frac 2^57 / D_d).  63 of them, each below 2^57, sum below 2^63.
 * The levels that close most often have constant divisors and a 64-bit
 * numerator (frac < 2^6), which the compiler turns into multiplications.
 */
#define FIXED_BITS 57

static inline uint64_t
honaker_fixed(int64_t frac, int d)
{
	uint64_t	f = (uint64_t) frac;

	switch (d)
	{
		case 0:
			return 0;			/* D_0 = 1: frac is 0 */
		case 1:
			return (f << FIXED_BITS) / 3;
		case 2:
			return (f << FIXED_BITS) / 7;
		case 3:
			return (f << FIXED_BITS) / 15;
		case 4:
			return (f << FIXED_BITS) / 31;
		case 5:
			return (f << FIXED_BITS) / 63;
		default:
			return (uint64_t) (((unsigned __int128) f << FIXED_BITS) / denominator(d));
	}
}

/*
 * A stored part: a node in range at every level, zero where t's bit is not
 * set, and live sums that are the live nodes'.
 */
static bool
honaker_part_valid(const cc_params *params, int64_t t, const void *bytes)
{
	cc_honaker_part part;
	__int128	wholes = 0;
	uint64_t	fixed = 0;

	memcpy(&part, bytes, sizeof(part));
	for (int d = 0; d < cc_tree_levels(params->horizon); d++)
	{
		cc_honaker_node node;

		memcpy(&node, (const char *) bytes + sizeof(part) + d * sizeof(node), sizeof(node));
		if (node.frac < 0 || (uint64_t) node.frac >= denominator(d))
			return false;
		if ((((uint64_t) t >> d) & 1) == 0)
		{
			if (node.exact != 0 || node.whole != 0 || node.frac != 0)
				return false;
			continue;
		}
		wholes += node.whole;
		fixed += honaker_fixed(node.frac, d);
	}
	return wholes == part.live_whole && fixed == part.live_fixed;
}

/* a node's noise, of the state's scale */
typedef int64_t (*node_draw) (cc_rng *rng, cc_scale scale);

/*
 * Step t closes the intervals ending at t, one at each level 0 .. ctz(t).
 * Each gets its draw, and its estimate from its left child (the live node one
 * level down) and its right child (the interval closed just before it, below
 * it).  Only the highest becomes a live node; the others live on in its
 * estimate, and leave the live sums.  Then the release is the rounded sum of
 * the live estimates.
 * Inlined into each kind's push with its draw, so that the draw is a direct
 * call.
 */
static inline __attribute__((always_inline)) cc_status
tree_push(cc_state *state, int64_t x, cc_rng *rng, node_draw draw)
{
	cc_honaker_part *part = cc_state_part(state);
	cc_honaker_node *node = cc_honaker_nodes(part);
	int64_t		t = state->t;
	int			closing = __builtin_ctzll((unsigned long long) t);
	int64_t		exact = x;
	__int128	scaled;			/* D_j times the estimate's error, level j */
	int64_t		error_whole;
	__int128	wholes = part->live_whole;
	uint64_t	fixed = part->live_fixed;

	/*
	 * The estimate's error, not the estimate, is carried up: it needs fewer
	 * bits (no count in it), and whole and frac below come out the same as
	 * from D_d E_d itself, since exact is an integer.
	 */
	scaled = draw(rng, state->scale);
	for (int j = 1; j <= closing; j++)
	{
		cc_honaker_node *left = &node[j - 1];
		__int128	left_scaled = ((__int128) left->whole - left->exact) *
			(__int128) denominator(j - 1) + left->frac;
		__int128	own = (__int128) draw(rng, state->scale) *
			((__int128) 1 << j);

		exact += left->exact;	/* a part of the exact total: cannot overflow */
		if (__builtin_add_overflow(scaled, left_scaled, &scaled) ||
			__builtin_add_overflow(scaled, own, &scaled))
			return CC_OVERFLOW;
		/* it lives on in the new node (a loop: memset's start costs more) */
		wholes -= left->whole;
		fixed -= honaker_fixed(left->frac, j - 1);
		*left = (cc_honaker_node) {0, 0, 0};
	}

	if (!floor_divide(scaled, closing, &error_whole, &node[closing].frac) ||
		!cc_add(exact, error_whole, &node[closing].whole))
		return CC_OVERFLOW;
	node[closing].exact = exact;

	/* the live sums, and the release: fixed / 2^57 rounded to the nearest */
	wholes += node[closing].whole;
	fixed += honaker_fixed(node[closing].frac, closing);
	if (wholes < INT64_MIN || wholes > INT64_MAX)
		return CC_OVERFLOW;
	part->live_whole = (int64_t) wholes;
	part->live_fixed = fixed;
	wholes += (fixed + (UINT64_C(1) << (FIXED_BITS - 1))) >> FIXED_BITS;
	if (wholes > INT64_MAX)
		return CC_OVERFLOW;
	state->noisy = (int64_t) wholes;
	return CC_OK;
}

static cc_status
honaker_push(cc_state *state, int64_t x, cc_rng *rng)
{
	return tree_push(state, x, rng, cc_discrete_laplace);
}

static int64_t
gaussian_draw(cc_rng *rng, cc_scale sigma2)
{
	int64_t		z;

	/* cc_params_prepare() checked sigma2: the draw cannot fail */
	cc_dgauss_draw(rng, sigma2, &z);
	return z;
}

static cc_status
gaussian_honaker_push(cc_state *state, int64_t x, cc_rng *rng)
{
	return tree_push(state, x, rng, gaussian_draw);
}

/*
 * The release's noise before rounding is a weighted sum of draws of scale b
 * (the main scale): node d's estimate weighs each of the 2^(d-j) draws of
 * level j in its subtree by 2^j / D_d (unroll the recursion: D_d E_d is the
 * sum over levels j <= d of 2^j times the level's noisy sums).  Over one
 * node the squared weights add up to
 *		sum_j 2^(d-j) 4^j / D_d^2 = 2^d (2^(d+1) - 1) / D_d^2 = 2^d / D_d,
 * which is v_d / sigma^2.  The live nodes' subtrees are disjoint, so their
 * estimates are independent.
 */
static void
honaker_noise(const cc_state *state, cc_noise *noise)
{
	noise->variance = share_of((uint64_t) state->t) * state->scale_variance;
	noise->rounding = 0.5;
}

/*
 * The weight 2^j / D_d as a double no smaller: the bound only grows with the
 * weights, and D_d has more bits than a double above level 52.
 */
static double
weight(int j, int d)
{
	return (double) (UINT64_C(1) << j) * inverse_denominator[d] * (1.0 + 0x1p-50);
}

static int
honaker_node_pieces(const cc_params *params, int d, cc_piece *out)
{
	double		inv_b = cc_inverse_scale(cc_params_scale(params, honaker_multiplier(params)));

	for (int j = 0; j <= d; j++)
		out[j] = (cc_piece) {(double) (UINT64_C(1) << (d - j)), inv_b, weight(j, d)};
	return d + 1;
}

/*
 * The bound: every step a segment.  The largest single weight of a release
 * is its lowest live node's own draw, 2^d0 / D_d0, whose tail bounds.c sums
 * exactly; the rest is that node's lower levels and the other live nodes,
 * the worst popcount(t) - 1 of those above d0 at every lambda.  A class is
 * (popcount(t), d0), with d0 = ctz(t) up to 5; the steps with d0 >= 6 (a
 * 64th of them, whose own weights are all within 1/127 of 1/2) form one
 * class per popcount, bounded by their nodes from level 6 up alone.
 */
#define EXACT_LOW_LEVELS 6

static void
honaker_bound_class(const cc_state *state, int64_t *group, int64_t *key)
{
	int			low = __builtin_ctzll((unsigned long long) state->t);

	*group = 0;
	*key = __builtin_popcountll((unsigned long long) state->t) * 8 +
		(low < EXACT_LOW_LEVELS ? low : EXACT_LOW_LEVELS);
}

static int
honaker_bound_classes(const cc_params *params, int64_t group, int64_t *segments,
					  cc_class *out)
{
	int			levels = (int) cc_tree_levels(params->horizon);
	int			n = 0;

	(void) group;
	*segments = params->horizon;
	for (int k = 1; k <= levels; k++)
	{
		for (int low = 0; low <= EXACT_LOW_LEVELS; low++)
		{
			int64_t		steps;

			if (low == EXACT_LOW_LEVELS)
				steps = cc_count_popcount(params->horizon >> low, k);
			else if ((params->horizon >> low) == 0)
				steps = 0;
			else
			{
				/* t = 2^low (2v + 1) <= T, popcount(v) = k - 1 */
				int64_t		v_max = ((params->horizon >> low) - 1) / 2;

				steps = k == 1 ? 1 : cc_count_popcount(v_max, k - 1);
			}
			if (steps > 0)
				out[n++] = (cc_class) {k * 8 + low, steps};
		}
	}
	return n;
}

static void
honaker_bound_tail(const cc_params *params, int64_t group, int64_t key, cc_tail *tail)
{
	int			k = (int) (key / 8);
	int			low = (int) (key % 8);

	(void) group;
	tail->rounding = 0.5;
	if (low == EXACT_LOW_LEVELS)
	{
		tail->choose = k;
		tail->from = low;
		return;
	}
	/* the node's own draw exactly, its lower levels as pieces */
	honaker_node_pieces(params, low, tail->pieces);
	tail->exact = 1;
	tail->exact_inv_b = tail->pieces[low].inv_b;
	tail->exact_weight = tail->pieces[low].weight;
	tail->npieces = low;
	tail->choose = k - 1;
	tail->from = low + 1;
}

/* sigma^2 = L Delta^2 / (2 rho), as the head of the file says */
static cc_status
gaussian_honaker_sigma2(const cc_params *params, cc_scale *sigma2)
{
	return cc_gaussian_sigma2((unsigned __int128) cc_tree_levels(params->horizon) *
							  (uint64_t) params->sensitivity * (uint64_t) params->sensitivity,
							  params->rho_units, sigma2);
}

/*
 * What moves between neighbours (privacy_region.c uses it).  A unit adds
 * integers whose absolute values sum to at most Delta to the stream, so at
 * each of the L levels the nodes move by integers whose absolute values sum
 * to at most Delta, a level's nodes being disjoint intervals; that
 * holds too across the trees of the groups of one release when a unit's
 * contribution to all of them together is at most Delta.  For Delta <= 2 a
 * level's moves are (Delta), (1, 1), (1) or nothing, each dominated by one
 * node moved by Delta (privacy_region.c, "Merging equal moves"): the tree
 * is dominated by L coordinates moved by Delta.  Beyond, the moves' sum,
 * L Delta at most, over sigma^2 (rounded up to a unit), and at most
 * L Delta moving nodes.
 */
static void
gaussian_honaker_pair(const cc_params *params, cc_gauss *gauss)
{
	uint64_t	levels = (uint64_t) cc_tree_levels(params->horizon);
	uint64_t	moved = levels * (uint64_t) params->sensitivity;

	if (gaussian_honaker_sigma2(params, &gauss->sigma2) != CC_OK)
	{
		memset(gauss, 0, sizeof(*gauss));
		return;
	}
	if (params->sensitivity <= 2)
	{
		gauss->coordinates = levels;
		gauss->shift = (uint64_t) params->sensitivity;
		gauss->l1_units = 0;
	}
	else
	{
		/* moved <= 63e6, den <= 2^62: the product fits in 128 bits */
		unsigned __int128 num = (unsigned __int128) moved * gauss->sigma2.den *
			CC_RHO_UNITS_PER_ONE;

		gauss->coordinates = moved;
		gauss->shift = 0;
		gauss->l1_units = (uint64_t) ((num + gauss->sigma2.num - 1) / gauss->sigma2.num);
	}
}

/*
 * The weights of honaker_noise(), on draws each sub-Gaussian with proxy
 * sigma^2: the sum's proxy is sigma^2 times the share.
 */
static void
gaussian_honaker_noise(const cc_state *state, cc_noise *noise)
{
	double		share = share_of((uint64_t) state->t);

	noise->variance = share * state->scale_variance;
	noise->proxy = share * cc_scale_value(state->scale);
	noise->rounding = 0.5;
}

/*
 * The bound's classes are binary's (the popcount of t); a class's proxy is
 * sigma^2 times its largest share, that of levels 0 .. k - 1 (2^d / D_d
 * falls with d).
 */
static void
gaussian_honaker_bound_tail(const cc_params *params, int64_t group, int64_t key,
							cc_tail *tail)
{
	cc_scale	sigma2;
	double		share = 0.0;

	(void) group;
	gaussian_honaker_sigma2(params, &sigma2);
	for (int d = 0; d < key; d++)
		share += weight(d, d);
	tail->proxy = share * cc_scale_value(sigma2) * (1.0 + 0x1p-50);
	tail->rounding = 0.5;
}

const cc_mechanism_ops cc_gaussian_honaker_ops = {
	.name = "gaussian_honaker",
	.privacy = CC_ZCDP,
	.needs_horizon = true,
	.gaussian_sigma2 = gaussian_honaker_sigma2,
	.gaussian_noise = gaussian_honaker_noise,
	.gaussian_pair = gaussian_honaker_pair,
	.part_size = honaker_size,
	.push = gaussian_honaker_push,
	.bound_classes = cc_popcount_classes,
	.bound_tail = gaussian_honaker_bound_tail,
	.part_valid = honaker_part_valid,
};

const cc_mechanism_ops cc_honaker_ops = {
	.name = "honaker",
	.needs_horizon = true,
	.main_multiplier = honaker_multiplier,
	.part_size = honaker_size,
	.push = honaker_push,
	.weighted_noise = honaker_noise,
	.bound_class = honaker_bound_class,
	.bound_classes = honaker_bound_classes,
	.bound_tail = honaker_bound_tail,
	.node_pieces = honaker_node_pieces,
	.part_valid = honaker_part_valid,
};
