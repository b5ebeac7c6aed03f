/*
 * class_tails.c
 *		The tail of one class of a mechanism's steps, for the bound: the
 *		node estimates of a honaker tree on a grid of lambdas, which every
 *		class of the parameters shares, and a class's tail prepared once
 *		(1., 2. or 3. at the head of bounds.c) for the many thresholds the
 *		budget's search asks it at.
 *
 * Between dlap_tails.c, whose tails it composes, and bounds.c, which
 * spends the budget over the classes; the proofs are at the head of
 * bounds.c.
 *
 * IDENTIFICATION
 *	  src/core/class_tails.c
 */
#include "class_tails.h"
#include "mechanism.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

const node_grid *
cc_node_grid_of(const cc_params *params)
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
double
cc_extreme_sum(const double *values, const uint8_t *order, int levels, int from, int k,
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
		discrete = cc_extreme_sum(ng->at[g][NODE_DISCRETE], ng->order[g][NODE_DISCRETE],
							   ng->levels, t->from, t->choose, true);
		smooth = cc_extreme_sum(ng->at[g][NODE_SMOOTH], ng->order[g][NODE_SMOOTH],
							 ng->levels, t->from, t->choose, true);
		variance = cc_extreme_sum(ng->at[g][NODE_VARIANCE], ng->order[g][NODE_VARIANCE],
							   ng->levels, t->from, t->choose, false);
		squares = cc_extreme_sum(ng->squares, ng->square_order, ng->levels, t->from,
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
	const node_grid *ng = t->choose > 0 ? cc_node_grid_of(params) : NULL;
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

void
cc_tail_prepare(const cc_params *params, const cc_tail *t, prepared *c)
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
double
cc_prepared_log_tail(prepared *c, double x)
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

