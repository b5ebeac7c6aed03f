/*
 * zcdp_frontier.c
 *		How close factorizations of the kind blt_scaled runs come to the
 *		lower bound on the mean variance under zCDP, by brute force at small
 *		horizons: what a noise variance chosen for each stretch of steps
 *		adds to blt_scaled's input scaling, with a sound sensitivity and with
 *		one that reads each stretch's first column only, and the square-root
 *		factorization with its columns normalized.
 *
 *	cc -O2 -Isrc/core report/zcdp_frontier.c src/core/blt.c src/core/blt_table.c -lm \
 *		-o zcdp_frontier
 *	./zcdp_frontier
 *
 * Everything is at rho = 1/2 and sensitivity 1, in doubles, without the
 * mechanisms' fixed point: the variance of step t is the sensitivity
 * squared times the noise's weight in release t.  The factorizations are
 * A = B L with the encoder L = S C D, C a Toeplitz matrix (blt_scaled's
 * BLT, or the square root of A), D = diag(m) and S = diag(g^-1/2) constant
 * on the stretches of blt_scaled (half-octaves of the distance to the
 * horizon); B = A L^-1.  Noise of variance g_p on the steps of stretch p is
 * S's job.  The sensitivity is L's largest column norm, and column j's
 * weighted norm m_j^2 sum_{t>=j} c_{t-j}^2 / g_{p(t)} need not be largest at
 * its stretch's first column once g varies: the printout shows what
 * reading only the first columns claims and what the claim costs in truth.
 *
 * The g_p are searched by coordinate descent in log g (each stretch's m_p
 * then set to equalize the stretches' largest weighted column norms); the
 * search is local, so its figures are upper bounds on what the family can
 * do.  Nothing here is used by the extension.
 */
#include "blt.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_STRETCHES 64

typedef struct problem
{
	int			horizon;
	int			stretches;
	long		start[MAX_STRETCHES + 1];
	int		   *stretch;		/* of each step 1 .. T */
	double	   *c;				/* C's coefficients */
	double	   *inverse;		/* C^-1's */
	double	   *variance;		/* scratch, of each step */
} problem;

/* blt_scaled's stretches: half-octaves of the distance to the horizon */
static void
layout(problem *pb)
{
	int			n = 0;
	int			T = pb->horizon;

	for (int p = 0; p < 126; p++)
	{
		double		distance = floor((double) T * exp2(-(double) p / 2.0));
		long		first = T - (long) distance + 1;

		if (distance < 1.0)
			break;
		if (n == 0 || first > pb->start[n - 1])
			pb->start[n++] = first;
	}
	pb->start[n] = T + 1;
	pb->stretches = n;
	pb->stretch = malloc(sizeof(int) * (T + 2));
	for (int p = 0; p < n; p++)
		for (long t = pb->start[p]; t < pb->start[p + 1]; t++)
			pb->stretch[t] = p;
}

/* C^-1's coefficients from C's: the convolution inverse */
static void
invert(problem *pb)
{
	pb->inverse[0] = 1.0 / pb->c[0];
	for (int k = 1; k < pb->horizon; k++)
	{
		double		sum = 0.0;

		for (int i = 1; i <= k; i++)
			sum += pb->c[i] * pb->inverse[k - i];
		pb->inverse[k] = -sum / pb->c[0];
	}
}

/* C's coefficients: the BLT's, or the square root of A's when blt is NULL */
static void
coefficients(problem *pb, const cc_blt *blt)
{
	pb->c[0] = 1.0;
	for (int k = 1; k < pb->horizon; k++)
	{
		double		ck = 0.0;

		if (blt == NULL)		/* the square root of A: binom(2k, k) / 4^k */
			ck = pb->c[k - 1] * (2.0 * k - 1.0) / (2.0 * k);
		else
			for (int j = 0; j < blt->buffers; j++)
				ck += blt->omega[j] * pow(1.0 - blt->phi[j], k - 1);
		pb->c[k] = ck;
	}
	invert(pb);
}

static void
problem_init(problem *pb, int horizon, const cc_blt *blt)
{
	pb->horizon = horizon;
	pb->c = calloc(horizon, sizeof(double));
	pb->inverse = calloc(horizon, sizeof(double));
	pb->variance = calloc(horizon + 1, sizeof(double));
	layout(pb);
	coefficients(pb, blt);
}

