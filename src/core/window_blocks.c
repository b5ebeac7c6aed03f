/*
 * window_blocks.c
 *		The arithmetic of CC_WINDOW_BLOCKS (window.c keeps its state), two
 *		levels or three: which blocks a window touches, its variance, its
 *		sum over a horizon, the choice of K (K1, K2) and the log moment
 *		generating function of its noise.
 *
 * The nodes are every step (level 0) and every aligned block of K steps,
 * block b holding steps b K + 1 .. (b + 1) K (level 1).  A unit's events
 * lie in one node of each level, so adding or removing Delta of them moves
 * the vector of all nodes by at most 2 Delta in L1, and discrete Laplace
 * noise of scale 2 Delta / epsilon on every node makes that vector
 * epsilon-DP; every window is a linear function of the noisy nodes, so the
 * whole series of windows is too (docs/kary-privacy.md#windows has the
 * argument for streams that depend on earlier releases, which holds for
 * any such linear function).
 *
 * Each window is the least-squares (best linear unbiased) estimate from the
 * noisy nodes.  Write B for the nodes' matrix over the steps, so the noisy
 * nodes are B x + z; the estimate of a x (a the window's indicator) is
 * a (B'B)^-1 B' (B x + z) = a x + r z with r B = a.  B'B is block diagonal,
 * I + 1 1' on each block's K steps, whose inverse is I - 1 1' / (K + 1), so
 * a block holding q of the window's steps Q contributes
 *		sum_(i in Q) z_i + q / (K + 1) (Z_b - sum_(i in block b) z_i)
 * to the noise (z_i the steps' draws, Z_b the block's), whose variance is
 *		q (K + 1 - q) / (K + 1)
 * draws' (q = K: K / (K + 1), less than the block alone).  Blocks that hold
 * none of the window's steps contribute nothing, and different blocks'
 * shares are independent.  A window touches one or two partial blocks at
 * its ends and the full ones between, so its variance is about W / K + K / 3
 * draws, least at K about sqrt(3 W): twice the draws' variance of a
 * one-level window, but far fewer of them than a tree's two ends need.
 *
 * The steps' draws of a block are used before the steps exist (the window
 * at t uses every draw of t's block): their items cancel in r B = a, so
 * the release is the exact window plus r z, as for kary's blocks that end
 * after t.
 *
 * From t = W on, adding K to t moves the window by one block: the variance
 * is periodic with period K.  Before W the window is steps 1 .. t, m full
 * blocks and r steps of the next (t = m K + r).  Hence the sum over a
 * horizon in O(K) time, and the choice of K in O(K_max^2).
 *
 * Three levels add every aligned superblock of K2 blocks (n = K1 K2 steps),
 * each with its own draw; a unit's events lie in three nodes, so the scale
 * is 3 Delta / epsilon.  B'B is block diagonal by superblock, and its
 * inverse has a closed form: estimate bottom up, u_b = (K1 Z_b + s_b) / D1
 * for a block (s_b the sum of its steps' draws, D1 = K1 + 1) and
 * u_S = (n Z_S + D1 sum_b u_b) / D2 for a superblock (D2 = n + K1 + 1),
 * then spread each node's correction evenly down to its steps (the steps
 * and blocks below a node have equal variances).  The window's noise is
 *		sum of its steps' z_i + sum_b q_b E_b / D1 + sum_S P_S F_S / (D1 D2)
 * with E_b = Z_b - s_b, M_b = K1 E_b + D1 s_b, F_S = D1 Z_S - sum_(b in S) M_b,
 * q_b and P_S the window's steps in block b and superblock S: integers
 * over D1 D2, so the release is again the exact window plus r z rounded
 * once.  In draws' variance, a superblock holding P of the window's steps
 * contributes its blocks' q (D1 - q) / D1 less P^2 / (D1 D2) (a whole one
 * n / D2, less than a draw): about W / n + (K1 + K2) / 3 draws, least at
 * K1 = K2 = (3 W)^(1/3), (3 W)^(1/3) draws against 2 sqrt(W / 3) for two levels,
 * each draw of (3/2)^2 times the variance: three levels win from W of
 * about 270.
 * Every weight is below 1 in size: a step's 1 - q_b / D1 - P_S / (D1 D2),
 * its block's q_b / D1 - K1 P_S / (D1 D2), the superblock's P_S / D2.
 * From t = W on, the variance is periodic with period n; before W,
 * t + n adds n / D2 to t's.
 *
 * IDENTIFICATION
 *	  src/core/window_blocks.c
 */
#include <math.h>

#include "mechanism_int.h"
#include "window.h"

/* A block's share of the window's variance, in draws, for q of its steps. */
static double
share(int64_t block, int64_t q)
{
	return (double) q * (double) (block + 1 - q) / (double) (block + 1);
}

void
cc_window_blocks_span(int64_t width, int64_t block, int64_t t, cc_window_span *span)
{
	int64_t		lo = t > width ? t - width + 1 : 1;

	span->first = (lo - 1) / block;
	span->last = (t - 1) / block;
	if (span->first == span->last)
	{
		span->q_first = t - lo + 1;
		span->q_last = 0;
		span->full = 0;
	}
	else
	{
		span->q_first = (span->first + 1) * block - lo + 1;
		span->q_last = t - span->last * block;
		span->full = span->last - span->first - 1;
	}
}

