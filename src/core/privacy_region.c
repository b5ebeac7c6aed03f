/*
 * privacy_region.c
 *		delta(epsilon) of a composition of pure, Gaussian and discrete
 *		Gaussian charges, through its privacy loss distribution, as an upper
 *		bound on the true curve.
 *
 * The charges' dominating pairs (privacy_region.h) are all symmetric (the
 * map y -> -y, or x -> sensitivity - x, swaps P and Q), so delta(epsilon) is
 * the same in both directions and one loss distribution, L under P, serves.
 * Its losses add over the composition, and it splits in two independent
 * parts:
 *
 *	- a Gaussian part, L_G ~ N(mu^2/2, mu^2) with mu^2 = sum 2 rho: Gaussians
 *	  compose exactly into one, so it stays analytic;
 *	- a discrete part: atoms l_k of P-mass p_k (pure charges, discrete
 *	  Gaussians from their pmf), plus a mass p_inf at +infinity.
 *
 * Conditioning on the discrete part,
 *
 *		delta(epsilon) = p_inf + sum_k p_k delta_G(epsilon - l_k),
 *		delta_G(t) = E[(1 - e^(t - L_G))_+]
 *				   = Phi(mu/2 - t/mu) - e^t Phi(-mu/2 - t/mu)
 *
 * for every real t (the analytic Gaussian mechanism of Balle and Wang 2018
 * at t >= 0), and delta_G(t) = (1 - e^t)_+ when mu = 0.
 *
 * Why the discrete part is an upper bound: the losses of the charges are
 * independent, so conditioned on all but one, delta is that one's
 * E[(1 - e^(t - L))_+] at t = epsilon minus the others' sum.  Replacing a
 * charge's loss distribution by one whose E[(1 - e^(t - L))_+] is at least
 * as large at every real t therefore bounds the composition, charge by
 * charge.  As a function of alpha = e^t, that expectation is a sum of
 * convex hinges p_k (1 - alpha e^-l_k)_+, which grow with l_k and p_k.  So
 * each charge's loss distribution is
 *	- put on a grid of step h by splitting each atom between the grid points
 *	  around it so that its hinge becomes its chord ("connect the dots",
 *	  Doroshenko et al. 2022, sparse_split()), which lies above it; on a
 *	  grid whose step divides every pure epsilon (0.1, 0.25, ... share one)
 *	  nothing is split at all; grids then convolve exactly;
 *	- cut where its mass falls below 1e-50 of the mode: a tail of high losses
 *	  goes to +infinity, one of low losses onto the lowest kept atom (both
 *	  raise delta), each with a geometric bound on its mass, never less;
 *	- normalized by the kept mass (at most the whole), so masses only grow.
 * Rounding split atoms up instead would dominate the chords too, so epsilon
 * is overstated by less than a grid step per group split; the chords' error
 * is local and falls as h^2 (1000 different epsilons: 2.8e-4 on epsilon at
 * 2048 points a standard deviation, 4.5e-3 at 512, 1.7e-5 at 8192).
 *
 * Pure charges: randomized response's loss is +epsilon with probability
 * e^eps/(1+e^eps), else -epsilon; n charges of one epsilon give a binomial,
 * computed exactly from its mode outward (so a million charges cost a
 * window of a few thousand atoms), then put on the grid once.
 *
 * Discrete Gaussians: with sigma^2 and an integer shift D, L = (D^2 - 2 D x)
 * / (2 sigma^2) for x from the discrete Gaussian: a lattice of step
 * s = D/sigma^2.  Its pmf is computed, the n equal charges of a group are
 * convolved exactly on the lattice and put on the grid once (or, when that
 * costs too much, each put on a coarser grid and convolved there).  Small
 * sigma is where the discrete curve departs most from the continuous one.
 * When n s is below a grid step, or sigma is huge, a bound serves: for
 * every m,
 *
 *		P(x <= m) <= kappa' + (1 - kappa') Phi((m + 1)/sigma),
 *
 * since on each side of 0 the sum of the monotone weights is bounded by
 * their integral over a unit shifted by one, and sqrt(2 pi) sigma <= Z <=
 * sqrt(2 pi) sigma (1 + kappa), kappa = 2 e^(-2 pi^2 sigma^2) / (1 -
 * e^(-6 pi^2 sigma^2)), by Poisson summation; kappa' = kappa/(1 + kappa).
 * So L is stochastically below the continuous Gaussian's loss (mu = D/sigma)
 * shifted up by s, with mass kappa' at +infinity, and a larger loss only
 * raises delta: the group joins the Gaussian part, its shift n s is added
 * to every loss.  A discrete Gaussian's curve is NOT bounded by the
 * continuous one at the same rho: at epsilon = 0 it is 1/Z against
 * 2 Phi(mu/2) - 1, 0.0399 against 0.0398 at sigma^2 = 100, and the gap
 * grows as sigma shrinks.
 *
 * Equal discrete Gaussians summed.  n coordinates of one sigma^2, each
 * moved by D: the likelihood ratio is a function of S = x_1 + ... + x_n
 * alone, so the pair is (S, S + n D).  S is nearly a discrete Gaussian of
 * n sigma^2: adding x_k to S_(k-1) sums exp(-(m - x)^2 / (2 (k-1) sigma^2)
 * - x^2 / (2 sigma^2)) over x, which is exp(-m^2 / (2 k sigma^2)) times
 * sum_x exp(-(x - m/k)^2 / (2 s_k^2)), s_k^2 = sigma^2 (k-1)/k, and by
 * Poisson summation that sum is sqrt(2 pi) s_k (1 +- kappa_k) whatever m,
 * kappa_k = 2 e^(-b) / (1 - e^(-3 b)), b = 2 pi^2 s_k^2 (the terms e^(-b j^2)
 * for j >= 1, j^2 >= 1 + 3 (j - 1)).  By induction the pmf of S lies within
 * a factor e^(+-tau) of N_Z(0, n sigma^2)'s, tau = sum_{k=2..n}
 * ln((1 + kappa_k) / (1 - kappa_k)) (Canonne, Kamath and Steinke 2020 bound
 * multivariate discrete Gaussians so too).  Then sum_m (q(m) - alpha q(m -
 * nD))_+ <= e^tau sum_m (g(m) - alpha e^(-2 tau) g(m - nD))_+ for every
 * alpha >= 0: the group is one discrete Gaussian of n sigma^2 moved by n D,
 * its losses raised by 2 tau and its masses multiplied by e^tau (a factor
 * that carries through the composition to delta).  One pmf, however many
 * charges; used when 2 tau is below 1e-9 (sigma^2 above about 1.2), or
 * when it beats the bound above.  The kappa_k fall with k: the terms past
 * the 64th are each bounded by the 65th.
 *
 * Merging equal moves.  By the same sufficiency, coordinates moved by (a,
 * a) are the pair (x + y, x + y + 2a): the pair (x, x + 2a) followed by
 * adding an independent y, a post-processing, so it is dominated by one
 * coordinate moved by 2a; and a coordinate moved by 1, or not at all, by
 * one moved by 2 (compose it with a second one: more is never less
 * distinguishable).  So moves summing to at most 2 on a group of
 * coordinates are dominated by one coordinate moved by 2 (mech_honaker.c
 * uses it for sensitivities 1 and 2).  Unequal moves (2, 1) have no such
 * argument here, whence the bound below for larger sensitivities.
 *
 * Bounded discrete Gaussians (CC_CHARGE_DGAUSS_BOUND).  Coordinates moved
 * by integers v_i: by the bound above each coordinate's loss is
 * stochastically below the continuous Gaussian's for v_i shifted up by
 * |v_i| / sigma^2, with kappa' at +infinity; the coordinates are
 * independent, so their sum is below the continuous Gaussian's loss for
 * mu^2 = sum v_i^2 / sigma^2 <= 2 rho shifted up by sum |v_i| / sigma^2 <=
 * l1, with mass coordinates kappa' at +infinity.  delta_G grows with mu at
 * every t (a Gaussian pair of smaller mu is a post-processing of one of
 * larger mu), with the shift and with the mass at +infinity: the charge
 * joins the Gaussian part with mu^2 = 2 rho and shift l1.
 *
 * Charges known by their rho only (CC_CHARGE_ZCDP), and the zCDP
 * conversion.  A rho-zCDP mechanism has no loss distribution to compose, but
 * it is (e, cc_zcdp_delta(rho, e))-DP at every e, and by basic composition
 * the ledger is (e1 + e2, delta_A(e1) + delta_Z(e2))-DP with A the rest:
 * delta is the least of that over a few dozen splits of epsilon, each a
 * valid bound, and epsilon the least e_A(d1) + e_Z(d - d1) over as many
 * splits of delta.  And every charge is zCDP (epsilon^2/2 for a pure one,
 * D^2 / (2 sigma^2) for a discrete Gaussian coordinate, Canonne, Kamath and
 * Steinke's Theorem 14), so the whole composition is too: the curve is the
 * least of the two, never above the zCDP conversion of the ledger.
 *
 * IDENTIFICATION
 *	  src/core/privacy_region.c
 */
