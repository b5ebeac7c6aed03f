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
#include "dlap_tails.h"
#include "mechanism.h"
#include "mechanism_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI_SQUARED 9.8696044010893586
#define GRID 128
#define NODE_LEVELS 64

/*
 * The node estimates of a honaker tree at a lambda grid (lambda_g = top
 * e^(-step g)): what every class of the parameters shares.  For each
 * quantity and grid point, the levels in decreasing order of it, so that a
 * class finds its extreme nodes in one pass.
 */
enum
{
	NODE_DISCRETE,				/* ln E[exp(lambda E_d)] */
	NODE_SMOOTH,				/* the same for the Laplace twins */
	NODE_VARIANCE,				/* their tilted variance */
	NODE_QUANTITIES
};

typedef struct node_grid
{
	bool		valid;
	cc_params	params;
	int			levels;
	double		top;
	double		step;
	double		squares[NODE_LEVELS];	/* sum of squared weights */
	uint8_t		square_order[NODE_LEVELS];
	double		at[GRID][NODE_QUANTITIES][NODE_LEVELS];
	uint8_t		order[GRID][NODE_QUANTITIES][NODE_LEVELS];
} node_grid;

static node_grid nodes;

/* Laplace twins of a piece at lambda: psi and its second derivative */
static void
piece_smooth(const cc_piece *piece, double lambda, double *psi, double *variance)
{
	double		s = piece->weight / piece->inv_b;
	double		x2 = (s * lambda) * (s * lambda);

	if (!(x2 < 1.0))
	{
		*psi = INFINITY;
		*variance = 0.0;
		return;
	}
	*psi = piece->count * -log1p(-x2);
	*variance = piece->count * 2.0 * s * s * (1.0 + x2) / ((1.0 - x2) * (1.0 - x2));
}

/* The smooth parts of n pieces at lambda, added to *smooth and *variance. */
static void
pieces_smooth(const cc_piece *pieces, int n, double lambda, double *smooth,
			  double *variance)
{
	for (int i = 0; i < n; i++)
	{
		double		psi;
		double		var;

		piece_smooth(&pieces[i], lambda, &psi, &var);
		*smooth += psi;
		*variance += var;
	}
}

/* levels 0 .. n - 1 in decreasing order of values (insertion: n <= 64) */
static void
order_levels(const double *values, int n, uint8_t *order)
{
	for (int i = 0; i < n; i++)
	{
		int			j = i;

		while (j > 0 && values[order[j - 1]] < values[i])
		{
			order[j] = order[j - 1];
			j--;
		}
		order[j] = (uint8_t) i;
	}
}

static const node_grid *
node_grid_of(const cc_params *params)
{
	const cc_mechanism_ops *ops = cc_mechanism(params->kind);
	cc_piece	pieces[NODE_LEVELS];
	double		sigma;

	if (nodes.valid && memcmp(&nodes.params, params, sizeof(*params)) == 0)
		return &nodes;
	nodes.params = *params;
	nodes.levels = (int) cc_tree_levels(params->horizon);
	ops->node_pieces(params, 0, pieces);
	/* a level-0 node is one draw of weight 1, the others' largest is 2/3 */
	nodes.top = 2.0 * pieces[0].inv_b;
	/* down to 1 / sigma of all the nodes (each of variance below 2 b^2) */
	sigma = sqrt(2.0 * nodes.levels) / pieces[0].inv_b;
	nodes.step = fmax(log(nodes.top * sigma), 1.0) / (GRID - 1);
	for (int d = 0; d < nodes.levels; d++)
	{
		int			n = ops->node_pieces(params, d, pieces);

		nodes.squares[d] = 0.0;
		for (int i = 0; i < n; i++)
			nodes.squares[d] += pieces[i].count * pieces[i].weight * pieces[i].weight;
		for (int g = 0; g < GRID; g++)
		{
			double		lambda = nodes.top * exp(-nodes.step * g);
			double		smooth = 0.0;
			double		variance = 0.0;

			pieces_smooth(pieces, n, lambda, &smooth, &variance);
			nodes.at[g][NODE_DISCRETE][d] = cc_pieces_log_mgf(pieces, n, lambda);
			nodes.at[g][NODE_SMOOTH][d] = smooth;
			nodes.at[g][NODE_VARIANCE][d] = variance;
		}
	}
	order_levels(nodes.squares, nodes.levels, nodes.square_order);
	for (int g = 0; g < GRID; g++)
		for (int q = 0; q < NODE_QUANTITIES; q++)
			order_levels(nodes.at[g][q], nodes.levels, nodes.order[g][q]);
	nodes.valid = true;
	return &nodes;
}

