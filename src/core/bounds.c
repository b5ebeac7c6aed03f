/*
 * bounds.c
 *		The simultaneous bound of every mechanism: a half-width that the
 *		error of every step stays within at once with probability at least
 *		1 - beta, proven, and close to the actual quantile of the largest
 *		error.
 *
 * How beta is spent.  The steps fall into segments, the segments into groups
 * and the segments of a group into classes (mechanism_int.h): a horizon's
 * segments form group 0, whose budget is beta; without a horizon, group
 * g = 1, 2, ... gets 6 beta / (pi^2 g^2), and these sum to beta.  Every
 * class c of a group has a tail bound P_c(m), at least the probability that
 * some step of one of its segments has an error above m (below).  With S
 * the group's segments, n_c those of class c, delta = budget / S and
 * phi = CC_BOUND_FLOOR = 1/4, let Q_c be the least m with P_c(m) <= phi
 * delta, and cap the least m with
 *		sum over classes with Q_c <= m of n_c phi delta
 *		+ sum over the others of n_c P_c(m)  <=  budget.
 * A step of class c gets the bound min(cap, Q_c).  A segment of class c
 * then fails with probability at most phi delta if Q_c <= cap (its bound is
 * Q_c) and P_c(cap) otherwise: the sum above bounds the group's failure
 * probability, and the budgets sum to beta.  So every segment keeps a floor
 * of phi delta, and the rest of the budget goes to the classes with the
 * widest tails, which share one cap: the largest bound is close to the
 * least a union bound allows (phi = 0 would give every step the cap; a
 * uniform split, phi = 1, sets the largest bound by the rare steps with the
 * most noise, about 20% higher for the trees).  The search for the cap and
 * for Q_c only decides how tight the bound is: whatever it returns is
 * checked against the inequalities.  (The cap counts a class at its floor
 * when its cheap bound, below, already reaches the floor by m; the class's
 * bound is then at most that.)
 *
 * A class may stand for segments whose noise differs (two_level's and
 * blt's runs of consecutive segments, honaker's steps of one popcount):
 * its tail must then bound each of theirs, and it does: a sum of more
 * discrete Laplace draws has wider tails (the sum is log-concave, hence
 * unimodal, and adding an independent symmetric unimodal draw only takes
 * mass out of a window of 2m + 1 integers centred on the mode), and so do
 * the moment generating functions and proxies used below.
 *
 * The tail of a class.  A class's noise at the last step of its segments is
 * N = X0 + R (cc_tail): an exact part, a sum of n discrete Laplace draws
 * times a weight, and an independent rest.  An error is an integer, and
 * |error| > m only if |N| >= x = m + 1 - rounding; N is symmetric, so
 * P_c(m) = 2 P(N >= x) for single steps.
 *
 * 1. The exact part alone.  A sum S of n discrete Laplace draws of
 * p = e^(-1/b), q = 1 - p, is the difference of two independent negative
 * binomials (failures before the n-th success, P(A = a) =
 * C(a + n - 1, n - 1) q^n p^a).  The partial fractions of its generating
 * function (q^2 / ((1 - p z)(1 - p / z)))^n at its pole 1/p give, for
 * s >= 1, P(S = s) = sum_i gamma_i P(NB_i = s) with weights
 *		gamma_n = (1 + p)^-n,
 *		gamma_(n-j) = (1 + p)^-(n+j) sum_(l=1..j) C(n, l) C(j-1, l-1) p^(2l),
 * all positive (the expansion at w = 1 - p z of ((1 - w) / (r - w))^n,
 * r = 1 - p^2, written as r^-n (1 + c w / (1 - w / r))^n with c = p^2 / r).
 * As P(NB_i >= m) = p^m sum_(j<i) C(m + j - 1, j) q^j, for m >= 1
 *		P(S >= m) = p^m sum_(j=0..n-1) C(m + j - 1, j) q^j Gamma_j,
 * with Gamma_j = sum_(i>j) gamma_i: n positive terms.  And P(S = 0) =
 * q (1 + p)^(1-2n) sum_j C(n-1, j)^2 p^(2j), by Euler's transformation of
 * the hypergeometric series sum_a P(A = a)^2.
 *
 * Segments of several steps (simple_ii, two_level): along one, the noise is
 * a starting value plus a sum of independent symmetric draws, so Levy's
 * inequality (given the starting value) gives P(max over the segment >= x)
 * <= 2 P(N >= x) at its last step; and Doob's maximal inequality applied to
 * exp(lambda Z_t) lets the Chernoff bound of the last step cover the whole
 * segment.  A segment takes the smaller of the two.
 *
 * 2. An exact part and a rest.  For every lambda > 0 and any A with
 * P(R >= r) <= e^(A - lambda r) for all r,
 *		P(X0 + R >= x) = E[P(R >= x - X0)] <= E[min(1, e^(A - lambda (x - X0)))],
 * which has a closed form of positive terms for a single weighted draw
 * (honaker) and for S with lambda below 1/b (hybrid's tree draws); the
 * bound takes the least value over a grid of lambda.  Two kinds of A:
 *	- Chernoff: ln E[exp(lambda R)], exact for discrete Laplace draws
 *	  (cc_dlap_log_mgf), and for honaker, at every lambda, the sum over the
 *	  `choose` nodes whose values are largest, which no set of as many
 *	  nodes exceeds.
 *	- Smoothing: a discrete Laplace draw of scale b has a continuous twin:
 *	  for E exponential, b E = floor(b E) + frac(b E), the two independent
 *	  (memorylessness) and floor(b E) geometric of p = e^(-1/b); so b L =
 *	  X + V for L standard Laplace, X discrete Laplace and V = F1 - F2
 *	  independent of X, of variance at most 1/6 (F has the exponential
 *	  density truncated to [0, 1): variance 1/r^2 - 1/(4 sinh^2(r/2)), at
 *	  most 1/12 by Lazarevic's inequality (sinh(x)/x)^3 >= cosh(x)).  Hence
 *	  R + W = Y, a weighted sum of independent Laplace variables, with W
 *	  independent of R, symmetric, Var W <= v = sum w^2 / 6, and
 *	  P(R >= r) <= P(Y >= r - c) / P(W >= -c), where P(W >= -c) is at least
 *	  c^2 / (v + c^2) (Cantelli) and 1/2 at c = 0.  Y has a log-concave
 *	  density (Prekopa), and so has its tilt by e^(lambda y), of variance
 *	  sigma^2 = psi_Y''(lambda):
 *		P(Y >= y) = e^(psi_Y(lambda) - lambda y) E_tilt[e^(-lambda (Y - y)); Y >= y]
 *			<= e^(psi_Y(lambda) - lambda y) sup f_tilt / lambda,
 *	  and sup f_tilt <= e f_tilt(mean) <= e / (sqrt(2) sigma): a log-concave
 *	  density on the line is at most e times its value at its mean
 *	  (Fradelizi 1997), and f(mean)^2 Var <= 1/2 (Gaxiola, Melbourne, Pigno
 *	  and Pollard 2025, Theorem 1.1).  For honaker's nodes, psi_Y takes the
 *	  largest values, sigma^2 the smallest and v the largest, each a bound
 *	  for every set of nodes.
 *
 * 3. No exact part possible (more than EXACT_DRAWS draws, or a scale so
 * small that p^2 underflows): the Chernoff bound of all the draws, by
 * golden-section search over lambda (any lambda gives a bound).  zCDP kinds:
 * a weighted sum of discrete Gaussians is sub-Gaussian with its proxy
 * (Canonne, Kamath and Steinke 2020), P(N >= x) <= exp(-x^2 / (2 proxy)).
 *
 * Numbers.  The inputs are rounded to the safe side (inverse scales down,
 * weights and proxies up: every tail grows with the scale and the weights).
 * Every probability is a sum of positive terms, each a product of at most a
 * few hundred rounded factors and a few libm calls, so its relative error is
 * below 1e-12; the one difference (the closed form's middle sum in 2) has
 * 1e-12 of its terms added back.  Probabilities are compared in logarithms,
 * raised by LOG_SAFETY = 1e-9 first.
 *
 * Cost.  A group's cap and a class's bound depend on public parameters
 * only, and are cached per process: a release computes each once per
 * distinct class (popcount(t) for binary; some hundreds at most for a window
 * of any length), and every other read is a lookup.  The cap first bounds
 * every class by its plain Chernoff bound, which is cheap and gives a line
 * e^(psi(lambda) - lambda x) good at every threshold, and evaluates the
 * precise tails of the CANDIDATES classes that bound leaves highest only.
 */