#include "privacy_region.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define UNIT 1e-9				/* an epsilon unit */
#define MAX_EPSILON_UNITS UINT64_C(1000000000000)
#define MAX_TOTAL_UNITS UINT64_C(1000000000000000)
#define MAX_PURE_COUNT (UINT64_C(1) << 32)
#define MAX_MU2 1e8
#define MAX_DG_SENSITIVITY UINT64_C(1000000)
#define MAX_DG_PART (UINT64_C(1) << 62)

/* Tails are cut where masses fall below this fraction of the mode. */
#define CUT 1e-50
/* After a convolution, each tail of at most this much mass is cut. */
#define TRIM 1e-45
/*
 * Grid points per standard deviation of the discrete part's loss: as many
 * as the convolutions' work allows (each costs the grid's length, about 30
 * standard deviations, times the atoms of a group) within these bounds;
 * the chords' error on epsilon falls as h^2 (2.8e-4 for 1000 different
 * epsilons at 2048, 4.5e-3 at 512; at most 3.3e-4 over 3000 random small
 * ledgers at 2048) ...
 */
#define MIN_POINTS_PER_SD 256.0
#define MAX_POINTS_PER_SD 2048.0
#define GRID_WORK 3e8
/* ... and at most this many over the sum of the charges' spans. */
#define MAX_POINTS (INT64_C(1) << 20)
/* Multiply-adds a discrete Gaussian group may spend on exact convolutions. */
#define GROUP_WORK 4e7
/* A group's sum is taken as one discrete Gaussian when 2 tau is below this. */
#define TAU_NEGLIGIBLE 1e-9
/* Splits tried by basic composition with charges known by their rho only. */
#define SPLITS 24
#define SPLIT_REFINE 16

/*
 * Floating point: every mass is a sum of products of positive numbers, so
 * its relative error is at most EPS_U (above 2^-53) times the operations
 * along the way, counted into rel as they happen; REL_ROUNDING adds room for
 * the few operations of each term of delta.
 */
#define EPS_U 1.2e-16
#define REL_ROUNDING 1e-12
/* Upward nudge of a stored loss: above its few roundings. */
#define LOSS_NUDGE 1e-15

#define SQRT_2PI 2.50662827463100050242
#define LOG_SQRT_2PI 0.91893853320467274178
#define PI_SQUARED 9.8696044010893586188

/* P-masses of a loss on the grid: sparse, indices ascending and distinct. */
typedef struct sparse
{
	int64_t		n;
	int64_t    *idx;
	double	   *mass;
} sparse;

/* P-masses of a loss at (lo + i) * h for i < len; also a lattice of x. */
typedef struct dense
{
	int64_t		lo;
	int64_t		len;
	double	   *p;
} dense;

/* n randomized responses of one epsilon: masses of j = lo .. hi favouring P. */
typedef struct pure_group
{
	uint64_t	units;
	int64_t		n;
	int64_t		lo;
	int64_t		hi;
	double	   *mass;
} pure_group;

typedef enum dg_mode
{
	DG_LATTICE,					/* n-fold on its lattice, then on the grid */
	DG_COARSE,					/* on a coarser grid, n-fold there */
	DG_BOUND					/* the shifted continuous bound */
} dg_mode;

/* n discrete Gaussian charges of one sigma^2 and sensitivity. */
typedef struct dg_group
{
	uint64_t	num;			/* sigma^2 = num/den, reduced */
	uint64_t	den;
	uint64_t	sensitivity;
	int64_t		n;
	double		sigma2;
	double		D;				/* the move; both n D and n sigma^2 once summed */
	double		step;			/* s = D / sigma^2 */
	double		offset;			/* D^2 / (2 sigma^2) */
	dense		x;				/* pmf of x over [-R, R], once computed */
	dg_mode		mode;
	int64_t		coarse;			/* DG_COARSE: its grid's step in steps */
} dg_group;

struct cc_privacy_curve
{
	cc_allocator allocator;
	double		rho_all;		/* the whole composition is rho_all-zCDP */
	double		rho_z;			/* CC_CHARGE_ZCDP charges, by basic
								 * composition with the rest: */
	double		scale;			/* every mass is this many times what it
								 * says (summed discrete Gaussians) */
	double		mu2;			/* Gaussian part */
	double		p_inf;			/* mass at +infinity */
	double		max_loss;		/* no loss exceeds it; INFINITY if unknown */
	double		rel;			/* bound on the masses' relative error */
	int64_t		natoms;
	double	   *loss;			/* ascending */
	double	   *mass;
	double	   *below;			/* below[k] = sum of mass[j] for j < k */
};

typedef struct builder
{
	cc_allocator allocator;
	bool		failed;
	double		h;
	int64_t		H;				/* h = H units */
	dense		acc;			/* the discrete part so far */
	double		p_inf;
	double		shift;			/* added to every discrete loss */
	double		log_scale;		/* ln of the curve's scale */
	double		mu2;
	double		rel;			/* bound on the masses' relative error */
} builder;

static void *
malloc_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return malloc(size);
}

static void
malloc_release(void *ctx, void *ptr)
{
	(void) ctx;
	free(ptr);
}

/* n elements of size bytes, or NULL (and the build fails) */
static void *
get(builder *b, int64_t n, size_t size)
{
	void	   *p;

	if (b->failed)
		return NULL;
	p = b->allocator.alloc(b->allocator.ctx, (size_t) (n > 0 ? n : 1) * size);
	if (p == NULL)
		b->failed = true;
	return p;
}

static void
put(builder *b, void *p)
{
	if (p != NULL)
		b->allocator.release(b->allocator.ctx, p);
}

/* floor(a / b) for b > 0 */
static int64_t
floor_div(int64_t a, int64_t b)
{
	int64_t		q = a / b;

	return q - (a % b < 0);
}

/* ---------------------------------------------------------------------- */
/* The Gaussian part                                                      */
/* ---------------------------------------------------------------------- */

/*
 * Mills ratio Phi(-x) / phi(x) for x >= 0, relative error about 1e-15: from
 * erfc below 4 (exp(x^2/2) is then exact to a few ulps), from its continued
 * fraction 1/(x+ 1/(x+ 2/(x+ ...))) above (40 levels: below 1e-18 at 4).
 */
static double
mills(double x)
{
	double		f = x;

	if (x < 4.0)
		return 0.5 * SQRT_2PI * erfc(x / M_SQRT2) * exp(0.5 * x * x);
	for (int k = 40; k >= 1; k--)
		f = x + k / f;
	return 1.0 / f;
}

