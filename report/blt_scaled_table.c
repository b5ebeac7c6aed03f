/*
 * blt_scaled_table.c
 *		The parameters of mechanism blt_scaled: for each horizon 2^k,
 *		k = 0 .. 40, the BLT of at most CC_BLT_SCALED_BUFFERS buffers of least
 *		mean variance under blt_scaled's input scaling, written as
 *		src/core/blt_scaled_table.c.
 *
 *	cc -O2 -Isrc/core report/blt_scaled_table.c src/core/blt.c src/core/blt_table.c \
 *		src/core/blt_scaled_table.c -lm -o blt_scaled_table
 *	./blt_scaled_table > src/core/blt_scaled_table.c
 *
 * blt's table (report/blt_table.c) is made for blt's worst step; under
 * blt_scaled's scaling every column is used fully and the mean is what is
 * left to win, and the four buffers that suffice for blt's worst step leave
 * the mean well above its frontier at long horizons (3% at 2^20, 40% at
 * 2^40).  The objective here is blt_scaled's mean variance at T = 2^k, at
 * rho = 1/2 and sensitivity 1, computed as mech_blt_scaled.c's head states
 * it (its closed forms again, in doubles, with the multipliers as real
 * numbers): the variance of step t is m_0^2 ||c(T)||^2 sum_k W_k(t)^2, the
 * W of the stretches' sums X(e_q, t).  Constraints, as penalties: at T = 2^k,
 * at the entry's shortest horizon 2^(k-1) + 1 and wherever the sweep below
 * finds it needed, the worst step (read at 16 steps a stretch) and the mean
 * may not exceed what blt's own entry gives under the same scaling, so that
 * the table is an improvement everywhere it serves; and no phi_j may be below the least of blt's entry, which keeps
 * the buffers' magnitudes within mech_blt_scaled.c's overflow analysis.
 *
 * The search is coordinate descent over ln(phi_j) and ln(omega_j), the
 * step halving when no coordinate improves, from the table the program was
 * built with (alone where it already beats blt's entry: running the
 * program again refines the table), else also from blt's entry
 * padded with buffers (one slower, the others faster) and from the
 * previous horizon's optimum (its phi halved); the best is kept, and blt's
 * entry itself when nothing beats it.  A sweep of 32 horizons of the
 * entry's range then checks the constraints there too, and holds the
 * search at a horizon where they fail, until none does.
 *
 * Nothing private depends on this search: the mechanism takes the table as
 * it is, exact integers, and computes its sensitivity and variance from
 * them.  A better search only lowers the variance.
 */
#include "blt.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define STRETCHES 128
#define SAMPLES 16

/* blt_scaled's stretches: half-octaves of the distance to the horizon */
static int
layout(double horizon, double *start)
{
	int			n = 0;

	for (int p = 0; p < 126; p++)
	{
		double		distance = floor(horizon * exp2(-(double) p / 2.0));
		double		first = horizon - distance + 1.0;

		if (distance < 1.0)
			break;
		if (n == 0 || first > start[n - 1])
			start[n++] = first;
	}
	start[n] = horizon + 1.0;
	return n;
}

static double
decay(const cc_blt_noise *nz, int l, double k)
{
	return exp(k * nz->log_theta[l]);
}

/*
 * The sums over the stretches before each one (mech_blt_scaled.c's
 * stretch_sums()): level, tail and earlier of stretch p.
 */
static void
stretch_sums(const cc_blt_noise *nz, int n, const double *start, const double *inv,
			 double *level, double (*tail)[CC_BLT_MAX_BUFFERS], double *earlier)
{
	memset(tail[0], 0, sizeof(tail[0]));
	level[0] = earlier[0] = 0.0;
	for (int p = 0; p + 1 < n; p++)
	{
		double		e = start[p + 1] - 1.0;
		double		len = start[p + 1] - start[p];
		double		delta = inv[p] - inv[p + 1];
		double		cross = level[p];
		double		flat = nz->beta * nz->beta * e;
		double		squares = cc_blt_step_error(nz, e, NULL);

		for (int l = 0; l < nz->buffers; l++)
		{
			double		g = cc_geometric_sum(nz->phi[l], e);
			double		pairs = nz->beta * g;

			for (int j = 0; j < nz->buffers; j++)
				pairs += nz->alpha[j] *
					cc_geometric_sum(nz->phi[j] + nz->phi[l] - nz->phi[j] * nz->phi[l], e);
			cross += tail[p][l] * decay(nz, l, len - 1.0);
			flat += nz->beta * nz->alpha[l] * g;
			tail[p + 1][l] = decay(nz, l, len) * tail[p][l] +
				delta * decay(nz, l, 1.0) * nz->alpha[l] * pairs;
		}
		earlier[p + 1] = earlier[p] + 2.0 * delta * cross + delta * delta * squares;
		level[p + 1] = level[p] + delta * flat;
	}
}