/*
 * The sum of the k largest (or smallest) of values[from .. levels - 1],
 * walking the levels in decreasing order of the values.
 */
static double
extreme_sum(const double *values, const uint8_t *order, int levels, int from, int k,
			bool largest)
{
	double		sum = 0.0;

	for (int i = 0; i < levels && k > 0; i++)
	{
		int			d = order[largest ? i : levels - 1 - i];

		if (d >= from)
		{
			sum += values[d];
			k--;
		}
	}
	return sum;
}

/*
 * A class's tail, prepared for evaluations at many thresholds.
 */
typedef enum tail_way
{
	WAY_NONE,					/* no noise */
	WAY_GAUSSIAN,
	WAY_EXACT,					/* 1.: X0 alone */
	WAY_GRID,					/* 2.: X0 (maybe none) and R */
	WAY_CHERNOFF				/* 3. */
} tail_way;

typedef struct prepared
{
	tail_way	way;
	bool		segment;
	double		rounding;
	double		proxy;
	bool		has_exact;		/* X0 summed exactly */
	bool		single;			/* X0 is one draw: no dl_sum needed */
	double		exact_inv_b;
	double		exact_weight;
	int			ngrid;
	int			hint;			/* the grid point best at the last threshold */
	double		lambda[GRID];
	double		intercept[GRID];	/* A at lambda */
	int			npieces;		/* every draw, for Chernoff */
	cc_piece	pieces[CC_TAIL_PIECES + 1];
	dl_sum		exact;			/* X0, unless single or none: last, not zeroed */
} prepared;

/*
 * A of the head of the file at lambda, from the rest's Chernoff value, its
 * Laplace twins' psi and tilted variance, and v = sum w^2 / 6.
 */
static double
intercept(double lambda, double discrete, double smooth, double variance, double v)
{
	double		penalty = M_LN2;
	double		density;

	if (v > 0.0)
	{
		/* the least lambda c + ln(1 + v / c^2): c^3 + v c = 2 v / lambda */
		double		c = cbrt(2.0 * v / lambda);

		for (int i = 0; i < 8; i++)
			c -= (c * c * c + v * c - 2.0 * v / lambda) / (3.0 * c * c + v);
		if (c > 0.0)
			penalty = fmin(penalty, lambda * c + log1p(v / (c * c)));
	}
	density = variance > 0.0 ? log(M_E / (M_SQRT2 * lambda * sqrt(variance))) : 0.0;
	return fmin(discrete, smooth + penalty + fmin(density, 0.0));
}

/*
 * The rest of the draws for the grid: every piece, and X0 too unless it is
 * summed exactly (one draw, or a sum dl_sum can hold).
 */
static int
grid_rest(const cc_tail *t, prepared *c, cc_piece *rest)
{
	int			nrest = t->npieces;

	memcpy(rest, t->pieces, t->npieces * sizeof(cc_piece));
	c->single = t->exact == 1 && t->exact_inv_b <= EXACT_MAX_INV_B;
	c->has_exact = c->single ||
		(t->exact > 1 && cc_dl_sum_init(&c->exact, t->exact, t->exact_inv_b));
	if (t->exact > 0 && !c->has_exact)
		rest[nrest++] = (cc_piece) {(double) t->exact, t->exact_inv_b, t->exact_weight};
	return nrest;
}

/*
 * The grid's top, just below where the rest's moment generating function
 * (or the node's, or X0's sum's closed form) stops being finite, and its
 * step in ln lambda, over as many standard deviations as the top reaches.
 */
