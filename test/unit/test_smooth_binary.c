/*
 * test_smooth_binary.c
 *		The smooth binary mechanism against its tree, node by node.
 */
#include "unit.h"
#include "mechanism_int.h"

#include <stdlib.h>
#include <string.h>

enum
{
	REPLAY_T = 3000, REPLAY_H = 14, REPLAY_K = 7
};

/* leaves[1 .. n]: the first n integers of Hamming weight k, by brute force */
static void
weight_k_leaves(int k, uint64_t *leaves, int n)
{
	int			found = 0;

	for (uint64_t v = 0; found < n; v++)
		if (__builtin_popcountll(v) == k)
			leaves[++found] = v;
}

/* The next integer of the same Hamming weight, by brute force. */
static uint64_t
leaves_after(uint64_t v)
{
	int			k = __builtin_popcountll(v);

	do
		v++;
	while (__builtin_popcountll(v) != k);
	return v;
}

/*
 * Replay the draws on the tree: a copy of the random source draws each node's
 * noise when the node is first released, lowest bit first, and never again;
 * every release must be the sum, over the set bits b of l_(t+1), of the exact
 * sum of the leaves [P - 2^b, P) plus that node's noise, and the state must
 * hold those nodes and no others.  A node redrawn or not drawn, a wrong
 * interval or a wrong next leaf breaks the equalities from that step on.
 */
static void
test_replay(void)
{
	seeded_rng mech_rng;
	seeded_rng ref_rng;
	seeded_rng items_rng;
	cc_params	p = params_for(CC_SMOOTH_BINARY, 0.7, REPLAY_T);
	cc_state   *s = new_state(&p);
	cc_smooth_part *part = cc_state_part(s);
	cc_tree_node *node = cc_smooth_nodes(part);
	static uint64_t leaves[REPLAY_T + 2];
	static int64_t items[REPLAY_T + 1];
	static int64_t below[(1 << REPLAY_H) + 1];	/* items on leaves < v */
	static int64_t noise_of[REPLAY_H][1 << REPLAY_H];
	static bool drawn[REPLAY_H][1 << REPLAY_H];
	int			bad_leaves = 0;
	int			bad_nodes = 0;
	int			bad_releases = 0;
	int			redrawn = 0;

	CHECK(part->height == REPLAY_H, "height for %d: %lld", REPLAY_T, (long long) part->height);
	weight_k_leaves(REPLAY_K, leaves, REPLAY_T + 1);
	seeded_rng_init(&items_rng, 50);
	memset(below, 0, sizeof(below));
	for (int t = 1; t <= REPLAY_T; t++)
	{
		items[t] = (int64_t) cc_uniform_below(&items_rng.rng, 5);
		below[leaves[t] + 1] = items[t];
	}
	for (int v = 1; v <= 1 << REPLAY_H; v++)
		below[v] += below[v - 1];

	seeded_rng_init(&mech_rng, 51);
	seeded_rng_init(&ref_rng, 51);
	for (int t = 1; t <= REPLAY_T; t++)
	{
		uint64_t	leaf = leaves[t + 1];
		int64_t		release = 0;

		cc_push(s, items[t], &mech_rng.rng);
		bad_leaves += part->leaf_low != leaf || part->leaf_high != 0;
		for (int b = 0; b < REPLAY_H; b++)
		{
			uint64_t	key = leaf >> b;
			uint64_t	end = key << b;

			if ((key & 1) == 0)
			{
				bad_nodes += node[b].exact != 0 || node[b].noisy != 0;
				continue;
			}
			/* a node of the previous leaf is kept, any other is new */
			if (t == 1 || (leaves[t] >> b) != key)
			{
				redrawn += drawn[b][key];
				drawn[b][key] = true;
				noise_of[b][key] = cc_discrete_laplace(&ref_rng.rng, s->scale);
			}
			release += below[end] - below[end - (UINT64_C(1) << b)] + noise_of[b][key];
			bad_nodes += node[b].exact != below[end] - below[end - (UINT64_C(1) << b)] ||
				node[b].noisy != node[b].exact + noise_of[b][key];
		}
		bad_releases += s->noisy != release || cc_exact_count(s) != below[leaf];
	}
	CHECK(bad_leaves == 0, "%d steps not at the next leaf of weight %d", bad_leaves, REPLAY_K);
	CHECK(bad_nodes == 0, "%d node reads differ from the tree", bad_nodes);
	CHECK(bad_releases == 0, "%d releases differ from the tree", bad_releases);
	CHECK(redrawn == 0, "%d nodes released again after they had left", redrawn);
	CHECK(cc_next_word(&mech_rng.rng) == cc_next_word(&ref_rng.rng),
		  "the mechanism drew other than once per node");
	free(s);
}

