/*
 * privacy_region.c
 *		The (epsilon, delta) curves of a few example ledgers from their
 *		privacy regions (src/core/privacy_region.c), next to what zCDP and
 *		basic composition would give for the same charges.
 *
 *	cc -O2 -Isrc/core report/privacy_region.c src/core/[a-z]*.c -lm -o /tmp/privacy_region
 *	/tmp/privacy_region [dir]
 *
 * Prints epsilon at delta = 1e-3, 1e-6, 1e-9 for each ledger: from the
 * region; from rho-zCDP, the ledger's charges adding up to rho = sum
 * epsilon^2/2 + sum rho, by rho + 2 sqrt(rho ln(1/delta)) and by Canonne,
 * Kamath and Steinke's conversion (2020, Prop. 12); and by basic
 * composition, the sum of the pure epsilons plus the Gaussian part's own
 * epsilon at delta.  Then delta at a few epsilons.  With dir, also writes
 * dir/privacy_curves.csv for report/privacy_region.gp.  The Gaussian
 * mechanisms' ledgers hold what their releases record (cc_params_cost):
 * gaussian_honaker of sensitivity 1 exactly (as the "tree" ledger), of
 * sensitivity 3 and blt by their bounds.
 */
#include "mechanism.h"
#include "privacy_region.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CHARGES 3001

typedef struct ledger
{
	const char *name;
	int			n;
	cc_charge	charges[MAX_CHARGES];
} ledger;

/* One release of kind at rho, T = 2^20, as its ledger records it. */
static cc_charge
recorded(cc_kind kind, double rho, int64_t sensitivity)
{
	cc_params	p;
	cc_charge	c;

	memset(&p, 0, sizeof(p));
	p.kind = kind;
	p.privacy = CC_ZCDP;
	cc_rho_units(rho, &p.rho_units);
	p.has_horizon = true;
	p.horizon = INT64_C(1) << 20;
	p.sensitivity = sensitivity;
	p.beta = 0.05;
	if (cc_params_prepare(&p) != CC_OK)
	{
		fprintf(stderr, "%s: parameters refused\n", cc_kind_name(kind));
		exit(1);
	}
	cc_charge_of_cost(cc_params_cost(&p), 1, &c);
	return c;
}

static void
add(ledger *l, cc_charge c, int times)
{
	for (int i = 0; i < times; i++)
		l->charges[l->n++] = c;
}

/* The rho a zCDP ledger would hold, and the pure and Gaussian parts. */
static void
totals(const ledger *l, double *rho, double *pure_sum, cc_charge *gaussian_part,
	   int *ngaussian)
{
	*rho = *pure_sum = 0.0;
	*ngaussian = 0;
	for (int i = 0; i < l->n; i++)
	{
		const cc_charge *c = &l->charges[i];
		double		eps = (double) c->epsilon_units * 1e-9;
		double		D = (double) c->sensitivity;
		double		count = (double) c->count;

		switch (c->kind)
		{
			case CC_CHARGE_PURE:
				*rho += count * eps * eps / 2;
				*pure_sum += count * eps;
				break;
			case CC_CHARGE_GAUSSIAN:
			case CC_CHARGE_DGAUSS_BOUND:
			case CC_CHARGE_ZCDP:
				*rho += count * c->rho;
				gaussian_part[(*ngaussian)++] = *c;
				break;
			case CC_CHARGE_DGAUSS:
				*rho += count * D * D * (double) c->sigma2.den / (2.0 * (double) c->sigma2.num);
				gaussian_part[(*ngaussian)++] = *c;
				break;
		}
	}
}

static double
zcdp_epsilon(double rho, double delta)
{
	return rho + 2 * sqrt(rho * log(1 / delta));
}

static double
zcdp_delta(double rho, double epsilon)
{
	return epsilon <= rho ? 1.0 : fmin(1.0, exp(-(epsilon - rho) * (epsilon - rho) / (4 * rho)));
}

/* Canonne, Kamath and Steinke, Prop. 12, minimized over a fine grid of alpha. */
static double
cks_epsilon(double rho, double delta)
{
	double		best = INFINITY;

	for (int k = -4000; k <= 4000; k++)
	{
		double		a = 1 + pow(10, k / 1000.0);
		double		e = a * rho + (log(1 / delta) + (a - 1) * log1p(-1 / a) - log(a)) / (a - 1);

		best = fmin(best, e);
	}
	return fmax(best, 0.0);
}

static double
cks_delta(double rho, double epsilon)
{
	double		best = 1.0;

	for (int k = -4000; k <= 4000; k++)
	{
		double		a = 1 + pow(10, k / 1000.0);

		best = fmin(best, exp((a - 1) * (a * rho - epsilon) + (a - 1) * log1p(-1 / a) - log(a)));
	}
	return best;
}

static cc_privacy_curve *
build(const cc_charge *charges, int n, double *ms)
{
	cc_privacy_curve *c;
	clock_t		start = clock();

	if (cc_privacy_curve_build(charges, n, NULL, &c) != CC_REGION_OK)
	{
		fprintf(stderr, "build failed\n");
		exit(1);
	}
	if (ms)
		*ms = (clock() - start) * 1000.0 / CLOCKS_PER_SEC;
	return c;
}

