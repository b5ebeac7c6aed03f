/*
 * accuracy_table.c
 *		Every mechanism's mean and worst variance over the steps at
 *		T = 1000, 2^14 and 2^20, beside the published frontier (pure DP)
 *		and the lower bound for any factorization (zCDP): the table of
 *		docs/accuracy-table.md.
 *
 *	make accuracy-table
 *	  (cc -O2 -Isrc/core report/accuracy_table.c src/core/[a-z]*.c -lm -o accuracy_table
 *	   ./accuracy_table > docs/accuracy-table.md)
 *
 * The kinds are every one the core knows (cc_kind, 0 .. CC_NUM_KINDS - 1, by
 * their names), each at its own notion: epsilon 1 for the pure kinds, rho
 * 1/2 for the zCDP ones, sensitivity 1, defaults for the rest (two_level's
 * block ceil(sqrt T)).  A kind the core adds appears here without a change.
 * The variance is what a release reports, its stddev squared: each kind's
 * state is pushed T zeros and read at every step (the noise's variance does
 * not depend on the items or the draws), so the figures are those of
 * running_counts over a stream of zeros.  A kind that refuses the horizon
 * shows the status its parameters get.
 *
 * The frontier: the k-ary tree with subtraction of Andersson, Pagh, Steiner
 * and Torkamani (FORC 2025, arXiv 2408.07021) at epsilon 1, its best k at
 * each horizon; under zCDP at rho 1/2, the lower bound on the mean variance
 * of any factorization of the prefix sums, about (0.701 + ln(T)/pi)^2
 * (Henzinger, Kalinin and Upadhyay, arXiv 2509.14334).  The figures are
 * the published ones, kept here as constants.
 *
 * Sliding windows (window_counts): every construction's mean and worst
 * variance over T = 1000 W steps for widths W = 30, 365 and 1000, from the
 * exact per-step formulas of window.c, beside the frontier for horizon W:
 * the kary running count's own mean and worst at T = W (up to t = W a
 * window is a running count, so no window series does better there).
 */
#include "choice.h"
#include "window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HORIZONS 3

static const int64_t horizons[HORIZONS] = {1000, INT64_C(1) << 14, INT64_C(1) << 20};
static const char *const horizon_names[HORIZONS] = {"1000", "2^14", "2^20"};

/* The published frontier at epsilon 1: mean and worst variance. */
static const double pure_frontier[HORIZONS][2] = {{170.4, 324.0}, {431.7, 846.0},
{1147.4, 2200.0}};

/* The zCDP lower bound on the mean variance at rho 1/2. */
static const double zcdp_bound[HORIZONS] = {8.42, 14.37, 26.16};

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

static cc_params
params_of(cc_kind kind, int64_t horizon)
{
	cc_params	p;

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
	return p;
}

/*
 * The mean and worst reported variance over t = 1 .. T of a kind, or the
 * status its parameters get.
 */
static cc_status
measure(cc_kind kind, int64_t horizon, double *mean, double *worst)
{
	cc_params	p = params_of(kind, horizon);
	cc_rng		rng = {.words = words,.refill = refill};
	cc_status	status = cc_params_prepare(&p);
	cc_state   *state;
	double		sum = 0.0;

	*mean = *worst = 0.0;
	if (status != CC_OK)
		return status;
	state = malloc(cc_state_size(&p));
	cc_state_init(state, &p);
	for (int64_t t = 1; t <= horizon && status == CC_OK; t++)
	{
		cc_release	release;

		status = cc_push(state, 0, &rng);
		cc_read(state, &release);
		sum += release.variance;
		if (release.variance > *worst)
			*worst = release.variance;
	}
	*mean = sum / (double) horizon;
	free(state);
	return status;
}

/* The kind auto picks for the objective, or NULL. */
static const char *
auto_pick(cc_accounting privacy, int64_t horizon, cc_objective objective)
{
	cc_params	p = params_of((cc_kind) 0, horizon);

	p.privacy = privacy;
	if (privacy == CC_ZCDP)
		cc_rho_units(0.5, &p.rho_units);
	return cc_choose(&p, objective) == CC_OK ? cc_kind_name(p.kind) : NULL;
}

/* A variance to four figures or more, and huge ones in exponent form. */
static void
print_figure(double v)
{
	if (v >= 1e6)
		printf("%.3e", v);
	else if (v >= 100.0)
		printf("%.1f", v);
	else
		printf("%.2f", v);
}

/* A kind's row; the lane's least mean and worst gain its figures. */
static void
kind_row(cc_kind kind, double *best)
{
	printf("| `%s` |", cc_kind_name(kind));
	for (int h = 0; h < HORIZONS; h++)
	{
		double		v[2];
		cc_status	status = measure(kind, horizons[h], &v[0], &v[1]);

		if (status != CC_OK)
		{
			printf(" refused (status %d) |", (int) status);
			continue;
		}
		printf(" ");
		print_figure(v[0]);
		printf(" / ");
		print_figure(v[1]);
		printf(" |");
		for (int i = 0; i < 2; i++)
			if (best[2 * h + i] == 0.0 || v[i] < best[2 * h + i])
				best[2 * h + i] = v[i];
	}
	printf("\n");
}