/* sum_{t>=j} c_{t-j}^2 / g_{p(t)}: column j of S C, squared */
static double
weighted_column(const problem *pb, const double *g, long j)
{
	double		sum = 0.0;

	for (long t = j; t <= pb->horizon; t++)
		sum += pb->c[t - j] * pb->c[t - j] / g[pb->stretch[t]];
	return sum;
}

/*
 * m_p = 1 / sqrt(the largest weighted column of stretch p), or of its first
 * column only when first_only: every stretch then claims sensitivity 1.
 */
static void
equalize(const problem *pb, const double *g, bool first_only, double *m)
{
	for (int p = 0; p < pb->stretches; p++)
	{
		long		last = first_only ? pb->start[p] : pb->start[p + 1] - 1;
		double		largest = 0.0;

		for (long j = pb->start[p]; j <= last; j++)
			largest = fmax(largest, weighted_column(pb, g, j));
		m[p] = 1.0 / sqrt(largest);
	}
}

/* The true sensitivity squared: the largest column of S C D, every column read */
static double
sensitivity2(const problem *pb, const double *g, const double *m)
{
	double		largest = 0.0;

	for (long j = 1; j <= pb->horizon; j++)
	{
		double		mj = m[pb->stretch[j]];

		largest = fmax(largest, mj * mj * weighted_column(pb, g, j));
	}
	return largest;
}

/*
 * Mean and worst of the variance for sensitivity squared s2: the noise of
 * step k reaches release t with weight W_k(t) = sum_{i=k}^{t} c'_{i-k} / m_i
 * and has variance s2 g_{p(k)}.
 */
static void
variances(const problem *pb, const double *g, const double *m, double s2,
		  double *mean, double *worst)
{
	int			T = pb->horizon;

	for (int t = 0; t <= T; t++)
		pb->variance[t] = 0.0;
	for (long k = 1; k <= T; k++)
	{
		double		w = 0.0;

		for (long t = k; t <= T; t++)
		{
			w += pb->inverse[t - k] / m[pb->stretch[t]];
			pb->variance[t] += w * w * g[pb->stretch[k]];
		}
	}
	*mean = 0.0;
	*worst = 0.0;
	for (long t = 1; t <= T; t++)
	{
		*mean += s2 * pb->variance[t] / T;
		*worst = fmax(*worst, s2 * pb->variance[t]);
	}
}

/* The mean the search sees: sensitivity 1 as equalize() claims it */
static double
claimed_mean(const problem *pb, const double *g, bool first_only, double *m)
{
	double		mean;
	double		worst;

	equalize(pb, g, first_only, m);
	variances(pb, g, m, 1.0, &mean, &worst);
	return mean;
}

/* Coordinate descent over log g_p, steps halving when none helps. */
static void
search(const problem *pb, double *g, bool first_only)
{
	double		m[MAX_STRETCHES];
	double		best = claimed_mean(pb, g, first_only, m);
	double		step = 0.2;

	while (step >= 1e-3)
	{
		bool		improved = false;

		for (int p = 0; p < pb->stretches; p++)
			for (int sign = -1; sign <= 1; sign += 2)
			{
				double		old = g[p];
				double		mean;

				g[p] = old * exp(sign * step);
				mean = claimed_mean(pb, g, first_only, m);
				if (mean < best - 1e-9)
				{
					best = mean;
					improved = true;
				}
				else
					g[p] = old;
			}
		if (!improved)
			step /= 2.0;
	}
}

/*
 * The BLT searched for the mean, by coordinate descent over log phi_j and
 * log omega_j (a BLT that blt.c refuses counts as infinitely bad), with
 * one noise variance: blt_scaled's factorization with a table made for the
 * mean where blt's is made for the worst step.
 */
