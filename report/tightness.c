/*
 * tightness.c
 *		How tight the simultaneous bound is: for every mechanism, simulated
 *		streams of T steps (their noise does not depend on the data, so all
 *		items are zero), the largest bound over the steps against the
 *		empirical (1 - beta) quantile of the largest error over the steps,
 *		and how many streams exceed their bound somewhere.
 *
 * Usage: tightness [streams at T = 1000, default 4000]; T = 10^4 runs half
 * as many.  Pure kinds at epsilon 1, zCDP kinds at rho 1/2, beta 0.05.
 * Built against the core by report/run:
 *		cc -O2 -Isrc/core report/tightness.c src/core/[a-z]*.c -lm
 */
#include "mechanism.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* xoshiro256** seeded through splitmix64: a reproducible report */
static uint64_t state[4];
static uint64_t words[64];

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static void
refill(cc_rng *rng)
{
	for (int i = 0; i < 64; i++)
	{
		uint64_t	t = state[1] << 17;

		words[i] = rotl(state[1] * 5, 7) * 9;
		state[2] ^= state[0];
		state[3] ^= state[1];
		state[1] ^= state[2];
		state[0] ^= state[3];
		state[2] ^= t;
		state[3] = rotl(state[3], 45);
	}
	rng->words = words;
	rng->next = 0;
	rng->count = 64;
}

static void
seed(uint64_t x)
{
	for (int i = 0; i < 4; i++)
	{
		uint64_t	z = (x += UINT64_C(0x9e3779b97f4a7c15));

		z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
		state[i] = z ^ (z >> 31);
	}
}

static int
compare(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

/* one row: largest bound, quantile, their ratio, streams over their bound */
static void
row(cc_kind kind, int64_t horizon, int streams)
{
	cc_params	p;
	cc_state   *s;
	cc_rng		rng = {.refill = refill};
	double	   *largest = malloc(streams * sizeof(double));
	double		bound = 0.0;
	double		quantile;
	int			over = 0;

	memset(&p, 0, sizeof(p));
	p.kind = kind;
	p.privacy = cc_kind_privacy(kind);
	if (p.privacy == CC_ZCDP)
		cc_rho_units(0.5, &p.rho_units);
	else
		cc_epsilon_units(1.0, &p.epsilon_units);
	p.has_horizon = true;
	p.horizon = horizon;
	p.sensitivity = 1;
	p.beta = 0.05;
	if (cc_params_prepare(&p) != CC_OK)
		exit(1);
	s = malloc(cc_state_size(&p));
	seed((uint64_t) kind * 1000003 + (uint64_t) horizon);
	for (int n = 0; n < streams; n++)
	{
		bool		failed = false;

		cc_state_init(s, &p);
		largest[n] = 0.0;
		for (int64_t t = 1; t <= horizon; t++)
		{
			cc_release rel;
			double		err;

			cc_push(s, 0, &rng);
			cc_read(s, &rel);
			err = fabs((double) rel.noisy);
			failed |= err > rel.bound;
			largest[n] = fmax(largest[n], err);
			bound = fmax(bound, rel.bound);
		}
		over += failed;
	}
	qsort(largest, streams, sizeof(double), compare);
	quantile = largest[(int) ceil((1.0 - p.beta) * streams) - 1];
	printf("| %-16s | %6lld | %9.0f | %9.0f | %5.2f | %5d / %d |\n", cc_kind_name(kind),
		   (long long) horizon, quantile, bound, bound / quantile, over, streams);
	free(largest);
	free(s);
}

int
main(int argc, char **argv)
{
	int			streams = argc > 1 ? atoi(argv[1]) : 4000;
	static const cc_kind kinds[] = {
		CC_SIMPLE_I, CC_SIMPLE_II, CC_TWO_LEVEL, CC_BINARY, CC_HYBRID, CC_HONAKER,
		CC_SMOOTH_BINARY, CC_GAUSSIAN_HONAKER, CC_BLT, CC_KARY
	};

	printf("| mechanism        |      T | 95%% quantile of max error | largest bound "
		   "| ratio | streams over their bound |\n");
	printf("|---|---|---|---|---|---|\n");
	for (int h = 0; h < 2; h++)
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			row(kinds[k], h == 0 ? 1000 : 10000, h == 0 ? streams : streams / 2);
	return 0;
}