/* Two levels: the window's blocks' shares, sum of q (K + 1 - q) / (K + 1). */
static double
two_level_units(int64_t width, int64_t block, int64_t t)
{
	cc_window_span span;

	cc_window_blocks_span(width, block, t, &span);
	return share(block, span.q_first) + share(block, span.q_last) +
		(double) span.full * share(block, block);
}

/* Three levels: D1 D2, the denominator of a superblock's P^2 */
static double
super_den(int64_t block, int64_t super)
{
	return (double) (block + 1) * (double) (block * super + block + 1);
}

/* Three levels: the sum over the window's superblocks of P^2 (n steps each) */
static double
super_squares(int64_t width, int64_t n, int64_t t)
{
	cc_window_span span;

	cc_window_blocks_span(width, n, t, &span);
	return (double) span.q_first * (double) span.q_first +
		(double) span.q_last * (double) span.q_last +
		(double) span.full * (double) n * (double) n;
}

double
cc_window_blocks_units(int64_t width, int64_t block, int64_t super, int64_t t)
{
	double		units = two_level_units(width, block, t);

	if (super > 0)
		units -= super_squares(width, block * super, t) / super_den(block, super);
	return units;
}

/* Steps 1 .. n before the window's width (t = m K + r, r = 1 .. K). */
static void
prefix_phase(int64_t block, int64_t n, double *sum, double *most)
{
	int64_t		cycles = n / block;
	int64_t		rest = n % block;
	double		whole = share(block, block);
	double		cycle = 0,
				cycle_most = 0,
				rest_sum = 0,
				rest_most = 0;

	for (int64_t r = 1; r <= block; r++)
	{
		cycle += share(block, r);
		cycle_most = fmax(cycle_most, share(block, r));
		if (r <= rest)
		{
			rest_sum += share(block, r);
			rest_most = fmax(rest_most, share(block, r));
		}
	}
	*sum = whole * (double) block * (double) cycles * ((double) cycles - 1) / 2 +
		(double) cycles * cycle + (double) rest * (double) cycles * whole + rest_sum;
	*most = 0;
	if (cycles > 0)
		*most = (double) (cycles - 1) * whole + cycle_most;
	if (rest > 0)
		*most = fmax(*most, (double) cycles * whole + rest_most);
}

/* Two levels: the sum over steps 1 .. horizon and the largest term, in O(K). */
static void
two_level_over_horizon(int64_t width, int64_t block, int64_t horizon,
					   double *sum, double *most)
{
	int64_t		last = width - 1 + block < horizon ? width - 1 + block : horizon;

	prefix_phase(block, width - 1 < horizon ? width - 1 : horizon, sum, most);
	/* from t = W on, each class of t mod K once a period */
	for (int64_t t = width; t <= last; t++)
	{
		double		units = two_level_units(width, block, t);

		*sum += units * (double) (1 + (horizon - t) / block);
		*most = fmax(*most, units);
	}
}

/* sum of i^2 for i = 1 .. n */
static double
squares_to(double n)
{
	return n * (n + 1) * (2 * n + 1) / 6;
}

/*
 * Three levels, steps 1 .. N before the width: sum over t of the P^2 of
 * the window 1 .. t, floor(t / n) n^2 + (t mod n)^2, in closed form.
 */
static double
prefix_squares(int64_t n, int64_t last)
{
	double		cycles = (double) (last / n);
	double		rest = (double) (last % n);
	double		whole = (double) n * cycles * (cycles - 1) / 2 + cycles * (rest + 1);

	return (double) n * (double) n * whole + cycles * squares_to((double) n - 1) +
		squares_to(rest);
}

/*
 * Three levels: the sum over steps 1 .. horizon and the largest term, in
 * O(K1 K2).  Before the width, t + n adds n / D2 (a whole superblock's
 * variance) to t's, so the largest is among the last n steps; from the
 * width on, the terms repeat with period n.
 */
static void
three_level_over_horizon(int64_t width, int64_t block, int64_t super, int64_t horizon,
						 double *sum, double *most)
{
	int64_t		n = block * super;
	int64_t		prefix = width - 1 < horizon ? width - 1 : horizon;
	double		squares = prefix_squares(n, prefix);
	double		ignored;

	two_level_over_horizon(width, block, horizon, sum, &ignored);
	*most = 0;
	for (int64_t t = prefix > n ? prefix - n + 1 : 1; t <= prefix; t++)
		*most = fmax(*most, cc_window_blocks_units(width, block, super, t));
	for (int64_t t = width; t <= horizon && t < width + n; t++)
	{
		squares += super_squares(width, n, t) * (double) (1 + (horizon - t) / n);
		*most = fmax(*most, cc_window_blocks_units(width, block, super, t));
	}
	*sum -= squares / super_den(block, super);
}