/* blt_scaled's mean and (sampled) worst variance for a BLT; false if invalid */
static bool
scaled_variance(const cc_blt *blt, double horizon, double *mean, double *worst)
{
	cc_blt_noise nz;
	double		start[STRETCHES + 1];
	double		inv[STRETCHES];
	double		level[STRETCHES];
	double		tail[STRETCHES][CC_BLT_MAX_BUFFERS];
	double		earlier[STRETCHES];
	double		top = cc_blt_column_norm2(blt, horizon);
	double		sum = 0.0;
	int			n;

	if (!cc_blt_noise_of(blt, &nz))
		return false;
	n = layout(horizon, start);
	for (int p = 0; p < n; p++)
		inv[p] = fmin(p > 0 ? inv[p - 1] : INFINITY,
					  sqrt(cc_blt_column_norm2(blt, horizon - start[p] + 1.0) / top));
	stretch_sums(&nz, n, start, inv, level, tail, earlier);
	*worst = 0.0;
	for (int p = 0; p < n; p++)
	{
		double		len = start[p + 1] - start[p];
		double		cross = len * level[p];
		int			samples = len < SAMPLES ? (int) len : SAMPLES;

		for (int l = 0; l < nz.buffers; l++)
			cross += tail[p][l] * cc_geometric_sum(nz.phi[l], len);
		sum += inv[p] * inv[p] * (cc_blt_error_sum(&nz, start[p + 1] - 1.0) -
								  cc_blt_error_sum(&nz, start[p] - 1.0)) +
			2.0 * inv[p] * cross + len * earlier[p];
		for (int k = 0; k < samples; k++)
		{
			double		t = start[p] + floor((len - 1.0) * k / (samples > 1 ? samples - 1 : 1));
			double		at = level[p];

			for (int l = 0; l < nz.buffers; l++)
				at += tail[p][l] * decay(&nz, l, t - start[p]);
			*worst = fmax(*worst, inv[p] * inv[p] * cc_blt_step_error(&nz, t, NULL) +
						  2.0 * inv[p] * at + earlier[p]);
		}
	}
	/* sensitivity squared: m_0^2 ||c(T)||^2 = top / inv_0^2 */
	*mean = top / (inv[0] * inv[0]) * sum / horizon;
	*worst *= top / (inv[0] * inv[0]);
	return true;
}

/*
 * What the search is held to: at each of its horizons, blt's entry under
 * the same scaling; the first horizon is 2^k, whose mean is the objective.
 */
#define MAX_HELD 8

typedef struct limits
{
	int			held;
	double		horizon[MAX_HELD];
	double		mean[MAX_HELD];
	double		worst[MAX_HELD];
	double		least_phi;
	cc_blt		old;
} limits;

static void
hold(limits *lim, double horizon)
{
	int			h = lim->held++;

	lim->horizon[h] = horizon;
	scaled_variance(&lim->old, horizon, &lim->mean[h], &lim->worst[h]);
}

static double
objective(const cc_blt *blt, const limits *lim)
{
	double		value = INFINITY;

	for (int j = 0; j < blt->buffers; j++)
		if (!(blt->phi[j] >= lim->least_phi && blt->phi[j] < 1.0))
			return INFINITY;
	for (int h = 0; h < lim->held; h++)
	{
		double		mean;
		double		worst;

		if (!scaled_variance(blt, lim->horizon[h], &mean, &worst))
			return INFINITY;
		if (h == 0)
			value = mean;
		value += 1e3 * (fmax(0.0, worst - lim->worst[h]) + fmax(0.0, mean - lim->mean[h]));
	}
	return value;
}

/*
 * A horizon of the entry's range (2^(k-1), 2^k], of 32 spread evenly in
 * log, where blt gives less mean or worst than the candidate; 0 if none.
 */
static double
exceeded(const cc_blt *blt, const limits *lim, int k)
{
	double		low = k > 0 ? ldexp(1.0, k - 1) + 1.0 : 1.0;

	for (int i = 0; i < 32 && k > 0; i++)
	{
		double		horizon = floor(low * pow(ldexp(1.0, k) / low, i / 31.0));
		double		mean;
		double		worst;
		double		was_mean;
		double		was_worst;

		scaled_variance(blt, horizon, &mean, &worst);
		scaled_variance(&lim->old, horizon, &was_mean, &was_worst);
		if (mean > was_mean || worst > was_worst)
			return horizon;
	}
	return 0.0;
}

/* Coordinate descent in logs from blt; blt gets the best point. */
static double
descend(cc_blt *blt, const limits *lim)
{
	double		best = objective(blt, lim);
	double		step = 0.5;

	while (step > 1e-5 && isfinite(best))
	{
		bool		improved = false;

		for (int k = 0; k < 2 * blt->buffers; k++)
			for (int sign = -1; sign <= 1; sign += 2)
			{
				double	   *x = k < blt->buffers ? &blt->phi[k] : &blt->omega[k - blt->buffers];
				double		old = *x;
				double		f;

				*x = old * exp(sign * step);
				f = objective(blt, lim);
				if (f < best - 1e-12 * best)
				{
					best = f;
					improved = true;
				}
				else
					*x = old;
			}
		if (!improved)
			step /= 2.0;
	}
	return best;
}

