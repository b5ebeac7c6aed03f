/*
 * test_continual_mean.c
 *		The continual mean (continual_mean.c): plans and their accounting,
 *		the withhold-release schedule against a model kept apart, each
 *		level's sensitivity, an empirical user-level privacy audit, and the
 *		error bars.
 */
#include "unit.h"
#include "continual_mean.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EPS_UNITS(e) ((uint64_t) llround((e) * 1e9))

static cc_mean_params
mean_params(cc_mean_kind kind, double epsilon, int64_t horizon, int64_t users,
			int64_t per_user, int64_t resolution)
{
	cc_mean_params p;

	memset(&p, 0, sizeof(p));
	p.kind = kind;
	p.epsilon_units = EPS_UNITS(epsilon);
	p.horizon = horizon;
	p.users = users;
	p.per_user = per_user;
	p.resolution = resolution;
	p.beta = 0.05;
	return p;
}

static cc_mean_plan
make_plan(cc_mean_params p)
{
	cc_mean_plan plan;
	cc_mean_status status = cc_mean_plan_make(&p, &plan);

	if (status != CC_MEAN_OK)
	{
		fprintf(stderr, "cc_mean_plan_make failed: %d\n", status);
		exit(2);
	}
	return plan;
}

/*
 * A withhold plan whose level l is truncated with constants chosen by the
 * test (not the analysis'): privacy must hold for any of them.
 */
static cc_mean_plan
forced_plan(cc_mean_params p, int l, int64_t arrays, int64_t half_width)
{
	cc_mean_plan plan = make_plan(p);
	cc_mean_level *lv = &plan.level[l];
	cc_mean_status status;

	lv->truncated = true;
	lv->arrays = arrays;
	lv->half_width = half_width;
	lv->spacing = 1;
	lv->grid = lv->block * p.resolution + 1;
	status = cc_mean_plan_calibrate(&plan);
	if (status != CC_MEAN_OK)
	{
		fprintf(stderr, "forced plan refused: %d\n", status);
		exit(2);
	}
	return plan;
}

/* A state, the users' records, and the slots of user ids. */
typedef struct runner
{
	cc_mean    *state;
	cc_mean    *initial;		/* to start again by a copy */
	size_t		size;
	char	   *records;
	int64_t    *slot;			/* by user id: -1 until seen */
	int64_t		ids;
} runner;

static void
runner_start(runner *r, const cc_mean_plan *plan, int64_t ids)
{
	r->size = cc_mean_size(plan);
	r->state = malloc(r->size);
	r->initial = malloc(r->size);
	cc_mean_init(r->initial, plan);
	r->records = malloc(plan->params.users * cc_mean_user_bytes(plan));
	r->slot = malloc(ids * sizeof(int64_t));
	r->ids = ids;
	memcpy(r->state, r->initial, r->size);
	for (int64_t i = 0; i < ids; i++)
		r->slot[i] = -1;
}

static void
runner_reset(runner *r)
{
	memcpy(r->state, r->initial, r->size);
	for (int64_t i = 0; i < r->ids; i++)
		r->slot[i] = -1;
}

static cc_mean_status
runner_push(runner *r, int64_t id, int64_t q, cc_rng *rng)
{
	int64_t		slot = r->slot[id] >= 0 ? r->slot[id] : cc_mean_users(r->state);
	cc_mean_status status = cc_mean_push(r->state, r->records, slot, q, rng);

	if (status == CC_MEAN_OK)
		r->slot[id] = slot;
	return status;
}

static void
runner_free(runner *r)
{
	free(r->state);
	free(r->initial);
	free(r->records);
	free(r->slot);
}

enum order
{
	CONTIGUOUS, ROUND_ROBIN, RANDOM, NUM_ORDERS
};
static const char *const order_names[] = {"contiguous", "round-robin", "random"};

/* users[0 .. n m - 1]: who contributes each sample, m samples each */
static void
arrivals(enum order order, int64_t n, int64_t m, int64_t *users, cc_rng *rng)
{
	for (int64_t i = 0; i < n * m; i++)
		users[i] = order == ROUND_ROBIN ? i % n : i / m;
	if (order == RANDOM)
		for (int64_t i = n * m - 1; i > 0; i--)
		{
			int64_t		j = (int64_t) cc_uniform_below(rng, (uint64_t) i + 1);
			int64_t		u = users[i];

			users[i] = users[j];
			users[j] = u;
		}
}

/*
 * The accounting: the trees' and medians' epsilons sum to epsilon exactly,
 * and each tree's scale times its epsilon is depth * sensitivity exactly,
 * with the sensitivity the argument gives.
 */
static void
check_accounting(const cc_mean_plan *plan, const char *name)
{
	uint64_t	tn, td, mn, md;
	unsigned __int128 lhs;
	unsigned __int128 rhs;
	const cc_mean_params *p = &plan->params;

	cc_mean_tree_epsilon(plan, &tn, &td);
	cc_mean_median_epsilon(plan, &mn, &md);
	/* levels tn / td + medians mn / md == units / 1e9 */
	lhs = ((unsigned __int128) plan->levels * tn * md + (unsigned __int128) plan->medians * mn * td) *
		UINT64_C(1000000000);
	rhs = (unsigned __int128) p->epsilon_units * td * md;
	CHECK(lhs == rhs, "%s: the epsilons do not sum to epsilon", name);
	CHECK(plan->medians == 0 || mn * plan->levels * md == tn * plan->medians * td,
		  "%s: medians and trees do not share epsilon evenly", name);
	for (int l = 0; l < plan->levels; l++)
	{
		const cc_mean_level *lv = &plan->level[l];
		int64_t		sens = p->kind == CC_MEAN_NAIVE ? p->per_user * p->resolution :
			lv->truncated ? 2 * lv->half_width : lv->block * p->resolution;

		CHECK(lv->sensitivity == sens, "%s level %d: sensitivity %lld, expected %lld", name, l,
			  (long long) lv->sensitivity, (long long) sens);
		/* (num / den) * (tn / td) == depth * sens, in 128 bits */
		CHECK((unsigned __int128) lv->scale.num * tn ==
			  (unsigned __int128) lv->scale.den * td * (uint64_t) (lv->depth * sens),
			  "%s level %d: scale %llu/%llu is not depth %lld * %lld / epsilon_tree", name, l,
			  (unsigned long long) lv->scale.num, (unsigned long long) lv->scale.den,
			  (long long) lv->depth, (long long) sens);
	}
}

