/*
 * test_honaker.c
 *		The Honaker mechanism against a tree built from its definition.
 */
#include "unit.h"
#include "mechanism_int.h"
#include "gaussian.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum
{
	REPLAY_T = 1000, REPLAY_LEVELS = 10
};

static int64_t
denominator(int d)
{
	return (INT64_C(2) << d) - 1;
}

/* the noise of a node, as the reference draws it */
typedef int64_t (*node_draw) (cc_rng *rng, cc_scale scale);

static int64_t
gaussian_draw(cc_rng *rng, cc_scale sigma2)
{
	int64_t		z = 0;

	cc_dgauss_draw(rng, sigma2, &z);
	return z;
}

/*
 * Replay the mechanism's draws on a whole tree: a copy of its random source
 * draws each node's noise once, in the order the mechanism must draw them
 * (step by step, from the leaf up to the highest interval closing), and every
 * node's estimate is computed from its definition over the whole subtree,
 * D_d E_d = sum over levels j <= d of 2^j times the level's noisy sums.
 * Every live node must hold exactly that estimate, as whole + frac / D_d, and
 * its exact sum; every other node must be zero; the release must be the
 * estimate rounded.  A node redrawn, a draw too many or too few, or a wrong
 * weight breaks the equalities from that step on.
 */
static void
test_replay(cc_params p, node_draw draw)
{
	seeded_rng mech_rng;
	seeded_rng ref_rng;
	seeded_rng items_rng;
	cc_state   *s = new_state(&p);
	const cc_honaker_node *node = cc_honaker_nodes((cc_honaker_part *) cc_state_part(s));
	static int64_t items[REPLAY_T + 1];
	static int64_t prefix[REPLAY_T + 1];

	/* scaled[j][i]: D_j E of the node of level j ending at step i 2^j */
	static __int128 scaled[REPLAY_LEVELS][REPLAY_T + 1];
	int			bad_nodes = 0;
	int			bad_releases = 0;
	int			bad_rounding = 0;

	seeded_rng_init(&mech_rng, 40);
	seeded_rng_init(&ref_rng, 40);
	seeded_rng_init(&items_rng, 41);
	prefix[0] = 0;
	for (int64_t t = 1; t <= REPLAY_T; t++)
	{
		int			closing = __builtin_ctzll(t);
		int64_t		wholes = 0;
		double		fractions = 0.0;
		long double estimate = 0.0L;

		items[t] = (int64_t) cc_uniform_below(&items_rng.rng, 5);
		prefix[t] = prefix[t - 1] + items[t];
		cc_push(s, items[t], &mech_rng.rng);

		for (int j = 0; j <= closing; j++)
		{
			int64_t		i = t >> j;
			int64_t		sum = prefix[t] - prefix[t - (INT64_C(1) << j)];
			__int128	own = (__int128) (sum + draw(&ref_rng.rng, s->scale)) *
				((__int128) 1 << j);

			scaled[j][i] = j == 0 ? own : own + scaled[j - 1][2 * i - 1] + scaled[j - 1][2 * i];
		}

		for (int d = 0; d < REPLAY_LEVELS; d++)
		{
			if (t & (INT64_C(1) << d))
			{
				__int128	sc = scaled[d][t >> d];
				int64_t		end = (t >> d) << d;
				int64_t		whole = (int64_t) (sc / denominator(d));
				int64_t		frac = (int64_t) (sc % denominator(d));

				if (frac < 0)
				{
					frac += denominator(d);
					whole--;
				}
				bad_nodes += node[d].whole != whole || node[d].frac != frac ||
					node[d].exact != prefix[end] - prefix[end - (INT64_C(1) << d)];
				wholes += whole;
				fractions += (double) frac / (double) denominator(d);
				estimate += (long double) sc / denominator(d);
			}
			else
				bad_nodes += node[d].exact != 0 || node[d].whole != 0 || node[d].frac != 0;
		}
		bad_releases += s->noisy != wholes + (int64_t) floor(fractions + 0.5) ||
			cc_exact_count(s) != prefix[t];
		bad_rounding += fabsl((long double) s->noisy - estimate) > 0.5L + 1e-9L;
	}
	CHECK(bad_nodes == 0, "%s: %d node reads differ from the tree's definition",
		  cc_kind_name(p.kind), bad_nodes);
	CHECK(bad_releases == 0, "%s: %d releases not the rounded sum of the live estimates",
		  cc_kind_name(p.kind), bad_releases);
	CHECK(bad_rounding == 0, "%s: %d releases more than 1/2 from the estimate",
		  cc_kind_name(p.kind), bad_rounding);
	/* as many draws as the replay: the two sources are at the same word */
	CHECK(cc_next_word(&mech_rng.rng) == cc_next_word(&ref_rng.rng),
		  "%s: the mechanism drew other than once per node", cc_kind_name(p.kind));
	free(s);
}