static double
grid_top(const cc_params *params, const cc_tail *t, const prepared *c,
		 const cc_piece *rest, int nrest, double *step)
{
	double		top = INFINITY;
	double		sigma2 = 0.0;

	for (int i = 0; i < nrest; i++)
	{
		top = fmin(top, rest[i].inv_b / rest[i].weight);
		sigma2 += rest[i].count * 2.0 * pow(rest[i].weight / rest[i].inv_b, 2);
	}
	if (t->choose > 0)
	{
		cc_piece	own[NODE_LEVELS];

		cc_mechanism(params->kind)->node_pieces(params, t->from, own);
		top = fmin(top, own[t->from].inv_b / own[t->from].weight);
	}
	/* the closed form for a sum wants lambda below its 1/b */
	if (c->has_exact && !c->single)
		top = fmin(top, t->exact_inv_b / t->exact_weight);
	if (c->has_exact)
		sigma2 += (double) t->exact * 2.0 * pow(t->exact_weight / t->exact_inv_b, 2);
	top *= 1.0 - 1e-9;
	*step = fmax(log(top * sqrt(sigma2)), 1.0) / (GRID - 1);
	return top;
}

/* The grid's line at lambda: the largest node sums with the rest's. */
static void
grid_point(prepared *c, const node_grid *ng, int g, const cc_tail *t,
		   const cc_piece *rest, int nrest, double lambda)
{
	double		discrete = 0.0;
	double		smooth = 0.0;
	double		variance = 0.0;
	double		squares = 0.0;

	if (ng != NULL)
	{
		discrete = extreme_sum(ng->at[g][NODE_DISCRETE], ng->order[g][NODE_DISCRETE],
							   ng->levels, t->from, t->choose, true);
		smooth = extreme_sum(ng->at[g][NODE_SMOOTH], ng->order[g][NODE_SMOOTH],
							 ng->levels, t->from, t->choose, true);
		variance = extreme_sum(ng->at[g][NODE_VARIANCE], ng->order[g][NODE_VARIANCE],
							   ng->levels, t->from, t->choose, false);
		squares = extreme_sum(ng->squares, ng->square_order, ng->levels, t->from,
							  t->choose, true);
	}
	discrete += cc_pieces_log_mgf(rest, nrest, lambda);
	pieces_smooth(rest, nrest, lambda, &smooth, &variance);
	for (int i = 0; i < nrest; i++)
		squares += rest[i].count * rest[i].weight * rest[i].weight;
	c->lambda[c->ngrid] = lambda;
	c->intercept[c->ngrid] = intercept(lambda, discrete, smooth, variance, squares / 6.0);
	c->ngrid++;
}

/*
 * 2.: the lines of the grid, at GRID values of lambda below the top, or at
 * the nodes' shared grid's points below it.
 */
static void
prepare_grid(const cc_params *params, const cc_tail *t, prepared *c)
{
	const node_grid *ng = t->choose > 0 ? node_grid_of(params) : NULL;
	cc_piece	rest[CC_TAIL_PIECES + 1];
	int			nrest = grid_rest(t, c, rest);
	double		step;
	double		top = grid_top(params, t, c, rest, nrest, &step);

	for (int g = 0; g < GRID; g++)
	{
		/* the shared grid, from its points below the rest's limit */
		double		lambda = ng != NULL ? ng->top * exp(-ng->step * g) : top * exp(-step * g);

		if (ng != NULL && lambda >= top)
			continue;
		grid_point(c, ng, g, t, rest, nrest, lambda);
	}
	c->hint = c->ngrid / 2;
}

static void
prepare(const cc_params *params, const cc_tail *t, prepared *c)
{
	memset(c, 0, offsetof(prepared, exact));
	c->segment = t->segment;
	c->rounding = t->rounding;
	if (cc_kind_privacy(params->kind) == CC_ZCDP)
	{
		c->way = WAY_GAUSSIAN;
		c->proxy = t->proxy;
		return;
	}
	/* every draw as pieces, for Chernoff */
	c->npieces = t->npieces;
	memcpy(c->pieces, t->pieces, t->npieces * sizeof(cc_piece));
	if (t->exact > 0)
		c->pieces[c->npieces++] = (cc_piece) {(double) t->exact, t->exact_inv_b, t->exact_weight};
	c->exact_inv_b = t->exact_inv_b;
	c->exact_weight = t->exact_weight;
	if (t->npieces == 0 && t->choose == 0)
	{
		/* 1., or 3. when the sum cannot be exact */
		if (t->exact == 0)
			c->way = WAY_NONE;
		else if (cc_dl_sum_init(&c->exact, t->exact, t->exact_inv_b))
			c->way = WAY_EXACT;
		else
			c->way = WAY_CHERNOFF;
		return;
	}
	if (t->segment)
	{
		/* segments have no rest in any kind; Doob covers Chernoff anyway */
		c->way = WAY_CHERNOFF;
		return;
	}

	/* 2.: X0 exactly if it can be, else with the rest */
	c->way = WAY_GRID;
	prepare_grid(params, t, c);
}