void
cc_window_blocks_over_horizon(int64_t width, int64_t block, int64_t super, int64_t horizon,
							  double *sum, double *most)
{
	if (super > 0)
		three_level_over_horizon(width, block, super, horizon, sum, most);
	else
		two_level_over_horizon(width, block, horizon, sum, most);
}

int64_t
cc_window_blocks_choose(int64_t width, int64_t horizon)
{
	int64_t		best = 0;
	double		best_sum = INFINITY;

	for (int64_t k = 1; k <= width && k <= CC_WINDOW_BLOCKS_MAX_K; k++)
	{
		double		sum,
					most;

		two_level_over_horizon(width, k, horizon, &sum, &most);
		if (sum < best_sum)
		{
			best = k;
			best_sum = sum;
		}
	}
	return best;
}

/*
 * Three levels: the (K1, K2) of least sum over the horizon with the steps
 * from the width on weighed by their mean over a period, which for n <= W
 * is (S(n) + S(n - 1)) / n + n (W - n) of P^2 (S the sums of squares; each
 * start of the window in a superblock once).  Both at most
 * CC_WINDOW_BLOCKS_MAX_K and 4 (3 W)^(1/3) + 8, around the best's
 * (3 W)^(1/3); K2 >= 2 and K1 K2 <= W.  False if none fits (W < 2).
 */
bool
cc_window_blocks_choose_three(int64_t width, int64_t horizon, int64_t *block, int64_t *super)
{
	int64_t		reach = (int64_t) (4 * cbrt(3.0 * (double) width)) + 8;
	int64_t		most_k = reach < CC_WINDOW_BLOCKS_MAX_K ? reach : CC_WINDOW_BLOCKS_MAX_K;
	double		best_sum = INFINITY;
	double		steady = (double) (horizon - width + 1);

	*block = *super = 0;
	for (int64_t k1 = 1; k1 <= most_k && 2 * k1 <= width; k1++)
	{
		double		two,
					ignored;

		two_level_over_horizon(width, k1, horizon, &two, &ignored);
		for (int64_t k2 = 2; k2 <= most_k && k1 * k2 <= width; k2++)
		{
			double		n = (double) (k1 * k2);
			double		mean_sq = (squares_to(n) + squares_to(n - 1)) / n + n * ((double) width - n);
			double		prefix = prefix_squares(k1 * k2, width - 1);
			double		sum = two - (prefix + steady * mean_sq) / super_den(k1, k2);

			if (sum < best_sum)
			{
				best_sum = sum;
				*block = k1;
				*super = k2;
			}
		}
	}
	return *block != 0;
}

/*
 * A block's share holding q of the window's steps: q steps weighted
 * (K + 1 - q) / (K + 1), and K - q steps and the block weighted
 * q / (K + 1) (the sign does not matter: the law is symmetric).
 */
double
cc_window_blocks_log_mgf(double inv_b, int64_t block, int64_t q, double lambda)
{
	double		in = lambda * (double) (block + 1 - q) / (double) (block + 1);
	double		out = lambda * (double) q / (double) (block + 1);

	if (q == 0)
		return 0;
	return (double) q * cc_dlap_log_mgf(inv_b, in) +
		(double) (block + 1 - q) * cc_dlap_log_mgf(inv_b, out);
}

/*
 * Three levels: a block's share of the noise inside a superblock whose
 * window part holds P steps, the block q of them: its q steps weighted
 * 1 - a - alpha, its K1 - q others a + alpha and its own draw
 * a - K1 alpha, with a = q / D1 and alpha = P / (D1 D2).
 */
static double
block_in_super(double inv_b, int64_t block, int64_t q, double alpha, double lambda)
{
	double		a = (double) q / (double) (block + 1);

	return (double) q * cc_dlap_log_mgf(inv_b, lambda * (1 - a - alpha)) +
		(double) (block - q) * cc_dlap_log_mgf(inv_b, lambda * (a + alpha)) +
		cc_dlap_log_mgf(inv_b, lambda * (a - (double) block * alpha));
}

/*
 * Three levels: a superblock's share when the window holds its steps
 * lo .. hi (1 .. K1 K2): its blocks' shares (those holding none of the
 * window's steps too: alpha reaches them) and its own draw weighted P / D2.
 */
double
cc_window_blocks_super_log_mgf(double inv_b, int64_t block, int64_t super, int64_t lo,
							   int64_t hi, double lambda)
{
	int64_t		p = hi - lo + 1;
	double		alpha = (double) p / super_den(block, super);
	cc_window_span span;
	double		sum;

	cc_window_blocks_span(p, block, hi, &span);
	sum = block_in_super(inv_b, block, span.q_first, alpha, lambda) +
		(double) span.full * block_in_super(inv_b, block, block, alpha, lambda) +
		(double) (super - (span.last - span.first + 1)) *
		block_in_super(inv_b, block, 0, alpha, lambda) +
		cc_dlap_log_mgf(inv_b, lambda * (double) p / (double) (block * super + block + 1));
	if (span.q_last > 0)
		sum += block_in_super(inv_b, block, span.q_last, alpha, lambda);
	return sum;
}