#include "class_tails.h"
#include "dlap_tails.h"
#include "mechanism.h"
#include "mechanism_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI_SQUARED 9.8696044010893586

/*
 * The cheap bound of the head of the file's last paragraph: Chernoff over
 * all the draws, and for honaker over the k largest nodes of all levels
 * (which no class of k live nodes exceeds).
 */
static int
cheap_pieces(const cc_tail *t, cc_piece *pieces)
{
	int			n = t->npieces;

	memcpy(pieces, t->pieces, n * sizeof(cc_piece));
	if (t->exact > 0)
		pieces[n++] = (cc_piece) {(double) t->exact, t->exact_inv_b, t->exact_weight};
	return n;
}

/* ln E[exp(lambda N)] at the node grid's point g, for k nodes of any level */
static double
cheap_nodes_log_mgf(const node_grid *ng, int g, int k)
{
	return cc_extreme_sum(ng->at[g][NODE_DISCRETE], ng->order[g][NODE_DISCRETE],
					   ng->levels, 0, k, true);
}

/* A quantile x of the noise before rounding, as a bound on its integer error. */
static inline double
integer_floor(double x, double rounding)
{
	/* against the rounding of the terms and the division */
	double		m = ceil(x * (1.0 + 1e-9) + rounding - 1.0);

	/* fmax(m, 0) without its call: NaN gives 0 too */
	return m > 0.0 ? m : 0.0;
}

