/*
 * dlap_tails.c
 *		Tails of sums of discrete Laplace draws, for the bound: exact for a
 *		sum of up to EXACT_DRAWS draws of one scale (a positive mixture of
 *		negative binomials), its least tail against a line e^(A - lambda x)
 *		(the rest of a release's noise, by its moment generating function),
 *		and Chernoff's bound and quantile over weighted pieces.
 *
 * Below bounds.c, whose head holds the proofs (1., 2. and 3. there), and
 * used by the continual mean and the windows through cc_dlap_log_mgf() and
 * cc_dlap_sum_bound().
 *
 * IDENTIFICATION
 *	  src/core/dlap_tails.c
 */
#include "dlap_tails.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double
cc_dlap_log_mgf(double inv_b, double x)
{
	/*
	 * E[exp(x X)] = (1 - p)^2 / ((1 - p e^x) (1 - p e^-x)); the denominator
	 * is (1 - p)^2 - 2 p (cosh x - 1), and (1 - p)^2 / p = 4 sinh^2(1/(2b)),
	 * so ln E[exp(x X)] = -ln(1 - r^2) with r = sinh(x/2) / sinh(1/(2b)).
	 * This form keeps full relative precision for small x, where the
	 * direct one cancels.
	 */
	double		r = sinh(0.5 * x) / sinh(0.5 * inv_b);

	if (!(fabs(r) < 1.0))
		return INFINITY;
	return -log1p(-r * r);
}

/* ln(e^a + e^b) */
double
cc_log_add(double a, double b)
{
	if (a < b)
	{
		double		t = a;

		a = b;
		b = t;
	}
	if (b == -INFINITY)
		return a;
	return a + log1p(exp(b - a));
}

bool
cc_dl_sum_init(dl_sum *s, int64_t n, double inv_b)
{
	double		gamma[EXACT_DRAWS + 1];
	double		log_1p;
	double		p2;
	double		choose;
	double		sum;

	if (n < 1 || n > EXACT_DRAWS || inv_b > EXACT_MAX_INV_B)
		return false;
	s->n = (int) n;
	s->inv_b = inv_b;
	s->p = exp(-inv_b);
	s->q = -expm1(-inv_b);
	s->log_q = log(s->q);
	log_1p = log1p(s->p);
	p2 = s->p * s->p;
	gamma[s->n] = exp(-n * log_1p);
	for (int j = 1; j < s->n; j++)
	{
		/* C(n, l) C(j-1, l-1) p^(2l), l = 1 .. j: at most 2^(2n) */
		double		term = (double) n * p2;

		sum = term;
		for (int l = 1; l < j; l++)
		{
			term *= (double) (n - l) / (double) (l + 1) * (double) (j - l) / (double) l * p2;
			sum += term;
		}
		gamma[s->n - j] = exp(-(double) (n + j) * log_1p) * sum;
	}
	for (int i = 1; i <= s->n; i++)
		s->log_gamma[i] = log(gamma[i]);
	s->suffix[s->n - 1] = gamma[s->n];
	for (int j = s->n - 2; j >= 0; j--)
		s->suffix[j] = s->suffix[j + 1] + gamma[j + 1];
	/* P(S = 0) */
	choose = 1.0;
	sum = 1.0;
	for (int j = 1; j < s->n; j++)
	{
		choose *= (double) (n - j) / (double) j;
		sum += choose * choose * pow(p2, j);
	}
	s->zero = s->q * exp((1.0 - 2.0 * (double) n) * log_1p) * sum;
	return true;
}

/*
 * ln sum_(j<n) C(m + j - 1, j) y^j c_j for m >= 1, y > 0 (the positive
 * terms may exceed a double: rescaled as they grow)
 */
