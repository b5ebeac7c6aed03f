/*
 * region_dgauss.c
 *		Discrete Gaussian charges in a curve: a group's pmf on its lattice,
 *		its n-fold convolution, on a coarser grid or summed into one
 *		discrete Gaussian when that is cheaper, or the shifted continuous
 *		bound (the arguments are at the top of privacy_region.c).
 *
 * IDENTIFICATION
 *	  src/core/region_dgauss.c
 */
#include "privacy_region.h"
#include "privacy_region_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Discrete Gaussian charges                                              */
/* ---------------------------------------------------------------------- */

/* kappa' = kappa / (1 + kappa) of the top, for sigma2 */
double
cc_region_dg_kappa_prime(double sigma2)
{
	double		a = 2.0 * PI_SQUARED * sigma2;
	double		kappa = 2.0 * exp(-a) / -expm1(-3.0 * a);

	return kappa / (1.0 + kappa);
}

/*
 * The pmf of the discrete Gaussian over x in [-R, R], R the least with the
 * weights beyond (at most w(R+1)/(1 - q), q the ratio of successive weights
 * there) below CUT of w(0) = 1.  Normalized by the kept weights; the
 * bound on the tail x > R (low losses) joins x = R, the one on x < -R
 * (high losses) goes to p_inf.
 */
static void
dg_pmf(builder *b, dg_group *g)
{
	double		s2 = g->sigma2;
	int64_t		R = (int64_t) ceil(sqrt(2.0 * s2 * -log(CUT)));
	double		tail;
	double		sum = 0.0;

	if (R < 1)
		R = 1;
	for (;;)
	{
		double		q = exp(-(2.0 * (double) R + 3.0) / (2.0 * s2));

		tail = exp(-((double) R + 1.0) * ((double) R + 1.0) / (2.0 * s2)) / (1.0 - q);
		if (tail <= CUT)
			break;
		R++;
	}
	g->x.lo = -R;
	g->x.len = 2 * R + 1;
	g->x.p = get(b, g->x.len, sizeof(double));
	if (g->x.p == NULL)
		return;
	for (int64_t x = -R; x <= R; x++)
		sum += g->x.p[x + R] = exp(-(double) x * (double) x / (2.0 * s2));
	for (int64_t i = 0; i < g->x.len; i++)
		g->x.p[i] /= sum;
	/* exp of an argument up to -log(CUT), the sum, the division, the split */
	b->rel += (double) g->n * (-log(CUT) + (double) g->x.len + 12.0) * EPS_U;
	g->x.p[g->x.len - 1] += tail / sum;
	b->p_inf += (double) g->n * tail / sum;
}

/*
 * The losses n offset - step * x of the lattice d onto the grid of step
 * k h, whose points are points of the grid.
 */
static void
dg_to_grid(builder *b, const dg_group *g, const dense *d, int64_t n, int64_t k,
		   sparse *s)
{
	double		hk = (double) k * b->h;

	s->n = 0;
	s->idx = get(b, 2 * d->len, sizeof(int64_t));
	s->mass = get(b, 2 * d->len, sizeof(double));
	if (b->failed)
		return;
	for (int64_t i = d->len - 1; i >= 0; i--)
	{
		double		x = (double) (d->lo + i);
		double		q = ((double) n * g->offset - g->step * x) / hk;
		double		at = floor(q);

		cc_region_sparse_split(s, (int64_t) at, (q - at) * hk, hk, d->p[i]);
	}
}

/* d := its n-fold convolution, on its own lattice. */
static void
n_fold(builder *b, dense *d, int64_t n, bool lattice_x)
{
	int64_t		len = d->len;
	int64_t    *offset = get(b, len, sizeof(int64_t));
	double	   *mass = get(b, len, sizeof(double));

	if (!b->failed)
	{
		for (int64_t i = 0; i < len; i++)
		{
			offset[i] = d->lo + i;
			mass[i] = d->p[i];
		}
		for (int64_t k = 1; k < n && !b->failed; k++)
			cc_region_convolve(b, d, offset, mass, len, lattice_x);
	}
	put(b, offset);
	put(b, mass);
}

/*
 * How the group's loss is computed, given the grid.  An n-fold convolution
 * of len points costs about len^2 n^1.5: on the lattice itself when that
 * fits GROUP_WORK (a single charge's lattice whenever it has at most
 * MAX_POINTS points); else on a coarser grid (k steps, about fit points
 * over one charge's losses), its dots connected once a charge; else, or
 * when the bound's shift n s is below a grid step anyway, by the bound.
 * dg_sum() may first make the group one charge (see the top).
 */
