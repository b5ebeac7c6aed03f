/*
 * blt_table.c
 *		The parameters of mechanism blt: for each horizon 2^k, k = 0 .. 40,
 *		the BLT of at most CC_BLT_BUFFERS buffers of least worst variance,
 *		written as src/core/blt_table.c.
 *
 *	cc -O2 -Isrc/core report/blt_table.c src/core/blt.c -lm -o blt_table
 *	./blt_table > src/core/blt_table.c
 *
 * The objective is jax_privacy's max loss for single participation: the
 * squared norm of C's first column over n rows (the sensitivity squared)
 * times sum_{k<n} b_k^2 (the variance of the last and worst step, for noise
 * of variance 1); at rho = 1/2 and sensitivity 1 it is the worst variance
 * itself.  Both are closed forms (blt.c), so a horizon of 2^40 costs what
 * 2^4 does.  The search is Nelder-Mead over ln(1 - theta_j) and ln(omega_j),
 * restarted until it stops improving, from a quadrature of 1/sqrt(pi k) for
 * the first horizon and from the previous horizon's optimum (its 1 - theta
 * halved) for the others; every number of buffers up to CC_BLT_BUFFERS is
 * tried, and the fewest within 1e-6 of the best kept.
 *
 * Nothing private depends on this search: the mechanism takes the table as
 * it is, exact integers, and computes its sensitivity from them.  A better
 * search only lowers the variance.
 */
#include "blt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_PARAMS (2 * CC_BLT_BUFFERS)

static int	buffers;
static double horizon;

static void
blt_of(const double *x, cc_blt *blt)
{
	blt->buffers = buffers;
	for (int j = 0; j < buffers; j++)
	{
		blt->phi[j] = exp(x[j]);
		blt->omega[j] = exp(x[buffers + j]);
	}
}

static double
max_loss(const cc_blt *blt)
{
	cc_blt_noise noise;

	if (!cc_blt_noise_of(blt, &noise))
		return INFINITY;
	return cc_blt_column_norm2(blt, horizon) * cc_blt_step_error(&noise, horizon, NULL);
}

static double
objective(const double *x)
{
	cc_blt		blt;

	for (int j = 0; j < buffers; j++)
		if (!(x[j] < 0.0))
			return INFINITY;
	blt_of(x, &blt);
	return log(max_loss(&blt));
}

/* One Nelder-Mead run from x with a simplex of the given step; x gets the best point. */
static double
nelder_mead(double *x, double step, int iterations)
{
	int			n = 2 * buffers;
	double		s[MAX_PARAMS + 1][MAX_PARAMS];
	double		f[MAX_PARAMS + 1];
	int			lo = 0;

	for (int i = 0; i <= n; i++)
	{
		memcpy(s[i], x, n * sizeof(double));
		if (i > 0)
			s[i][i - 1] += step;
		f[i] = objective(s[i]);
	}
	for (int it = 0; it < iterations; it++)
	{
		int			hi = 0;
		int			next = 0;
		double		c[MAX_PARAMS] = {0};
		double		xr[MAX_PARAMS];
		double		fr;

		lo = 0;
		for (int i = 0; i <= n; i++)
		{
			if (f[i] > f[hi])
				hi = i;
			if (f[i] < f[lo])
				lo = i;
		}
		next = lo;
		for (int i = 0; i <= n; i++)
			if (i != hi && f[i] > f[next])
				next = i;
		for (int i = 0; i <= n; i++)
			if (i != hi)
				for (int k = 0; k < n; k++)
					c[k] += s[i][k] / n;
		for (int k = 0; k < n; k++)
			xr[k] = 2.0 * c[k] - s[hi][k];
		fr = objective(xr);
		if (fr < f[lo])
		{
			double		xe[MAX_PARAMS];
			double		fe;

			for (int k = 0; k < n; k++)
				xe[k] = 3.0 * c[k] - 2.0 * s[hi][k];
			fe = objective(xe);
			memcpy(s[hi], fe < fr ? xe : xr, n * sizeof(double));
			f[hi] = fe < fr ? fe : fr;
		}
		else if (fr < f[next])
		{
			memcpy(s[hi], xr, n * sizeof(double));
			f[hi] = fr;
		}
		else
		{
			double		xc[MAX_PARAMS];
			double		fc;

			for (int k = 0; k < n; k++)
				xc[k] = 0.5 * (c[k] + s[hi][k]);
			fc = objective(xc);
			if (fc < f[hi])
			{
				memcpy(s[hi], xc, n * sizeof(double));
				f[hi] = fc;
			}
			else
				for (int i = 0; i <= n; i++)
				{
					if (i == lo)
						continue;
					for (int k = 0; k < n; k++)
						s[i][k] = 0.5 * (s[lo][k] + s[i][k]);
					f[i] = objective(s[i]);
				}
		}
	}
	lo = 0;
	for (int i = 0; i <= n; i++)
		if (f[i] < f[lo])
			lo = i;
	memcpy(x, s[lo], n * sizeof(double));
	return f[lo];
}