static double
log_series(double m, double y, const double *c, int n)
{
	double		term = 1.0;
	double		sum = c[0];
	double		offset = 0.0;

	for (int j = 1; j < n; j++)
	{
		term *= (m + (double) (j - 1)) * y / (double) j;
		if (term > 1e200)
		{
			term *= 1e-200;
			sum *= 1e-200;
			offset += 200.0 * M_LN10;
		}
		sum += term * c[j];
	}
	return log(sum) + offset;
}

/* ln P(S >= m) for an integer m */
double
cc_dl_sum_log_tail(const dl_sum *s, double m)
{
	if (m <= 0.0)
		return log1p(-exp(cc_dl_sum_log_tail(s, 1.0 - m)));
	return -m * s->inv_b + log_series(m, s->q, s->suffix, s->n);
}

/*
 * ln P(NB_i(rho) >= m) for i = 1 .. n into out[i], m >= 1, with
 * log_rho = ln rho and one_minus = 1 - rho
 */
static void
nb_log_tails(double m, double log_rho, double one_minus, int n, double *out)
{
	double		term = 1.0;
	double		sum = 1.0;
	double		offset = 0.0;

	out[1] = m * log_rho;
	for (int i = 2; i <= n; i++)
	{
		term *= (m + (double) (i - 2)) * one_minus / (double) (i - 1);
		if (term > 1e200)
		{
			term *= 1e-200;
			sum *= 1e-200;
			offset += 200.0 * M_LN10;
		}
		sum += term;
		out[i] = m * log_rho + log(sum) + offset;
	}
}

/*
 * ln E[min(1, K e^(mu X))] for X one discrete Laplace draw of p = e^-inv_b,
 * mu > 0, ln K = log_k.  With x* the least integer where K e^(mu x) >= 1,
 * it is P(X >= x*) + K sum_(x<x*) P(X = x) e^(mu x), geometric sums.
 */
double
cc_log_min_single(double inv_b, double mu, double log_k)
{
	double		p = exp(-inv_b);
	double		log_c0 = log(-expm1(-inv_b)) - log1p(p);	/* P(X = 0) */
	double		star = ceil(-log_k / mu);
	double		log_r = -inv_b - mu;	/* r = p e^-mu < 1 */
	double		lower;
	double		tail;

	if (star > 1e18)
		star = 1e18;
	if (star < -1e18)
		star = -1e18;
	if (star <= 0.0)
	{
		/* x < x* <= 0: sum_(y >= 1 - x*) r^y */
		tail = log1p(-exp(-(1.0 - star) * inv_b - log1p(p)));
		lower = log_c0 + (1.0 - star) * log_r - log(-expm1(log_r));
	}
	else
	{
		double		log_rho = mu - inv_b;	/* rho = p e^mu, either side of 1 */
		double		n = star - 1.0;

		tail = -star * inv_b - log1p(p);
		lower = log_c0 - log(-expm1(log_r));	/* x <= 0 */
		if (n > 0.0)
		{
			double		between;	/* ln sum_(x=1..n) rho^x */

			if (log_rho < 0.0)
				between = log_rho + log(-expm1(n * log_rho)) - log(-expm1(log_rho));
			else if (log_rho > 0.0)
				between = log_rho + n * log_rho + log(-expm1(-n * log_rho)) - log(expm1(log_rho));
			else
				between = log(n);
			lower = cc_log_add(lower, log_c0 + between);
		}
	}
	return cc_log_add(tail, log_k + lower);
}

/* ln sum_i e^(terms[i]), i < n */
static double
log_sum(const double *terms, int n)
{
	double		top = -INFINITY;
	double		sum = 0.0;

	for (int i = 0; i < n; i++)
		top = fmax(top, terms[i]);
	if (top == -INFINITY)
		return -INFINITY;
	for (int i = 0; i < n; i++)
		sum += exp(terms[i] - top);
	return top + log(sum);
}

/*
 * ln E[min(1, K e^(mu S))] for an exact sum, 0 < mu < inv_b: the same
 * split, with S's weights gamma: below zero and above it, the tilted sums are
 * negative binomial tails of rho = p e^mu and r = p e^-mu.
 */
