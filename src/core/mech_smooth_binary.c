/*
 * mech_smooth_binary.c
 *		The smooth binary mechanism of Andersson and Pagh ("A smooth binary
 *		mechanism for efficient private continual observation", NeurIPS 2023,
 *		arXiv 2306.09666), with Laplace noise.
 *
 * A complete binary tree of even height h, the smallest with C(h, h/2) > T,
 * numbers its leaves 0 .. 2^h - 1, and uses only those of Hamming weight
 * k = h/2, in increasing order l_1 < l_2 < ...  Item x_t sits on leaf l_t.
 * The release at step t is the sum of the leaves [0, l_(t+1)), taken as the
 * binary mechanism takes a prefix: for every set bit b of l_(t+1), the node
 * holding the leaves [P - 2^b, P), where P is l_(t+1) with its bits below b
 * cleared.  So every release sums exactly k noisy nodes, and its variance is
 * the same at every step: k Var(k Delta / epsilon).
 *
 * Privacy.  The item on leaf u = l_t is in the node [P - 2^b, P) when P
 * agrees with u above b and has a 1 at b, where u has a 0.  That node is ever
 * released only if some leaf of weight k begins with P's bits down to b,
 * which needs fewer than k ones in u above b: b is a zero of u above its
 * lowest one.  u has h - k = k zeros, so an item is in at most k released
 * nodes, and Laplace(k Delta / epsilon) noise on every node makes them all,
 * and so every release, epsilon-DP.
 *
 * Why l_(t+1), where the authors' code releases at l_t: there, x_1 must lie
 * below l_1 = 2^k - 1, where every leaf has fewer than k ones and is in
 * k + 1 released nodes.  Starting one leaf later keeps every item in k nodes
 * for the price of one leaf: hence C(h, k) > T, as in their code.
 *
 * Streaming.  From l = l_t to l' = l_(t+1), the nodes of the set bits above
 * the highest bit where they differ, d (0 in l, 1 in l'), stay.  l's nodes
 * below d leave the release for good: later leaves are larger, beyond their
 * range.  l' gets new nodes for its set bits up to d.  The one at d holds the
 * leaves [Q, Q + 2^d), Q being l' with its bits up to d cleared: what l's
 * leaving nodes held, and x_t on l itself.  The ones below d hold the leaves
 * strictly between l and l', none of weight k: no item, only noise.  So each
 * node's noise is drawn once, when the node is made, and kept while it is
 * released; about two draws a step on average (2.06 at T = 2^20), and a state
 * of the h nodes of one leaf.  Before the first step the leaf is l_1, whose
 * nodes are never released (they all leave at step 1), so they are not drawn.
 */
#include "mechanism_int.h"

#include <string.h>

typedef unsigned __int128 leaf_t;

/* The smallest even h with C(h, h/2) > horizon: 66 for 2^62. */
static int64_t
smooth_height(int64_t horizon)
{
	for (int64_t h = 2;; h += 2)
	{
		unsigned __int128 leaves = 1;

		/* C(h/2 + i, i) for i = 1 .. h/2: each step stays whole */
		for (int64_t i = 1; i <= h / 2; i++)
			leaves = leaves * (unsigned __int128) (h / 2 + i) / (unsigned __int128) i;
		if (leaves > (unsigned __int128) horizon)
			return h;
	}
}

/* The lowest set bit of a nonzero leaf. */
static int
lowest_bit(leaf_t x)
{
	uint64_t	low = (uint64_t) x;

	return low != 0 ? __builtin_ctzll(low) : 64 + __builtin_ctzll((uint64_t) (x >> 64));
}

/* The highest set bit of a nonzero leaf. */
static int
highest_bit(leaf_t x)
{
	uint64_t	high = (uint64_t) (x >> 64);

	return high != 0 ? 127 - __builtin_clzll(high) : 63 - __builtin_clzll((uint64_t) x);
}

/*
 * The next integer of the same Hamming weight (Gosper): carry the lowest
 * block of ones one place up, and move the rest of that block to the bottom.
 */
leaf_t
cc_smooth_next_leaf(leaf_t x)
{
	leaf_t		carried = x + (x & -x);

	return carried | (((x ^ carried) >> 2) >> lowest_bit(x));
}

/* Each item is in at most k = h/2 released nodes. */
static uint64_t
smooth_multiplier(const cc_params *params)
{
	return (uint64_t) smooth_height(params->horizon) / 2;
}

static size_t
smooth_size(const cc_params *params)
{
	return sizeof(cc_smooth_part) + smooth_height(params->horizon) * sizeof(cc_tree_node);
}

/* Start at l_1 = 2^k - 1, with its nodes undrawn. */
static void
smooth_init(cc_state *state)
{
	cc_smooth_part *part = cc_state_part(state);
	leaf_t		first;

	part->height = smooth_height(state->params.horizon);
	first = ((leaf_t) 1 << (part->height / 2)) - 1;
	part->leaf_low = (uint64_t) first;
	part->leaf_high = (uint64_t) (first >> 64);
}

/*
 * The bits of x below position end, as two words: the loops below visit the
 * set ones only (a leaf's nodes sit at its set bits, zero elsewhere).
 */
static void
bits_below(leaf_t x, int end, uint64_t *low, uint64_t *high)
{
	*low = (uint64_t) x;
	*high = (uint64_t) (x >> 64);
	if (end < 64)
	{
		*low &= (UINT64_C(1) << end) - 1;
		*high = 0;
	}
	else if (end < 128)
		*high &= (UINT64_C(1) << (end - 64)) - 1;
}