/* Restarts until an improvement below 1e-13 in ln(loss). */
static double
search(double *x)
{
	double		best = objective(x);

	for (int r = 0; r < 200; r++)
	{
		double		f = nelder_mead(x, r < 20 ? 0.5 : 0.05, 400 * buffers);

		if (r >= 20 && best - f < 1e-13)
			return f;
		best = f;
	}
	return best;
}

/* 1/sqrt(pi k) = (1/pi) int s^(-1/2) e^(-k s) ds, on a grid of ln s */
static void
quadrature_start(double *x)
{
	double		h = log(horizon + 1.0) / buffers;

	for (int j = 0; j < buffers; j++)
	{
		double		phi = exp(-log(horizon + 1.0) + (j + 0.5) * h);

		if (phi > 0.5)
			phi = 0.5;
		x[j] = log(phi);
		x[buffers + j] = log(sqrt(phi) * h / M_PI);
	}
}

/* The table's integers: phi and omega times 2^62, rounded. */
static void
quantize(const double *x, cc_blt_entry *entry)
{
	entry->buffers = buffers;
	for (int j = 0; j < CC_BLT_BUFFERS; j++)
	{
		entry->phi[j] = j < buffers ? (uint64_t) llround(ldexp(exp(x[j]), 62)) : 0;
		entry->omega[j] = j < buffers ? (uint64_t) llround(ldexp(exp(x[buffers + j]), 62)) : 0;
	}
}

int
main(void)
{
	double		previous[CC_BLT_BUFFERS + 1][MAX_PARAMS];
	bool		have_previous[CC_BLT_BUFFERS + 1] = {false};

	printf("/*\n * blt_table.c\n *\t\tThe BLTs of mechanism blt, one a horizon 2^k: written by\n"
		   " *\t\treport/blt_table.c (see there), not by hand.\n *\n"
		   " * phi_j = 1 - theta_j and omega_j, times 2^62.  loss: the worst variance\n"
		   " * at rho = 1/2 and sensitivity 1 (max loss), as the search measured it.\n */\n"
		   "#include \"blt.h\"\n\nconst cc_blt_entry cc_blt_table[CC_BLT_ENTRIES] = {\n");
	for (int k = 0; k < CC_BLT_ENTRIES; k++)
	{
		cc_blt_entry best_entry = {0};
		double		best = INFINITY;

		horizon = ldexp(1.0, k);
		for (buffers = 1; buffers <= CC_BLT_BUFFERS; buffers++)
		{
			double		x[MAX_PARAMS];
			double		start[MAX_PARAMS];
			double		f;
			cc_blt_entry entry;
			cc_blt		blt;

			quadrature_start(x);
			f = search(x);
			if (have_previous[buffers])
			{
				memcpy(start, previous[buffers], sizeof(start));
				for (int j = 0; j < buffers; j++)
					start[j] -= log(2.0);
				if (search(start) < f)
				{
					f = objective(start);
					memcpy(x, start, sizeof(x));
				}
			}
			if (!isfinite(f))
				continue;
			memcpy(previous[buffers], x, sizeof(x));
			have_previous[buffers] = true;
			quantize(x, &entry);
			cc_blt_of_entry(&entry, &blt);
			f = max_loss(&blt);
			if (f < best * (1.0 - 1e-6))
			{
				best = f;
				best_entry = entry;
			}
		}
		printf("\t/* 2^%d: loss %.6f */\n\t{%lld, {", k, best, (long long) best_entry.buffers);
		for (int j = 0; j < CC_BLT_BUFFERS; j++)
			printf("%s%llu", j ? ", " : "", (unsigned long long) best_entry.phi[j]);
		printf("}, {");
		for (int j = 0; j < CC_BLT_BUFFERS; j++)
			printf("%s%llu", j ? ", " : "", (unsigned long long) best_entry.omega[j]);
		printf("}},\n");
		fflush(stdout);
	}
	printf("};\n");
	return 0;
}