/*
 * Over all the releases of a horizon, count the released nodes that hold
 * each leaf.  The item on l_t, for every t, must be in at most k of them (the
 * privacy proof).  When the horizon uses every leaf it can, C(h, k) - 1,
 * some item is in exactly k (the noise is no larger than it needs), and
 * releasing at l_t instead of l_(t+1), as the authors' code does, would
 * leave x_1 only leaves below l_1, each in k + 1 released nodes.
 */
static void
check_sensitivity(int64_t horizon)
{
	int			h = smooth_binary_height(horizon);
	int			k = h / 2;
	uint64_t   *leaves = malloc((horizon + 2) * sizeof(uint64_t));
	int			most = 0;
	int			fewest_first = 1 << 30;

	weight_k_leaves(k, leaves, (int) horizon + 1);
	for (int64_t i = 1; i <= horizon; i++)
	{
		int			in = 0;

		for (int64_t t = 1; t <= horizon; t++)
			for (int b = 0; b < h; b++)
			{
				uint64_t	key = leaves[t + 1] >> b;

				/* a node is counted once: at the first release that has it */
				if ((key & 1) && (t == 1 || (leaves[t] >> b) != key) &&
					leaves[i] >= (key << b) - (UINT64_C(1) << b) && leaves[i] < key << b)
					in++;
			}
		if (in > most)
			most = in;
	}
	for (uint64_t v = 0; v < leaves[1]; v++)
	{
		int			in = 0;

		for (int64_t t = 1; t <= horizon; t++)
			for (int b = 0; b < h; b++)
			{
				uint64_t	key = leaves[t] >> b;

				if ((key & 1) && (t == 1 || (leaves[t - 1] >> b) != key) &&
					v >= (key << b) - (UINT64_C(1) << b) && v < key << b)
					in++;
			}
		if (in < fewest_first)
			fewest_first = in;
	}
	CHECK(most <= k, "T = %lld: an item in %d released nodes, k = %d", (long long) horizon, most, k);
	if (horizon + 1 == (int64_t) binomial(h, k))
		CHECK(most == k && fewest_first == k + 1,
			  "T = %lld: items in up to %d nodes, x_1 in %d if released at l_t",
			  (long long) horizon, most, fewest_first);
	free(leaves);
}

/* With epsilon 1000 every draw is 0 (but with probability below e^-100 each). */
static void
test_zero_noise(void)
{
	seeded_rng r;
	cc_params	p = params_for(CC_SMOOTH_BINARY, 1000, 777);
	cc_state   *s = new_state(&p);
	int64_t		exact = 0;
	int			bad = 0;

	seeded_rng_init(&r, 52);
	for (int64_t t = 1; t <= 777; t++)
	{
		int64_t		x = (int64_t) cc_uniform_below(&r.rng, 1000);

		exact += x;
		cc_push(s, x, &r.rng);
		bad += s->noisy != exact;
	}
	CHECK(bad == 0, "%d inexact partial sums without noise", bad);
	free(s);
}

