/*
 * continual_mean.c
 *		George, Ramesh, Singh and Tyagi's continual mean (Algorithm 6, the
 *		"withhold" kind of src/core/continual_mean.c) against their naive
 *		baseline (Algorithm 2), on streams of Bernoulli(0.3) samples at
 *		epsilon = 1, beta = 0.05, resolution 2^16.
 *
 *	cc -O2 -Isrc/core report/continual_mean.c src/core/[a-z]*.c -lm -o cm
 *	./cm [--small] [dir]
 *
 * Prints:
 *	1. from the plans alone, the standard deviation of the estimate at the
 *	   end of a stream where each of n users gave m samples (every level
 *	   active, n elements in each): where withholding beats the naive tree,
 *	   and the memory a user costs;
 *	2. simulations in contiguous, round-robin and random user orders: mean
 *	   |estimate - 0.3| over the trials at t = T/64, T/8, T, the share of the
 *	   samples the estimate covers, and the first t from which the diversity
 *	   condition holds for good.
 * With dir, writes dir/mean_error_<order>.csv (a block a configuration: t,
 * mean error of withhold and naive, share covered, and the paper's rate
 * 1/sqrt(t) + sqrt(M_t)/(t epsilon)) and dir/mean_plot.gp (which of them the
 * figures draw) for report/continual_mean.gp.
 * The random words come from xoshiro256** seeded here: a report, not a
 * release.
 */
#include "continual_mean.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MU 0.3
#define RESOLUTION (1 << 16)
#define POINTS 96				/* log-spaced steps recorded a run */

static uint64_t state[4];
static uint64_t buffer[16];

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t
next_word(void)
{
	uint64_t	result = rotl(state[1] * 5, 7) * 9;
	uint64_t	t = state[1] << 17;

	state[2] ^= state[0];
	state[3] ^= state[1];
	state[1] ^= state[2];
	state[0] ^= state[3];
	state[2] ^= t;
	state[3] = rotl(state[3], 45);
	return result;
}

static void
refill(cc_rng *rng)
{
	for (int i = 0; i < 16; i++)
		buffer[i] = next_word();
	rng->next = 0;
	rng->count = 16;
}

static cc_rng rng = {.words = buffer,.refill = refill};

static cc_mean_plan
plan_for(cc_mean_kind kind, int64_t n, int64_t m)
{
	cc_mean_params p;
	cc_mean_plan plan;

	memset(&p, 0, sizeof(p));
	p.kind = kind;
	p.epsilon_units = 1000000000;
	p.horizon = n * m;
	p.users = n;
	p.per_user = m;
	p.resolution = RESOLUTION;
	p.beta = 0.05;
	if (cc_mean_plan_make(&p, &plan) != CC_MEAN_OK)
	{
		fprintf(stderr, "plan refused: n = %lld, m = %lld\n", (long long) n, (long long) m);
		exit(1);
	}
	return plan;
}

/* stddev of the estimate once each of n users gave m samples */
static double
final_stddev(const cc_mean_plan *plan, int64_t n, int64_t m)
{
	double		var = 0.0;
	int64_t		covered = plan->params.kind == CC_MEAN_NAIVE ? n * m : n * plan->cap;

	for (int l = 0; l < plan->levels; l++)
	{
		int64_t		elements = plan->params.kind == CC_MEAN_NAIVE ? covered : n;

		var += __builtin_popcountll((unsigned long long) elements) * plan->level[l].variance;
	}
	return sqrt(var) / ((double) covered * RESOLUTION);
}

static void
plans_table(bool small)
{
	static const int64_t users[] = {1000, 10000};
	int			top = small ? 12 : 22;

	printf("## From the plans: stddev of the estimate once each of n users gave m samples\n\n");
	printf("epsilon 1; 'levels' is L + 1, 'clamped' the levels truncated around a median (with the\n"
		   "largest number of arrays K one needs), bytes a user for Algorithm 6 (naive: 16).\n\n");
	printf("%7s %9s %7s %8s %7s %12s %12s %8s %6s\n", "n", "m", "levels", "clamped", "max K",
		   "withhold", "naive", "ratio", "bytes");
	for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++)
		for (int k = 4; k <= top; k += 2)
		{
			int64_t		n = users[i];
			int64_t		m = INT64_C(1) << k;
			cc_mean_plan w = plan_for(CC_MEAN_WITHHOLD, n, m);
			cc_mean_plan v = plan_for(CC_MEAN_NAIVE, n, m);
			int64_t		arrays = 0;
			double		sw = final_stddev(&w, n, m);
			double		sv = final_stddev(&v, n, m);

			for (int l = 0; l < w.levels; l++)
				if (w.level[l].arrays > arrays)
					arrays = w.level[l].arrays;
			printf("%7lld %9lld %7lld %8lld %7lld %12.3e %12.3e %8.3f %6zu\n", (long long) n,
				   (long long) m, (long long) w.levels, (long long) w.medians, (long long) arrays,
				   sw, sv, sv / sw, cc_mean_user_bytes(&w));
		}
	printf("\n");
}