/* The frontier's row, and the lane's best against it. */
static void
frontier_rows(cc_accounting privacy, const double *best)
{
	printf(privacy == CC_ZCDP ? "| lower bound, any factorization |" :
		   "| published frontier |");
	for (int h = 0; h < HORIZONS; h++)
	{
		if (privacy == CC_ZCDP)
			printf(" %.2f / - |", zcdp_bound[h]);
		else
			printf(" %.1f / %.1f |", pure_frontier[h][0], pure_frontier[h][1]);
	}
	printf("\n| least here / frontier |");
	for (int h = 0; h < HORIZONS; h++)
	{
		if (privacy == CC_ZCDP)
			printf(" %.3f / - |", best[2 * h] / zcdp_bound[h]);
		else
			printf(" %.2f / %.2f |", best[2 * h] / pure_frontier[h][0],
				   best[2 * h + 1] / pure_frontier[h][1]);
	}
	printf("\n");
}

/* One table: the kinds of one notion, a column a horizon. */
static void
lane(cc_accounting privacy)
{
	double		best[2 * HORIZONS] = {0};

	printf("| mechanism |");
	for (int h = 0; h < HORIZONS; h++)
		printf(" T = %s: mean / worst |", horizon_names[h]);
	printf("\n|---|");
	for (int h = 0; h < HORIZONS; h++)
		printf("---|");
	printf("\n");
	for (int k = 0; k < CC_NUM_KINDS; k++)
		if (cc_kind_privacy((cc_kind) k) == privacy)
			kind_row((cc_kind) k, best);
	frontier_rows(privacy, best);
	printf("| `auto` picks (mean; worst) |");
	for (int h = 0; h < HORIZONS; h++)
	{
		const char *mean = auto_pick(privacy, horizons[h], CC_OBJECTIVE_MEAN);
		const char *worst = auto_pick(privacy, horizons[h], CC_OBJECTIVE_WORST);

		printf(" `%s`; `%s` |", mean ? mean : "none", worst ? worst : "none");
	}
	printf("\n");
}

#define WIDTHS 3

static const int64_t widths[WIDTHS] = {30, 365, 1000};

/* One width's row: every window construction, the frontier, auto's pick. */
static void
window_row(int64_t width)
{
	cc_params	prefix = params_of(CC_KARY, width);
	const char *picked = "none";
	double		frontier[2],
				best = 0.0;

	cc_params_prepare(&prefix);
	cc_variance_over_horizon(&prefix, &frontier[0], &frontier[1]);
	printf("| %lld |", (long long) width);
	for (int k = 0; k <= CC_WINDOW_AUTO; k++)
	{
		cc_window_params p = {.kind = (cc_window_kind) k,.width = width,
		.horizon = 1000 * width,.sensitivity = 1,.beta = 0.05};
		double		v[2];

		cc_epsilon_units(1.0, &p.epsilon_units);
		if (cc_window_prepare(&p) != CC_OK)
		{
			printf(" refused |");
			continue;
		}
		if (k == CC_WINDOW_AUTO)
		{
			picked = cc_window_kind_name(p.kind);
			continue;
		}
		cc_window_variances(&p, &v[0], &v[1]);
		printf(" ");
		print_figure(v[0]);
		printf(" / ");
		print_figure(v[1]);
		printf(" |");
		if (best == 0.0 || v[0] < best)
			best = v[0];
	}
	printf(" %.1f / %.1f | %.2f | `%s` |\n", frontier[0], frontier[1], best / frontier[0],
		   picked);
}

/* The windows' table: a row a width. */
static void
windows_lane(void)
{
	printf("| W |");
	for (int k = 0; k < CC_WINDOW_AUTO; k++)
		printf(" `%s` |", cc_window_kind_name((cc_window_kind) k));
	printf(" frontier at horizon W (`kary`, T = W) | least here / frontier (mean) | `auto` picks |\n|---|");
	for (int k = 0; k < CC_WINDOW_AUTO + 3; k++)
		printf("---|");
	printf("\n");
	for (int i = 0; i < WIDTHS; i++)
		window_row(widths[i]);
}

int
main(void)
{
	char		date[32];
	time_t		now = time(NULL);

	strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&now));
	printf("# Accuracy table\n\n"
		   "Written by `make accuracy-table` (report/accuracy_table.c) on %s; do not edit by\n"
		   "hand. Every kind the core knows, at sensitivity 1: the mean and the worst over t = 1 .. T\n"
		   "of the variance a release reports (its `stddev` squared), read at every step of a stream\n"
		   "of zeros (the variance does not depend on the data).\n\n", date);
	printf("## Pure DP, epsilon 1\n\n"
		   "Beside the published frontier: the k-ary tree with subtraction (Andersson, Pagh, Steiner\n"
		   "and Torkamani, FORC 2025, arXiv 2408.07021), its best k at each horizon.\n\n");
	lane(CC_PURE);
	printf("\n## zCDP, rho 1/2\n\n"
		   "Beside the lower bound on the mean variance of any factorization of the prefix sums,\n"
		   "about (0.701 + ln(T)/pi)^2 (Henzinger, Kalinin and Upadhyay, arXiv 2509.14334).\n\n");
	lane(CC_ZCDP);
	printf("\n## Sliding windows, pure DP, epsilon 1\n\n"
		   "`window_counts` of width W over T = 1000 W steps: each construction's mean / worst\n"
		   "variance (the exact per-step formulas of src/core/window.c), beside the frontier for\n"
		   "horizon W: the `kary` running count's own at T = W.\n\n");
	windows_lane();
	/* a blank line ends the last table where the docs page splices it */
	printf("\n");
	return 0;
}