/*
 * cheap_floor_of for zCDP kinds, the sub-Gaussian tail of a proxy variance:
 * apart, because every read of a Gaussian release asks, and a cc_tail is
 * large to build.
 */
static inline double
zcdp_floor(double proxy, double rounding, double target)
{
	return integer_floor(sqrt(2.0 * proxy * (M_LN2 + LOG_SAFETY - target)), rounding);
}

/*
 * The least m whose cheap tail is at most e^target: a class's bound when
 * that is at most the cap (its precise tail may only lower it), and what
 * decides whether the cap counts the class at its floor.  For zCDP kinds a
 * closed form, monotone in the proxy and the rounding, so a step's, from
 * its own proxy, never exceeds its class's.  Also the line of the lambda
 * that sets it, *lambda and *log_mgf (ln E[exp(lambda N)]): a bound on the
 * tail at any threshold in one step, for the cap's search.
 */
static double
cheap_floor_of(const cc_params *params, const cc_tail *t, double target,
			   double *lambda, double *log_mgf)
{
	double		c = M_LN2 + LOG_SAFETY - target;
	double		x;

	*lambda = 0.0;
	*log_mgf = 0.0;
	if (cc_kind_privacy(params->kind) == CC_ZCDP)
		return zcdp_floor(t->proxy, t->rounding, target);
	if (t->choose > 0)
	{
		const node_grid *ng = cc_node_grid_of(params);
		int			k = t->choose + (t->exact > 0 ? 1 : 0);

		x = INFINITY;
		for (int g = 0; g < GRID; g++)
		{
			double		at = ng->top * exp(-ng->step * g);
			double		psi = cheap_nodes_log_mgf(ng, g, k);

			if ((psi + c) / at < x)
			{
				x = (psi + c) / at;
				*lambda = at;
				*log_mgf = psi;
			}
		}
	}
	else
	{
		cc_piece	pieces[CC_TAIL_PIECES + 1];
		int			n = cheap_pieces(t, pieces);

		x = cc_chernoff_quantile(pieces, n, c, lambda);
		*log_mgf = cc_pieces_log_mgf(pieces, n, *lambda);
	}
	return integer_floor(x, t->rounding);
}

/* ln of the cheap line's bound on P(|N| >= x) */
static double
line_log_tail(const cc_params *params, const cc_tail *t, double lambda, double log_mgf,
			  double x)
{
	if (x <= 0.0)
		return 0.0;
	if (cc_kind_privacy(params->kind) == CC_ZCDP)
		return fmin(M_LN2 - x * x / (2.0 * t->proxy) + LOG_SAFETY, 0.0);
	if (lambda <= 0.0)
		return log_mgf == 0.0 ? -INFINITY : 0.0;
	return fmin(M_LN2 + log_mgf - lambda * x + LOG_SAFETY, 0.0);
}

/*
 * The least integer m in [0, hi] with f(m) <= target, hi passing, to within
 * one part in 512 (or exactly, below 512): the thresholds are integers held
 * in doubles, and a passing one is a bound whether least or not.  The
 * search starts at 3/4 of hi, where a precise tail usually passes no longer
 * (its cheap bound set hi), and falls back to the whole range if it does.
 */
typedef double (*log_tail_fn) (const void *ctx, double m);