/* log Phi(-x) for any x */
static double
log_upper_tail(double x)
{
	if (x < 4.0)
		return log(0.5 * erfc(x / M_SQRT2));
	return -0.5 * x * x - LOG_SQRT_2PI + log(mills(x));
}

/*
 * delta_G(t) = Phi(-x1) - e^t Phi(-x2), x1 = t/mu - mu/2, x2 = x1 + mu, for
 * mu > 0, raised by a bound on its rounding error.  Above the mean
 * (x1 >= 0) the difference is phi(x1) (R(x1) - R(x2)) with R the Mills
 * ratio (e^t phi(x2) = phi(x1)): no underflow, and a cancellation of
 * relative size about (x1 + 2)/mu, charged below.
 */
static double
delta_gauss(double t, double mu)
{
	double		x1 = t / mu - 0.5 * mu;
	double		x2 = x1 + mu;
	double		value;
	double		rel;

	if (x1 >= 0.0)
	{
		value = exp(-0.5 * x1 * x1 - LOG_SQRT_2PI) * (mills(x1) - mills(x2));
		rel = 4e-16 * (8.0 + x1 * x1) + 1e-14 * (x1 + 2.0) / fmin(mu, 1.0);
	}
	else
	{
		value = 0.5 * erfc(x1 / M_SQRT2) - exp(t + log_upper_tail(x2));
		rel = 4e-16 * (8.0 + fabs(t) + x2 * x2) + 1e-14 / fmin(mu, 1.0);
	}
	if (value <= 0.0)
		return 0.0;
	return fmin(1.0, value * (1.0 + rel));
}

/* ---------------------------------------------------------------------- */
/* Convolutions on the grid                                               */
/* ---------------------------------------------------------------------- */

/*
 * Cut the tails of d (a grid of losses, or of x when lattice_x: there high
 * losses are low x): at most TRIM of mass each side.  High losses go to
 * +infinity, low ones onto the lowest loss kept.
 */
static void
trim(builder *b, dense *d, bool lattice_x)
{
	int64_t		first = 0;
	int64_t		last = d->len - 1;
	double		cut_lo = 0.0;
	double		cut_hi = 0.0;

	while (first < last && cut_lo + d->p[first] <= TRIM)
		cut_lo += d->p[first++];
	while (last > first && cut_hi + d->p[last] <= TRIM)
		cut_hi += d->p[last--];
	if (lattice_x)
	{
		b->p_inf += cut_lo;
		d->p[last] += cut_hi;
	}
	else
	{
		d->p[first] += cut_lo;
		b->p_inf += cut_hi;
	}
	if (first > 0)
		memmove(d->p, d->p + first, (size_t) (last - first + 1) * sizeof(double));
	d->lo += first;
	d->len = last - first + 1;
}

/* d := d * (atoms offset[i] with mass[i], offsets ascending), trimmed */
static void
convolve(builder *b, dense *d, const int64_t *offset, const double *mass,
		 int64_t n, bool lattice_x)
{
	int64_t		span = offset[n - 1] - offset[0];
	dense		out;

	out.lo = d->lo + offset[0];
	out.len = d->len + span;
	out.p = get(b, out.len, sizeof(double));
	if (out.p == NULL)
		return;
	memset(out.p, 0, (size_t) out.len * sizeof(double));
	for (int64_t a = 0; a < n; a++)
	{
		double	   *o = out.p + (offset[a] - offset[0]);
		double		m = mass[a];

		for (int64_t i = 0; i < d->len; i++)
			o[i] += d->p[i] * m;
	}
	put(b, d->p);
	*d = out;
	trim(b, d, lattice_x);
	b->rel += (double) (n + 2) * EPS_U;
}

static void
convolve_sparse(builder *b, const sparse *s)
{
	convolve(b, &b->acc, s->idx, s->mass, s->n, false);
}

/*
 * Add mass m at grid index i to s.  Atoms come in ascending and each lands
 * on its grid point or the next, so i is at least the last index but one.
 */
static void
sparse_add(sparse *s, int64_t i, double m)
{
	for (int64_t k = s->n - 1; k >= 0 && k >= s->n - 2; k--)
		if (s->idx[k] == i)
		{
			s->mass[k] += m;
			return;
		}
	s->idx[s->n] = i;
	s->mass[s->n] = m;
	s->n++;
}

/*
 * Put P-mass m of the loss j h + d (0 <= d < h) on the grid, connecting the
 * dots (Doroshenko, Ghazi, Kamath, Kumar and Manurangsi 2022): as a function
 * of alpha = e^epsilon, the atom adds the hinge m (1 - alpha e^-l)_+ to
 * delta, convex; split between j and j + 1 so as to keep its P- and
 * Q-masses, it adds the hinge's chord between e^(j h) and e^((j+1) h)
 * instead, above the hinge everywhere and equal to it outside (see the top
 * for why that bounds the composition).  d is raised by its rounding bound
 * first: a higher atom's chord is higher.  The callers count the split's 8 roundings.
 */
static void
sparse_split(sparse *s, int64_t j, double d, double h, double m)
{
	d += 1e-14 * (fabs((double) j) + 1.0) * h;
	if (d >= h)
		sparse_add(s, j + 1, m);
	else
	{
		sparse_add(s, j, m * expm1(h - d) / expm1(h));
		sparse_add(s, j + 1, m * -expm1(-d) / -expm1(-h));
	}
}

/* ---------------------------------------------------------------------- */
/* Pure charges                                                           */
/* ---------------------------------------------------------------------- */

/*
 * The binomial of n randomized responses of epsilon, from the mode outward
 * while masses stay above CUT of it, normalized by what was kept; the lower
 * tail's bound joins the lowest atom, the upper's goes to p_inf.  Ratios of
 * successive masses fall as j grows, so a tail is at most its first term
 * times r/(1 - r).
 */
static void
pure_binomial(builder *b, pure_group *g)
{
	double		eps = (double) g->units * UNIT;
	double		up = exp(eps);	/* P-odds of one response: p/q */
	double		down = exp(-eps);
	int64_t		n = g->n;
	double		p = 1.0 / (1.0 + down);
	int64_t		mode = (int64_t) floor((double) (n + 1) * p);
	double		m;
	double		sum = 0.0;
	double		tail_lo = 0.0;
	double		tail_hi = 0.0;
	int64_t		j;

	if (mode > n)
		mode = n;
	/* count the window first */
	for (m = 1.0, j = mode; j < n; j++)
	{
		double		next = m * ((double) (n - j) / (double) (j + 1)) * up;

		if (next < CUT)
			break;
		m = next;
	}
	g->hi = j;
	for (m = 1.0, j = mode; j > 0; j--)
	{
		double		next = m * ((double) j / (double) (n - j + 1)) * down;

		if (next < CUT)
			break;
		m = next;
	}
	g->lo = j;
	g->mass = get(b, g->hi - g->lo + 1, sizeof(double));
	if (g->mass == NULL)
		return;

	g->mass[mode - g->lo] = 1.0;
	for (j = mode + 1; j <= g->hi; j++)
		g->mass[j - g->lo] = g->mass[j - 1 - g->lo] *
			((double) (n - j + 1) / (double) j) * up;
	for (j = mode - 1; j >= g->lo; j--)
		g->mass[j - g->lo] = g->mass[j + 1 - g->lo] *
			((double) (j + 1) / (double) (n - j)) * down;
	for (j = g->lo; j <= g->hi; j++)
		sum += g->mass[j - g->lo];

	if (g->hi < n)
	{
		double		r = ((double) (n - g->hi) / (double) (g->hi + 1)) * up;

		tail_hi = g->mass[g->hi - g->lo] * r / (1.0 - r);
	}
	if (g->lo > 0)
	{
		double		r = ((double) g->lo / (double) (n - g->lo + 1)) * down;

		tail_lo = g->mass[0] * r / (1.0 - r);
	}
	for (j = g->lo; j <= g->hi; j++)
		g->mass[j - g->lo] /= sum;
	/* 3 roundings a step out from the mode and 1 in the sum, the split */
	b->rel += (4.0 * (double) (g->hi - g->lo) + 12.0) * EPS_U;
	g->mass[0] += tail_lo / sum;
	b->p_inf += tail_hi / sum;
}

