/*
 * privacy_region.c
 *		delta(epsilon) of a composition of pure, Gaussian and discrete
 *		Gaussian charges, through its privacy loss distribution, as an upper
 *		bound on the true curve.
 *
 * This file owns the arguments below, the charges and the composition that
 * builds a curve from them; the grid is region_grid.c's, each kind of
 * charge's losses region_pure.c's and region_dgauss.c's, the reading of a
 * built curve region_read.c's (their shared types: privacy_region_int.h).
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
 *	  Doroshenko et al. 2022, cc_region_sparse_split()), which lies above
 *	  it; on a grid whose step divides every pure epsilon (0.1, 0.25, ...
 *	  share one) nothing is split at all; grids then convolve exactly;
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
#include "privacy_region_int.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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
					cc_region_dg_kappa_prime((double) ch->sigma2.num / (double) ch->sigma2.den);
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

		cc_region_pure_binomial(b, g);
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
		if (g->n > 1 && 2.0 * cc_region_dg_sum_tau(g->sigma2, g->n) <= TAU_NEGLIGIBLE)
			s->span += g->step * 2.0 * sqrt(2.0 * nd * g->sigma2 * -log(CUT));
		else
			s->span += nd * g->step * 2.0 * sqrt(2.0 * g->sigma2 * -log(CUT));
		s->atoms += 2.0 * cc_region_dg_atoms(g);
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
		cc_region_pure_convolve(b, &m->pure[i]);
	for (int64_t i = 0; i < m->ndgroups && !b->failed; i++)
	{
		cc_region_dg_plan(b, &m->dg[i]);
		cc_region_dg_convolve(b, &m->dg[i]);
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
		cc_region_coarsen(b, sqrt(b->mu2));
	cc_region_finish(b, c);
	/* above the roundings of its sum */
	c->mu2 = b->mu2 * (1.0 + 1e-14);
	/* and the sums over the atoms when reading */
	c->rel = b->rel + 2.0 * (double) c->natoms * EPS_U;
	c->p_inf = b->p_inf;
	c->scale = exp(b->log_scale) * (1.0 + 1e-15);
	c->rho_all = m->rho_all * (1.0 + 1e-12);
	c->rho_z = m->rho_z * (1.0 + 1e-12);
	c->max_loss = (m->ndgroups == 0 && b->mu2 == 0.0 && b->shift == 0.0) ?
		cc_region_units_up((int64_t) m->total_units) : INFINITY;
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
	cc_region_choose_grid(b, m->gcd, s.var, s.span, s.atoms, s.fine_needed);
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