double
cc_log_min_sum(const dl_sum *s, double mu, double log_k)
{
	double		star = ceil(-log_k / mu);
	double		log_r = -s->inv_b - mu;
	double		log_rho = mu - s->inv_b;
	double		log_one_minus_r = log(-expm1(log_r));
	double		log_one_minus_rho = log(-expm1(log_rho));
	double		tails[EXACT_DRAWS + 1];
	double		terms[2 * EXACT_DRAWS + 2];
	int			nterms = 0;
	double		tail;

	if (star > 1e18)
		star = 1e18;
	if (star < -1e18)
		star = -1e18;
	tail = cc_dl_sum_log_tail(s, star);
	if (star <= 0.0)
	{
		/* s < x* <= 0: by symmetry, s' = -s >= 1 - x* under r */
		nb_log_tails(1.0 - star, log_r, -expm1(log_r), s->n, tails);
		for (int i = 1; i <= s->n; i++)
			terms[nterms++] = s->log_gamma[i] + i * (s->log_q - log_one_minus_r) + tails[i];
		return cc_log_add(tail, log_k + log_sum(terms, nterms));
	}
	/* s <= -1: P(NB_i(r) >= 1) = 1 - (1 - r)^i */
	for (int i = 1; i <= s->n; i++)
		terms[nterms++] = s->log_gamma[i] + i * (s->log_q - log_one_minus_r) +
			log(-expm1(i * log_one_minus_r));
	terms[nterms++] = log(s->zero);
	if (star > 1.0)
	{
		/* 1 <= s <= x* - 1: P(NB_i(rho) >= 1) - P(NB_i(rho) >= x*) */
		double		size[EXACT_DRAWS];

		nb_log_tails(star, log_rho, -expm1(log_rho), s->n, tails);
		for (int i = 1; i <= s->n; i++)
		{
			double		log_w = s->log_gamma[i] + i * (s->log_q - log_one_minus_rho);
			double		at_least_one = -expm1(i * log_one_minus_rho);
			double		beyond = exp(tails[i]);

			if (beyond < at_least_one)
				terms[nterms++] = log_w + log(at_least_one - beyond);
			/* the differences' rounding, added back */
			size[i - 1] = log_w + log(at_least_one) + log(1e-12);
		}
		terms[nterms++] = log_sum(size, s->n);
	}
	return cc_log_add(tail, log_k + log_sum(terms, nterms));
}

/*
 * Chernoff over pieces: ln of a bound on P(sum >= x), by golden-section
 * search over ln(lambda / lambda_max) (psi(lambda) - lambda x is convex in
 * lambda, so unimodal in its logarithm); any lambda is a bound.
 */
double
cc_pieces_log_mgf(const cc_piece *pieces, int n, double lambda)
{
	double		sum = 0.0;

	for (int i = 0; i < n; i++)
		sum += pieces[i].count * cc_dlap_log_mgf(pieces[i].inv_b, lambda * pieces[i].weight);
	return sum;
}

/* The largest lambda at which every piece's generating function is finite. */
static double
pieces_lambda_max(const cc_piece *pieces, int n)
{
	double		lambda_max = INFINITY;

	for (int i = 0; i < n; i++)
		if (pieces[i].count > 0 && pieces[i].inv_b / pieces[i].weight < lambda_max)
			lambda_max = pieces[i].inv_b / pieces[i].weight;
	return lambda_max;
}

typedef double (*lambda_objective) (const cc_piece *pieces, int n, double lambda, double arg);

/*
 * The least f seen by a golden-section search over ln(lambda / lambda_max)
 * in [-45, 0], 66 evaluations, and the lambda that gave it: for an f
 * unimodal there, its minimum; for any f whose every value is a valid
 * bound, a valid bound.
 */