/* The group's losses (2j - n) epsilon on the grid, into the composition. */
static void
pure_convolve(builder *b, const pure_group *g)
{
	sparse		s;
	int64_t		count = g->hi - g->lo + 1;

	s.n = 0;
	s.idx = get(b, 2 * count, sizeof(int64_t));
	s.mass = get(b, 2 * count, sizeof(double));
	if (!b->failed)
	{
		for (int64_t j = g->lo; j <= g->hi; j++)
		{
			int64_t		loss = (2 * j - g->n) * (int64_t) g->units;
			int64_t		at = floor_div(loss, b->H);
			int64_t		rest = loss - at * b->H;

			if (rest == 0)
				sparse_add(&s, at, g->mass[j - g->lo]);
			else
				sparse_split(&s, at, (double) rest * UNIT, b->h, g->mass[j - g->lo]);
		}
		convolve_sparse(b, &s);
	}
	put(b, s.idx);
	put(b, s.mass);
}

/* ---------------------------------------------------------------------- */
/* Discrete Gaussian charges                                              */
/* ---------------------------------------------------------------------- */

/* kappa' = kappa / (1 + kappa) of the top, for sigma2 */
static double
dg_kappa_prime(double sigma2)
{
	double		a = 2.0 * PI_SQUARED * sigma2;
	double		kappa = 2.0 * exp(-a) / -expm1(-3.0 * a);

	return kappa / (1.0 + kappa);
}

/*
 * The pmf of the discrete Gaussian over x in [-R, R], R the least with the
 * weights beyond (at most w(R+1)/(1 - q), q the ratio of successive weights
 * there) below CUT of w(0) = 1.  Normalized by the kept weights; the
 * bound on the tail x > R (low losses) joins x = R, the one on x < -R
 * (high losses) goes to p_inf.
 */
static void
dg_pmf(builder *b, dg_group *g)
{
	double		s2 = g->sigma2;
	int64_t		R = (int64_t) ceil(sqrt(2.0 * s2 * -log(CUT)));
	double		tail;
	double		sum = 0.0;

	if (R < 1)
		R = 1;
	for (;;)
	{
		double		q = exp(-(2.0 * (double) R + 3.0) / (2.0 * s2));

		tail = exp(-((double) R + 1.0) * ((double) R + 1.0) / (2.0 * s2)) / (1.0 - q);
		if (tail <= CUT)
			break;
		R++;
	}
	g->x.lo = -R;
	g->x.len = 2 * R + 1;
	g->x.p = get(b, g->x.len, sizeof(double));
	if (g->x.p == NULL)
		return;
	for (int64_t x = -R; x <= R; x++)
		sum += g->x.p[x + R] = exp(-(double) x * (double) x / (2.0 * s2));
	for (int64_t i = 0; i < g->x.len; i++)
		g->x.p[i] /= sum;
	/* exp of an argument up to -log(CUT), the sum, the division, the split */
	b->rel += (double) g->n * (-log(CUT) + (double) g->x.len + 12.0) * EPS_U;
	g->x.p[g->x.len - 1] += tail / sum;
	b->p_inf += (double) g->n * tail / sum;
}

/*
 * The losses n offset - step * x of the lattice d onto the grid of step
 * k h, whose points are points of the grid.
 */
static void
dg_to_grid(builder *b, const dg_group *g, const dense *d, int64_t n, int64_t k,
		   sparse *s)
{
	double		hk = (double) k * b->h;

	s->n = 0;
	s->idx = get(b, 2 * d->len, sizeof(int64_t));
	s->mass = get(b, 2 * d->len, sizeof(double));
	if (b->failed)
		return;
	for (int64_t i = d->len - 1; i >= 0; i--)
	{
		double		x = (double) (d->lo + i);
		double		q = ((double) n * g->offset - g->step * x) / hk;
		double		at = floor(q);

		sparse_split(s, (int64_t) at, (q - at) * hk, hk, d->p[i]);
	}
}

/* d := its n-fold convolution, on its own lattice. */
static void
n_fold(builder *b, dense *d, int64_t n, bool lattice_x)
{
	int64_t		len = d->len;
	int64_t    *offset = get(b, len, sizeof(int64_t));
	double	   *mass = get(b, len, sizeof(double));

	if (!b->failed)
	{
		for (int64_t i = 0; i < len; i++)
		{
			offset[i] = d->lo + i;
			mass[i] = d->p[i];
		}
		for (int64_t k = 1; k < n && !b->failed; k++)
			convolve(b, d, offset, mass, len, lattice_x);
	}
	put(b, offset);
	put(b, mass);
}

/*
 * How the group's loss is computed, given the grid.  An n-fold convolution
 * of len points costs about len^2 n^1.5: on the lattice itself when that
 * fits GROUP_WORK (a single charge's lattice whenever it has at most
 * MAX_POINTS points); else on a coarser grid (k steps, about fit points
 * over one charge's losses), its dots connected once a charge; else, or
 * when the bound's shift n s is below a grid step anyway, by the bound.
 * dg_sum() may first make the group one charge (see the top).
 */
/* Points of one charge's lattice of x (dg_pmf's window, near enough). */
static double
dg_len(const dg_group *g)
{
	return 2.0 * sqrt(2.0 * g->sigma2 * -log(CUT)) + 3.0;
}

/* Lattice points an n-fold convolution may have within GROUP_WORK. */
static double
dg_fit(const dg_group *g)
{
	return sqrt(GROUP_WORK / pow((double) g->n, 1.5));
}

/* About how many atoms the group's n-fold loss takes, on a grid at most. */
static double
dg_atoms(const dg_group *g)
{
	return fmin(dg_len(g), dg_fit(g)) * sqrt((double) g->n);
}

static void
dg_choose(const builder *b, dg_group *g)
{
	double		n = (double) g->n;
	double		len = dg_len(g);
	double		fit = dg_fit(g);

	g->coarse = 1;
	if (n * g->step <= b->h || len > (double) MAX_POINTS || (g->n > 1 && fit < 16.0))
		g->mode = DG_BOUND;
	else if (g->n == 1 || len <= fit)
		g->mode = DG_LATTICE;
	else
	{
		g->mode = DG_COARSE;
		g->coarse = (int64_t) fmax(1.0, ceil(len * g->step / fit / b->h));
	}
}

/*
 * tau of the top for n coordinates of sigma2 (+infinity if some kappa_k
 * reaches 1), raised past its roundings.
 */
static double
dg_sum_tau(double sigma2, int64_t n)
{
	double		tau = 0.0;
	double		term = 0.0;

	for (int64_t k = 2; k <= n && k <= 65; k++)
	{
		double		b = 2.0 * PI_SQUARED * sigma2 * (double) (k - 1) / (double) k;
		double		kappa = 2.0 * exp(-b) / -expm1(-3.0 * b);

		if (!(kappa < 1.0))
			return INFINITY;
		term = log1p(kappa) - log1p(-kappa);
		if (k <= 64)
			tau += term;
	}
	if (n > 64)
		tau += (double) (n - 64) * term;
	return tau * (1.0 + 1e-12) + 1e-300;
}

/* Its group as one discrete Gaussian of n sigma^2 moved by n D. */
static void
dg_sum(builder *b, dg_group *g, double tau)
{
	double		n = (double) g->n;

	g->sigma2 *= n;
	g->D *= n;
	g->offset *= n;
	g->n = 1;
	b->log_scale += tau;
	b->shift += 2.0 * tau;
}

