/*
 * pairs.c
 *		Two mechanisms against each other as the horizon grows, at epsilon 1
 *		and sensitivity 1, from the closed forms (as auto weighs them): the
 *		horizons where binary's mean and worst variance over the steps fall
 *		below two_level's (B = ceil(sqrt T)), and hybrid's standard deviation
 *		against binary's at chosen horizons.  The figures of the README's
 *		Accuracy section.
 *
 *	cc -O2 -Isrc/core report/pairs.c src/core/[a-z]*.c -lm -o pairs
 *	./pairs [max]		(default 2^22)
 */
#include "choice.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
variances(cc_kind kind, int64_t horizon, double *mean, double *worst)
{
	cc_params	p;

	memset(&p, 0, sizeof(p));
	p.kind = kind;
	cc_epsilon_units(1.0, &p.epsilon_units);
	p.has_horizon = true;
	p.horizon = horizon;
	p.sensitivity = 1;
	p.beta = 0.05;
	if (cc_params_prepare(&p) != CC_OK)
	{
		fprintf(stderr, "parameters refused at T = %lld\n", (long long) horizon);
		exit(1);
	}
	cc_variance_over_horizon(&p, mean, worst);
}

int
main(int argc, char **argv)
{
	int64_t		max = argc > 1 ? atoll(argv[1]) : (int64_t) 1 << 22;
	static const int64_t horizons[] = {1000, 10000, 100000, 1000000, 1 << 20};

	for (int o = 0; o < 2; o++)
	{
		int			below = -1;		/* binary below two_level at the last T? */
		int64_t		from = 0;

		printf("%s variance, binary below two_level (B = ceil(sqrt T)) for T in:", o ? "worst" : "mean");
		for (int64_t T = 2; T <= max; T++)
		{
			double		mb, wb, mt, wt;
			int			b;

			variances(CC_BINARY, T, &mb, &wb);
			variances(CC_TWO_LEVEL, T, &mt, &wt);
			b = o ? wb < wt : mb < mt;
			if (b && below != 1)
				from = T;
			if (!b && below == 1)
				printf(" %lld-%lld", (long long) from, (long long) T - 1);
			below = b;
		}
		if (below == 1)
			printf(" %lld-(%lld)", (long long) from, (long long) max);
		printf("\n");
	}
	printf("T: mean variance binary, two_level, hybrid (no horizon) | worst binary, two_level, hybrid | "
		   "sqrt ratio hybrid/binary mean, worst\n");
	for (int i = 0; i < (int) (sizeof(horizons) / sizeof(horizons[0])); i++)
	{
		int64_t		T = horizons[i];
		double		mb, wb, mt, wt, mh, wh;

		variances(CC_BINARY, T, &mb, &wb);
		variances(CC_TWO_LEVEL, T, &mt, &wt);
		variances(CC_HYBRID, T, &mh, &wh);
		printf("%lld: %.1f %.1f %.1f | %.1f %.1f %.1f | %.3f %.3f\n", (long long) T,
			   mb, mt, mh, wb, wt, wh, sqrt(mh / mb), sqrt(wh / wb));
	}
	return 0;
}