int
main(int argc, char **argv)
{
	static ledger ledgers[10];
	static cc_charge gaussian_part[MAX_CHARGES];
	const double deltas[] = {1e-3, 1e-6, 1e-9};
	const double epsilons[] = {0.5, 1, 2, 3, 5};
	int			nledgers = 0;
	ledger	   *l;
	FILE	   *csv = NULL;

	l = &ledgers[nledgers++];
	l->name = "10 x epsilon 0.1";
	add(l, cc_charge_pure(0.1), 10);
	l = &ledgers[nledgers++];
	l->name = "100 x epsilon 0.01";
	add(l, cc_charge_pure(0.01), 100);
	l = &ledgers[nledgers++];
	l->name = "rho 1/32";
	add(l, cc_charge_rho(1.0 / 32), 1);
	l = &ledgers[nledgers++];
	l->name = "rho 0.5";
	add(l, cc_charge_rho(0.5), 1);
	l = &ledgers[nledgers++];
	l->name = "tree: 21 dgauss s2 21";
	add(l, cc_charge_dgauss((cc_scale) {21, 1}, 1), 21);
	l = &ledgers[nledgers++];
	l->name = "10 x 0.1 + rho 0.5";
	add(l, cc_charge_pure(0.1), 10);
	add(l, cc_charge_rho(0.5), 1);
	l = &ledgers[nledgers++];
	l->name = "3000: 5 eps, rho";
	for (int i = 0; i < 2000; i++)
		add(l, cc_charge_pure(0.01 * (1 + i % 5)), 1);
	add(l, cc_charge_rho(0.001), 1000);
	l = &ledgers[nledgers++];
	l->name = "gaussian_honaker 0.5";
	add(l, recorded(CC_GAUSSIAN_HONAKER, 0.5, 1), 1);
	l = &ledgers[nledgers++];
	l->name = "g_honaker 0.5, sens 3";
	add(l, recorded(CC_GAUSSIAN_HONAKER, 0.5, 3), 1);
	l = &ledgers[nledgers++];
	l->name = "blt 0.5";
	add(l, recorded(CC_BLT, 0.5, 1), 1);

	if (argc > 1)
	{
		char		path[4096];

		snprintf(path, sizeof(path), "%s/privacy_curves.csv", argv[1]);
		csv = fopen(path, "w");
		if (csv == NULL)
		{
			perror(path);
			return 1;
		}
	}

	printf("epsilon at delta: region | zCDP rho + 2 sqrt(rho ln 1/delta) | CKS conversion | basic\n");
	printf("%-22s %6s %9s  %8s %8s %8s %8s  %7s\n", "ledger", "rho", "delta", "region",
		   "zCDP", "CKS", "basic", "build");
	for (int i = 0; i < nledgers; i++)
	{
		double		rho;
		double		pure_sum;
		int			ng;
		double		ms;
		cc_privacy_curve *c;
		cc_privacy_curve *g;

		l = &ledgers[i];
		totals(l, &rho, &pure_sum, gaussian_part, &ng);
		c = build(l->charges, l->n, &ms);
		g = build(gaussian_part, ng, NULL);
		for (int d = 0; d < 3; d++)
		{
			double		basic = pure_sum + cc_privacy_curve_epsilon(g, deltas[d]);

			printf("%-22s %6.4g %9.0e  %8.4f %8.4f %8.4f %8.4f", d == 0 ? l->name : "",
				   rho, deltas[d], cc_privacy_curve_epsilon(c, deltas[d]),
				   zcdp_epsilon(rho, deltas[d]), cks_epsilon(rho, deltas[d]), basic);
			if (d == 0)
				printf("  %5.1fms", ms);
			printf("\n");
		}
		cc_privacy_curve_free(c);
		cc_privacy_curve_free(g);
	}

	printf("\ndelta at epsilon: region (zCDP, CKS)\n%-22s", "ledger");
	for (int e = 0; e < 5; e++)
		printf("   epsilon %-17g", epsilons[e]);
	printf("\n");
	for (int i = 0; i < nledgers; i++)
	{
		double		rho;
		double		pure_sum;
		int			ng;
		cc_privacy_curve *c;

		l = &ledgers[i];
		totals(l, &rho, &pure_sum, gaussian_part, &ng);
		c = build(l->charges, l->n, NULL);
		printf("%-22s", l->name);
		for (int e = 0; e < 5; e++)
			printf("   %8.2e (%7.1e %7.1e)", cc_privacy_curve_delta(c, epsilons[e]),
				   zcdp_delta(rho, epsilons[e]), cks_delta(rho, epsilons[e]));
		printf("\n");
		if (csv != NULL && (i == 0 || i == 2 || i == 3 || i == 4 || i == 5 || i == 8))
		{
			for (double e = 0.0; e <= 8.0; e += 0.02)
				fprintf(csv, "%d,%g,%.6e,%.6e,%.6e\n", i, e, cc_privacy_curve_delta(c, e),
						zcdp_delta(rho, e), cks_delta(rho, e));
			fprintf(csv, "\n\n");
		}
		cc_privacy_curve_free(c);
	}
	if (csv != NULL)
		fclose(csv);
	return 0;
}