/* dg_choose(), with dg_sum() first where it serves (see the top). */
static void
dg_plan(builder *b, dg_group *g)
{
	double		tau;

	dg_choose(b, g);
	if (g->n == 1)
		return;
	tau = dg_sum_tau(g->sigma2, g->n);
	if (2.0 * tau <= TAU_NEGLIGIBLE ||
		(g->mode == DG_BOUND && 2.0 * tau + g->step < (double) g->n * g->step))
	{
		dg_sum(b, g, tau);
		dg_choose(b, g);
	}
}

static void
dg_convolve(builder *b, dg_group *g)
{
	sparse		s = {0, NULL, NULL};
	sparse		fine = {0, NULL, NULL};
	dense		d = {0, 0, NULL};

	if (g->mode == DG_BOUND)
	{
		b->mu2 += (double) g->n * g->D * g->D / g->sigma2;
		b->shift += (double) g->n * g->step;
		b->p_inf += (double) g->n * dg_kappa_prime(g->sigma2);
		return;
	}
	dg_pmf(b, g);
	if (g->mode == DG_LATTICE)
	{
		n_fold(b, &g->x, g->n, true);
		dg_to_grid(b, g, &g->x, g->n, 1, &s);
		if (!b->failed)
			convolve_sparse(b, &s);
	}
	else
	{
		dg_to_grid(b, g, &g->x, 1, g->coarse, &s);
		if (!b->failed)
		{
			d.lo = s.idx[0];
			d.len = s.idx[s.n - 1] - s.idx[0] + 1;
			d.p = get(b, d.len, sizeof(double));
		}
		if (!b->failed)
		{
			memset(d.p, 0, (size_t) d.len * sizeof(double));
			for (int64_t i = 0; i < s.n; i++)
				d.p[s.idx[i] - d.lo] = s.mass[i];
			n_fold(b, &d, g->n, false);
			fine.idx = get(b, d.len, sizeof(int64_t));
			fine.mass = get(b, d.len, sizeof(double));
		}
		if (!b->failed)
		{
			for (int64_t i = 0; i < d.len; i++)
			{
				fine.idx[i] = (d.lo + i) * g->coarse;
				fine.mass[i] = d.p[i];
			}
			fine.n = d.len;
			convolve_sparse(b, &fine);
		}
	}
	put(b, s.idx);
	put(b, s.mass);
	put(b, fine.idx);
	put(b, fine.mass);
	put(b, d.p);
}

/* ---------------------------------------------------------------------- */
/* Building the curve                                                     */
/* ---------------------------------------------------------------------- */

/* A pure group's key, its units, and how many charges. */
typedef struct pure_key
{
	uint64_t	units;
	uint64_t	count;
} pure_key;

static int
cmp_pure(const void *a, const void *b)
{
	uint64_t	x = ((const pure_key *) a)->units;
	uint64_t	y = ((const pure_key *) b)->units;

	return (x > y) - (x < y);
}

static int
cmp_dg(const void *a, const void *b)
{
	const dg_group *x = a;
	const dg_group *y = b;

	if (x->num != y->num)
		return (x->num > y->num) - (x->num < y->num);
	if (x->den != y->den)
		return (x->den > y->den) - (x->den < y->den);
	return (x->sensitivity > y->sensitivity) - (x->sensitivity < y->sensitivity);
}

static bool
sigma2_valid(cc_scale sigma2)
{
	return sigma2.num >= 1 && sigma2.num <= MAX_DG_PART &&
		sigma2.den >= 1 && sigma2.den <= MAX_DG_PART;
}

static bool
charge_valid(const cc_charge *c)
{
	switch (c->kind)
	{
		case CC_CHARGE_PURE:
			return true;		/* its range: CC_REGION_TOO_LARGE */
		case CC_CHARGE_GAUSSIAN:
		case CC_CHARGE_ZCDP:
			return c->rho >= 0.0 && 2.0 * c->rho <= MAX_MU2;
		case CC_CHARGE_DGAUSS:
			return sigma2_valid(c->sigma2) &&
				c->sensitivity >= 1 && c->sensitivity <= MAX_DG_SENSITIVITY;
		case CC_CHARGE_DGAUSS_BOUND:
			return c->rho >= 0.0 && 2.0 * c->rho <= MAX_MU2 && sigma2_valid(c->sigma2) &&
				c->l1 >= 0.0 && c->l1 <= MAX_MU2;
	}
	return false;
}

cc_charge
cc_charge_pure(double epsilon)
{
	return (cc_charge) {.kind = CC_CHARGE_PURE, .count = 1,
	.epsilon_units = (uint64_t) llround(epsilon * 1e9)};
}

cc_charge
cc_charge_rho(double rho)
{
	return (cc_charge) {.kind = CC_CHARGE_GAUSSIAN, .count = 1, .rho = rho};
}

cc_charge
cc_charge_dgauss(cc_scale sigma2, uint64_t sensitivity)
{
	return (cc_charge) {.kind = CC_CHARGE_DGAUSS, .count = 1, .sigma2 = sigma2,
	.sensitivity = sensitivity};
}

void
cc_charge_of_cost(cc_cost cost, uint64_t count, cc_charge *charge)
{
	const cc_gauss *g = &cost.gauss;
	double		rho = (double) cost.units * UNIT;

	memset(charge, 0, sizeof(*charge));
	charge->count = count;
	if (cost.accounting == CC_PURE)
	{
		charge->kind = CC_CHARGE_PURE;
		charge->epsilon_units = cost.units;
		return;
	}
	charge->kind = CC_CHARGE_ZCDP;
	charge->rho = rho;
	if (!sigma2_valid(g->sigma2))
		return;
	charge->sigma2 = g->sigma2;
	if (g->shift >= 1 && g->shift <= MAX_DG_SENSITIVITY && g->coordinates >= 1 &&
		!__builtin_mul_overflow(count, g->coordinates, &charge->count))
	{
		charge->kind = CC_CHARGE_DGAUSS;
		charge->sensitivity = g->shift;
	}
	else if (g->shift == 0)
	{
		charge->kind = CC_CHARGE_DGAUSS_BOUND;
		charge->coordinates = g->coordinates;
		/* above the product's rounding */
		charge->l1 = (double) g->l1_units * UNIT * (1.0 + 1e-15);
	}
	else
		charge->count = count;
}

/* The zCDP rho of one charge (see the top). */
static double
charge_rho(const cc_charge *c)
{
	double		eps = (double) c->epsilon_units * UNIT;

	switch (c->kind)
	{
		case CC_CHARGE_PURE:
			return eps * eps / 2.0;
		case CC_CHARGE_DGAUSS:
			return (double) c->sensitivity * (double) c->sensitivity *
				(double) c->sigma2.den / (2.0 * (double) c->sigma2.num);
		case CC_CHARGE_GAUSSIAN:
		case CC_CHARGE_DGAUSS_BOUND:
		case CC_CHARGE_ZCDP:
			return c->rho;
	}
	return 0.0;
}

/*
 * The grid: H units with at most MAX_POINTS over the summed spans, with
 * the points a standard deviation that GRID_WORK allows for groups of
 * atoms atoms in all, and when it can, dividing every pure epsilon (a
 * divisor of their gcd: nothing pure is rounded).  Only pure charges: any
 * step dividing them will do.
 */