static double
least_passing(log_tail_fn f, const void *ctx, double hi, double target)
{
	double		lo = floor(0.75 * hi);

	if (lo >= hi || f(ctx, lo) <= target)
	{
		hi = lo < hi ? lo : hi;
		lo = -1.0;				/* fails, or is below the range */
	}
	while (hi - lo > 1.0 && hi - lo > hi * 0x1p-9)
	{
		double		mid = floor(lo + (hi - lo) / 2.0);

		if (mid <= lo || mid >= hi)
			break;
		if (f(ctx, mid) <= target)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* a class's precise tail at m */
typedef struct class_at
{
	const cc_tail *tail;
	prepared   *prep;
} class_at;

static double
class_log_tail(const void *ctx, double m)
{
	const class_at *c = ctx;

	return cc_prepared_log_tail(c->prep, m + 1.0 - c->tail->rounding);
}

/*
 * The cache: a group entry holds a group's cap and the bounds of its classes
 * computed so far, by key (every kind's keys are below CC_CLASS_KEYS), so
 * that a read finds its class's bound without a search.
 */
typedef struct group_entry
{
	cc_params	params;
	int64_t		group;
	bool		used;
	double		log_floor;		/* ln(phi delta) */
	double		cap;
	double		bounds[CC_CLASS_KEYS];	/* NaN: not computed yet */
} group_entry;

#define GROUP_CACHE 8
#define CANDIDATES 64

static group_entry groups[GROUP_CACHE];
static int	last_group;
static int	next_victim;

/* the scratch of a cap's computation */
static cc_class class_list[CC_MAX_CLASSES];
static double cheap_floor[CC_MAX_CLASSES];
static double cheap_lambda[CC_MAX_CLASSES];
static double cheap_log_mgf[CC_MAX_CLASSES];
static prepared candidates[CANDIDATES];	/* of class_order's first */

typedef struct cap_search
{
	const group_entry *entry;
	int			nclasses;
	int			ncandidates;
	double		log_budget;
} cap_search;

/*
 * ln of the sum the cap keeps within the budget, at m, less ln budget:
 * classes whose cheap floor is at most m at their floor, the others at the
 * larger of their floor and their tail, the precise one for the candidates
 * and the cheap floor's line for the rest.  The classes go by decreasing
 * cheap floor, so that an m far too small fails after a few.
 */
static int	class_order[CC_MAX_CLASSES];

static double
cap_sum(const void *ctx, double m)
{
	const cap_search *s = ctx;
	const group_entry *e = s->entry;
	const cc_mechanism_ops *ops = cc_mechanism(e->params.kind);
	double		floors = 0.0;
	double		sum = -INFINITY;

	for (int n = 0; n < s->nclasses; n++)
	{
		int			i = class_order[n];
		double		log_tail;

		if (cheap_floor[i] <= m)
		{
			floors += (double) class_list[i].segments;
			continue;
		}
		if (n < s->ncandidates)
		{
			class_at	c = {NULL, &candidates[n]};
			cc_tail		tail;

			tail.rounding = candidates[n].rounding;
			c.tail = &tail;
			log_tail = class_log_tail(&c, m);
		}
		else
		{
			cc_tail		tail;

			memset(&tail, 0, sizeof(tail));
			ops->bound_tail(&e->params, e->group, class_list[i].key, &tail);
			log_tail = line_log_tail(&e->params, &tail, cheap_lambda[i], cheap_log_mgf[i],
									 m + 1.0 - tail.rounding);
		}
		sum = cc_log_add(sum, log((double) class_list[i].segments) + fmax(log_tail, e->log_floor));
		if (sum > s->log_budget)
			return sum - s->log_budget;
	}
	if (floors > 0.0)
		sum = cc_log_add(sum, log(floors) + e->log_floor);
	return sum - s->log_budget;
}

static int
compare_floors(const void *a, const void *b)
{
	double		x = cheap_floor[*(const int *) a];
	double		y = cheap_floor[*(const int *) b];

	return (x < y) - (x > y);
}

static void
compute_cap(group_entry *e)
{
	const cc_mechanism_ops *ops = cc_mechanism(e->params.kind);
	cap_search	s = {e, 0, 0, 0.0};
	int64_t		segments;
	double		hi = 0.0;
	double		budget = e->group == 0 ? e->params.beta :
		6.0 * e->params.beta / (PI_SQUARED * (double) e->group * (double) e->group);

	s.nclasses = ops->bound_classes(&e->params, e->group, &segments, class_list);
	s.log_budget = log(budget);
	e->log_floor = log(CC_BOUND_FLOOR) + log(budget) - log((double) segments);
	for (int i = 0; i < s.nclasses; i++)
	{
		cc_tail		tail;

		memset(&tail, 0, sizeof(tail));
		ops->bound_tail(&e->params, e->group, class_list[i].key, &tail);
		cheap_floor[i] = cheap_floor_of(&e->params, &tail, e->log_floor, &cheap_lambda[i],
										&cheap_log_mgf[i]);
		hi = fmax(hi, cheap_floor[i]);
		class_order[i] = i;
	}
	/* the classes the cheap bound leaves highest are prepared once */
	qsort(class_order, s.nclasses, sizeof(int), compare_floors);
	for (; s.ncandidates < CANDIDATES && s.ncandidates < s.nclasses; s.ncandidates++)
	{
		cc_tail		tail;

		memset(&tail, 0, sizeof(tail));
		ops->bound_tail(&e->params, e->group, class_list[class_order[s.ncandidates]].key, &tail);
		cc_tail_prepare(&e->params, &tail, &candidates[s.ncandidates]);
	}
	/* at hi every class is at its floor: the sum is phi budget */
	e->cap = least_passing(cap_sum, &s, hi, 0.0);
}

/* a == b, in eight word compares and no call: every read of a window asks */
static inline bool
same_params(const cc_params *a, const cc_params *b)
{
	uint64_t	differ = 0;

	for (size_t i = 0; i < sizeof(cc_params) / 8; i++)
	{
		uint64_t	x;
		uint64_t	y;

		memcpy(&x, (const char *) a + 8 * i, 8);
		memcpy(&y, (const char *) b + 8 * i, 8);
		differ |= x ^ y;
	}
	return differ == 0;
}

static group_entry *
group_of(const cc_params *params, int64_t group)
{
	group_entry *e = &groups[last_group];

	if (e->used && e->group == group && same_params(&e->params, params))
		return e;
	for (int i = 0; i < GROUP_CACHE; i++)
	{
		e = &groups[i];
		if (e->used && e->group == group && same_params(&e->params, params))
		{
			last_group = i;
			return e;
		}
	}
	last_group = next_victim;
	next_victim = (next_victim + 1) % GROUP_CACHE;
	e = &groups[last_group];
	e->params = *params;
	e->group = group;
	e->used = true;
	for (int i = 0; i < CC_CLASS_KEYS; i++)
		e->bounds[i] = NAN;
	compute_cap(e);
	return e;
}

/*
 * A class's bound: min(cap, Q_c), where a class the cap counted at its floor
 * (cheap floor at most the cap) gets at most its cheap floor.
 */
static double
class_bound(const group_entry *e, int64_t key)
{
	cc_tail		tail;
	prepared	prep;
	class_at	c = {&tail, &prep};
	double		hi;
	double		lambda;
	double		log_mgf;

	memset(&tail, 0, sizeof(tail));
	cc_mechanism(e->params.kind)->bound_tail(&e->params, e->group, key, &tail);
	hi = cheap_floor_of(&e->params, &tail, e->log_floor, &lambda, &log_mgf);
	cc_tail_prepare(&e->params, &tail, &prep);
	/* Chernoff's own quantile: the cheap floor already */
	if (prep.way == WAY_CHERNOFF || prep.way == WAY_GAUSSIAN)
		return fmin(hi, e->cap);
	if (hi > e->cap)
	{
		/* counted at its tail at the cap: the cap, unless Q_c is below */
		if (class_log_tail(&c, e->cap) > e->log_floor)
			return e->cap;
		hi = e->cap;
	}
	return least_passing(class_log_tail, &c, hi, e->log_floor);
}

double
cc_bound(const cc_state *state, const cc_noise *noise)
{
	const cc_mechanism_ops *ops = cc_mechanism(state->params.kind);
	group_entry *e;
	int64_t		group = 0;
	int64_t		key;

	if (ops->privacy == CC_ZCDP)
	{
		/* the step's own proxy, never above its class's */
		e = group_of(&state->params, 0);
		return fmin(e->cap, zcdp_floor(noise->proxy, noise->rounding, e->log_floor));
	}
	ops->bound_class(state, &group, &key);
	e = group_of(&state->params, group);
	if (isnan(e->bounds[key]))
		e->bounds[key] = class_bound(e, key);
	return e->bounds[key];
}
