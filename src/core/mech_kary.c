/*
 * mech_kary.c
 *		The k-ary tree with negative digits of Andersson, Pagh, Steiner and
 *		Torkamani ("Count on Your Elders: Laplace vs Gaussian Noise", FORC
 *		2025): the binary tree's pure-DP successor.
 *
 * k is odd, c = (k - 1) / 2, and h is the fewest levels with (k^h - 1) / 2 >=
 * T, so that every t in 1 .. T has h balanced base-k digits d_j in [-c, c],
 * t = sum d_j k^j.  Level j cuts the steps into blocks of k^j steps, and each
 * block's sum gets its own discrete Laplace draw of scale h Delta / epsilon:
 * a unit's items lie in one block a level, so the blocks' L1 sensitivity is
 * h Delta.  Read from the top digit down, the prefix p_j = sum_(i >= j) d_i
 * k^i moves by d_j k^j at level j: it adds the d_j blocks after p_(j+1), or
 * subtracts the |d_j| blocks before it.  Those end after t, but their items
 * after t were added by a higher level and cancel: the release is the exact
 * running count plus the signed sum of sum_j |d_j| draws, of variance
 * sum_j |d_j| Var(DLap(h Delta / epsilon)), about 2 h^2 sum_j |d_j| Delta^2 /
 * epsilon^2.  Why this is epsilon-DP even when the stream depends on earlier
 * releases: docs/kary-privacy.md.
 *
 * The blocks level j uses at t lie in the level-(j + 1) interval (a k^(j+1),
 * (a + 1) k^(j+1)] that holds t: its first d_j blocks when d_j > 0, its last
 * |d_j| when d_j < 0 (the middle one is never used).  So a level keeps the k
 * draws of that interval (as prefix sums), drawn when t enters it, t's digit
 * and the level's share of the noise.  A step changes the digits of its
 * carry and redraws the levels whose interval it enters, O(1) amortized (k
 * draws a level every k^(j+1) steps), and the release is the exact count plus
 * the shares' sum.  State: (k + 2) words a level, which the choice of k keeps
 * within CC_STATE_MAX_BYTES.
 */
#include "mechanism_int.h"

#include <string.h>

/* the largest k the choice weighs; a caller may name any odd k that fits */
#define KARY_MAX_CHOICE 63

typedef struct kary_part
{
	int64_t		arity;			/* k */
	int64_t		levels;			/* h */
	int64_t		noise;			/* the release's noise: the shares' sum */
	int64_t		draws;			/* and its draws, sum |d_j| */
	/* followed by levels times (digit, share, k prefix sums of draws) */
} kary_part;

#define KARY_LEVEL_WORDS(k) ((k) + 2)
#define kary_level(part, j) \
	((int64_t *) ((part) + 1) + (j) * KARY_LEVEL_WORDS((part)->arity))

int64_t
cc_kary_levels(int64_t arity, int64_t horizon)
{
	unsigned __int128 power = (unsigned __int128) arity;
	int64_t		levels = 1;

	while ((power - 1) / 2 < (unsigned __int128) horizon)
	{
		power *= (unsigned __int128) arity;
		levels++;
	}
	return levels;
}

static size_t
part_bytes(int64_t arity, int64_t horizon)
{
	return sizeof(kary_part) +
		(size_t) (cc_kary_levels(arity, horizon) * KARY_LEVEL_WORDS(arity)) * sizeof(int64_t);
}

/* Does an odd k >= 3 give a state within CC_STATE_MAX_BYTES? */
static bool
arity_fits(int64_t arity, int64_t horizon)
{
	return arity >= 3 && arity % 2 == 1 && arity <= CC_STATE_MAX_BYTES / 8 &&
		sizeof(cc_state) + part_bytes(arity, horizon) <= CC_STATE_MAX_BYTES;
}