/*
 * With epsilon 1000 every draw is 0 (but with probability below e^-100
 * each), and with rho 1000 too: sigma^2 = 10 / 2000, and P(X != 0) is about
 * 2 exp(-1 / (2 sigma^2)) = 2 e^-100.
 */
static void
test_zero_noise(cc_params p)
{
	seeded_rng r;
	cc_state   *s = new_state(&p);
	const cc_honaker_node *node = cc_honaker_nodes((cc_honaker_part *) cc_state_part(s));
	int64_t		exact = 0;
	int			bad = 0;

	seeded_rng_init(&r, 42);
	for (int64_t t = 1; t <= 777; t++)
	{
		int64_t		x = (int64_t) cc_uniform_below(&r.rng, 1000);

		exact += x;
		cc_push(s, x, &r.rng);
		bad += s->noisy != exact;
		for (int d = 0; d < 10; d++)
			bad += node[d].whole != node[d].exact || node[d].frac != 0;
	}
	CHECK(bad == 0, "%s: %d inexact partial sums without noise", cc_kind_name(p.kind), bad);
	free(s);
}

/*
 * A state read back is checked (cc_state_valid): valid as written at every
 * step, and not with its live sums off by one, a node of a level that is not
 * live set, or a live node's fraction out of [0, D_d).
 */
static void
test_part_valid(cc_params p)
{
	seeded_rng r;
	cc_state   *s = new_state(&p);
	size_t		size = cc_state_size(&p);
	char	   *copy = malloc(size);
	cc_honaker_part *part = (cc_honaker_part *) ((char *) copy + ((char *) cc_state_part(s) - (char *) s));
	cc_honaker_node *node = cc_honaker_nodes(part);
	int			invalid = 0;

	seeded_rng_init(&r, 44);
	for (int64_t t = 1; t <= 300; t++)
	{
		cc_push(s, (int64_t) cc_uniform_below(&r.rng, 3), &r.rng);
		invalid += !cc_state_valid(s, size);
	}
	CHECK(invalid == 0, "%s: %d states invalid as written", cc_kind_name(p.kind), invalid);

	/* t = 300 = 100101100b: levels 2, 3, 5 and 8 live */
	memcpy(copy, s, size);
	part->live_whole++;
	CHECK(!cc_state_valid(copy, size), "%s: live wholes off by one", cc_kind_name(p.kind));
	memcpy(copy, s, size);
	part->live_fixed--;
	CHECK(!cc_state_valid(copy, size), "%s: live fractions off by one", cc_kind_name(p.kind));
	memcpy(copy, s, size);
	node[4].exact = 1;
	CHECK(!cc_state_valid(copy, size), "%s: a node set at a level not live", cc_kind_name(p.kind));
	memcpy(copy, s, size);
	node[5].frac = denominator(5);
	CHECK(!cc_state_valid(copy, size), "%s: a fraction of D_d", cc_kind_name(p.kind));
	memcpy(copy, s, size);
	node[3].frac = -1;
	CHECK(!cc_state_valid(copy, size), "%s: a negative fraction", cc_kind_name(p.kind));
	memcpy(copy, s, size);
	CHECK(cc_state_valid(copy, size), "%s: the copy itself", cc_kind_name(p.kind));
	free(copy);
	free(s);
}

