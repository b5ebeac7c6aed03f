/*
 * gaussian_variance.c
 *		The variance of the zCDP mechanisms against t, at T = 2^20, rho = 1/2
 *		and sensitivity 1, next to the square-root factorization's.
 *
 *	cc -O2 -Isrc/core report/gaussian_variance.c src/core/[a-z]*.c -lm -o gaussian_variance
 *	./gaussian_variance [log2 T]
 *
 * blt and gaussian_honaker report the variance of their states, read at
 * every step of a stream of zeros (the variance does not depend on the
 * items); the square-root factorization C = A^(1/2), c_k = C(2k, k) / 4^k,
 * has variance ||c||^2 sum_{k<t} c_k^2 at t, with continuous noise and
 * ||c|| its first column's norm over T.  Prints a row at every power of two
 * and at three quarters of each, then the mean and worst of each column and
 * the state sizes.
 */
#include "mechanism.h"

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

static cc_state *
state_of(cc_kind kind, int64_t horizon)
{
	cc_params	p;
	cc_state   *s;

	memset(&p, 0, sizeof(p));
	p.kind = kind;
	p.privacy = CC_ZCDP;
	cc_rho_units(0.5, &p.rho_units);
	p.has_horizon = true;
	p.horizon = horizon;
	p.sensitivity = 1;
	p.beta = 0.05;
	if (cc_params_prepare(&p) != CC_OK)
	{
		fprintf(stderr, "%s: parameters refused\n", cc_kind_name(kind));
		exit(1);
	}
	s = malloc(cc_state_size(&p));
	cc_state_init(s, &p);
	return s;
}

int
main(int argc, char **argv)
{
	int			bits = argc > 1 ? atoi(argv[1]) : 20;
	int64_t		T = INT64_C(1) << bits;
	cc_state   *blt = state_of(CC_BLT, T);
	cc_state   *tree = state_of(CC_GAUSSIAN_HONAKER, T);
	cc_rng		rng = {.words = words,.refill = refill};
	double	   *root = malloc(T * sizeof(double));
	long double c = 1.0L;
	long double column = 0.0L;
	double		sum[3] = {0};
	double		worst[3] = {0};

	/* sum_{k<t} c_k^2 for every t, then ||c||^2 is the last */
	for (int64_t k = 0; k < T; k++)
	{
		column += c * c;
		root[k] = (double) column;
		c *= (2.0L * k + 1.0L) / (2.0L * k + 2.0L);
	}

	printf("| t | blt | gaussian_honaker | square root |\n|---|---|---|---|\n");
	for (int64_t t = 1; t <= T; t++)
	{
		cc_release rb;
		cc_release rh;
		double		v[3];

		cc_push(blt, 0, &rng);
		cc_push(tree, 0, &rng);
		cc_read(blt, &rb);
		cc_read(tree, &rh);
		v[0] = rb.variance;
		v[1] = rh.variance;
		v[2] = (double) column * root[t - 1];
		for (int i = 0; i < 3; i++)
		{
			sum[i] += v[i];
			if (v[i] > worst[i])
				worst[i] = v[i];
		}
		if ((t & (t - 1)) == 0 || (t % 3 == 0 && ((t / 3) & (t / 3 - 1)) == 0 && t >= 12))
			printf("| %lld | %.3f | %.2f | %.3f |\n", (long long) t, v[0], v[1], v[2]);
	}
	printf("| mean | %.3f | %.2f | %.3f |\n", sum[0] / T, sum[1] / T, sum[2] / T);
	printf("| worst | %.3f | %.2f | %.3f |\n", worst[0], worst[1], worst[2]);
	printf("| state bytes | %zu | %zu | %lld doubles |\n",
		   cc_state_bytes(blt), cc_state_bytes(tree), (long long) T);
	free(root);
	free(blt);
	free(tree);
	return 0;
}