void
cc_kary_digits(int64_t arity, int64_t levels, int64_t t, int64_t *digits)
{
	unsigned __int128 power = 1;
	unsigned __int128 u;

	/* t + (k^h - 1) / 2 has the plain digits d_j + c */
	for (int64_t j = 0; j < levels; j++)
		power *= (unsigned __int128) arity;
	u = (power - 1) / 2 + (unsigned __int128) t;
	for (int64_t j = 0; j < levels; j++)
	{
		digits[j] = (int64_t) (u % (unsigned __int128) arity) - (arity - 1) / 2;
		u /= (unsigned __int128) arity;
	}
}

/* sum |d_j|: the draws in the release at t */
static int64_t
draws_at(int64_t k, int64_t h, int64_t t)
{
	int64_t		digits[CC_KARY_MAX_LEVELS];
	int64_t		draws = 0;

	cc_kary_digits(k, h, t, digits);
	for (int64_t j = 0; j < h; j++)
		draws += digits[j] < 0 ? -digits[j] : digits[j];
	return draws;
}

/*
 * How many u in 0 .. n - 1, read as h plain base-k digits e_j, have each
 * cost sum |e_j - c|, added into out (or taken out): for every digit of n,
 * those that agree with n above it and are smaller there, their lower
 * digits free.  strings[j][s] counts the j-digit strings of cost s.  n may
 * pass 2^64 (k^h <= 2 k T), but every count is below 2^63: the sums wrap
 * modulo 2^64 and come out exact.
 */
static void
costs_below(unsigned __int128 n, int64_t k, int64_t h,
			uint64_t strings[][CC_KARY_MAX_DRAWS + 1], bool add, uint64_t *out)
{
	int64_t		digits[CC_KARY_MAX_LEVELS];
	int64_t		above = 0;
	int64_t		c = (k - 1) / 2;

	for (int64_t j = 0; j < h; j++, n /= (unsigned __int128) k)
		digits[j] = (int64_t) (n % (unsigned __int128) k);
	for (int64_t j = h - 1; j >= 0; j--)
	{
		for (int64_t e = 0; e < digits[j]; e++)
			for (int64_t s = 0; s <= j * c; s++)
			{
				uint64_t   *cell = &out[above + (e > c ? e - c : c - e) + s];

				*cell = add ? *cell + strings[j][s] : *cell - strings[j][s];
			}
		above += digits[j] > c ? digits[j] - c : c - digits[j];
	}
}

int64_t
cc_kary_draw_counts(int64_t k, int64_t horizon, int64_t *counts)
{
	uint64_t	strings[CC_KARY_MAX_LEVELS][CC_KARY_MAX_DRAWS + 1];
	uint64_t	sums[CC_KARY_MAX_DRAWS + 1] = {0};
	int64_t		h = cc_kary_levels(k, horizon);
	int64_t		c = (k - 1) / 2;
	unsigned __int128 middle = 0;

	/* strings[j] for j < h: at most k^(h-1) <= 2T of them */
	memset(strings, 0, sizeof(strings));
	strings[0][0] = 1;
	for (int64_t j = 1; j < h; j++)
		for (int64_t s = 0; s <= (j - 1) * c; s++)
			for (int64_t e = -c; e <= c; e++)
				strings[j][s + (e < 0 ? -e : e)] += strings[j - 1][s];
	for (int64_t j = 0; j < h; j++)
		middle = middle * (unsigned __int128) k + (unsigned __int128) c;
	/* t = 1 .. T are middle + 1 .. middle + T: those below middle + T + 1 */
	costs_below(middle + (unsigned __int128) horizon, k, h, strings, true, sums);
	costs_below(middle + 1, k, h, strings, false, sums);
	sums[draws_at(k, h, horizon)]++;
	for (int64_t s = 0; s <= h * c; s++)
		counts[s] = (int64_t) sums[s];
	return h * c;
}