/* Parameters and state: as the binary mechanism's, 24 bytes a level. */
static void
test_state(void)
{
	cc_params	small = params_for(CC_HONAKER, 1.0, 1024);
	cc_params	large = params_for(CC_HONAKER, 1.0, INT64_C(1) << 40);
	cc_params	p = params_for(CC_HONAKER, 1.0, 0);
	cc_kind		kind;

	CHECK(cc_kind_from_name("honaker", &kind) && kind == CC_HONAKER, "name");
	CHECK(cc_params_prepare(&p) == CC_NEED_HORIZON, "honaker without horizon");
	cc_params_prepare(&small);
	cc_params_prepare(&large);
	CHECK(cc_state_size(&large) - cc_state_size(&small) == 30 * sizeof(cc_honaker_node) &&
		  cc_state_size(&small) == sizeof(cc_state) + sizeof(cc_honaker_part) +
		  11 * sizeof(cc_honaker_node),
		  "sizes %zu and %zu", cc_state_size(&small), cc_state_size(&large));
	p = params_for(CC_HONAKER, 1e-6, CC_MAX_HORIZON);
	p.sensitivity = CC_MAX_SENSITIVITY;
	CHECK(cc_params_prepare(&p) == CC_OK && cc_state_size(&p) <= CC_STATE_MAX_BYTES,
		  "honaker at its extremes: %zu bytes", cc_state_size(&p));
}

/*
 * The figures README quotes, from the closed form the state reports: at
 * T = 2^20 and epsilon 1, the variance averaged over t and at its worst
 * step, against the binary mechanism's.
 */
static void
test_figures(void)
{
	const int64_t T = INT64_C(1) << 20;
	cc_params	hp = params_for(CC_HONAKER, 1.0, T);
	cc_params	bp = params_for(CC_BINARY, 1.0, T);
	cc_state   *h = new_state(&hp);
	cc_state   *b = new_state(&bp);
	seeded_rng r;
	double		h_sum = 0.0;
	double		h_worst = 0.0;
	double		b_sum = 0.0;

	seeded_rng_init(&r, 43);
	for (int64_t t = 1; t <= T; t++)
	{
		cc_release rel;

		cc_push(h, 0, &r.rng);
		b->t = t;				/* binary's variance depends on t alone */
		cc_read(h, &rel);
		h_sum += rel.variance;
		if (rel.variance > h_worst)
			h_worst = rel.variance;
		cc_read(b, &rel);
		b_sum += rel.variance;
	}
	printf("T = 2^20, epsilon 1: honaker variance mean %.1f worst %.1f; binary mean %.1f\n",
		   h_sum / T, h_worst, b_sum / T);
	CHECK(h_sum / T <= 4800 && h_worst < 9530, "honaker mean %g worst %g", h_sum / T, h_worst);
	CHECK(fabs(b_sum / T - 8818.3) < 0.1, "binary mean %g", b_sum / T);
	free(h);
	free(b);
}

void
test_honaker(void)
{
	test_replay(params_for(CC_HONAKER, 0.7, REPLAY_T), cc_discrete_laplace);
	test_replay(params_zcdp(CC_GAUSSIAN_HONAKER, 0.3, REPLAY_T), gaussian_draw);
	test_zero_noise(params_for(CC_HONAKER, 1000, 777));
	test_zero_noise(params_zcdp(CC_GAUSSIAN_HONAKER, 1000, 777));
	test_part_valid(params_for(CC_HONAKER, 0.7, 1000));
	test_part_valid(params_zcdp(CC_GAUSSIAN_HONAKER, 0.3, 1000));
	test_state();
	test_figures();
}