static void
choose_grid(builder *b, uint64_t gcd, double var, double span, double atoms,
			bool fine_needed)
{
	double		per_sd = fmin(MAX_POINTS_PER_SD,
							  fmax(MIN_POINTS_PER_SD, GRID_WORK / (30.0 * atoms)));
	double		hmin_units = ceil(span / UNIT / (double) MAX_POINTS);
	double		ht_units = fmax(hmin_units, floor(sqrt(var) / per_sd / UNIT));
	int64_t		H;

	if (ht_units < 1.0)
		ht_units = 1.0;
	H = (int64_t) ht_units;
	if (gcd > 0 && (double) gcd >= hmin_units)
	{
		if (!fine_needed || (double) gcd <= ht_units)
			H = (int64_t) gcd;
		else
		{
			/* the coarsest divisor of gcd at most the target, if near */
			for (uint64_t k = (uint64_t) ceil((double) gcd / ht_units), tries = 0;
				 tries < 4096; k++, tries++)
				if (gcd % k == 0 && (double) (gcd / k) >= hmin_units)
				{
					H = (int64_t) (gcd / k);
					break;
				}
		}
	}
	b->H = H;
	b->h = (double) H * UNIT;
}

/*
 * With a Gaussian part, delta_G(epsilon - l) is a mixture (over the
 * Gaussian's loss) of hinges in e^-l, so connecting the dots again onto k
 * grid steps of about mu/128 still bounds delta, and leaves k times fewer
 * atoms to sum at every reading.
 */
static void
coarsen(builder *b, double mu)
{
	int64_t		k = (int64_t) floor(mu / 128.0 / b->h);
	sparse		s;
	dense		d;

	if (k < 2)
		return;
	s.n = 0;
	s.idx = get(b, 2 * b->acc.len, sizeof(int64_t));
	s.mass = get(b, 2 * b->acc.len, sizeof(double));
	if (!b->failed)
	{
		for (int64_t i = 0; i < b->acc.len; i++)
		{
			int64_t		j = b->acc.lo + i;
			int64_t		q = floor_div(j, k);

			if (b->acc.p[i] <= 0.0)
				continue;
			if (j == q * k)
				sparse_add(&s, q, b->acc.p[i]);
			else
				sparse_split(&s, q, (double) (j - q * k) * b->h, (double) k * b->h,
							 b->acc.p[i]);
		}
		d.lo = s.idx[0];
		d.len = s.idx[s.n - 1] - s.idx[0] + 1;
		d.p = get(b, d.len, sizeof(double));
	}
	if (!b->failed)
	{
		memset(d.p, 0, (size_t) d.len * sizeof(double));
		for (int64_t i = 0; i < s.n; i++)
			d.p[s.idx[i] - d.lo] = s.mass[i];
		put(b, b->acc.p);
		b->acc = d;
		b->H *= k;
		b->h = (double) b->H * UNIT;
		b->rel += 8.0 * EPS_U;
	}
	put(b, s.idx);
	put(b, s.mass);
}

/* The least double at or above u units: exact for 0.5, 1, 2.25 ... */
static double
units_up(int64_t u)
{
	double		x = (double) u / 1e9;

	if (u > INT64_C(1) << 53 || u < -(INT64_C(1) << 53))
		return x + LOSS_NUDGE * fabs(x);
	/* x is u / 1e9 correctly rounded; fma gives the sign of x 1e9 - u */
	return fma(x, 1e9, -(double) u) < 0.0 ? nextafter(x, INFINITY) : x;
}

/* The atoms of the discrete part, losses never below their grid points. */
static void
finish(builder *b, cc_privacy_curve *c)
{
	int64_t		k = 0;
	double		below = 0.0;

	for (int64_t i = 0; i < b->acc.len; i++)
		k += b->acc.p[i] > 0.0;
	c->loss = get(b, k, sizeof(double));
	c->mass = get(b, k, sizeof(double));
	c->below = get(b, k, sizeof(double));
	if (b->failed)
		return;
	k = 0;
	for (int64_t i = 0; i < b->acc.len; i++)
	{
		double		grid = units_up((b->acc.lo + i) * b->H);

		if (b->acc.p[i] <= 0.0)
			continue;
		c->loss[k] = b->shift == 0.0 ? grid :
			grid + b->shift + LOSS_NUDGE * (fabs(grid) + b->shift);
		c->mass[k] = b->acc.p[i];
		c->below[k] = below;
		below += b->acc.p[i];
		k++;
	}
	c->natoms = k;
}

/* The charges sorted into groups, and what sizes their composition. */
typedef struct composition
{
	pure_key   *units;			/* the pure charges of positive epsilon */
	pure_group *pure;
	dg_group   *dg;
	size_t		npure;
	size_t		ndg;
	int64_t		ngroups;		/* of pure */
	int64_t		ndgroups;		/* of dg */
	unsigned __int128 total_units;
	uint64_t	gcd;			/* of the pure groups' units */
	double		rho_all;		/* of every charge, for the zCDP cap */
	double		rho_z;			/* of the CC_CHARGE_ZCDP ones */
} composition;

/* The spread of the discrete part, which sizes its grid. */
typedef struct spread
{
	double		var;
	double		span;
	double		atoms;
	bool		fine_needed;
} spread;

/* The caller's allocator, or malloc's. */
static void
builder_init(builder *b, const cc_allocator *allocator)
{
	memset(b, 0, sizeof(*b));
	if (allocator != NULL)
		b->allocator = *allocator;
	else
		b->allocator = (cc_allocator)
	{
		malloc_alloc, malloc_release, NULL
	};
}

/*
 * Check every charge and add up what the composition's size depends on
 * (the continuous part's mu^2 and shift, the pure units, the zCDP rho),
 * so that a charge out of range refuses the whole before any allocation.
 */
static cc_region_status
tally_charges(const cc_charge *charges, size_t n, builder *b, composition *m)
{
	for (size_t i = 0; i < n; i++)
	{
		const cc_charge *ch = &charges[i];
		double		count = (double) ch->count;

		if (!charge_valid(ch))
			return CC_REGION_BAD_CHARGE;
		if (ch->count == 0)
			continue;
		m->rho_all += count * charge_rho(ch);
		switch (ch->kind)
		{
			case CC_CHARGE_PURE:
				if (ch->epsilon_units > MAX_EPSILON_UNITS || ch->count > MAX_PURE_COUNT)
					return CC_REGION_TOO_LARGE;
				m->total_units += (unsigned __int128) ch->epsilon_units * ch->count;
				if (m->total_units > MAX_TOTAL_UNITS)
					return CC_REGION_TOO_LARGE;
				m->npure += ch->epsilon_units > 0;
				break;
			case CC_CHARGE_GAUSSIAN:
				b->mu2 += count * 2.0 * ch->rho;
				break;
			case CC_CHARGE_DGAUSS:
				m->ndg++;
				break;
			case CC_CHARGE_DGAUSS_BOUND:
				b->mu2 += count * 2.0 * ch->rho;
				b->shift += count * ch->l1;
				b->p_inf += count * (double) ch->coordinates *
					dg_kappa_prime((double) ch->sigma2.num / (double) ch->sigma2.den);
				break;
			case CC_CHARGE_ZCDP:
				m->rho_z += count * ch->rho;
				break;
		}
	}
	if (b->mu2 > MAX_MU2 || b->shift > MAX_MU2 || m->rho_z > MAX_MU2)
		return CC_REGION_TOO_LARGE;
	return CC_REGION_OK;
}

/* The pure charges' units and the discrete Gaussians' reduced sigma^2. */
static void
collect_charges(const cc_charge *charges, size_t n, composition *m)
{
	m->npure = m->ndg = 0;
	for (size_t i = 0; i < n; i++)
	{
		const cc_charge *ch = &charges[i];

		if (ch->count == 0)
			continue;
		if (ch->kind == CC_CHARGE_PURE && ch->epsilon_units > 0)
		{
			m->units[m->npure].units = ch->epsilon_units;
			m->units[m->npure++].count = ch->count;
		}
		else if (ch->kind == CC_CHARGE_DGAUSS)
		{
			uint64_t	r = cc_gcd(ch->sigma2.num, ch->sigma2.den);
			dg_group   *g = &m->dg[m->ndg++];

			memset(g, 0, sizeof(*g));
			g->num = ch->sigma2.num / r;
			g->den = ch->sigma2.den / r;
			g->sensitivity = ch->sensitivity;
			g->n = (int64_t) ch->count;
		}
	}
}

