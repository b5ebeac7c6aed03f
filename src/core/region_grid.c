/*
 * region_grid.c
 *		The grid the discrete part of a curve lives on: the choice of its
 *		step, convolutions of losses on it, atoms split between its points
 *		("connect the dots"), its coarsening against the Gaussian part and
 *		the atoms the curve keeps.  Why each keeps an upper bound is at the
 *		top of privacy_region.c.
 *
 * IDENTIFICATION
 *	  src/core/region_grid.c
 */
#include "privacy_region.h"
#include "privacy_region_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Convolutions on the grid                                               */
/* ---------------------------------------------------------------------- */

/*
 * Cut the tails of d (a grid of losses, or of x when lattice_x: there high
 * losses are low x): at most TRIM of mass each side.  High losses go to
 * +infinity, low ones onto the lowest loss kept.
 */
static void
trim(builder *b, dense *d, bool lattice_x)
{
	int64_t		first = 0;
	int64_t		last = d->len - 1;
	double		cut_lo = 0.0;
	double		cut_hi = 0.0;

	while (first < last && cut_lo + d->p[first] <= TRIM)
		cut_lo += d->p[first++];
	while (last > first && cut_hi + d->p[last] <= TRIM)
		cut_hi += d->p[last--];
	if (lattice_x)
	{
		b->p_inf += cut_lo;
		d->p[last] += cut_hi;
	}
	else
	{
		d->p[first] += cut_lo;
		b->p_inf += cut_hi;
	}
	if (first > 0)
		memmove(d->p, d->p + first, (size_t) (last - first + 1) * sizeof(double));
	d->lo += first;
	d->len = last - first + 1;
}

/* d := d * (atoms offset[i] with mass[i], offsets ascending), trimmed */
void
cc_region_convolve(builder *b, dense *d, const int64_t *offset, const double *mass,
		 int64_t n, bool lattice_x)
{
	int64_t		span = offset[n - 1] - offset[0];
	dense		out;

	out.lo = d->lo + offset[0];
	out.len = d->len + span;
	out.p = get(b, out.len, sizeof(double));
	if (out.p == NULL)
		return;
	memset(out.p, 0, (size_t) out.len * sizeof(double));
	for (int64_t a = 0; a < n; a++)
	{
		double	   *o = out.p + (offset[a] - offset[0]);
		double		m = mass[a];

		for (int64_t i = 0; i < d->len; i++)
			o[i] += d->p[i] * m;
	}
	put(b, d->p);
	*d = out;
	trim(b, d, lattice_x);
	b->rel += (double) (n + 2) * EPS_U;
}

void
cc_region_convolve_sparse(builder *b, const sparse *s)
{
	cc_region_convolve(b, &b->acc, s->idx, s->mass, s->n, false);
}

/*
 * Add mass m at grid index i to s.  Atoms come in ascending and each lands
 * on its grid point or the next, so i is at least the last index but one.
 */
void
cc_region_sparse_add(sparse *s, int64_t i, double m)
{
	for (int64_t k = s->n - 1; k >= 0 && k >= s->n - 2; k--)
		if (s->idx[k] == i)
		{
			s->mass[k] += m;
			return;
		}
	s->idx[s->n] = i;
	s->mass[s->n] = m;
	s->n++;
}

/*
 * Put P-mass m of the loss j h + d (0 <= d < h) on the grid, connecting the
 * dots (Doroshenko, Ghazi, Kamath, Kumar and Manurangsi 2022): as a function
 * of alpha = e^epsilon, the atom adds the hinge m (1 - alpha e^-l)_+ to
 * delta, convex; split between j and j + 1 so as to keep its P- and
 * Q-masses, it adds the hinge's chord between e^(j h) and e^((j+1) h)
 * instead, above the hinge everywhere and equal to it outside (see the top
 * for why that bounds the composition).  d is raised by its rounding bound
 * first: a higher atom's chord is higher.  The callers count the split's 8 roundings.
 */
void
cc_region_sparse_split(sparse *s, int64_t j, double d, double h, double m)
{
	d += 1e-14 * (fabs((double) j) + 1.0) * h;
	if (d >= h)
		cc_region_sparse_add(s, j + 1, m);
	else
	{
		cc_region_sparse_add(s, j, m * expm1(h - d) / expm1(h));
		cc_region_sparse_add(s, j + 1, m * -expm1(-d) / -expm1(-h));
	}
}

/* s's masses laid out from its first index to its last, into d. */
void
cc_region_sparse_dense(builder *b, const sparse *s, dense *d)
{
	d->lo = s->idx[0];
	d->len = s->idx[s->n - 1] - s->idx[0] + 1;
	d->p = get(b, d->len, sizeof(double));
	if (b->failed)
		return;
	memset(d->p, 0, (size_t) d->len * sizeof(double));
	for (int64_t i = 0; i < s->n; i++)
		d->p[s->idx[i] - d->lo] = s->mass[i];
}

