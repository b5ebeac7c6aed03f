/*
 * monotone.c
 *		What the option monotone does to the error of running counts: mean
 *		absolute error and root mean square error against the true count,
 *		raw against post-processed, over random streams.
 *
 *	cc -O2 -Isrc/core report/monotone.c src/core/[a-z]*.c -lm -o monotone
 *	./monotone [streams]
 *
 * For binary and two_level, at epsilon 1, horizons 365 and 4096, and
 * streams of 0/1 items with P(1) = 0.5 (dense) or 0.02 (sparse): over
 * streams (default 1000) streams each, the error at every step of the raw
 * release, of the isotonic projection of the whole series (running_counts
 * and source_running_counts with monotone => true) and of the online
 * running maximum clamped at 0 (a counter with monotone => true).  Errors
 * are averaged over all steps of all streams.  Seeded: the same figures
 * every run.
 */
#include "mechanism.h"
#include "monotone.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: a seeded source for the streams and the noise */
typedef struct seeded
{
	uint64_t	state;
	uint64_t	buffer[8];
	cc_rng		rng;
} seeded;

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t	z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static void
refill(cc_rng *rng)
{
	seeded	   *s = rng->ctx;

	for (int i = 0; i < 8; i++)
		s->buffer[i] = splitmix64(&s->state);
	rng->next = 0;
	rng->count = 8;
}

static void
seeded_init(seeded *s, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->state = seed;
	s->rng.words = s->buffer;
	s->rng.refill = refill;
	s->rng.ctx = s;
}

/* A counter's monotone output: the running maximum, clamped at 0 (counter.c). */
static int64_t
monotone_next(int64_t previous, int64_t raw)
{
	int64_t		out = previous > raw ? previous : raw;

	return out < 0 ? 0 : out;
}

/* Sums of absolute and squared errors, and their count. */
typedef struct errors
{
	double		abs;
	double		sq;
	double		n;
} errors;

static void
add_error(errors *e, double estimate, double truth)
{
	e->abs += fabs(estimate - truth);
	e->sq += (estimate - truth) * (estimate - truth);
	e->n += 1;
}

/* One stream: its raw, projected and online errors. */
static void
run_stream(cc_params *p, int64_t T, double p_one, seeded *s, errors e[3])
{
	cc_state   *state = malloc(cc_state_size(p));
	double	   *raw = malloc(sizeof(double) * T);
	double	   *projected = malloc(sizeof(double) * T);
	double	   *weight = malloc(sizeof(double) * T);
	int64_t    *truth = malloc(sizeof(int64_t) * T);
	cc_pav_block *blocks = malloc(sizeof(cc_pav_block) * T);
	int64_t		count = 0;
	int64_t		online = 0;

	cc_state_init(state, p);
	for (int64_t t = 0; t < T; t++)
	{
		int64_t		item = (double) (splitmix64(&s->state) >> 11) / 9007199254740992.0 < p_one;
		cc_release	r;

		count += item;
		truth[t] = count;
		if (cc_push(state, item, &s->rng) != CC_OK)
			exit(2);
		cc_read(state, &r);
		raw[t] = projected[t] = (double) r.noisy;
		weight[t] = 1.0 / r.variance;
	}
	cc_monotone_series(projected, weight, T, blocks);
	for (int64_t t = 0; t < T; t++)
	{
		online = monotone_next(online, (int64_t) raw[t]);
		add_error(&e[0], raw[t], (double) truth[t]);
		add_error(&e[1], llround(projected[t]), (double) truth[t]);
		add_error(&e[2], (double) online, (double) truth[t]);
	}
	free(state);
	free(raw);
	free(projected);
	free(weight);
	free(truth);
	free(blocks);
}

int
main(int argc, char **argv)
{
	int			streams = argc > 1 ? atoi(argv[1]) : 1000;
	cc_kind		kinds[2] = {CC_BINARY, CC_TWO_LEVEL};
	int64_t		horizons[2] = {365, 4096};
	double		densities[2] = {0.5, 0.02};
	seeded		s;

	seeded_init(&s, 20261128);
	printf("| mechanism | T | P(1) | MAE raw | MAE monotone | MAE online | RMSE raw | RMSE monotone | RMSE online |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
	for (int k = 0; k < 2; k++)
		for (int h = 0; h < 2; h++)
			for (int d = 0; d < 2; d++)
			{
				cc_params	p;
				errors		e[3] = {{0}};

				memset(&p, 0, sizeof(p));
				p.kind = kinds[k];
				cc_epsilon_units(1.0, &p.epsilon_units);
				p.has_horizon = true;
				p.horizon = horizons[h];
				p.sensitivity = 1;
				p.beta = 0.05;
				if (cc_params_prepare(&p) != CC_OK)
					return 2;
				for (int i = 0; i < streams; i++)
					run_stream(&p, horizons[h], densities[d], &s, e);
				printf("| %s | %lld | %g | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
					   cc_kind_name(p.kind), (long long) horizons[h], densities[d],
					   e[0].abs / e[0].n, e[1].abs / e[1].n, e[2].abs / e[2].n,
					   sqrt(e[0].sq / e[0].n), sqrt(e[1].sq / e[1].n), sqrt(e[2].sq / e[2].n));
			}
	return 0;
}