/* Sum and largest of the draws sum |d_j| over t = 1 .. T (choice.c). */
void
cc_kary_draws_over_horizon(int64_t k, int64_t horizon, double *sum, int64_t *most)
{
	int64_t		counts[CC_KARY_MAX_DRAWS + 1];
	int64_t		top = cc_kary_draw_counts(k, horizon, counts);

	*sum = 0.0;
	*most = 0;
	for (int64_t s = 0; s <= top; s++)
	{
		*sum += (double) s * (double) counts[s];
		if (counts[s] > 0)
			*most = s;
	}
}

/*
 * Check a k given, or choose the k of least mean variance over the horizon:
 * h^2 times the mean of sum |d_j| (a draw's variance grows with its scale h
 * Delta / epsilon), among the odd k up to KARY_MAX_CHOICE whose state fits.
 * From the public parameters only.
 */
cc_status
cc_kary_prepare(cc_params *params)
{
	double		best = 0.0;
	bool		found = false;

	if (params->has_block)
		return arity_fits(params->block, params->horizon) ? CC_OK : CC_BAD_BLOCK;
	for (int64_t k = 3; k <= KARY_MAX_CHOICE; k += 2)
	{
		int64_t		h = cc_kary_levels(k, params->horizon);
		double		sum;
		int64_t		most;

		if (!arity_fits(k, params->horizon))
			continue;
		cc_kary_draws_over_horizon(k, params->horizon, &sum, &most);
		if (!found || (double) (h * h) * sum < best)
		{
			best = (double) (h * h) * sum;
			params->block = k;
			found = true;
		}
	}
	/* k = 3 fits every horizon: 40 levels of 5 words at 2^62 */
	params->has_block = found;
	return found ? CC_OK : CC_BAD_BLOCK;
}

static uint64_t
kary_multiplier(const cc_params *params)
{
	return (uint64_t) cc_kary_levels(params->block, params->horizon);
}

static size_t
kary_size(const cc_params *params)
{
	return part_bytes(params->block, params->horizon);
}

static void
kary_init(cc_state *state)
{
	kary_part  *part = cc_state_part(state);

	part->arity = state->params.block;
	part->levels = cc_kary_levels(state->params.block, state->params.horizon);
}

/* A level's share of the noise: its signed draws, from its prefix sums. */
static bool
level_share(int64_t k, const int64_t *level, int64_t *share)
{
	int64_t		digit = level[0];
	const int64_t *prefix = level + 2;

	if (digit >= 0)
	{
		*share = digit == 0 ? 0 : prefix[digit - 1];
		return true;
	}
	/* minus the last |d| draws */
	return !__builtin_sub_overflow(prefix[k - 1 + digit], prefix[k - 1], share);
}

/* t enters a new interval of level j + 1: the k draws of level j's blocks */
static cc_status
redraw(const cc_state *state, int64_t *level, cc_rng *rng)
{
	int64_t		sum = 0;

	for (int64_t i = 0; i < state->params.block; i++)
	{
		if (!cc_add(sum, cc_discrete_laplace(rng, state->scale), &sum))
			return CC_OVERFLOW;
		level[2 + i] = sum;
	}
	return CC_OK;
}

/* The balanced digits of t - 1 plus one: how many levels the carry changed. */
static int64_t
increment_digits(kary_part *part)
{
	int64_t		c = (part->arity - 1) / 2;
	int64_t		j = 0;

	/* t <= (k^h - 1) / 2: the carry stops below level h */
	while (++kary_level(part, j)[0] > c)
		kary_level(part, j++)[0] = -c;
	/* c became -c below level j, of the same size; d_j moved away from 0 or toward it */
	part->draws += kary_level(part, j)[0] > 0 ? 1 : -1;
	return j + 1;
}