/* ln E[min(1, e^(A - lambda x) e^(lambda w X0))] at grid point g */
static double
grid_log_tail(const prepared *c, int g, double x)
{
	double		lambda = c->lambda[g];
	double		log_k = c->intercept[g] - lambda * x;

	if (!c->has_exact)
		return fmin(log_k, 0.0);
	if (c->single)
		return cc_log_min_single(c->exact_inv_b, lambda * c->exact_weight, log_k);
	return cc_log_min_sum(&c->exact, lambda * c->exact_weight, log_k);
}

/*
 * The least tail over the grid, searched from the last evaluation's best
 * point (thresholds come in a search, and their best lambdas move little):
 * steps doubling downhill, then a ternary search in the last bracket.  Any
 * point is a bound; the search only finds a good one.
 */
static double
grid_least_log_tail(prepared *c, double x)
{
	int			g = c->hint;
	int			dir;
	int			step = 1;
	int			lo;
	int			hi;
	double		best;

	if (c->ngrid == 0)
		return 0.0;
	best = grid_log_tail(c, g, x);
	dir = g + 1 < c->ngrid && grid_log_tail(c, g + 1, x) < best ? 1 : -1;
	while (g + dir * step >= 0 && g + dir * step < c->ngrid)
	{
		double		f = grid_log_tail(c, g + dir * step, x);

		if (f >= best)
			break;
		best = f;
		g += dir * step;
		step *= 2;
	}
	lo = g - step > 0 ? g - step : 0;
	hi = g + step < c->ngrid - 1 ? g + step : c->ngrid - 1;
	while (hi - lo > 2)
	{
		int			m1 = lo + (hi - lo) / 3;
		int			m2 = hi - (hi - lo) / 3;
		double		f1 = grid_log_tail(c, m1, x);
		double		f2 = grid_log_tail(c, m2, x);

		if (f1 <= f2)
			hi = m2;
		else
			lo = m1;
	}
	for (int i = lo; i <= hi; i++)
	{
		double		f = grid_log_tail(c, i, x);

		if (f < best)
		{
			best = f;
			g = i;
		}
	}
	c->hint = g;
	return fmin(best, 0.0);
}

/*
 * ln of a bound on P(|N| >= x) (over a whole segment, for segments): the
 * head of the file's 1., 2. or 3.
 */
static double
prepared_log_tail(prepared *c, double x)
{
	double		one_sided;

	if (x <= 0.0)
		return 0.0;
	switch (c->way)
	{
		case WAY_NONE:
			return -INFINITY;
		case WAY_GAUSSIAN:
			return fmin(M_LN2 - x * x / (2.0 * c->proxy), 0.0);
		case WAY_EXACT:
			one_sided = cc_dl_sum_log_tail(&c->exact, ceil(x / c->exact_weight));
			if (c->segment)
				one_sided = fmin(one_sided + M_LN2,
								 cc_chernoff_log_tail(c->pieces, c->npieces, x));
			break;
		case WAY_CHERNOFF:
			one_sided = cc_chernoff_log_tail(c->pieces, c->npieces, x);
			break;
		case WAY_GRID:
			one_sided = grid_least_log_tail(c, x);
			break;
		default:
			one_sided = 0.0;
	}
	return fmin(M_LN2 + one_sided + LOG_SAFETY, 0.0);
}

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
	return extreme_sum(ng->at[g][NODE_DISCRETE], ng->order[g][NODE_DISCRETE],
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
		const node_grid *ng = node_grid_of(params);
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

	return prepared_log_tail(c->prep, m + 1.0 - c->tail->rounding);
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
		prepare(&e->params, &tail, &candidates[s.ncandidates]);
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
	prepare(&e->params, &tail, &prep);
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
