/*
 * window_kary.c
 *		Which blocks a k-ary window names at each step, and how many: the
 *		arithmetic of CC_WINDOW_KARY (window.c keeps its state).
 *
 * The tree is mech_kary.c's, truncated at h = cc_kary_levels(k, W) levels:
 * level j cuts the steps into blocks of k^j, for j = 0 .. h - 1, and the
 * top level goes on for as long as the stream does.  An event is in one
 * block a level, h blocks, whatever the stream's length.
 *
 * p_j(x), x rounded to the nearest multiple of k^j (k is odd: no ties), is
 * the prefix of x's balanced digits from level j up; p_h(x) = 0 (the top
 * digit is unbounded).  prefix(x) is the signed sum, over levels j, of the
 * level-j blocks between p_(j+1)(x) and p_j(x): added when p_j(x) >=
 * p_(j+1)(x), subtracted otherwise, which is mech_kary.c's expansion.
 *
 * The window at t is prefix(t) - prefix(y), y = max(t - W, 0).  Block by
 * block, its coefficient is x's minus y's, and it is never 2 or -2: x's
 * run at level j and y's overlap with opposite signs only if p_j(t) <
 * p_j(y) (t's run subtracted, y's added) or p_(j+1)(t) < p_(j+1)(y) (t's
 * added, y's subtracted), and rounding is monotone.  So the window's noise
 * is the signed sum of the blocks where the runs differ, each once: per
 * level |A| + |B| - 2 |A n B| when the signs agree, |A| + |B| otherwise.
 *
 * From t = W on (y >= 0), adding K = k^(h-1) to t moves every p_j, j < h,
 * by K and the top runs [0, p_(h-1)) both by one block: the count of
 * blocks is periodic in t with period K, and a sum over the horizon takes
 * the steps before W and one period, O((W + K) h) time (K <= 2 W).
 *
 * IDENTIFICATION
 *	  src/core/window_kary.c
 */
#include "mechanism_int.h"
#include "window.h"

int64_t
cc_window_kary_round(int64_t x, int64_t power)
{
	return (x + (power - 1) / 2) / power * power;
}

/* Level j's run of x: [*lo, *hi) in steps, and its sign. */
static void
level_run(int64_t x, int64_t power, int64_t arity, bool top, int64_t *lo, int64_t *hi,
		  int *sign)
{
	int64_t		lower = cc_window_kary_round(x, power);
	int64_t		upper = top ? 0 : cc_window_kary_round(x, power * arity);

	*sign = lower >= upper ? 1 : -1;
	*lo = lower >= upper ? upper : lower;
	*hi = lower >= upper ? lower : upper;
}

int64_t
cc_window_kary_draws_at(int64_t arity, int64_t width, int64_t t)
{
	int64_t		h = cc_kary_levels(arity, width);
	int64_t		y = t > width ? t - width : 0;
	int64_t		power = 1;
	int64_t		draws = 0;

	for (int64_t j = 0; j < h; j++, power *= arity)
	{
		int64_t		a_lo,
					a_hi,
					b_lo,
					b_hi;
		int			a_sign,
					b_sign;
		int64_t		overlap;

		level_run(t, power, arity, j == h - 1, &a_lo, &a_hi, &a_sign);
		level_run(y, power, arity, j == h - 1, &b_lo, &b_hi, &b_sign);
		overlap = (a_hi < b_hi ? a_hi : b_hi) - (a_lo > b_lo ? a_lo : b_lo);
		draws += (a_hi - a_lo + b_hi - b_lo) / power;
		if (overlap > 0 && a_sign == b_sign)
			draws -= 2 * (overlap / power);
	}
	return draws;
}

void
cc_window_kary_draws_over_horizon(int64_t arity, int64_t width, int64_t horizon,
								  double *sum, int64_t *most)
{
	int64_t		period = 1;
	int64_t		last;

	for (int64_t j = 1; j < cc_kary_levels(arity, width); j++)
		period *= arity;
	last = width - 1 + period < horizon ? width - 1 + period : horizon;
	*sum = 0;
	*most = 0;
	for (int64_t t = 1; t <= last; t++)
	{
		int64_t		draws = cc_window_kary_draws_at(arity, width, t);
		int64_t		times = t < width ? 1 : 1 + (horizon - t) / period;

		*sum += (double) draws * (double) times;
		if (draws > *most)
			*most = draws;
	}
}