/* Equal pure charges into one group each, composed exactly as a binomial. */
static cc_region_status
group_pure(composition *m)
{
	qsort(m->units, m->npure, sizeof(pure_key), cmp_pure);
	for (size_t i = 0; i < m->npure; i++)
	{
		if (m->ngroups > 0 && m->pure[m->ngroups - 1].units == m->units[i].units)
			m->pure[m->ngroups - 1].n += (int64_t) m->units[i].count;
		else
		{
			memset(&m->pure[m->ngroups], 0, sizeof(pure_group));
			m->pure[m->ngroups].units = m->units[i].units;
			m->pure[m->ngroups].n = (int64_t) m->units[i].count;
			m->ngroups++;
			m->gcd = cc_gcd(m->gcd, m->units[i].units);
		}
		if ((uint64_t) m->pure[m->ngroups - 1].n > MAX_PURE_COUNT)
			return CC_REGION_TOO_LARGE;
	}
	return CC_REGION_OK;
}

/* Equal discrete Gaussians into one group each, their counts summed. */
static cc_region_status
group_dg(composition *m)
{
	qsort(m->dg, m->ndg, sizeof(dg_group), cmp_dg);
	for (size_t i = 0; i < m->ndg; i++)
	{
		int64_t		sum;

		if (m->ndgroups > 0 && cmp_dg(&m->dg[m->ndgroups - 1], &m->dg[i]) == 0)
		{
			if (__builtin_add_overflow(m->dg[m->ndgroups - 1].n, m->dg[i].n, &sum) ||
				sum > INT64_MAX / 2)
				return CC_REGION_TOO_LARGE;
			m->dg[m->ndgroups - 1].n = sum;
		}
		else
			m->dg[m->ndgroups++] = m->dg[i];
	}
	return CC_REGION_OK;
}

/* Each pure group's binomial, and its share of the spread. */
static void
pure_spread(builder *b, composition *m, spread *s)
{
	for (int64_t i = 0; i < m->ngroups && !b->failed; i++)
	{
		pure_group *g = &m->pure[i];
		double		eps = (double) g->units * UNIT;

		pure_binomial(b, g);
		s->var += (double) g->n * eps * eps * 4.0 / (exp(eps) + 2.0 + exp(-eps));
		s->span += 2.0 * eps * (double) (g->hi - g->lo);
		s->atoms += 2.0 * (double) (g->hi - g->lo + 1);
	}
}

/* Each discrete Gaussian group's lattice, and its share of the spread. */
static void
dg_spread(composition *m, spread *s)
{
	for (int64_t i = 0; i < m->ndgroups; i++)
	{
		dg_group   *g = &m->dg[i];
		double		nd = (double) g->n;

		g->D = (double) g->sensitivity;
		g->sigma2 = (double) g->num / (double) g->den;
		g->step = g->D / g->sigma2;
		g->offset = g->D * g->D / (2.0 * g->sigma2);
		s->var += nd * g->D * g->D / g->sigma2;
		/* once summed, the n-fold lattice's window; else n windows */
		if (g->n > 1 && 2.0 * dg_sum_tau(g->sigma2, g->n) <= TAU_NEGLIGIBLE)
			s->span += g->step * 2.0 * sqrt(2.0 * nd * g->sigma2 * -log(CUT));
		else
			s->span += nd * g->step * 2.0 * sqrt(2.0 * g->sigma2 * -log(CUT));
		s->atoms += 2.0 * dg_atoms(g);
		s->fine_needed = true;
	}
}

/* The discrete part: every group convolved onto the grid, from a point mass. */
static cc_region_status
convolve_groups(builder *b, composition *m)
{
	b->acc.lo = 0;
	b->acc.len = 1;
	b->acc.p = get(b, 1, sizeof(double));
	if (b->failed)
		return CC_REGION_OK;
	b->acc.p[0] = 1.0;
	for (int64_t i = 0; i < m->ngroups && !b->failed; i++)
		pure_convolve(b, &m->pure[i]);
	for (int64_t i = 0; i < m->ndgroups && !b->failed; i++)
	{
		dg_plan(b, &m->dg[i]);
		dg_convolve(b, &m->dg[i]);
	}
	if (b->failed)
		return CC_REGION_OK;
	if (b->mu2 > MAX_MU2)
		return CC_REGION_TOO_LARGE;
	return CC_REGION_OK;
}

/* The curve's atoms and constants, each rounded up past its sum's errors. */
static void
curve_fill(builder *b, const composition *m, cc_privacy_curve *c)
{
	if (b->mu2 > 0.0)
		coarsen(b, sqrt(b->mu2));
	finish(b, c);
	/* above the roundings of its sum */
	c->mu2 = b->mu2 * (1.0 + 1e-14);
	/* and the sums over the atoms when reading */
	c->rel = b->rel + 2.0 * (double) c->natoms * EPS_U;
	c->p_inf = b->p_inf;
	c->scale = exp(b->log_scale) * (1.0 + 1e-15);
	c->rho_all = m->rho_all * (1.0 + 1e-12);
	c->rho_z = m->rho_z * (1.0 + 1e-12);
	c->max_loss = (m->ndgroups == 0 && b->mu2 == 0.0 && b->shift == 0.0) ?
		units_up((int64_t) m->total_units) : INFINITY;
}

/*
 * The composition once its groups are allocated: group the charges, size
 * the grid by their spread, convolve them and fill the curve.  A failed
 * allocation leaves b->failed, which the caller reports.
 */
static cc_region_status
compose(builder *b, composition *m, const cc_charge *charges, size_t n,
		cc_privacy_curve *c)
{
	spread		s = {0};
	cc_region_status status;

	collect_charges(charges, n, m);
	status = group_pure(m);
	if (status == CC_REGION_OK)
		status = group_dg(m);
	if (status != CC_REGION_OK)
		return status;
	pure_spread(b, m, &s);
	dg_spread(m, &s);
	if (b->failed)
		return CC_REGION_OK;
	choose_grid(b, m->gcd, s.var, s.span, s.atoms, s.fine_needed);
	status = convolve_groups(b, m);
	if (status == CC_REGION_OK && !b->failed)
		curve_fill(b, m, c);
	return status;
}

/* The groups' and the grid's memory, which the curve does not keep. */
static void
release_groups(builder *b, const composition *m)
{
	for (int64_t i = 0; i < m->ngroups; i++)
		put(b, m->pure[i].mass);
	for (int64_t i = 0; i < m->ndgroups; i++)
		put(b, m->dg[i].x.p);
	put(b, m->units);
	put(b, m->pure);
	put(b, m->dg);
	put(b, b->acc.p);
}

/* A curve that failed to build, with whatever it had allocated. */
static void
curve_discard(builder *b, cc_privacy_curve *c)
{
	if (c == NULL)
		return;
	put(b, c->loss);
	put(b, c->mass);
	put(b, c->below);
	put(b, c);
}

cc_region_status
cc_privacy_curve_build(const cc_charge *charges, size_t n,
					   const cc_allocator *allocator, cc_privacy_curve **curve)
{
	builder		b;
	composition m = {0};
	cc_privacy_curve *c;
	cc_region_status status;

	builder_init(&b, allocator);
	*curve = NULL;
	status = tally_charges(charges, n, &b, &m);
	if (status != CC_REGION_OK)
		return status;

	c = get(&b, 1, sizeof(cc_privacy_curve));
	if (c != NULL)
		memset(c, 0, sizeof(*c));
	m.units = get(&b, (int64_t) m.npure, sizeof(pure_key));
	m.pure = get(&b, (int64_t) m.npure, sizeof(pure_group));
	m.dg = get(&b, (int64_t) m.ndg, sizeof(dg_group));
	if (!b.failed)
	{
		c->allocator = b.allocator;
		status = compose(&b, &m, charges, n, c);
	}
	release_groups(&b, &m);
	if (b.failed && status == CC_REGION_OK)
		status = CC_REGION_NO_MEMORY;
	if (status != CC_REGION_OK)
	{
		curve_discard(&b, c);
		return status;
	}
	*curve = c;
	return CC_REGION_OK;
}

