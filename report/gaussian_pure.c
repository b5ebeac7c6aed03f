/*
 * gaussian_pure.c
 *		The error against t of the Gaussian mechanisms next to the pure ones
 *		at the same (epsilon, delta).
 *
 *	cc -O2 -Isrc/core report/gaussian_pure.c src/core/[a-z]*.c -lm -o gaussian_pure
 *	./gaussian_pure [log2 T] [dir]
 *
 * A pure mechanism at epsilon is (epsilon, 0)-DP, so (epsilon, delta)-DP.
 * A Gaussian mechanism is run at the largest rho whose release, as the
 * ledger records it (cc_params_cost: its discrete Gaussian noise, how many
 * coordinates move and by how much), has a tight curve
 * (src/core/privacy_region.c) giving epsilon at delta; next to it the rho
 * the zCDP conversion alone would allow (Canonne, Kamath and Steinke), to
 * show what the curve is worth.  Sensitivity 1, one release a stream.
 *
 * The variances are the states' own (exact, from the formulas; they do
 * not depend on the items or the noise drawn), read at every step of a
 * stream of zeros.  Prints, for each (epsilon, delta), the rhos and each
 * mechanism's mean and worst variance over the horizon; with dir, writes
 * dir/gaussian_pure.csv (t, then each mechanism's root mean variance over
 * T/1024 steps) for the first pair, for report/gaussian_pure.gp.
 */
#include "mechanism.h"
#include "privacy_region.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A fixed source: the variances do not depend on the noise drawn. */
static uint64_t words[8];

static void
refill(cc_rng *rng)
{
	for (int i = 0; i < 8; i++)
		words[i] = words[i] * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	rng->next = 0;
	rng->count = 8;
}

static bool
params_of(cc_kind kind, double budget, int64_t horizon, cc_params *p)
{
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->privacy = cc_kind_privacy(kind);
	if (p->privacy == CC_ZCDP ? cc_rho_units(budget, &p->rho_units) != CC_OK :
		cc_epsilon_units(budget, &p->epsilon_units) != CC_OK)
		return false;
	p->has_horizon = true;
	p->horizon = horizon;
	p->sensitivity = 1;
	p->beta = 0.05;
	return cc_params_prepare(p) == CC_OK;
}

/* epsilon at delta of one release of kind at rho, from what it records */
static double
curve_epsilon(cc_kind kind, double rho, int64_t horizon, double delta)
{
	cc_params	p;
	cc_charge	ch;
	cc_privacy_curve *c;
	double		e;

	if (!params_of(kind, rho, horizon, &p))
		return INFINITY;
	cc_charge_of_cost(cc_params_cost(&p), 1, &ch);
	if (cc_privacy_curve_build(&ch, 1, NULL, &c) != CC_REGION_OK)
		return INFINITY;
	e = cc_privacy_curve_epsilon(c, delta);
	cc_privacy_curve_free(c);
	return e;
}

/*
 * The largest rho (to 1e-9 relative, in ln rho) whose epsilon at delta is at
 * most epsilon: by the curve (kind's record) or, kind < 0, by the zCDP
 * conversion.  Both grow with rho.
 */
static double
largest_rho(int kind, int64_t horizon, double epsilon, double delta)
{
	double		lo = log(1e-6);
	double		hi = log(1e3);

	for (int it = 0; it < 60; it++)
	{
		double		mid = 0.5 * (lo + hi);
		double		e = kind < 0 ? cc_zcdp_epsilon(exp(mid), delta) :
			curve_epsilon((cc_kind) kind, exp(mid), horizon, delta);

		if (e <= epsilon)
			lo = mid;
		else
			hi = mid;
	}
	/* rho is held in units of 1e-9: round down to one */
	return floor(exp(lo) * 1e9) / 1e9;
}

enum
{
	NMECH = 6
};

int
main(int argc, char **argv)
{
	int			bits = argc > 1 ? atoi(argv[1]) : 20;
	int64_t		T = INT64_C(1) << bits;
	const double pairs[][2] = {{1.0, 1e-6}, {0.5, 1e-9}, {2.0, 1e-6}};
	FILE	   *csv = NULL;

	if (argc > 2)
	{
		char		path[4096];

		snprintf(path, sizeof(path), "%s/gaussian_pure.csv", argv[2]);
		csv = fopen(path, "w");
		if (csv == NULL)
		{
			perror(path);
			return 1;
		}
	}
	printf("T = 2^%d, sensitivity 1: variance of the release, mean and worst over the steps\n", bits);
	for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++)
	{
		double		epsilon = pairs[k][0];
		double		delta = pairs[k][1];
		double		rho_honaker = largest_rho(CC_GAUSSIAN_HONAKER, T, epsilon, delta);
		double		rho_blt = largest_rho(CC_BLT, T, epsilon, delta);
		double		rho_cks = largest_rho(-1, T, epsilon, delta);
		const char *names[NMECH] = {"binary", "honaker", "smooth_binary", "gaussian_honaker",
		"blt", "blt (zCDP conversion)"};
		cc_kind		kinds[NMECH] = {CC_BINARY, CC_HONAKER, CC_SMOOTH_BINARY,
		CC_GAUSSIAN_HONAKER, CC_BLT, CC_BLT};
		double		budgets[NMECH] = {epsilon, epsilon, epsilon, rho_honaker, rho_blt, rho_cks};
		cc_state   *states[NMECH];
		double		sum[NMECH] = {0};
		double		worst[NMECH] = {0};
		double		window[NMECH] = {0};
		int64_t		per_window = T >= 1024 ? T / 1024 : 1;
		cc_rng		rng = {.words = words,.refill = refill};

		printf("\n(epsilon, delta) = (%g, %g): rho %.6f for gaussian_honaker, %.6f for blt by their "
			   "curves, %.6f by the zCDP conversion\n", epsilon, delta, rho_honaker, rho_blt, rho_cks);
		for (int m = 0; m < NMECH; m++)
		{
			cc_params	p;

			if (!params_of(kinds[m], budgets[m], T, &p))
			{
				fprintf(stderr, "%s: parameters refused\n", names[m]);
				return 1;
			}
			states[m] = malloc(cc_state_size(&p));
			cc_state_init(states[m], &p);
		}
		for (int64_t t = 1; t <= T; t++)
		{
			for (int m = 0; m < NMECH; m++)
			{
				cc_release r;

				cc_push(states[m], 0, &rng);
				cc_read(states[m], &r);
				sum[m] += r.variance;
				window[m] += r.variance;
				if (r.variance > worst[m])
					worst[m] = r.variance;
			}
			if (csv != NULL && k == 0 && t % per_window == 0)
			{
				fprintf(csv, "%lld", (long long) t);
				for (int m = 0; m < NMECH; m++)
					fprintf(csv, ",%.6g", sqrt(window[m] / (double) per_window));
				fprintf(csv, "\n");
			}
			if (t % per_window == 0)
				memset(window, 0, sizeof(window));
		}
		printf("%-22s %12s %12s %10s\n", "mechanism", "mean", "worst", "vs binary");
		for (int m = 0; m < NMECH; m++)
		{
			printf("%-22s %12.2f %12.2f %10.3f\n", names[m], sum[m] / (double) T, worst[m],
				   sum[m] / sum[0]);
			free(states[m]);
		}
	}
	if (csv != NULL)
		fclose(csv);
	return 0;
}
