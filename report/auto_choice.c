/*
 * auto_choice.c
 *		Which mechanism mechanism "auto" picks as the horizon grows, at
 *		epsilon 1 and sensitivity 1: the README's table and crossings.
 *
 *	cc -O2 -Isrc/core report/auto_choice.c src/core/[a-z]*.c -lm -o auto_choice
 *	./auto_choice [max]
 *
 * Prints, for each horizon of the table, the least mean and the least worst
 * variance over the steps with the runner-up, and then the runs of horizons
 * 1 .. max (default 10^6) with one winner, from every horizon in turn.
 */
#include "choice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cc_params
params_at(cc_kind kind, int64_t horizon)
{
	cc_params	p;

	memset(&p, 0, sizeof(p));
	p.kind = kind;
	cc_epsilon_units(1.0, &p.epsilon_units);
	p.has_horizon = true;
	p.horizon = horizon;
	p.sensitivity = 1;
	p.beta = 0.05;
	return p;
}

/* The least and second least objective at horizon T. */
static void
ranking(int64_t T, cc_objective objective, int *first, double *v1, int *second, double *v2)
{
	*first = *second = -1;
	for (int k = 0; k < CC_NUM_KINDS; k++)
	{
		cc_params	p = params_at((cc_kind) k, T);
		double		mean;
		double		worst;
		double		v;

		if (cc_params_prepare(&p) != CC_OK)
			continue;
		cc_variance_over_horizon(&p, &mean, &worst);
		v = objective == CC_OBJECTIVE_MEAN ? mean : worst;
		if (*first < 0 || v < *v1)
		{
			*second = *first;
			*v2 = *v1;
			*first = k;
			*v1 = v;
		}
		else if (*second < 0 || v < *v2)
		{
			*second = k;
			*v2 = v;
		}
	}
}

int
main(int argc, char **argv)
{
	static const int64_t horizons[] = {10, 100, 1000, 10000, 100000, 1000000,
	1 << 20, 10000000, 100000000};
	int64_t		max = argc > 1 ? atoll(argv[1]) : 1000000;

	printf("| T | least mean variance (next) | least worst variance (next) |\n|---|---|---|\n");
	for (int i = 0; i < (int) (sizeof(horizons) / sizeof(horizons[0])); i++)
	{
		printf("| %lld |", (long long) horizons[i]);
		for (int o = 0; o <= CC_OBJECTIVE_WORST; o++)
		{
			int			first;
			int			second;
			double		v1 = 0;
			double		v2 = 0;

			ranking(horizons[i], (cc_objective) o, &first, &v1, &second, &v2);
			printf(" `%s` %.4g (`%s` %.4g) |", cc_kind_name((cc_kind) first), v1,
				   cc_kind_name((cc_kind) second), v2);
		}
		printf("\n");
	}

	for (int o = 0; o <= CC_OBJECTIVE_WORST; o++)
	{
		int			winner = -1;
		int64_t		start = 1;

		printf("\nleast %s variance, T = 1 .. %lld:\n",
			   cc_objective_name((cc_objective) o), (long long) max);
		for (int64_t T = 1; T <= max + 1; T++)
		{
			cc_params	p = params_at(CC_SIMPLE_I, T);

			if (T <= max)
				cc_choose(&p, (cc_objective) o);
			if (T > max || (int) p.kind != winner)
			{
				if (winner >= 0)
					printf("  %lld .. %lld: %s\n", (long long) start, (long long) T - 1,
						   cc_kind_name((cc_kind) winner));
				winner = p.kind;
				start = T;
			}
		}
	}
	return 0;
}
