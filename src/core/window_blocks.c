/*
 * window_blocks.c
 *		The arithmetic of CC_WINDOW_BLOCKS (window.c keeps its state): which
 *		blocks a window touches, its variance, its sum over a horizon, the
 *		choice of K and the log moment generating function of its noise.
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

double
cc_window_blocks_units(int64_t width, int64_t block, int64_t t)
{
	cc_window_span span;

	cc_window_blocks_span(width, block, t, &span);
	return share(block, span.q_first) + share(block, span.q_last) +
		(double) span.full * share(block, block);
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

void
cc_window_blocks_over_horizon(int64_t width, int64_t block, int64_t horizon,
							  double *sum, double *most)
{
	int64_t		last = width - 1 + block < horizon ? width - 1 + block : horizon;

	prefix_phase(block, width - 1 < horizon ? width - 1 : horizon, sum, most);
	/* from t = W on, each class of t mod K once a period */
	for (int64_t t = width; t <= last; t++)
	{
		double		units = cc_window_blocks_units(width, block, t);

		*sum += units * (double) (1 + (horizon - t) / block);
		*most = fmax(*most, units);
	}
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

		cc_window_blocks_over_horizon(width, k, horizon, &sum, &most);
		if (sum < best_sum)
		{
			best = k;
			best_sum = sum;
		}
	}
	return best;
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