/* users[0 .. T - 1]: contiguous, round-robin or random */
static void
arrivals(int order, int64_t n, int64_t m, int64_t *users)
{
	for (int64_t i = 0; i < n * m; i++)
		users[i] = order == 1 ? i % n : i / m;
	if (order == 2)
		for (int64_t i = n * m - 1; i > 0; i--)
		{
			int64_t		j = (int64_t) cc_uniform_below(&rng, (uint64_t) i + 1);
			int64_t		u = users[i];

			users[i] = users[j];
			users[j] = u;
		}
}

typedef struct config
{
	int64_t		n;
	int64_t		m;
} config;

typedef struct series
{
	int64_t		t[POINTS];
	int			points;
	double		error[2][POINTS];	/* withhold, naive: summed over trials */
	double		covered[POINTS];	/* withhold's N_t / t */
	double		rate[POINTS];	/* 1/sqrt(t) + sqrt(M_t)/(t epsilon) */
	int64_t		diverse_from;	/* withhold: first t from which it holds */
} series;

/* t = 1, then about POINTS log-spaced steps up to T */
static void
series_steps(series *s, int64_t horizon)
{
	double		ratio = pow((double) horizon, 1.0 / (POINTS - 1));
	double		x = 1.0;

	s->points = 0;
	for (int i = 0; i < POINTS; i++, x *= ratio)
	{
		int64_t		t = i == POINTS - 1 ? horizon : (int64_t) llround(x);

		if (s->points == 0 || t > s->t[s->points - 1])
			s->t[s->points++] = t;
	}
}

static void
simulate(const config *c, int order, int trials, series *s)
{
	int64_t		horizon = c->n * c->m;
	int64_t    *users = malloc(horizon * sizeof(int64_t));
	int64_t    *slot = malloc(c->n * sizeof(int64_t));

	memset(s, 0, sizeof(*s));
	series_steps(s, horizon);
	arrivals(order, c->n, c->m, users);
	for (int kind = 0; kind < 2; kind++)
	{
		cc_mean_plan plan = plan_for(kind == 0 ? CC_MEAN_WITHHOLD : CC_MEAN_NAIVE, c->n, c->m);
		cc_mean    *st = malloc(cc_mean_size(&plan));
		char	   *records = malloc(c->n * cc_mean_user_bytes(&plan));

		for (int trial = 0; trial < trials; trial++)
		{
			int			p = 0;

			cc_mean_init(st, &plan);
			for (int64_t u = 0; u < c->n; u++)
				slot[u] = -1;
			if (kind == 0 && trial == 0)
				s->diverse_from = 0;
			for (int64_t t = 1; t <= horizon; t++)
			{
				int64_t		u = users[t - 1];
				int64_t		q = (next_word() >> 11) * 0x1.0p-53 < MU ? RESOLUTION : 0;
				cc_mean_release rel;

				if (slot[u] < 0)
					slot[u] = cc_mean_users(st);
				if (cc_mean_push(st, records, slot[u], q, &rng) != CC_MEAN_OK)
				{
					fprintf(stderr, "push refused\n");
					exit(1);
				}
				if (kind == 0 && trial == 0)
				{
					cc_mean_read(st, &rel);
					if (!rel.diverse)
						s->diverse_from = 0;
					else if (s->diverse_from == 0)
						s->diverse_from = t;
				}
				if (t != s->t[p])
					continue;
				cc_mean_read(st, &rel);
				/* no estimate yet: the error of answering the range's middle */
				s->error[kind][p] += fabs((rel.has_estimate ? rel.estimate : 0.5) - MU);
				if (kind == 0)
				{
					s->covered[p] += (double) rel.included / (double) t;
					s->rate[p] = 1.0 / sqrt((double) t) + sqrt((double) rel.max_count) / (double) t;
				}
				p++;
			}
		}
		free(st);
		free(records);
	}
	for (int p = 0; p < s->points; p++)
	{
		s->error[0][p] /= trials;
		s->error[1][p] /= trials;
		s->covered[p] /= trials;
	}
	free(users);
	free(slot);
}