static void
search_blt(problem *pb, cc_blt *blt, const double *g)
{
	double		m[MAX_STRETCHES];
	double		best = claimed_mean(pb, g, false, m);
	double		step = 0.3;

	while (step >= 1e-3)
	{
		bool		improved = false;

		for (int k = 0; k < 2 * blt->buffers; k++)
			for (int sign = -1; sign <= 1; sign += 2)
			{
				double	   *x = k < blt->buffers ? &blt->phi[k] : &blt->omega[k - blt->buffers];
				double		old = *x;
				cc_blt_noise noise;
				double		mean = INFINITY;

				*x = old * exp(sign * step);
				if (blt->phi[k % blt->buffers] < 1.0 && cc_blt_noise_of(blt, &noise))
				{
					coefficients(pb, blt);
					mean = claimed_mean(pb, g, false, m);
				}
				if (mean < best - 1e-9)
				{
					best = mean;
					improved = true;
				}
				else
					*x = old;
			}
		if (!improved)
			step /= 2.0;
	}
	coefficients(pb, blt);
}

/* One row: what the search claims, and the truth of its answer. */
static void
report_row(const problem *pb, const char *name, double *g, bool first_only)
{
	double		m[MAX_STRETCHES];
	double		claimed;
	double		worst;
	double		mean;
	double		s2;

	equalize(pb, g, first_only, m);
	variances(pb, g, m, 1.0, &claimed, &worst);
	s2 = sensitivity2(pb, g, m);
	variances(pb, g, m, s2, &mean, &worst);
	printf("| %d | %s | %.3f | %.3f / %.3f |\n", pb->horizon, name, claimed, mean, worst);
}

/* The square root of A with every column scaled to the first's norm */
static void
normalized_root(int horizon)
{
	problem		pb;
	double	   *m = calloc(horizon + 2, sizeof(double));
	double		sum = 0.0;
	double		top;
	double		mean = 0.0;
	double		worst = 0.0;

	problem_init(&pb, horizon, NULL);
	for (int k = 0; k < horizon; k++)
		sum += pb.c[k] * pb.c[k];
	top = sum;
	/* step t's column has T - t + 1 rows: m_t = sqrt(top / its norm) */
	sum = 0.0;
	for (int rows = 1; rows <= horizon; rows++)
	{
		sum += pb.c[rows - 1] * pb.c[rows - 1];
		m[horizon - rows + 1] = sqrt(top / sum);
	}
	for (int t = 0; t <= horizon; t++)
		pb.variance[t] = 0.0;
	for (long k = 1; k <= horizon; k++)
	{
		double		w = 0.0;

		for (long t = k; t <= horizon; t++)
		{
			w += pb.inverse[t - k] / m[t];
			pb.variance[t] += w * w * top;
		}
	}
	for (long t = 1; t <= horizon; t++)
	{
		mean += pb.variance[t] / horizon;
		worst = fmax(worst, pb.variance[t]);
	}
	printf("| %d | square root, every column normalized | - | %.3f / %.3f |\n",
		   horizon, mean, worst);
}

static void
horizon_rows(int horizon, bool searched)
{
	problem		pb;
	cc_blt		blt;
	double		g[MAX_STRETCHES];
	int			entry = 0;

	while ((1 << entry) < horizon)
		entry++;
	cc_blt_of_entry(&cc_blt_table[entry], &blt);
	problem_init(&pb, horizon, &blt);
	for (int p = 0; p < pb.stretches; p++)
		g[p] = 1.0;
	report_row(&pb, "blt_scaled (one noise variance)", g, false);
	if (searched)
	{
		search(&pb, g, false);
		report_row(&pb, "a variance a stretch, every column read", g, false);
		for (int p = 0; p < pb.stretches; p++)
			g[p] = 1.0;
		search(&pb, g, true);
		report_row(&pb, "a variance a stretch, first columns only", g, true);
		for (int p = 0; p < pb.stretches; p++)
			g[p] = 1.0;
	}
	search_blt(&pb, &blt, g);
	report_row(&pb, "BLT searched for the mean", g, false);
	if (searched)
	{
		search(&pb, g, false);
		report_row(&pb, "BLT for the mean, then a variance a stretch", g, false);
	}
	normalized_root(horizon);
	printf("| %d | lower bound, any factorization | - | %.3f / - |\n", horizon,
		   pow(0.701 + log((double) horizon) / M_PI, 2.0));
}

int
main(void)
{
	printf("| T | factorization | mean the search claims | true mean / worst |\n");
	printf("|---|---|---|---|\n");
	horizon_rows(1000, true);
	horizon_rows(4096, false);
	return 0;
}