/* Parameters, and a state of the h nodes of one leaf: O(log T). */
static void
test_state(void)
{
	cc_params	small = params_for(CC_SMOOTH_BINARY, 1.0, 1024);
	cc_params	large = params_for(CC_SMOOTH_BINARY, 1.0, INT64_C(1) << 40);
	cc_params	p = params_for(CC_SMOOTH_BINARY, 1.0, 0);
	seeded_rng	r;
	cc_state   *s;
	cc_kind		kind;
	int			bad = 0;

	CHECK(cc_kind_from_name("smooth_binary", &kind) && kind == CC_SMOOTH_BINARY, "name");
	CHECK(cc_params_prepare(&p) == CC_NEED_HORIZON, "smooth_binary without horizon");
	cc_params_prepare(&small);
	cc_params_prepare(&large);
	/* h = 14 and 44 */
	CHECK(cc_state_size(&large) - cc_state_size(&small) == 30 * sizeof(cc_tree_node) &&
		  cc_state_size(&small) == sizeof(cc_state) + sizeof(cc_smooth_part) +
		  14 * sizeof(cc_tree_node),
		  "sizes %zu and %zu", cc_state_size(&small), cc_state_size(&large));

	/* 2^62 steps need h = 66: leaves beyond 64 bits, Laplace(33 Delta / epsilon) */
	p = params_for(CC_SMOOTH_BINARY, 1e-6, CC_MAX_HORIZON);
	p.sensitivity = CC_MAX_SENSITIVITY;
	CHECK(cc_params_prepare(&p) == CC_OK && cc_state_size(&p) <= CC_STATE_MAX_BYTES,
		  "smooth_binary at its extremes: %zu bytes", cc_state_size(&p));
	p = params_for(CC_SMOOTH_BINARY, 1.0, CC_MAX_HORIZON);
	s = new_state(&p);
	CHECK(((cc_smooth_part *) cc_state_part(s))->height == 66 && smooth_binary_height(CC_MAX_HORIZON) == 66,
		  "height for 2^62");

	/* far into the stream: the leaves stay of weight 33 across the 64th bit */
	seeded_rng_init(&r, 53);
	for (int t = 1; t <= 2000; t++)
	{
		cc_smooth_part *part = cc_state_part(s);

		cc_push(s, 1, &r.rng);
		bad += __builtin_popcountll(part->leaf_low) + __builtin_popcountll(part->leaf_high) != 33;
	}
	CHECK(bad == 0 && cc_exact_count(s) == 2000, "%d leaves of another weight", bad);
	free(s);
}

/* A state read back from storage: its leaf must be l_(t+1) of its height. */
static void
test_state_valid(void)
{
	seeded_rng r;
	cc_params	p = params_for(CC_SMOOTH_BINARY, 0.5, 500);
	cc_state   *s = new_state(&p);
	cc_smooth_part *part = cc_state_part(s);
	size_t		size = cc_state_bytes(s);
	char	   *copy = malloc(size + 1);
	bool		all_valid = cc_state_valid(s, size);

	seeded_rng_init(&r, 55);
	for (int t = 1; t <= 300; t++)
	{
		cc_push(s, t % 4, &r.rng);
		all_valid &= cc_state_valid(s, size);
	}
	CHECK(all_valid, "a state as written refused");
	/* unaligned, as a bytea may hold it */
	memcpy(copy + 1, s, size);
	CHECK(cc_state_valid(copy + 1, size), "an unaligned state refused");
	part->leaf_low = leaves_after(part->leaf_low);
	CHECK(!cc_state_valid(s, size), "a state one leaf ahead of its step");
	part->leaf_low = 0x3ff;		/* weight 10, not 6 */
	CHECK(!cc_state_valid(s, size), "a leaf of another weight");
	part->leaf_low = (UINT64_C(0x3f) << 60);	/* beyond the 12-bit tree */
	CHECK(!cc_state_valid(s, size), "a leaf beyond the tree");
	part->height = 200;
	CHECK(!cc_state_valid(s, size), "a state of another height");
	free(copy);
	free(s);
}

/* The figure README quotes: the variance at every step of T = 2^20, epsilon 1. */
static void
test_figures(void)
{
	const int64_t T = INT64_C(1) << 20;
	cc_params	p = params_for(CC_SMOOTH_BINARY, 1.0, T);
	cc_state   *s = new_state(&p);
	seeded_rng	r;
	double		lowest = 1e300;
	double		highest = 0.0;

	seeded_rng_init(&r, 54);
	for (int64_t t = 1; t <= T; t++)
	{
		cc_release rel;

		cc_push(s, 0, &r.rng);
		cc_read(s, &rel);
		if (rel.variance < lowest)
			lowest = rel.variance;
		if (rel.variance > highest)
			highest = rel.variance;
	}
	printf("T = 2^20, epsilon 1: smooth_binary variance %.1f at every step\n", highest);
	CHECK(lowest == highest && highest <= 3460, "smooth_binary variance %g to %g", lowest, highest);
	free(s);
}

void
test_smooth_binary(void)
{
	test_replay();
	check_sensitivity(69);		/* h = 8, every leaf but one */
	check_sensitivity(251);		/* h = 10, likewise */
	check_sensitivity(100);		/* h = 10, part of the tree */
	test_zero_noise();
	test_state();
	test_state_valid();
	test_figures();
}
