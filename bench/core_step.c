/*
 * core_step.c
 *		Time per step of the core's mechanisms alone (cc_push and cc_read, no
 *		server), for bench/running to print beside its ratios.
 *
 * Why: on a shared or virtual machine the speed of compute-bound code can
 * change by half from one spell to the next while the plain-SQL baseline,
 * bound by memory and page faults, hardly moves; a release's ratio then
 * moves with the spell.  This says which spell a run fell in.
 *
 * Usage: core_step kind... (T = 10^6, epsilon or rho 1, best of five runs of
 * 10^6 steps).
 */
#include "mechanism.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STEPS 1000000
#define RUNS 5

static uint64_t words[4096];

/*
 * splitmix64: the timing needs words that look random to the samplers'
 * branches, not secret ones, and a source whose cost is small and fixed
 * (getrandom() costs more in some VMs than the samplers themselves).
 */
static void
refill(cc_rng *rng)
{
	static uint64_t x = 0x243f6a8885a308d3;

	for (int i = 0; i < 4096; i++)
	{
		uint64_t	z = (x += UINT64_C(0x9e3779b97f4a7c15));

		z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
		words[i] = z ^ (z >> 31);
	}
	rng->words = words;
	rng->next = 0;
	rng->count = 4096;
}

static double
seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	for (int a = 1; a < argc; a++)
	{
		cc_params	p;
		cc_rng		rng;
		cc_state   *state;
		double		best = 0.0;

		memset(&p, 0, sizeof(p));
		memset(&rng, 0, sizeof(rng));
		rng.refill = refill;
		if (!cc_kind_from_name(argv[a], &p.kind))
		{
			fprintf(stderr, "unknown mechanism %s\n", argv[a]);
			return 1;
		}
		p.privacy = cc_kind_privacy(p.kind);
		if ((p.privacy == CC_ZCDP ? cc_rho_units(1.0, &p.rho_units) :
			 cc_epsilon_units(1.0, &p.epsilon_units)) != CC_OK)
			return 1;
		p.has_horizon = true;
		p.horizon = STEPS;
		p.sensitivity = 1;
		p.beta = 0.05;
		if (cc_params_prepare(&p) != CC_OK || (state = malloc(cc_state_size(&p))) == NULL)
			return 1;
		for (int run = 0; run < RUNS; run++)
		{
			double		start;
			double		ns;

			cc_state_init(state, &p);
			start = seconds();
			for (int64_t t = 0; t < STEPS; t++)
			{
				cc_release release;

				cc_push(state, 1, &rng);
				cc_read(state, &release);
			}
			ns = (seconds() - start) / STEPS * 1e9;
			if (run == 0 || ns < best)
				best = ns;
		}
		printf("%s%s %.1f ns", a > 1 ? ", " : "", argv[a], best);
		free(state);
	}
	printf(" a step\n");
	return 0;
}