static double
golden_min(const cc_piece *pieces, int n, double lambda_max, lambda_objective f, double arg,
		   double *best_lambda)
{
	const double golden = 0.61803398874989485;
	double		lo = -45.0;
	double		hi = 0.0;
	double		u1 = hi - golden * (hi - lo);
	double		u2 = lo + golden * (hi - lo);
	double		f1 = f(pieces, n, lambda_max * exp(u1), arg);
	double		f2 = f(pieces, n, lambda_max * exp(u2), arg);
	double		best = INFINITY;

	for (int i = 0; i <= 64; i++)
	{
		if (f1 < best)
		{
			best = f1;
			*best_lambda = lambda_max * exp(u1);
		}
		if (f2 < best)
		{
			best = f2;
			*best_lambda = lambda_max * exp(u2);
		}
		if (i == 64)
			break;
		if (f1 <= f2)
		{
			hi = u2;
			u2 = u1;
			f2 = f1;
			u1 = hi - golden * (hi - lo);
			f1 = f(pieces, n, lambda_max * exp(u1), arg);
		}
		else
		{
			lo = u1;
			u1 = u2;
			f1 = f2;
			u2 = lo + golden * (hi - lo);
			f2 = f(pieces, n, lambda_max * exp(u2), arg);
		}
	}
	return best;
}

static double
log_tail_at(const cc_piece *pieces, int n, double lambda, double x)
{
	return cc_pieces_log_mgf(pieces, n, lambda) - lambda * x;
}

double
cc_chernoff_log_tail(const cc_piece *pieces, int n, double x)
{
	double		lambda_max = pieces_lambda_max(pieces, n);
	double		lambda;

	if (lambda_max == INFINITY)
		return x > 0.0 ? -INFINITY : 0.0;
	if (x <= 0.0)
		return 0.0;
	return fmin(golden_min(pieces, n, lambda_max, log_tail_at, x, &lambda), 0.0);
}

/*
 * The least x with ln 2 + psi(lambda) - lambda x + LOG_SAFETY <= target at
 * some lambda: the least over lambda of (psi(lambda) + c) / lambda, which
 * is quasi-convex in lambda (its derivative has the sign of lambda
 * psi'(lambda) - psi(lambda) - c, which grows, psi being convex), found by
 * golden-section search over ln(lambda); the lambda found certifies it.
 */
static double
quantile_at(const cc_piece *pieces, int n, double lambda, double c)
{
	return (cc_pieces_log_mgf(pieces, n, lambda) + c) / lambda;
}

double
cc_chernoff_quantile(const cc_piece *pieces, int n, double c, double *best_lambda)
{
	double		lambda_max = pieces_lambda_max(pieces, n);

	*best_lambda = 0.0;
	if (lambda_max == INFINITY)
		return 0.0;
	return golden_min(pieces, n, lambda_max, quantile_at, c, best_lambda);
}

/*
 * For mechanisms outside the kinds (continual_mean.c): the Chernoff bound
 * of a sum of count draws of one scale at its best lambda, which no search
 * error can make invalid (every lambda gives a valid bound), raised against
 * rounding and taken down to the integers the noise lives on; one draw has
 * its exact tail, P(|X| >= m) = 2 p^m / (1 + p).
 */
double
cc_dlap_sum_bound(int64_t count, cc_scale scale, double log_term)
{
	cc_piece	piece = {(double) count, cc_inverse_scale(scale), 1.0};
	double		lambda;
	double		bound;

	if (count == 0)
		return 0.0;
	bound = ceil(cc_chernoff_quantile(&piece, 1, log_term, &lambda) * (1.0 + LOG_SAFETY)) - 1.0;
	if (count == 1)
	{
		/* the smallest m with 2 p^(m+1) / (1 + p) <= delta */
		double		exact = ceil((log_term - log1p(exp(-piece.inv_b))) / piece.inv_b *
								 (1.0 + LOG_SAFETY)) - 1.0;

		if (exact < bound)
			bound = exact;
	}
	return bound > 0.0 ? bound : 0.0;
}