static void
test_mean_plans(void)
{
	cc_mean_params good = mean_params(CC_MEAN_WITHHOLD, 1.0, 60, 5, 12, 8);
	cc_mean_params p;
	cc_mean_plan plan;
	cc_mean_plan bad;
	cc_mean_plan flat;
	int64_t		q;
	double		noise = 0.0;
	double		flat_noise = 0.0;

#define REFUSED(change, status) \
	do { \
		p = good; \
		change; \
		CHECK(cc_mean_plan_make(&p, &plan) == status, "not refused: %s", #change); \
	} while (0)
	REFUSED(p.epsilon_units = 999, CC_MEAN_BAD_EPSILON);
	REFUSED(p.epsilon_units = UINT64_C(1000000000001), CC_MEAN_BAD_EPSILON);
	REFUSED(p.resolution = 0, CC_MEAN_BAD_RESOLUTION);
	REFUSED(p.resolution = CC_MEAN_MAX_RESOLUTION + 1, CC_MEAN_BAD_RESOLUTION);
	REFUSED(p.horizon = 0, CC_MEAN_BAD_HORIZON);
	REFUSED(p.horizon = CC_MEAN_MAX_SUM / 8 + 1, CC_MEAN_BAD_HORIZON);
	REFUSED(p.users = 0, CC_MEAN_BAD_USERS);
	REFUSED(p.users = 61, CC_MEAN_BAD_USERS);
	REFUSED(p.per_user = 0, CC_MEAN_BAD_PER_USER);
	REFUSED(p.per_user = 61, CC_MEAN_BAD_PER_USER);
	REFUSED(p.beta = 0.0, CC_MEAN_BAD_BETA);
	REFUSED(p.beta = 1.0, CC_MEAN_BAD_BETA);
	REFUSED(p.beta = NAN, CC_MEAN_BAD_BETA);
#undef REFUSED

	/* m = 12: levels 0 .. 3, a user's samples after the 8th dropped */
	plan = make_plan(good);
	CHECK(plan.levels == 4 && plan.cap == 8 && plan.medians == 0 && plan.tree_share == 4,
		  "withhold plan: %lld levels, cap %lld, %lld medians, share %llu", (long long) plan.levels,
		  (long long) plan.cap, (long long) plan.medians, (unsigned long long) plan.tree_share);
	for (int l = 0; l < 4; l++)
		CHECK(plan.level[l].block == (l == 0 ? 1 : 1 << (l - 1)) && plan.level[l].capacity == 5 &&
			  plan.level[l].depth == 3 && !plan.level[l].truncated, "withhold level %d", l);
	CHECK(cc_mean_user_bytes(&plan) == 16 + 8 * 4, "withhold user bytes %zu", cc_mean_user_bytes(&plan));
	check_accounting(&plan, "withhold m=12");

	p = good;
	p.kind = CC_MEAN_NAIVE;
	plan = make_plan(p);
	CHECK(plan.levels == 1 && plan.cap == 12 && plan.level[0].capacity == 60 &&
		  plan.level[0].depth == 6 && plan.tree_share == 1, "naive plan");
	CHECK(cc_mean_user_bytes(&plan) == 16, "naive user bytes %zu", cc_mean_user_bytes(&plan));
	check_accounting(&plan, "naive m=12");

	/*
	 * Many users with many samples: the top levels are truncated, with the
	 * analysis' constants, and the plan is less noisy than the same without
	 * truncation.
	 */
	plan = make_plan(mean_params(CC_MEAN_WITHHOLD, 1.0, INT64_C(1000) * 16384, 1000, 16384, 1 << 16));
	CHECK(plan.medians >= 1, "no truncation at n = 1000, m = 2^14");
	for (int l = 0; l < plan.levels; l++)
	{
		const cc_mean_level *lv = &plan.level[l];
		int64_t		range = lv->block << 16;

		CHECK(lv->truncated == (l >= plan.levels - plan.medians), "level %d: truncated %d", l,
			  lv->truncated);
		if (lv->truncated)
			CHECK(2 * lv->half_width < range && lv->arrays <= 1000 &&
				  lv->arrays * lv->block <= plan.params.horizon &&
				  (lv->grid - 1) * lv->spacing >= range && lv->grid <= CC_MEAN_MAX_GRID,
				  "level %d: h %lld K %lld s %lld G %lld", l, (long long) lv->half_width,
				  (long long) lv->arrays, (long long) lv->spacing, (long long) lv->grid);
	}
	check_accounting(&plan, "withhold n=1000 m=2^14");
	flat = plan;
	CHECK(cc_mean_plan_truncate(&flat, 0) && cc_mean_plan_calibrate(&flat) == CC_MEAN_OK &&
		  flat.medians == 0, "the plan without truncation");
	for (int l = 0; l < plan.levels; l++)
	{
		noise += plan.level[l].depth * pow(cc_scale_value(plan.level[l].scale), 2);
		flat_noise += flat.level[l].depth * pow(cc_scale_value(flat.level[l].scale), 2);
	}
	CHECK(noise < flat_noise, "truncation chosen though noisier: %g against %g", noise, flat_noise);
	printf("continual mean: n = 1000, m = 2^14: %lld of %lld levels truncated, state %zu bytes, "
		   "%zu bytes a user\n", (long long) plan.medians, (long long) plan.levels,
		   cc_mean_size(&plan), cc_mean_user_bytes(&plan));

	/* the test's forced truncation is accounted like any other */
	plan = forced_plan(mean_params(CC_MEAN_WITHHOLD, 1.0, 40, 5, 8, 10), 3, 3, 10);
	CHECK(plan.medians == 1 && plan.tree_share == 8 && plan.median_share == 2, "forced plan shares");
	check_accounting(&plan, "forced truncation");

	/* calibrate refuses what would break the sensitivity argument */
	bad = plan;
	bad.level[1].capacity = 4;
	bad.level[1].depth = 3;
	CHECK(cc_mean_plan_calibrate(&bad) == CC_MEAN_BAD_PLAN, "a tree short of its elements");
	bad = plan;
	bad.level[2].depth = 2;
	CHECK(cc_mean_plan_calibrate(&bad) == CC_MEAN_BAD_PLAN, "a depth not the capacity's");
	bad = plan;
	bad.level[3].grid = 40;
	CHECK(cc_mean_plan_calibrate(&bad) == CC_MEAN_BAD_PLAN, "candidates short of the range");
	bad = plan;
	bad.level[3].half_width = 41;
	CHECK(cc_mean_plan_calibrate(&bad) == CC_MEAN_BAD_PLAN, "a half-width past the range");
	bad = plan;
	bad.level[3].arrays = 0;
	CHECK(cc_mean_plan_calibrate(&bad) == CC_MEAN_BAD_PLAN, "no arrays");
	p = good;
	p.kind = CC_MEAN_NAIVE;
	bad = make_plan(p);
	bad.level[0].truncated = true;
	CHECK(cc_mean_plan_calibrate(&bad) == CC_MEAN_BAD_PLAN, "a truncated naive plan");

	CHECK(cc_mean_quantize(0.5, 0.0, 1.0, 4, &q) && q == 2, "0.5 -> %lld", (long long) q);
	CHECK(cc_mean_quantize(0.124, 0.0, 1.0, 4, &q) && q == 0, "0.124 -> %lld", (long long) q);
	CHECK(cc_mean_quantize(0.126, 0.0, 1.0, 4, &q) && q == 1, "0.126 -> %lld", (long long) q);
	CHECK(cc_mean_quantize(-3.0, 0.0, 1.0, 4, &q) && q == 0, "-3 -> %lld", (long long) q);
	CHECK(cc_mean_quantize(7.0, 0.0, 1.0, 4, &q) && q == 4, "7 -> %lld", (long long) q);
	CHECK(cc_mean_quantize(-INFINITY, -1.0, 1.0, 4, &q) && q == 0, "-inf -> %lld", (long long) q);
	CHECK(!cc_mean_quantize(NAN, 0.0, 1.0, 4, &q), "NaN quantized");
	CHECK(!cc_mean_quantize(0.5, 1.0, 1.0, 4, &q) && !cc_mean_quantize(0.5, 0.0, INFINITY, 4, &q),
		  "an empty or infinite range");
}

/* The schedule, kept apart from the core: each user's kept samples. */
typedef struct model
{
	int64_t		cap;
	int64_t    *count;			/* by user id */
	int64_t    *samples;		/* id * cap + i */
	int64_t		dropped;
} model;

static void
model_push(model *md, int64_t id, int64_t q)
{
	if (md->count[id] == md->cap)
		md->dropped++;
	else
		md->samples[id * md->cap + md->count[id]++] = q;
}

/* the element of level l of user id: its first sample, or 2^(l-1)+1 .. 2^l */
static int64_t
model_element(const model *md, int64_t id, int l)
{
	int64_t		sum = 0;

	for (int64_t i = l == 0 ? 0 : INT64_C(1) << (l - 1); i < INT64_C(1) << l; i++)
		sum += md->samples[id * md->cap + i];
	return sum;
}

/* what the median of a block of k could pool: sum of 2^floor(log2 min(c, k)) */
static int64_t
model_offers(const model *md, int64_t n, int64_t k)
{
	int64_t		sum = 0;

	for (int64_t id = 0; id < n; id++)
		if (md->count[id] > 0)
			sum += INT64_C(1) << (63 - __builtin_clzll(md->count[id] < k ? md->count[id] : k));
	return sum;
}

/*
 * Push a stream of n users, m samples each, in the given order, and after
 * every sample compare each level's elements and exact sum, the samples
 * covered and dropped, with the model; were all its levels active, the
 * withhold kind would cover at least half of the samples kept (Claim C.1).  With a
 * truncated level, that it stays inactive exactly until its arrays can be
 * formed, and that its elements are then clamped around its centre.
 */
static void
check_schedule(const cc_mean_plan *plan, enum order order, int64_t n, int64_t m, uint64_t seed)
{
	const char *kind = plan->params.kind == CC_MEAN_NAIVE ? "naive" : "withhold";
	int64_t		horizon = n * m;
	int64_t    *users = malloc(horizon * sizeof(int64_t));
	model		md = {.cap = plan->cap};
	runner		r;
	seeded_rng	rng;
	long		mismatches = 0;
	bool		activated[CC_MEAN_MAX_LEVELS] = {false};
	char		first[200] = "";

	seeded_rng_init(&rng, seed);
	md.count = calloc(n, sizeof(int64_t));
	md.samples = calloc(n * md.cap, sizeof(int64_t));
	arrivals(order, n, m, users, &rng.rng);
	runner_start(&r, plan, n);
	for (int64_t t = 1; t <= horizon; t++)
	{
		int64_t		id = users[t - 1];
		int64_t		q = (int64_t) cc_uniform_below(&rng.rng, (uint64_t) plan->params.resolution + 1);
		int64_t		included = 0;
		int64_t		covered_sum = 0;
		int64_t		possible = 0;	/* covered if every level were active */
		cc_mean_release rel;

		if (runner_push(&r, id, q, &rng.rng) != CC_MEAN_OK)
		{
			mismatches++;
			continue;
		}
		model_push(&md, id, q);
		cc_mean_read(r.state, &rel);
		for (int l = 0; l < plan->levels; l++)
		{
			const cc_mean_level *lv = &plan->level[l];
			cc_mean_level_state ls;
			int64_t		elements = 0;
			int64_t		sum = 0;

			cc_mean_level_read(r.state, l, &ls);
			if (lv->truncated && !activated[l])
				activated[l] = model_offers(&md, n, lv->block) >= lv->arrays * lv->block;
			for (int64_t u = 0; u < n; u++)
			{
				int64_t		e;

				if (md.count[u] < INT64_C(1) << l)
					continue;
				e = plan->params.kind == CC_MEAN_NAIVE ? 0 : model_element(&md, u, l);
				if (lv->truncated)
					e = e < ls.centre - lv->half_width ? ls.centre - lv->half_width :
						e > ls.centre + lv->half_width ? ls.centre + lv->half_width : e;
				elements++;
				sum += e;
			}
			if (plan->params.kind == CC_MEAN_NAIVE)
			{
				elements = t - md.dropped;
				sum = 0;
				for (int64_t u = 0; u < n; u++)
					for (int64_t i = 0; i < md.count[u]; i++)
						sum += md.samples[u * md.cap + i];
			}
			possible += elements * lv->block;
			if (lv->truncated && !activated[l])
				elements = sum = 0;
			included += elements * lv->block;
			covered_sum += sum;
			if (ls.active != (!lv->truncated || activated[l]) || ls.elements != elements ||
				ls.exact != sum || (lv->truncated && !activated[l] &&
									ls.pooled != model_offers(&md, n, lv->block)))
			{
				if (mismatches++ == 0)
					snprintf(first, sizeof(first), "t=%lld level %d: active %d, %lld elements, "
							 "sum %lld; model %lld, %lld", (long long) t, l, ls.active,
							 (long long) ls.elements, (long long) ls.exact, (long long) elements,
							 (long long) sum);
			}
		}
		if (rel.included != included || rel.dropped != md.dropped || rel.t != t ||
			cc_mean_exact_sum(r.state) != covered_sum || 2 * possible < t - md.dropped)
		{
			if (mismatches++ == 0)
				snprintf(first, sizeof(first), "t=%lld: %lld covered (%lld if all active), model %lld; "
						 "%lld dropped, model %lld", (long long) t, (long long) rel.included,
						 (long long) possible, (long long) included, (long long) rel.dropped,
						 (long long) md.dropped);
		}
	}
	CHECK(mismatches == 0, "%s, %s order, n=%lld m=%lld: %ld mismatches; first: %s", kind,
		  order_names[order], (long long) n, (long long) m, mismatches, first);
	runner_free(&r);
	free(users);
	free(md.count);
	free(md.samples);
}

static void
test_mean_schedule(void)
{
	/* m = 12: the withhold kind keeps 8 samples a user, the naive 12 */
	cc_mean_plan withhold = make_plan(mean_params(CC_MEAN_WITHHOLD, 1.0, 7 * 12, 7, 12, 1000));
	cc_mean_plan naive = make_plan(mean_params(CC_MEAN_NAIVE, 1.0, 7 * 12, 7, 12, 1000));
	/* level 3 (blocks of 4) truncated: active once 3 arrays of 4 can form */
	cc_mean_plan truncated = forced_plan(mean_params(CC_MEAN_WITHHOLD, 4.0, 7 * 8, 7, 8, 10),
										 3, 3, 10);

	for (int o = 0; o < NUM_ORDERS; o++)
	{
		check_schedule(&withhold, o, 7, 12, 100 + o);
		check_schedule(&naive, o, 7, 12, 200 + o);
		check_schedule(&truncated, o, 7, 8, 300 + o);
	}
}

/*
 * Run a stream (users[t], values[t], t < horizon) from a seed, and keep each
 * level's exact sum and centre at its end.
 */
static void
run_levels(const cc_mean_plan *plan, const int64_t *users, const int64_t *values,
		   int64_t horizon, int64_t n, uint64_t seed, int64_t *exact, int64_t *centre)
{
	runner		r;
	seeded_rng	rng;

	seeded_rng_init(&rng, seed);
	runner_start(&r, plan, n);
	for (int64_t t = 0; t < horizon; t++)
		runner_push(&r, users[t], values[t], &rng.rng);
	for (int l = 0; l < plan->levels; l++)
	{
		cc_mean_level_state ls;

		cc_mean_level_read(r.state, l, &ls);
		exact[l] = ls.exact;
		centre[l] = ls.centre;
	}
	runner_free(&r);
}

/*
 * Neighbours (the values of one user changed) run on the same random words:
 * while a level's centre is the same in both runs (always, untruncated), its
 * exact sum moves by at most its sensitivity.  With `extreme`, the user's
 * samples are all 0 against all Q and every one of its levels must move by
 * exactly the sensitivity; otherwise they are random, `pairs` times.
 */
static void
check_neighbours(const cc_mean_plan *plan, enum order order, int64_t n, int64_t changed,
				 int64_t fill, bool extreme, int pairs, uint64_t seed)
{
	const char *kind = plan->params.kind == CC_MEAN_NAIVE ? "naive" : "withhold";
	int64_t		m = plan->params.per_user;
	int64_t		horizon = n * m;
	int64_t		q = plan->params.resolution;
	int64_t    *users = malloc(horizon * sizeof(int64_t));
	int64_t    *values = malloc(horizon * sizeof(int64_t));
	int64_t    *other = malloc(horizon * sizeof(int64_t));
	seeded_rng	rng;
	long		over = 0;
	long		compared = 0;
	long		short_of = 0;

	seeded_rng_init(&rng, seed);
	arrivals(order, n, m, users, &rng.rng);
	for (int pair = 0; pair < pairs; pair++)
	{
		int64_t		a[CC_MEAN_MAX_LEVELS], b[CC_MEAN_MAX_LEVELS];
		int64_t		ca[CC_MEAN_MAX_LEVELS], cb[CC_MEAN_MAX_LEVELS];
		int64_t		who = extreme ? changed : (int64_t) cc_uniform_below(&rng.rng, (uint64_t) n);

		for (int64_t t = 0; t < horizon; t++)
		{
			values[t] = fill >= 0 ? fill : (int64_t) cc_uniform_below(&rng.rng, (uint64_t) q + 1);
			other[t] = values[t];
			if (users[t] == who)
			{
				values[t] = extreme ? 0 : (int64_t) cc_uniform_below(&rng.rng, (uint64_t) q + 1);
				other[t] = extreme ? q : (int64_t) cc_uniform_below(&rng.rng, (uint64_t) q + 1);
			}
		}
		run_levels(plan, users, values, horizon, n, seed + 1 + pair, a, ca);
		run_levels(plan, users, other, horizon, n, seed + 1 + pair, b, cb);
		for (int l = 0; l < plan->levels; l++)
		{
			int64_t		moved = llabs(a[l] - b[l]);

			if (ca[l] != cb[l])
				continue;
			compared++;
			over += moved > plan->level[l].sensitivity;
			short_of += extreme && moved != plan->level[l].sensitivity;
		}
	}
	CHECK(over == 0 && short_of == 0 && compared >= pairs,
		  "%s, %s order, %s: %ld of %ld levels moved past their sensitivity, %ld short of it",
		  kind, order_names[order], extreme ? "0 against Q" : "random", over, compared, short_of);
	free(users);
	free(values);
	free(other);
}

static void
test_mean_sensitivity(void)
{
	cc_mean_plan withhold = make_plan(mean_params(CC_MEAN_WITHHOLD, 1.0, 4 * 8, 4, 8, 10));
	cc_mean_plan naive = make_plan(mean_params(CC_MEAN_NAIVE, 1.0, 4 * 8, 4, 8, 10));

	/*
	 * Level 3 (blocks of 4, range 40) clamped to +-10 around the median of 3
	 * arrays: in the contiguous order users 0, 1 and 2 fill them, so user 4
	 * changes no centre; the others' samples, all 5, put it at 20 with
	 * epsilon 1000 (every other candidate has probability below e^-250), so
	 * the clamp [10, 30] moves user 4's element from 0 or 40 by exactly 20.
	 */
	cc_mean_plan truncated = forced_plan(mean_params(CC_MEAN_WITHHOLD, 1000.0, 5 * 8, 5, 8, 10),
										 3, 3, 10);

	CHECK(truncated.level[3].sensitivity == 20, "forced sensitivity %lld",
		  (long long) truncated.level[3].sensitivity);
	for (int o = 0; o < NUM_ORDERS; o++)
	{
		check_neighbours(&withhold, o, 4, 2, -1, true, 1, 400 + o);
		check_neighbours(&naive, o, 4, 2, -1, true, 1, 410 + o);
		check_neighbours(&withhold, o, 4, 0, -1, false, 100, 420 + o);
		check_neighbours(&naive, o, 4, 0, -1, false, 100, 430 + o);
		check_neighbours(&truncated, o, 5, 0, -1, false, 100, 440 + o);
	}
	check_neighbours(&truncated, CONTIGUOUS, 5, 4, 5, true, 1, 450);
}

/* One configuration of the privacy audit. */
typedef struct audit
{
	const char *name;
	cc_mean_plan plan;
	int64_t		n;
	int64_t		horizon;
	const int64_t *users;		/* by step */
	int64_t		changed;		/* its samples are 0 in D, Q in D' */
} audit;

#define AUDIT_RUNS 100000
#define AUDIT_MAX_STEPS 16

/*
 * The increments of the noisy sum at every step of one run: what the
 * releases show of the trees' nodes.
 */
static void
audit_run(runner *r, const audit *a, bool prime, cc_rng *rng, int64_t *increments, int64_t *exact)
{
	int64_t		before = 0;
	int64_t		exact_before = 0;

	runner_reset(r);
	for (int64_t t = 0; t < a->horizon; t++)
	{
		int64_t		q = prime && a->users[t] == a->changed ? a->plan.params.resolution : 0;

		runner_push(r, a->users[t], q, rng);
		increments[t] = cc_mean_noisy_sum(r->state) - before;
		before = cc_mean_noisy_sum(r->state);
		exact[t] = cc_mean_exact_sum(r->state) - exact_before;
		exact_before = cc_mean_exact_sum(r->state);
	}
}

/*
 * The audit: D has the changed user's samples all 0, D' all Q, the same
 * arrival pattern.  Event `down` is every increment at most D's exact one
 * (from a run of D), `up` every increment at least D''s: for the trees'
 * discrete Laplace the likelihood ratio of such tail events is as large as
 * any event's.  Neither P_D(down) / P_D'(down) nor P_D'(up) / P_D(up) may
 * exceed e^epsilon beyond sampling error; with `expect_leak` (a plan whose
 * scales were halved after calibration) the down ratio must exceed it.
 */
static void
check_audit(const audit *a, bool expect_leak, uint64_t seed)
{
	double		epsilon = (double) a->plan.params.epsilon_units / 1e9;
	int64_t		down[AUDIT_MAX_STEPS], up[AUDIT_MAX_STEPS];
	int64_t		inc[AUDIT_MAX_STEPS], exact[AUDIT_MAX_STEPS];
	long		hits[2][2] = {{0, 0}, {0, 0}};	/* [D or D'][down or up] */
	double		excess_down, excess_up;
	runner		r;
	seeded_rng	rng;

	seeded_rng_init(&rng, seed);
	runner_start(&r, &a->plan, a->n);
	audit_run(&r, a, false, &rng.rng, inc, down);
	audit_run(&r, a, true, &rng.rng, inc, up);
	for (int prime = 0; prime < 2; prime++)
		for (long run = 0; run < AUDIT_RUNS; run++)
		{
			bool		below = true;
			bool		above = true;

			audit_run(&r, a, prime, &rng.rng, inc, exact);
			for (int64_t t = 0; t < a->horizon; t++)
			{
				below &= inc[t] <= down[t];
				above &= inc[t] >= up[t];
			}
			hits[prime][0] += below;
			hits[prime][1] += above;
		}
	runner_free(&r);

	if (expect_leak)
	{
		CHECK(!audit_ratio_within(AUDIT_RUNS, hits[0][0], hits[1][0], epsilon, &excess_down),
			  "%s: the audit misses scales halved (%ld against %ld runs)", a->name,
			  hits[0][0], hits[1][0]);
		return;
	}
	CHECK(audit_ratio_within(AUDIT_RUNS, hits[0][0], hits[1][0], epsilon, &excess_down),
		  "%s: P_D(down) / P_D'(down) = %ld / %ld above e^%g (%.1f sd)", a->name, hits[0][0],
		  hits[1][0], epsilon, excess_down);
	CHECK(audit_ratio_within(AUDIT_RUNS, hits[1][1], hits[0][1], epsilon, &excess_up),
		  "%s: P_D'(up) / P_D(up) = %ld / %ld above e^%g (%.1f sd)", a->name, hits[1][1],
		  hits[0][1], epsilon, excess_up);
	printf("continual mean audit, %s: ln ratios %.3f (down) and %.3f (up) for epsilon %g\n",
		   a->name, log((double) hits[0][0] / hits[1][0]), log((double) hits[1][1] / hits[0][1]),
		   epsilon);
}

static void
test_mean_audit(void)
{
	static const int64_t alone[4] = {0, 0, 0, 0};
	static const int64_t pair[8] = {0, 1, 0, 1, 0, 1, 0, 1};
	audit		a;

	/* one user, levels 0, 1, 2 of one node each: the ratio is e^epsilon */
	a = (audit)
	{
		"withhold, one user", make_plan(mean_params(CC_MEAN_WITHHOLD, 1.0, 4, 1, 4, 1)),
			1, 4, alone, 0
	};
	check_audit(&a, false, 500);

	/* the same with every scale halved: caught */
	for (int l = 0; l < a.plan.levels; l++)
		a.plan.level[l].scale.den *= 2;
	a.name = "withhold, scales halved";
	check_audit(&a, true, 501);

	a = (audit)
	{
		"naive, one user", make_plan(mean_params(CC_MEAN_NAIVE, 1.0, 4, 1, 4, 1)), 1, 4, alone, 0
	};
	check_audit(&a, false, 502);

	/* level 2 clamped to +-2 around the median of the user's first two */
	a = (audit)
	{
		"withhold, level 2 truncated",
			forced_plan(mean_params(CC_MEAN_WITHHOLD, 1.0, 4, 1, 4, 4), 2, 1, 2), 1, 4, alone, 0
	};
	check_audit(&a, false, 503);

	/* two users in turn: each level's tree has two nodes of depth 2 */
	a = (audit)
	{
		"withhold, two users", make_plan(mean_params(CC_MEAN_WITHHOLD, 1.0, 8, 2, 4, 1)),
			2, 8, pair, 0
	};
	check_audit(&a, false, 504);
}

#define NOISE_TRIALS 20000

/*
 * The noise of one stream (n users, m samples each, random order and values)
 * over NOISE_TRIALS runs, at the middle and the end: the variance the state
 * reports against the sum over the active levels of popcount(elements) draws
 * of their scale, counted here; the mean of noisy - exact against 0 and its
 * empirical variance against that, which must also tell it from the
 * variance of trees one depth short.
 */
static void
check_noise(const cc_mean_plan *plan, int64_t n, uint64_t seed)
{
	const char *kind = plan->params.kind == CC_MEAN_NAIVE ? "naive" : "withhold";
	int64_t		horizon = n * plan->params.per_user;
	int64_t		steps[2] = {horizon / 2, horizon};
	int64_t    *users = malloc(horizon * sizeof(int64_t));
	int64_t    *values = malloc(horizon * sizeof(int64_t));
	double		sum[2] = {0}, sumsq[2] = {0};
	double		var[2] = {0}, kappa4[2] = {0}, shorter[2] = {0}, reported[2] = {0};
	runner		r;
	seeded_rng	rng;

	seeded_rng_init(&rng, seed);
	arrivals(RANDOM, n, plan->params.per_user, users, &rng.rng);
	for (int64_t t = 0; t < horizon; t++)
		values[t] = (int64_t) cc_uniform_below(&rng.rng, (uint64_t) plan->params.resolution + 1);
	runner_start(&r, plan, n);
	for (long trial = 0; trial < NOISE_TRIALS; trial++)
	{
		int			c = 0;

		runner_reset(&r);
		for (int64_t t = 1; t <= horizon; t++)
		{
			runner_push(&r, users[t - 1], values[t - 1], &rng.rng);
			if (t == steps[c])
			{
				double		z = (double) (cc_mean_noisy_sum(r.state) - cc_mean_exact_sum(r.state));

				sum[c] += z;
				sumsq[c] += z * z;
				if (trial == 0)
				{
					cc_mean_release rel;
					double		scale;

					cc_mean_read(r.state, &rel);
					scale = (double) rel.included * plan->params.resolution;
					reported[c] = rel.stddev * rel.stddev * scale * scale;
					for (int l = 0; l < plan->levels; l++)
					{
						const cc_mean_level *lv = &plan->level[l];
						cc_mean_level_state ls;
						double		b = cc_scale_value(lv->scale);
						int			draws;

						cc_mean_level_read(r.state, l, &ls);
						if (!ls.active)
							continue;
						draws = __builtin_popcountll((unsigned long long) ls.elements);
						var[c] += draws * dlap_var(b);
						kappa4[c] += draws * dlap_kappa4(b);
						shorter[c] += draws * dlap_var(b * (lv->depth - 1) / lv->depth);
					}
				}
				c++;
			}
		}
	}
	for (int c = 0; c < 2; c++)
	{
		double		mean = sum[c] / NOISE_TRIALS;
		double		sample = sumsq[c] / NOISE_TRIALS - mean * mean;

		CHECK(fabs(reported[c] - var[c]) <= 1e-9 * var[c], "%s t=%lld: reported variance %g, "
			  "counted %g", kind, (long long) steps[c], reported[c], var[c]);
		CHECK(variance_consistent(sample, var[c], kappa4[c], NOISE_TRIALS),
			  "%s t=%lld: empirical variance %g, counted %g", kind, (long long) steps[c],
			  sample, var[c]);
		if (c == 0)
			continue;
		CHECK(fabs(mean) <= UNIT_Z * sqrt(var[c] / NOISE_TRIALS), "%s: mean noise %g", kind, mean);
		CHECK(!variance_consistent(sample, shorter[c], kappa4[c], NOISE_TRIALS),
			  "%s: trees one depth short pass (%g against %g)", kind, sample, shorter[c]);
	}
	runner_free(&r);
	free(users);
	free(values);
}

#define COVERAGE_TRIALS 200

/*
 * The bound, on streams of i.i.d. Bernoulli(0.3) samples: it must hold at
 * every step at once in all but about beta of the runs.  The withhold plan
 * truncates its top level with the analysis' constants, which must then be
 * reached (the level active, every sample covered at the end).
 */
static void
check_coverage(const cc_mean_plan *plan, int64_t n, uint64_t seed)
{
	const char *kind = plan->params.kind == CC_MEAN_NAIVE ? "naive" : "withhold";
	int64_t		horizon = n * plan->params.per_user;
	int64_t    *users = malloc(horizon * sizeof(int64_t));
	double		beta = plan->params.beta;
	long		failures = 0;
	bool		all_active = true;
	runner		r;
	seeded_rng	rng;

	seeded_rng_init(&rng, seed);
	arrivals(RANDOM, n, plan->params.per_user, users, &rng.rng);
	runner_start(&r, plan, n);
	for (long trial = 0; trial < COVERAGE_TRIALS; trial++)
	{
		bool		failed = false;
		cc_mean_release rel;

		runner_reset(&r);
		for (int64_t t = 0; t < horizon; t++)
		{
			int64_t		q = cc_uniform_below(&rng.rng, 10) < 3 ? plan->params.resolution : 0;

			runner_push(&r, users[t], q, &rng.rng);
			cc_mean_read(r.state, &rel);
			failed |= rel.has_estimate && !(fabs(rel.estimate - 0.3) <= rel.bound);
		}
		failures += failed;
		all_active &= rel.included == horizon && rel.diverse;
	}
	CHECK(all_active, "%s: some run ended with samples not covered", kind);
	CHECK(failures <= COVERAGE_TRIALS * beta + UNIT_Z * sqrt(COVERAGE_TRIALS * beta * (1 - beta)),
		  "%s: the bound failed in %ld of %d runs", kind, failures, COVERAGE_TRIALS);
	runner_free(&r);
	free(users);
}

#define MEDIAN_RUNS 100000

/*
 * The median's exponential mechanism, against its exact law.  Three users'
 * first samples 0, Q/2 and Q (Q = 8) are the arrays of level 1 (blocks of
 * one sample), candidates 0 .. 8 one apart: 4 costs 1, the others 2, so 4
 * has probability e^(-eps'/2) / (e^(-eps'/2) + 8 e^(-eps')), eps' = epsilon /
 * 2 = 1.  A chi-square test of MEDIAN_RUNS draws against that law, which
 * must reject the law of twice eps'.
 */
static void
test_mean_median(void)
{
	static const int64_t users[3] = {0, 1, 2};
	static const int64_t values[3] = {0, 4, 8};
	cc_mean_plan plan = forced_plan(mean_params(CC_MEAN_WITHHOLD, 2.0, 6, 3, 2, 8), 1, 3, 0);
	long		counts[9] = {0};
	double		stat = 0.0;
	double		wrong = 0.0;
	runner		r;
	seeded_rng	rng;

	seeded_rng_init(&rng, 700);
	runner_start(&r, &plan, 3);
	for (long run = 0; run < MEDIAN_RUNS; run++)
	{
		cc_mean_level_state ls;

		runner_reset(&r);
		for (int t = 0; t < 3; t++)
			runner_push(&r, users[t], values[t], &rng.rng);
		cc_mean_level_read(r.state, 1, &ls);
		if (ls.active && ls.centre >= 0 && ls.centre <= 8)
			counts[ls.centre]++;
	}
	runner_free(&r);
	for (int twice = 0; twice < 2; twice++)
	{
		double		eps = twice ? 2.0 : 1.0;
		double		total = exp(-eps / 2.0) + 8.0 * exp(-eps);
		double	   *out = twice ? &wrong : &stat;

		for (int j = 0; j < 9; j++)
		{
			double		expected = MEDIAN_RUNS * (j == 4 ? exp(-eps / 2.0) : exp(-eps)) / total;

			*out += (counts[j] - expected) * (counts[j] - expected) / expected;
		}
	}
	CHECK(stat <= chi2_threshold(8), "median: chi-square %g against its law", stat);
	CHECK(wrong > chi2_threshold(8), "median: the law of twice eps' passes (%g)", wrong);
}

static void
test_mean_error_bars(void)
{
	cc_mean_plan withhold = make_plan(mean_params(CC_MEAN_WITHHOLD, 1.0, 20 * 16, 20, 16, 16));
	cc_mean_plan naive = make_plan(mean_params(CC_MEAN_NAIVE, 1.0, 20 * 16, 20, 16, 16));

	check_noise(&withhold, 20, 600);
	check_noise(&naive, 20, 601);

	/* top level (blocks of 128) truncated: 8 arrays at epsilon 8 */
	withhold = make_plan(mean_params(CC_MEAN_WITHHOLD, 8.0, 100 * 256, 100, 256, 256));
	naive = make_plan(mean_params(CC_MEAN_NAIVE, 8.0, 100 * 256, 100, 256, 256));
	CHECK(cc_mean_plan_truncate(&withhold, 1) && cc_mean_plan_calibrate(&withhold) == CC_MEAN_OK &&
		  withhold.level[8].truncated, "the top level of m = 256 cannot be truncated");
	check_coverage(&withhold, 100, 602);
	check_coverage(&naive, 100, 603);

	/* with little noise, the sampling error is most of the bound */
	withhold = make_plan(mean_params(CC_MEAN_WITHHOLD, 1000.0, 400 * 16, 400, 16, 256));
	naive = make_plan(mean_params(CC_MEAN_NAIVE, 1000.0, 400 * 16, 400, 16, 256));
	check_coverage(&withhold, 400, 604);
	check_coverage(&naive, 400, 605);
}

/*
 * The constants of the error bars (the head comment of continual_mean.c,
 * events A to D), computed here again from their formulas: a plan with
 * medians, at n = 1000 users of m = 2^14 samples, beta = 0.05 split in
 * four.  K is even, 2 ceil(2/eps' ln(2 M G / beta_A)) with G from the
 * narrowest grid (alpha at K = 2), so that the exponential mechanism leaves
 * the arrays' range with probability at most beta_A / (2 M); alpha =
 * sqrt(ln(4 M K / beta_A) / (2 k)) (Hoeffding over the M K arrays); the
 * candidates s = floor(k Q alpha) apart, G = ceil(k Q / s) + 1; h =
 * ceil(Q sqrt(k ln(2 n M / beta_B) / 2) + k Q alpha + s / 2); the noise's
 * ln(2 T (L + 1) / beta_C) and the sampling's ln(2 T / beta_D).
 */
static void
test_mean_constants(void)
{
	cc_mean_params p = mean_params(CC_MEAN_WITHHOLD, 1.0, INT64_C(1000) * 16384, 1000, 16384, 1 << 16);
	cc_mean_plan plan = make_plan(p);
	double		q = (double) p.resolution;
	double		quarter = p.beta / 4.0;
	double		m = (double) plan.medians;
	double		eps = 1.0 / (2.0 * m);

	CHECK(plan.medians >= 1, "no medians at n = 1000, m = 2^14");
	for (int l = 0; l < plan.levels; l++)
	{
		const cc_mean_level *lv = &plan.level[l];
		double		k = (double) lv->block;
		double		alpha;
		double		spacing;
		double		grid;
		double		arrays;
		double		h;

		if (!lv->truncated)
			continue;
		alpha = sqrt(log(8.0 * m / quarter) / (2.0 * k));
		spacing = fmax(floor(k * q * alpha), ceil(k * q / (CC_MEAN_MAX_GRID - 1)));
		grid = ceil(k * q / spacing) + 1.0;
		arrays = 2.0 * ceil(2.0 / eps * log(2.0 * m * grid / quarter));
		alpha = sqrt(log(4.0 * m * arrays / quarter) / (2.0 * k));
		spacing = fmax(floor(k * q * alpha), ceil(k * q / (CC_MEAN_MAX_GRID - 1)));
		grid = ceil(k * q / spacing) + 1.0;
		h = ceil(q * sqrt(k * log(2.0 * 1000.0 * m / quarter) / 2.0) + k * q * alpha + spacing / 2.0);
		CHECK(lv->arrays == (int64_t) arrays && lv->spacing == (int64_t) spacing &&
			  lv->grid == (int64_t) grid && lv->half_width == (int64_t) h,
			  "level %d: K %lld s %lld G %lld h %lld, the formulas give %g %g %g %g", l,
			  (long long) lv->arrays, (long long) lv->spacing, (long long) lv->grid,
			  (long long) lv->half_width, arrays, spacing, grid, h);
	}
	CHECK(fabs(plan.noise_log_term - log(2.0 * (double) p.horizon * (double) plan.levels / quarter)) < 1e-12 &&
		  fabs(plan.stat_log_term - log(2.0 * (double) p.horizon / quarter)) < 1e-12,
		  "log terms %g %g", plan.noise_log_term, plan.stat_log_term);
}

void
test_continual_mean(void)
{
	test_mean_plans();
	test_mean_schedule();
	test_mean_sensitivity();
	test_mean_audit();
	test_mean_median();
	test_mean_constants();
	test_mean_error_bars();
}
