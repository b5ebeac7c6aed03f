/*
 * region_pure.c
 *		Pure charges in a curve: n randomized responses of one epsilon as
 *		an exact binomial of losses, put on the grid once.
 *
 * IDENTIFICATION
 *	  src/core/region_pure.c
 */
#include "privacy_region.h"
#include "privacy_region_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Pure charges                                                           */
/* ---------------------------------------------------------------------- */

/*
 * The binomial's window, counted before its masses are: from the mode
 * outward while a mass stays at or above CUT of the mode's, into g->lo and
 * g->hi.  Returns the mode.
 */
static int64_t
binomial_window(pure_group *g, double up, double down)
{
	int64_t		n = g->n;
	double		p = 1.0 / (1.0 + down);
	int64_t		mode = (int64_t) floor((double) (n + 1) * p);
	double		m;
	int64_t		j;

	if (mode > n)
		mode = n;
	for (m = 1.0, j = mode; j < n; j++)
	{
		double		next = m * ((double) (n - j) / (double) (j + 1)) * up;

		if (next < CUT)
			break;
		m = next;
	}
	g->hi = j;
	for (m = 1.0, j = mode; j > 0; j--)
	{
		double		next = m * ((double) j / (double) (n - j + 1)) * down;

		if (next < CUT)
			break;
		m = next;
	}
	g->lo = j;
	return mode;
}

/*
 * The binomial of n randomized responses of epsilon, from the mode outward
 * while masses stay above CUT of it, normalized by what was kept; the lower
 * tail's bound joins the lowest atom, the upper's goes to p_inf.  Ratios of
 * successive masses fall as j grows, so a tail is at most its first term
 * times r/(1 - r).
 */
void
cc_region_pure_binomial(builder *b, pure_group *g)
{
	double		eps = (double) g->units * UNIT;
	double		up = exp(eps);	/* P-odds of one response: p/q */
	double		down = exp(-eps);
	int64_t		n = g->n;
	int64_t		mode = binomial_window(g, up, down);
	double		sum = 0.0;
	double		tail_lo = 0.0;
	double		tail_hi = 0.0;
	int64_t		j;

	g->mass = get(b, g->hi - g->lo + 1, sizeof(double));
	if (g->mass == NULL)
		return;

	g->mass[mode - g->lo] = 1.0;
	for (j = mode + 1; j <= g->hi; j++)
		g->mass[j - g->lo] = g->mass[j - 1 - g->lo] *
			((double) (n - j + 1) / (double) j) * up;
	for (j = mode - 1; j >= g->lo; j--)
		g->mass[j - g->lo] = g->mass[j + 1 - g->lo] *
			((double) (j + 1) / (double) (n - j)) * down;
	for (j = g->lo; j <= g->hi; j++)
		sum += g->mass[j - g->lo];

	if (g->hi < n)
	{
		double		r = ((double) (n - g->hi) / (double) (g->hi + 1)) * up;

		tail_hi = g->mass[g->hi - g->lo] * r / (1.0 - r);
	}
	if (g->lo > 0)
	{
		double		r = ((double) g->lo / (double) (n - g->lo + 1)) * down;

		tail_lo = g->mass[0] * r / (1.0 - r);
	}
	for (j = g->lo; j <= g->hi; j++)
		g->mass[j - g->lo] /= sum;
	/* 3 roundings a step out from the mode and 1 in the sum, the split */
	b->rel += (4.0 * (double) (g->hi - g->lo) + 12.0) * EPS_U;
	g->mass[0] += tail_lo / sum;
	b->p_inf += tail_hi / sum;
}

/* The group's losses (2j - n) epsilon on the grid, into the composition. */
void
cc_region_pure_convolve(builder *b, const pure_group *g)
{
	sparse		s;
	int64_t		count = g->hi - g->lo + 1;

	s.n = 0;
	s.idx = get(b, 2 * count, sizeof(int64_t));
	s.mass = get(b, 2 * count, sizeof(double));
	if (!b->failed)
	{
		for (int64_t j = g->lo; j <= g->hi; j++)
		{
			int64_t		loss = (2 * j - g->n) * (int64_t) g->units;
			int64_t		at = floor_div(loss, b->H);
			int64_t		rest = loss - at * b->H;

			if (rest == 0)
				cc_region_sparse_add(&s, at, g->mass[j - g->lo]);
			else
				cc_region_sparse_split(&s, at, (double) rest * UNIT, b->h, g->mass[j - g->lo]);
		}
		cc_region_convolve_sparse(b, &s);
	}
	put(b, s.idx);
	put(b, s.mass);
}