/* blt's entry with buffers added: one slower than its slowest, the rest faster */
static void
padded(const cc_blt *from, cc_blt *to)
{
	double		slowest = 1.0;

	*to = *from;
	for (int j = 0; j < from->buffers; j++)
		slowest = fmin(slowest, from->phi[j]);
	for (int j = from->buffers; j < CC_BLT_SCALED_BUFFERS; j++)
	{
		to->phi[j] = j == from->buffers ? fmin(2.0 * slowest, 0.5) : fmin(0.9, 0.3 * (j - from->buffers));
		to->omega[j] = 1e-3;
	}
	to->buffers = CC_BLT_SCALED_BUFFERS;
}

/* The table's integers: phi and omega times 2^62, rounded. */
static void
quantize(const cc_blt *blt, cc_blt_entry *entry)
{
	memset(entry, 0, sizeof(*entry));
	entry->buffers = blt->buffers;
	for (int j = 0; j < blt->buffers; j++)
	{
		entry->phi[j] = (uint64_t) llround(ldexp(blt->phi[j], 62));
		entry->omega[j] = (uint64_t) llround(ldexp(blt->omega[j], 62));
	}
}

static void
set_limits(int k, const cc_blt *old, limits *lim)
{
	lim->old = *old;
	lim->held = 0;
	lim->least_phi = 1.0;
	for (int j = 0; j < old->buffers; j++)
		lim->least_phi = fmin(lim->least_phi, old->phi[j]);
	hold(lim, ldexp(1.0, k));
	if (k > 0)
		hold(lim, ldexp(1.0, k - 1) + 1.0);
}

/*
 * The search from each start, held at the horizons where a sweep of the
 * range finds it above blt's entry, until none is (or MAX_HELD are held);
 * false if it never gets there.
 */
static bool
search(int k, const cc_blt *starts, int count, limits *lim, cc_blt *best)
{
	for (;;)
	{
		double		f = objective(&lim->old, lim);
		double		over;

		*best = lim->old;
		for (int i = 0; i < count; i++)
		{
			cc_blt		candidate = starts[i];

			if (descend(&candidate, lim) < f)
			{
				*best = candidate;
				f = objective(best, lim);
			}
		}
		over = exceeded(best, lim, k);
		if (over == 0.0)
			return true;
		if (lim->held == MAX_HELD)
			return false;
		hold(lim, over);
	}
}

static void
print_entry(int k, const cc_blt_entry *entry, double mean, double was)
{
	printf("\t/* 2^%d: mean %.6f (blt's entry: %.6f) */\n\t{%lld, {", k, mean, was,
		   (long long) entry->buffers);
	for (int j = 0; j < CC_BLT_SCALED_BUFFERS; j++)
		printf("%s%llu", j ? ", " : "", (unsigned long long) entry->phi[j]);
	printf("},\n\t{");
	for (int j = 0; j < CC_BLT_SCALED_BUFFERS; j++)
		printf("%s%llu", j ? ", " : "", (unsigned long long) entry->omega[j]);
	printf("}},\n");
	fflush(stdout);
}

int
main(void)
{
	cc_blt		previous;
	bool		have_previous = false;

	printf("/*\n * blt_scaled_table.c\n *\t\tThe BLTs of mechanism blt_scaled, one a horizon 2^k: "
		   "written by\n *\t\treport/blt_scaled_table.c (see there), not by hand.\n *\n"
		   " * phi_j = 1 - theta_j and omega_j, times 2^62.  mean: the mean variance at\n"
		   " * rho = 1/2 and sensitivity 1 over T = 2^k, as the search measured it.\n */\n"
		   "#include \"blt.h\"\n\nconst cc_blt_entry cc_blt_scaled_table[CC_BLT_ENTRIES] = {\n");
	for (int k = 0; k < CC_BLT_ENTRIES; k++)
	{
		cc_blt		old;
		cc_blt		best;
		cc_blt		starts[3];
		int			count = 0;
		cc_blt_entry entry;
		limits		lim;
		double		was;

		cc_blt_of_entry(&cc_blt_table[k], &old);
		set_limits(k, &old, &lim);
		was = objective(&old, &lim);
		/* the table this program was built with: refined alone if it wins */
		cc_blt_of_entry(&cc_blt_scaled_table[k], &starts[count]);
		count += isfinite(objective(&starts[count], &lim)) ? 1 : 0;
		if (count == 0 || !(objective(&starts[0], &lim) < was))
			padded(&old, &starts[count++]);
		if (have_previous && count > 1)
		{
			starts[count] = previous;
			for (int j = 0; j < previous.buffers; j++)
				starts[count].phi[j] /= 2.0;
			count++;
		}
		if (!search(k, starts, count, &lim, &best))
			best = old;
		/* the integers, held to the limits as they are */
		quantize(&best, &entry);
		cc_blt_of_entry(&entry, &best);
		if (!(objective(&best, &lim) <= was) || exceeded(&best, &lim, k) != 0.0)
		{
			quantize(&old, &entry);
			cc_blt_of_entry(&entry, &best);
		}
		previous = best;
		have_previous = true;
		print_entry(k, &entry, objective(&best, &lim), was);
	}
	printf("};\n");
	return 0;
}