/*
 * The grid: H units with at most MAX_POINTS over the summed spans, with
 * the points a standard deviation that GRID_WORK allows for groups of
 * atoms atoms in all, and when it can, dividing every pure epsilon (a
 * divisor of their gcd: nothing pure is rounded).  Only pure charges: any
 * step dividing them will do.
 */
void
cc_region_choose_grid(builder *b, uint64_t gcd, double var, double span, double atoms,
			bool fine_needed)
{
	double		per_sd = fmin(MAX_POINTS_PER_SD,
							  fmax(MIN_POINTS_PER_SD, GRID_WORK / (30.0 * atoms)));
	double		hmin_units = ceil(span / UNIT / (double) MAX_POINTS);
	double		ht_units = fmax(hmin_units, floor(sqrt(var) / per_sd / UNIT));
	int64_t		H;

	if (ht_units < 1.0)
		ht_units = 1.0;
	H = (int64_t) ht_units;
	if (gcd > 0 && (double) gcd >= hmin_units)
	{
		if (!fine_needed || (double) gcd <= ht_units)
			H = (int64_t) gcd;
		else
		{
			/* the coarsest divisor of gcd at most the target, if near */
			for (uint64_t k = (uint64_t) ceil((double) gcd / ht_units), tries = 0;
				 tries < 4096; k++, tries++)
				if (gcd % k == 0 && (double) (gcd / k) >= hmin_units)
				{
					H = (int64_t) (gcd / k);
					break;
				}
		}
	}
	b->H = H;
	b->h = (double) H * UNIT;
}

/*
 * With a Gaussian part, delta_G(epsilon - l) is a mixture (over the
 * Gaussian's loss) of hinges in e^-l, so connecting the dots again onto k
 * grid steps of about mu/128 still bounds delta, and leaves k times fewer
 * atoms to sum at every reading.
 */
void
cc_region_coarsen(builder *b, double mu)
{
	int64_t		k = (int64_t) floor(mu / 128.0 / b->h);
	sparse		s;
	dense		d;

	if (k < 2)
		return;
	s.n = 0;
	s.idx = get(b, 2 * b->acc.len, sizeof(int64_t));
	s.mass = get(b, 2 * b->acc.len, sizeof(double));
	if (!b->failed)
	{
		for (int64_t i = 0; i < b->acc.len; i++)
		{
			int64_t		j = b->acc.lo + i;
			int64_t		q = floor_div(j, k);

			if (b->acc.p[i] <= 0.0)
				continue;
			if (j == q * k)
				cc_region_sparse_add(&s, q, b->acc.p[i]);
			else
				cc_region_sparse_split(&s, q, (double) (j - q * k) * b->h, (double) k * b->h,
							 b->acc.p[i]);
		}
		cc_region_sparse_dense(b, &s, &d);
	}
	if (!b->failed)
	{
		put(b, b->acc.p);
		b->acc = d;
		b->H *= k;
		b->h = (double) b->H * UNIT;
		b->rel += 8.0 * EPS_U;
	}
	put(b, s.idx);
	put(b, s.mass);
}

/* The least double at or above u units: exact for 0.5, 1, 2.25 ... */
double
cc_region_units_up(int64_t u)
{
	double		x = (double) u / 1e9;

	if (u > INT64_C(1) << 53 || u < -(INT64_C(1) << 53))
		return x + LOSS_NUDGE * fabs(x);
	/* x is u / 1e9 correctly rounded; fma gives the sign of x 1e9 - u */
	return fma(x, 1e9, -(double) u) < 0.0 ? nextafter(x, INFINITY) : x;
}

/* The atoms of the discrete part, losses never below their grid points. */
void
cc_region_finish(builder *b, cc_privacy_curve *c)
{
	int64_t		k = 0;
	double		below = 0.0;

	for (int64_t i = 0; i < b->acc.len; i++)
		k += b->acc.p[i] > 0.0;
	c->loss = get(b, k, sizeof(double));
	c->mass = get(b, k, sizeof(double));
	c->below = get(b, k, sizeof(double));
	if (b->failed)
		return;
	k = 0;
	for (int64_t i = 0; i < b->acc.len; i++)
	{
		double		grid = cc_region_units_up((b->acc.lo + i) * b->H);

		if (b->acc.p[i] <= 0.0)
			continue;
		c->loss[k] = b->shift == 0.0 ? grid :
			grid + b->shift + LOSS_NUDGE * (fabs(grid) + b->shift);
		c->mass[k] = b->acc.p[i];
		c->below[k] = below;
		below += b->acc.p[i];
		k++;
	}
	c->natoms = k;
}

