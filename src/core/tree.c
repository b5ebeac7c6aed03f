/*
 * tree.c
 *		The dyadic tree of noisy partial sums that the binary, hybrid and
 *		Honaker mechanisms, the continual mean and the windows build on, and
 *		the count of its steps by popcount, which classes their bounds.
 *
 * Below every mechanism in the core's order (README.md): the mechanisms use
 * it without using one another.
 */
#include "mechanism_int.h"

int64_t
cc_tree_levels(int64_t n)
{
	return 64 - __builtin_clzll((unsigned long long) n);
}

void
cc_tree_init(cc_tree *tree, int64_t levels)
{
	tree->levels = levels;
	tree->t = 0;
	tree->noisy = 0;
	for (int64_t i = 0; i < levels; i++)
		cc_tree_nodes(tree)[i] = (cc_tree_node)
		{
			0, 0
		};
}

cc_status
cc_tree_push(cc_tree *tree, int64_t x, cc_scale scale, cc_rng *rng)
{
	cc_tree_node *node = cc_tree_nodes(tree);
	int64_t		t = ++tree->t;
	int			closing = __builtin_ctzll((unsigned long long) t);
	int64_t		exact = x;
	int64_t		dropped = 0;

	/*
	 * Step t closes the interval of level ctz(t), which covers the intervals
	 * below it (the set low bits of t - 1) and x.  Their noisy sums leave the
	 * release and the new node's enters it.
	 */
	for (int i = 0; i < closing; i++)
	{
		exact += node[i].exact; /* a part of the exact total: cannot overflow */
		if (!cc_add(dropped, node[i].noisy, &dropped))
			return CC_OVERFLOW;
		node[i].exact = 0;
		node[i].noisy = 0;
	}
	node[closing].exact = exact;
	if (!cc_add(exact, cc_discrete_laplace(rng, scale), &node[closing].noisy) ||
		__builtin_sub_overflow(tree->noisy, dropped, &tree->noisy) ||
		!cc_add(tree->noisy, node[closing].noisy, &tree->noisy))
		return CC_OVERFLOW;
	return CC_OK;
}

int64_t
cc_count_popcount(int64_t n, int k)
{
	int64_t		count = 0;
	int			ones = 0;

	if (k <= 0 || n <= 0)
		return 0;
	/* below n: for each set bit i, n's higher bits, a 0 at i, any below */
	for (int i = 62; i >= 0; i--)
	{
		if (((n >> i) & 1) == 0)
			continue;
		if (k - ones >= 0 && k - ones <= i)
		{
			uint64_t	choose = 1;

			/* C(i, k - ones), at most C(62, 31) < 2^63 */
			for (int j = 1; j <= k - ones; j++)
				choose = choose * (uint64_t) (i - (k - ones) + j) / (uint64_t) j;
			count += (int64_t) choose;
		}
		ones++;
	}
	return count + (ones == k ? 1 : 0);
}

int
cc_popcount_classes(const cc_params *params, int64_t group, int64_t *segments, cc_class *out)
{
	int			n = 0;

	(void) group;
	*segments = params->horizon;
	for (int k = 1; k <= cc_tree_levels(params->horizon); k++)
	{
		int64_t		steps = cc_count_popcount(params->horizon, k);

		if (steps > 0)
			out[n++] = (cc_class) {k, steps};
	}
	return n;
}