/* the recorded step nearest to t */
static int
nearest(const series *s, int64_t t)
{
	int			best = 0;

	for (int p = 1; p < s->points; p++)
		if (llabs(s->t[p] - t) < llabs(s->t[best] - t))
			best = p;
	return best;
}

int
main(int argc, char **argv)
{
	static const char *const orders[] = {"contiguous", "round-robin", "random"};
	static const config full[] = {{1000, 64}, {1000, 1024}, {1000, 16384}, {250, 1024}, {4000, 1024}};
	static const config small[] = {{100, 16}, {100, 256}};
	bool		is_small = argc > 1 && strcmp(argv[1], "--small") == 0;
	const char *dir = argc > 1 + is_small ? argv[1 + is_small] : NULL;
	const config *configs = is_small ? small : full;
	int			nconfigs = is_small ? 2 : 5;
	int			drawn = is_small ? 2 : 3;	/* the first, of one n */
	int			trials = is_small ? 2 : 4;
	series	   *runs = malloc(sizeof(series) * nconfigs);
	clock_t		start = clock();

	state[0] = 0x9e3779b97f4a7c15u;
	state[1] = 0xbf58476d1ce4e5b9u;
	state[2] = 0x94d049bb133111ebu;
	state[3] = 14;

	plans_table(is_small);
	printf("## Simulations: mean |estimate - 0.3| over %d trials (Bernoulli(0.3), epsilon 1)\n\n", trials);
	printf("'covered' is N_t / t, the share of the samples the estimate uses (Algorithm 6 withholds\n"
		   "the rest); 'diverse from' the first t after which the diversity condition always holds.\n\n");
	printf("%-11s %6s %6s | %21s | %21s | %21s | %7s %7s %12s\n", "order", "n", "m",
		   "t = T/64: with / naive", "t = T/8: with / naive", "t = T: with / naive",
		   "cov T/64", "cov T/8", "diverse from");
	for (int o = 0; o < 3; o++)
	{
		FILE	   *csv = NULL;

		for (int c = 0; c < nconfigs; c++)
		{
			series	   *s = &runs[c];
			int64_t		horizon = configs[c].n * configs[c].m;
			int			a, b, e;

			simulate(&configs[c], o, trials, s);
			a = nearest(s, horizon / 64);
			b = nearest(s, horizon / 8);
			e = s->points - 1;
			printf("%-11s %6lld %6lld | %10.2e %10.2e | %10.2e %10.2e | %10.2e %10.2e | %7.3f %7.3f %12lld\n",
				   orders[o], (long long) configs[c].n, (long long) configs[c].m,
				   s->error[0][a], s->error[1][a], s->error[0][b], s->error[1][b],
				   s->error[0][e], s->error[1][e], s->covered[a], s->covered[b],
				   (long long) s->diverse_from);
		}
		if (dir)
		{
			char		path[1024];

			snprintf(path, sizeof(path), "%s/mean_error_%s.csv", dir, orders[o]);
			csv = fopen(path, "w");
			if (!csv)
			{
				perror(path);
				return 1;
			}
			/* one block a configuration, for gnuplot's index */
			for (int c = 0; c < nconfigs; c++)
			{
				fprintf(csv, "# n=%lld m=%lld\n", (long long) configs[c].n, (long long) configs[c].m);
				for (int p = 0; p < runs[c].points; p++)
					fprintf(csv, "%lld,%g,%g,%g,%g\n", (long long) runs[c].t[p], runs[c].error[0][p],
							runs[c].error[1][p], runs[c].covered[p], runs[c].rate[p]);
				fprintf(csv, "\n\n");
			}
			fclose(csv);
		}
	}
	if (dir)
	{
		char		path[1024];
		FILE	   *gp;

		/* the figures draw the first configurations, those of one n */
		snprintf(path, sizeof(path), "%s/mean_plot.gp", dir);
		gp = fopen(path, "w");
		if (!gp)
		{
			perror(path);
			return 1;
		}
		fprintf(gp, "users = %lld\ndrawn = %d\nlabels = \"", (long long) configs[0].n, drawn);
		for (int c = 0; c < drawn; c++)
			fprintf(gp, "%s%lld", c ? " " : "", (long long) configs[c].m);
		fprintf(gp, "\"\n");
		fclose(gp);
	}
	printf("\n(%.1f s)\n", (double) (clock() - start) / CLOCKS_PER_SEC);
	free(runs);
	return 0;
}