static cc_status
kary_push(cc_state *state, int64_t x, cc_rng *rng)
{
	kary_part  *part = cc_state_part(state);
	int64_t		changed = increment_digits(part);
	int64_t		fresh = 0;
	uint64_t	before = (uint64_t) state->t - 1;

	(void) x;					/* the exact count is the header's */
	/* levels j whose interval of k^(j+1) steps starts at t: all at t = 1 */
	while (fresh < part->levels && (before == 0 || before % (uint64_t) part->arity == 0))
	{
		cc_status	status = redraw(state, kary_level(part, fresh), rng);

		if (status != CC_OK)
			return status;
		before /= (uint64_t) part->arity;
		fresh++;
	}
	for (int64_t j = 0; j < (changed > fresh ? changed : fresh); j++)
	{
		int64_t    *level = kary_level(part, j);

		if (__builtin_sub_overflow(part->noise, level[1], &part->noise) ||
			!level_share(part->arity, level, &level[1]) ||
			!cc_add(part->noise, level[1], &part->noise))
			return CC_OVERFLOW;
	}
	return cc_add(state->exact, part->noise, &state->noisy) ? CC_OK : CC_OVERFLOW;
}

/* sum |d_j| at the current step, kept by the state */
static int64_t
state_draws(const cc_state *state)
{
	return ((const kary_part *) cc_state_part(state))->draws;
}

static int
kary_terms(const cc_state *state, cc_term *terms)
{
	terms[0].count = state_draws(state);
	terms[0].scale = state->scale;
	terms[0].variance = state->scale_variance;
	return 1;
}

/* The bound: every step a segment, of the class of its draws sum |d_j|. */
static void
kary_bound_class(const cc_state *state, int64_t *group, int64_t *key)
{
	*group = 0;
	*key = state_draws(state);
}

static int
kary_bound_classes(const cc_params *params, int64_t group, int64_t *segments, cc_class *out)
{
	int64_t		counts[CC_KARY_MAX_DRAWS + 1];
	int64_t		top = cc_kary_draw_counts(params->block, params->horizon, counts);
	int			n = 0;

	(void) group;
	*segments = params->horizon;
	for (int64_t s = 1; s <= top; s++)
		if (counts[s] > 0)
			out[n++] = (cc_class) {s, counts[s]};
	return n;
}

/* key draws of the main scale, summed exactly (their signs do not matter) */
static void
kary_bound_tail(const cc_params *params, int64_t group, int64_t key, cc_tail *tail)
{
	(void) group;
	cc_tail_exact(tail, key, params, kary_multiplier(params));
}

/*
 * A part read back: its k and h the parameters', its digits t's (they index
 * the prefix sums) and so its count of draws, and every share and the noise
 * what the draws make.
 */
static bool
kary_part_valid(const cc_params *params, int64_t t, const void *bytes)
{
	int64_t		words[CC_STATE_MAX_BYTES / sizeof(int64_t)];
	kary_part  *part = (kary_part *) words;
	int64_t		digits[CC_KARY_MAX_LEVELS];
	int64_t		noise = 0;

	memcpy(words, bytes, kary_size(params));
	if (part->arity != params->block ||
		part->levels != cc_kary_levels(params->block, params->horizon))
		return false;
	cc_kary_digits(part->arity, part->levels, t, digits);
	for (int64_t j = 0; j < part->levels; j++)
	{
		int64_t    *level = kary_level(part, j);
		int64_t		share;

		if (level[0] != digits[j] || !level_share(part->arity, level, &share) ||
			share != level[1] || !cc_add(noise, share, &noise))
			return false;
	}
	return noise == part->noise && part->draws == draws_at(part->arity, part->levels, t);
}

const cc_mechanism_ops cc_kary_ops = {
	.name = "kary",
	.needs_horizon = true,
	.main_multiplier = kary_multiplier,
	.part_size = kary_size,
	.init = kary_init,
	.push = kary_push,
	.terms = kary_terms,
	.bound_class = kary_bound_class,
	.bound_classes = kary_bound_classes,
	.bound_tail = kary_bound_tail,
	.part_valid = kary_part_valid,
};