/*
 * The nodes of leaf later's release not in earlier's, and the reverse: a
 * node is a set bit and the bits above it, so the two share their set bits
 * above the highest bit where they differ, and no other.
 */
int
cc_smooth_unshared(leaf_t later, leaf_t earlier)
{
	uint64_t	words[2];
	int			n = 0;

	if (later == earlier)
		return 0;
	for (int i = 0; i < 2; i++)
	{
		bits_below(i == 0 ? later : earlier, highest_bit(later ^ earlier) + 1,
				   &words[0], &words[1]);
		n += __builtin_popcountll(words[0]) + __builtin_popcountll(words[1]);
	}
	return n;
}

/* Move from leaf l_t to l_(t+1), as the file's head describes. */
static cc_status
smooth_push(cc_state *state, int64_t x, cc_rng *rng)
{
	cc_smooth_part *part = cc_state_part(state);
	cc_tree_node *node = cc_smooth_nodes(part);
	leaf_t		leaf = ((leaf_t) part->leaf_high << 64) | part->leaf_low;
	leaf_t		next = cc_smooth_next_leaf(leaf);
	int			d = highest_bit(leaf ^ next);
	int64_t		exact = x;
	int64_t		dropped = 0;
	int64_t		added = 0;
	uint64_t	words[2];

	/* l's nodes below d leave */
	bits_below(leaf, d, &words[0], &words[1]);
	for (int w = 0; w < 2; w++)
		for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1)
		{
			int			b = 64 * w + __builtin_ctzll(bits);

			exact += node[b].exact; /* a part of the exact total: cannot overflow */
			if (!cc_add(dropped, node[b].noisy, &dropped))
				return CC_OVERFLOW;
			node[b] = (cc_tree_node) {0, 0};
		}

	/* l' gets its nodes up to d */
	bits_below(next, d + 1, &words[0], &words[1]);
	for (int w = 0; w < 2; w++)
		for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1)
		{
			int			b = 64 * w + __builtin_ctzll(bits);

			node[b].exact = b == d ? exact : 0;
			if (!cc_add(node[b].exact, cc_discrete_laplace(rng, state->scale), &node[b].noisy) ||
				!cc_add(added, node[b].noisy, &added))
				return CC_OVERFLOW;
		}
	part->leaf_low = (uint64_t) next;
	part->leaf_high = (uint64_t) (next >> 64);
	if (__builtin_sub_overflow(state->noisy, dropped, &state->noisy) ||
		!cc_add(state->noisy, added, &state->noisy))
		return CC_OVERFLOW;
	return CC_OK;
}

/*
 * The leaf indexes the nodes, so a state read back from storage must hold
 * l_(t+1) of the right height: of weight k, and with t + 1 leaves of weight
 * k up to it.  Below it, those are sum over its set bits p, from the top,
 * of C(p, the number of set bits from p down).
 */
static bool
smooth_part_valid(const cc_params *params, int64_t t, const void *bytes)
{
	cc_smooth_part part;
	leaf_t		leaf;
	int			ones;
	unsigned __int128 below = 0;

	memcpy(&part, bytes, sizeof(part));
	leaf = ((leaf_t) part.leaf_high << 64) | part.leaf_low;
	if (part.height != smooth_height(params->horizon) ||
		(leaf >> part.height) != 0 ||
		__builtin_popcountll(part.leaf_low) + __builtin_popcountll(part.leaf_high) != part.height / 2)
		return false;
	ones = (int) part.height / 2;
	for (int p = (int) part.height - 1; p >= 0; p--)
	{
		unsigned __int128 choose = 1;

		if (((leaf >> p) & 1) == 0)
			continue;
		/* C(p, ones): 0 when fewer than ones bits are left below p */
		if (ones > p)
			choose = 0;
		for (int i = 1; i <= ones && choose != 0; i++)
			choose = choose * (unsigned __int128) (p - ones + i) / (unsigned __int128) i;
		below += choose;
		ones--;
	}
	return below == (unsigned __int128) t;
}

/* k draws of the main scale, at every step. */
static int
smooth_terms(const cc_state *state, cc_term *terms)
{
	const cc_smooth_part *part = cc_state_part(state);

	terms[0].count = part->height / 2;
	terms[0].scale = state->scale;
	terms[0].variance = state->scale_variance;
	return 1;
}

/* The bound: every step a segment, all of one class, k draws. */
static void
smooth_bound_class(const cc_state *state, int64_t *group, int64_t *key)
{
	const cc_smooth_part *part = cc_state_part(state);

	*group = 0;
	*key = part->height / 2;
}

static int
smooth_bound_classes(const cc_params *params, int64_t group, int64_t *segments,
					 cc_class *out)
{
	(void) group;
	*segments = params->horizon;
	out[0] = (cc_class) {smooth_height(params->horizon) / 2, params->horizon};
	return 1;
}

static void
smooth_bound_tail(const cc_params *params, int64_t group, int64_t key, cc_tail *tail)
{
	(void) group;
	cc_tail_exact(tail, key, params, smooth_multiplier(params));
}

const cc_mechanism_ops cc_smooth_binary_ops = {
	.name = "smooth_binary",
	.needs_horizon = true,
	.main_multiplier = smooth_multiplier,
	.part_size = smooth_size,
	.init = smooth_init,
	.push = smooth_push,
	.terms = smooth_terms,
	.bound_class = smooth_bound_class,
	.bound_classes = smooth_bound_classes,
	.bound_tail = smooth_bound_tail,
	.part_valid = smooth_part_valid,
};