void
cc_privacy_curve_free(cc_privacy_curve *c)
{
	cc_allocator a;

	if (c == NULL)
		return;
	a = c->allocator;
	if (c->loss != NULL)
		a.release(a.ctx, c->loss);
	if (c->mass != NULL)
		a.release(a.ctx, c->mass);
	if (c->below != NULL)
		a.release(a.ctx, c->below);
	a.release(a.ctx, c);
}

/* ---------------------------------------------------------------------- */
/* Reading the curve                                                      */
/* ---------------------------------------------------------------------- */

/* delta of the charges but the CC_CHARGE_ZCDP ones (the region's) */
static double
region_delta(const cc_privacy_curve *c, double epsilon)
{
	double		sum = 0.0;

	if (!(epsilon > 0.0))
		epsilon = 0.0;
	if (epsilon >= c->max_loss)
		return 0.0;
	if (c->mu2 == 0.0)
	{
		for (int64_t k = c->natoms - 1; k >= 0 && c->loss[k] > epsilon; k--)
			sum += c->mass[k] * -expm1(epsilon - c->loss[k]);
	}
	else
	{
		double		mu = sqrt(c->mu2);

		/*
		 * From the highest loss down; delta_G falls with t = epsilon - l,
		 * so the atoms not yet summed add at most their mass times the
		 * last term's delta_G: stop once that is negligible, adding it.
		 */
		for (int64_t k = c->natoms - 1; k >= 0; k--)
		{
			double		d = delta_gauss(epsilon - c->loss[k], mu);

			sum += c->mass[k] * d;
			if (c->below[k] * d <= 1e-14 * sum)
			{
				sum += c->below[k] * d;
				break;
			}
		}
	}
	return fmin(1.0, (c->p_inf + sum) * c->scale * (1.0 + REL_ROUNDING + c->rel));
}

/*
 * From delta(lo) > delta >= delta(hi), the smallest epsilon with delta(epsilon)
 * <= delta to 1e-12 relative: the Illinois variant of regula falsi on
 * log delta (nearly linear, so a dozen steps), bisecting where delta is 0.
 * Only a point whose delta was seen at most the target becomes hi.
 */
static double
search(const cc_privacy_curve *c, double delta, double lo, double hi)
{
	double		flo = log(region_delta(c, lo) / delta);
	double		dhi = region_delta(c, hi);
	double		fhi = dhi > 0.0 ? log(dhi / delta) : -INFINITY;
	int			kept = 0;		/* the end kept last: -1 lo, 1 hi */

	for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++)
	{
		double		mid = 0.5 * (lo + hi);
		double		x = mid;
		double		d;

		if (isfinite(fhi) && fhi < flo)
			x = hi - fhi * (hi - lo) / (fhi - flo);
		if (!(x > lo && x < hi))
			x = mid;
		d = region_delta(c, x);
		if (d <= delta)
		{
			hi = x;
			fhi = d > 0.0 ? log(d / delta) : -INFINITY;
			if (kept == -1)
				flo *= 0.5;
			kept = -1;
		}
		else
		{
			lo = x;
			flo = log(d / delta);
			if (kept == 1)
				fhi *= 0.5;
			kept = 1;
		}
	}
	return hi;
}

/* epsilon of the charges but the CC_CHARGE_ZCDP ones */
static double
region_epsilon(const cc_privacy_curve *c, double delta)
{
	double		lo = 0.0;
	double		hi;

	if (!(delta >= 0.0))
		delta = 0.0;
	if (region_delta(c, 0.0) <= delta)
		return 0.0;
	if (c->max_loss < INFINITY)
		hi = c->max_loss;
	else
	{
		if (c->p_inf * c->scale * (1.0 + REL_ROUNDING + c->rel) >= delta)
			return INFINITY;
		hi = 1.0;
		while (region_delta(c, hi) > delta)
		{
			lo = hi;
			hi *= 2.0;
			if (hi > 1e15)
				return INFINITY;
		}
	}
	return search(c, delta, lo, hi);
}

/*
 * The least of f(x) over x in [0, 1] that `first` and SPLITS points spread
 * on the logistic scale and SPLIT_REFINE golden-section steps around the
 * best find: every x gives a valid bound, so any is kept.
 */
static double
least_split(double (*f) (const cc_privacy_curve *c, double arg, double x),
			const cc_privacy_curve *c, double arg, double first)
{
	const double golden = 0.61803398874989484820;
	double		best = f(c, arg, first);
	int			at = 0;
	double		lo;
	double		hi;

	for (int i = 0; i < SPLITS; i++)
	{
		double		v = f(c, arg, 1.0 / (1.0 + exp(-(-12.0 + 24.0 * i / (SPLITS - 1)))));

		if (v < best)
		{
			best = v;
			at = i;
		}
	}
	lo = -12.0 + 24.0 * (at > 0 ? at - 1 : at) / (SPLITS - 1);
	hi = -12.0 + 24.0 * (at < SPLITS - 1 ? at + 1 : at) / (SPLITS - 1);
	for (int i = 0; i < SPLIT_REFINE; i++)
	{
		double		x1 = hi - golden * (hi - lo);
		double		x2 = lo + golden * (hi - lo);
		double		f1 = f(c, arg, 1.0 / (1.0 + exp(-x1)));
		double		f2 = f(c, arg, 1.0 / (1.0 + exp(-x2)));

		best = fmin(best, fmin(f1, f2));
		if (f1 <= f2)
			hi = x2;
		else
			lo = x1;
	}
	return best;
}

/* Basic composition: the region at x epsilon, the rho-only part at the rest. */
static double
split_delta(const cc_privacy_curve *c, double epsilon, double x)
{
	return region_delta(c, x * epsilon) + cc_zcdp_delta(c->rho_z, (1.0 - x) * epsilon);
}

/* The same, at x delta and the rest. */
static double
split_epsilon(const cc_privacy_curve *c, double delta, double x)
{
	return region_epsilon(c, x * delta) + cc_zcdp_epsilon(c->rho_z, (1.0 - x) * delta);
}

double
cc_privacy_curve_delta(const cc_privacy_curve *c, double epsilon)
{
	double		delta;

	if (!(epsilon > 0.0))
		epsilon = 0.0;
	if (c->rho_z == 0.0)
		delta = region_delta(c, epsilon);
	else if (epsilon == 0.0)
		delta = fmin(1.0, region_delta(c, 0.0) + cc_zcdp_delta(c->rho_z, 0.0));
	else
		/* first where the region's delta reaches 0, if it does */
		delta = fmin(1.0, least_split(split_delta, c, epsilon,
									  fmin(1.0, c->max_loss / epsilon)));
	return fmin(delta, cc_zcdp_delta(c->rho_all, epsilon));
}

double
cc_privacy_curve_epsilon(const cc_privacy_curve *c, double delta)
{
	double		epsilon;

	if (!(delta >= 0.0))
		delta = 0.0;
	if (delta >= 1.0)
		return 0.0;
	if (c->rho_z == 0.0)
		epsilon = region_epsilon(c, delta);
	else if (delta == 0.0)
		epsilon = INFINITY;
	else
		/* first the region's epsilon at delta 0, finite for pure charges */
		epsilon = least_split(split_epsilon, c, delta, 0.0);
	if (delta > 0.0 && delta < 1.0)
		epsilon = fmin(epsilon, cc_zcdp_epsilon(c->rho_all, delta));
	return epsilon;
}