/* Points of one charge's lattice of x (dg_pmf's window, near enough). */
static double
dg_len(const dg_group *g)
{
	return 2.0 * sqrt(2.0 * g->sigma2 * -log(CUT)) + 3.0;
}

/* Lattice points an n-fold convolution may have within GROUP_WORK. */
static double
dg_fit(const dg_group *g)
{
	return sqrt(GROUP_WORK / pow((double) g->n, 1.5));
}

/* About how many atoms the group's n-fold loss takes, on a grid at most. */
double
cc_region_dg_atoms(const dg_group *g)
{
	return fmin(dg_len(g), dg_fit(g)) * sqrt((double) g->n);
}

static void
dg_choose(const builder *b, dg_group *g)
{
	double		n = (double) g->n;
	double		len = dg_len(g);
	double		fit = dg_fit(g);

	g->coarse = 1;
	if (n * g->step <= b->h || len > (double) MAX_POINTS || (g->n > 1 && fit < 16.0))
		g->mode = DG_BOUND;
	else if (g->n == 1 || len <= fit)
		g->mode = DG_LATTICE;
	else
	{
		g->mode = DG_COARSE;
		g->coarse = (int64_t) fmax(1.0, ceil(len * g->step / fit / b->h));
	}
}

/*
 * tau of the top for n coordinates of sigma2 (+infinity if some kappa_k
 * reaches 1), raised past its roundings.
 */
double
cc_region_dg_sum_tau(double sigma2, int64_t n)
{
	double		tau = 0.0;
	double		term = 0.0;

	for (int64_t k = 2; k <= n && k <= 65; k++)
	{
		double		b = 2.0 * PI_SQUARED * sigma2 * (double) (k - 1) / (double) k;
		double		kappa = 2.0 * exp(-b) / -expm1(-3.0 * b);

		if (!(kappa < 1.0))
			return INFINITY;
		term = log1p(kappa) - log1p(-kappa);
		if (k <= 64)
			tau += term;
	}
	if (n > 64)
		tau += (double) (n - 64) * term;
	return tau * (1.0 + 1e-12) + 1e-300;
}

/* Its group as one discrete Gaussian of n sigma^2 moved by n D. */
static void
dg_sum(builder *b, dg_group *g, double tau)
{
	double		n = (double) g->n;

	g->sigma2 *= n;
	g->D *= n;
	g->offset *= n;
	g->n = 1;
	b->log_scale += tau;
	b->shift += 2.0 * tau;
}

/* dg_choose(), with dg_sum() first where it serves (see the top). */
void
cc_region_dg_plan(builder *b, dg_group *g)
{
	double		tau;

	dg_choose(b, g);
	if (g->n == 1)
		return;
	tau = cc_region_dg_sum_tau(g->sigma2, g->n);
	if (2.0 * tau <= TAU_NEGLIGIBLE ||
		(g->mode == DG_BOUND && 2.0 * tau + g->step < (double) g->n * g->step))
	{
		dg_sum(b, g, tau);
		dg_choose(b, g);
	}
}

void
cc_region_dg_convolve(builder *b, dg_group *g)
{
	sparse		s = {0, NULL, NULL};
	sparse		fine = {0, NULL, NULL};
	dense		d = {0, 0, NULL};

	if (g->mode == DG_BOUND)
	{
		b->mu2 += (double) g->n * g->D * g->D / g->sigma2;
		b->shift += (double) g->n * g->step;
		b->p_inf += (double) g->n * cc_region_dg_kappa_prime(g->sigma2);
		return;
	}
	dg_pmf(b, g);
	if (g->mode == DG_LATTICE)
	{
		n_fold(b, &g->x, g->n, true);
		dg_to_grid(b, g, &g->x, g->n, 1, &s);
		if (!b->failed)
			cc_region_convolve_sparse(b, &s);
	}
	else
	{
		dg_to_grid(b, g, &g->x, 1, g->coarse, &s);
		if (!b->failed)
			cc_region_sparse_dense(b, &s, &d);
		if (!b->failed)
		{
			n_fold(b, &d, g->n, false);
			fine.idx = get(b, d.len, sizeof(int64_t));
			fine.mass = get(b, d.len, sizeof(double));
		}
		if (!b->failed)
		{
			for (int64_t i = 0; i < d.len; i++)
			{
				fine.idx[i] = (d.lo + i) * g->coarse;
				fine.mass[i] = d.p[i];
			}
			fine.n = d.len;
			cc_region_convolve_sparse(b, &fine);
		}
	}
	put(b, s.idx);
	put(b, s.mass);
	put(b, fine.idx);
	put(b, fine.mass);
	put(b, d.p);
}

