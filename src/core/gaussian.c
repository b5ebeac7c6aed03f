/*
 * gaussian.c
 *		Exact discrete Gaussian sampling with integer arithmetic only.
 *
 * Canonne, Kamath and Steinke, "The Discrete Gaussian for Differential
 * Privacy" (2020), Algorithm 3.  With t = floor(sigma) + 1, draw Y from the
 * discrete Laplace of scale t and accept it with probability
 *
 *		exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)).
 *
 * Why the result is exact: expanding the square, P(Y = y) times the
 * acceptance probability is proportional to
 *
 *		exp(-|y|/t) exp(-y^2/(2 sigma^2) + |y|/t - sigma^2/(2 t^2))
 *			= exp(-sigma^2/(2 t^2)) exp(-y^2/(2 sigma^2)),
 *
 * the discrete Gaussian's weight times a constant, so an accepted candidate
 * has exactly the discrete Gaussian's law, whatever t is (t only sets how
 * often candidates are accepted).  Every step is exact: the discrete Laplace
 * of noise.c, and a Bernoulli of exp(-gamma) for the rational gamma below.
 *
 * With sigma^2 = n/d and x = |Y|, gamma = (x d t - n)^2 / (2 n d t^2) = a^2/q,
 * a = |x d t - n|, q = 2 n d t^2.  For 1 <= n, d <= 2^62 (cc_dgauss_check):
 *	- s = floor(sigma) = floor(sqrt(floor(n/d))) <= 2^31, t = s + 1;
 *	- d t = d s + d <= sqrt(n d) + d <= 2^63, so x d t < 2^126 for x < 2^63
 *	  and a < 2^126;
 *	- q <= 2^127: for s = 0, t = 1 and q = 2 n d <= 2^125; for s >= 1,
 *	  t <= 2 s, t^2 <= 4 n/d and q <= 8 n^2 <= 2^127.
 * a^2 may need 252 bits; when it does, Bernoulli(exp(-a^2/q)) is drawn
 * without it, as a product of Bernoullis whose exponents have 128-bit parts
 * (cc_bernoulli_exp_square).  Only the discrete Laplace's clamp of magnitudes
 * above INT64_MAX (probability below exp(-2^32) at t <= 2^31 + 1) departs
 * from the exact law.
 */
#include "gaussian.h"

#include <math.h>

typedef unsigned __int128 u128;

#define U64_MAX_128 ((u128) UINT64_MAX)

#define PI_SQUARED 9.8696044010893586188

/* Uniform on [0, n), n >= 1, 128 bits wide. */
static u128
uniform_below_wide(cc_rng *rng, u128 n)
{
	int			bits;
	u128		mask;

	if (n <= U64_MAX_128)
		return cc_uniform_below(rng, (uint64_t) n);

	/*
	 * n > 2^64: draw as many bits as n has and reject values from n on; at
	 * least half the draws are kept.
	 */
	bits = 128 - __builtin_clzll((uint64_t) (n >> 64));
	mask = bits == 128 ? ~(u128) 0 : ((u128) 1 << bits) - 1;
	for (;;)
	{
		u128		r = (u128) cc_next_word(rng) << 64;

		r = (r | cc_next_word(rng)) & mask;
		if (r < n)
			return r;
	}
}

/* Bernoulli(a / b), a <= b, b >= 1. */
static bool
bernoulli_frac_wide(cc_rng *rng, u128 a, u128 b)
{
	if (a == b)
		return true;
	if (a == 0)
		return false;
	return uniform_below_wide(rng, b) < a;
}

/*
 * Bernoulli(exp(-a/b)) for 0 <= a <= b: A_k ~ Bernoulli(a / (b k)) for
 * k = 1, 2, ... until one fails, the first failing k being odd with
 * probability exp(-a/b).  When b k overflows, A_k is Bernoulli(a/b) and
 * Bernoulli(1/k), independent.
 */
static bool
bernoulli_exp_at_most_one_wide(cc_rng *rng, u128 a, u128 b)
{
	uint64_t	k = 1;

	for (;;)
	{
		u128		bk;
		bool		success = __builtin_mul_overflow(b, (u128) k, &bk) ?
			bernoulli_frac_wide(rng, a, b) && bernoulli_frac_wide(rng, 1, k) :
			bernoulli_frac_wide(rng, a, bk);

		if (!success)
			return (k & 1) == 1;
		k++;
	}
}

bool
cc_bernoulli_exp_wide(cc_rng *rng, u128 num, u128 den)
{
	/* 64-bit parts, the usual case, take noise.c's tested path */
	if (num <= U64_MAX_128 && den <= U64_MAX_128)
		return cc_bernoulli_exp(rng, (uint64_t) num, (uint64_t) den);
	/* exp(-g) = exp(-1)^floor(g) * exp(-(g - floor(g))) */
	while (num > den)
	{
		if (!cc_bernoulli_exp(rng, 1, 1))
			return false;
		num -= den;
	}
	return bernoulli_exp_at_most_one_wide(rng, num, den);
}

/*
 * Bernoulli(exp(-a^2/q)), a >= 0, q >= 1.  When a^2 fits 128 bits, as it
 * does but for magnitudes beyond any likely draw, exp(-a^2/q) is
 * exp(-1)^floor(a^2/q) exp(-(a^2 mod q)/q), drawn by cc_bernoulli_exp_wide
 * with subtractions only.  Else without forming a^2: with c = max(1,
 * floor(q/a)) and a = m c + r (0 <= r < c),
 *
 *		a^2/q = m (a c / q) + a r / q,
 *
 * so exp(-a^2/q) is the product of m draws of Bernoulli(exp(-a c/q)) and
 * one of Bernoulli(exp(-a r/q)), all independent: the first failure rejects.
 * a c <= max(a, q) and a r < a c fit in 128 bits.  For a < q, a c > q - a
 * and a c >= a, so a c / q >= 1/2: each of the m draws fails with
 * probability at least 1 - exp(-1/2), and the loop ends after about 2.5 of
 * them at most on average, however large m is.
 */
bool
cc_bernoulli_exp_square(cc_rng *rng, u128 a, u128 q)
{
	u128		c;
	u128		m;
	u128		r;

	if (a <= U64_MAX_128)
		return cc_bernoulli_exp_wide(rng, a * a, q);
	c = a >= q ? 1 : q / a;
	m = a / c;
	r = a % c;
	for (u128 i = 0; i < m; i++)
		if (!cc_bernoulli_exp_wide(rng, a * c, q))
			return false;
	return cc_bernoulli_exp_wide(rng, a * r, q);
}

uint64_t
cc_isqrt(uint64_t x)
{
	/* digit by digit, base 4: r^2 <= x < (r + 1)^2 */
	uint64_t	r = 0;
	uint64_t	bit = UINT64_C(1) << 62;

	while (bit > x)
		bit >>= 2;
	while (bit != 0)
	{
		if (x >= r + bit)
		{
			x -= r + bit;
			r = (r >> 1) + bit;
		}
		else
			r >>= 1;
		bit >>= 2;
	}
	return r;
}

cc_status
cc_dgauss_check(cc_scale sigma2)
{
	if (sigma2.num == 0 || sigma2.den == 0 ||
		sigma2.num > CC_DGAUSS_MAX_PART || sigma2.den > CC_DGAUSS_MAX_PART)
		return CC_SCALE_TOO_LARGE;
	return CC_OK;
}

/*
 * What a draw needs of sigma^2 = n/d, in lowest terms: a release's draws all
 * share one sigma^2, whose parts (a rho in units of 1e-9 over a sensitivity)
 * have large common factors; reduced, q mostly fits 64 bits and the draw
 * divides nothing wide.  The value is the same, so is the law.
 */
typedef struct dgauss_plan
{
	cc_scale	sigma2;			/* as the caller gave it */
	uint64_t	n;
	uint64_t	t;
	u128		dt;
	u128		q;
} dgauss_plan;

static void
dgauss_plan_of(cc_scale sigma2, dgauss_plan *plan)
{
	uint64_t	g = cc_gcd(sigma2.num, sigma2.den);
	uint64_t	n = sigma2.num / g;
	uint64_t	d = sigma2.den / g;

	plan->sigma2 = sigma2;
	plan->n = n;
	/* floor(sqrt(n/d)) = floor(sqrt(floor(n/d))) */
	plan->t = cc_isqrt(n / d) + 1;
	plan->dt = (u128) d * plan->t;
	/* 2 n d t^2 = 2 (n t)(d t), at most 2^127 (see the head of the file) */
	plan->q = 2 * ((u128) n * plan->t) * plan->dt;
}

cc_status
cc_dgauss_draw(cc_rng *rng, cc_scale sigma2, int64_t *out)
{
	/* the last sigma^2 drawn for, kept: the next draw is most likely its */
	static dgauss_plan plan;
	cc_status	status = cc_dgauss_check(sigma2);

	if (status != CC_OK)
		return status;
	if (plan.sigma2.num != sigma2.num || plan.sigma2.den != sigma2.den)
		dgauss_plan_of(sigma2, &plan);

	for (;;)
	{
		int64_t		y = cc_discrete_laplace(rng, (cc_scale) {plan.t, 1});
		uint64_t	x = y < 0 ? -(uint64_t) y : (uint64_t) y;
		u128		xdt = (u128) x * plan.dt;
		u128		a = xdt >= plan.n ? xdt - plan.n : plan.n - xdt;

		/* a^2 and q within 64 bits, nearly always: the 64-bit sampler at once */
		if (plan.q <= U64_MAX_128 && a <= UINT32_MAX ?
			cc_bernoulli_exp(rng, (uint64_t) (a * a), (uint64_t) plan.q) :
			cc_bernoulli_exp_square(rng, a, plan.q))
		{
			*out = y;
			return CC_OK;
		}
	}
}

/*
 * sigma^2 = l2_squared * 10^9 / (2 rho_units) exactly, num / den, when both
 * fit; otherwise num / den is rounded UP to a fraction whose parts fit:
 * more noise than the privacy needs, never less.  den is at most
 * 2 * 10^12 < 2^41, so only num can be too large, and then
 * d' = floor(den 2^62 / num) and n' = ceil(num d' / den) <= 2^62 give
 * n' / d' >= num / den, above it by at most 1 / d' (relatively about 2^-62
 * when d' is large; d' = 0 means sigma^2 > 2^62, too large).
 */
cc_status
cc_gaussian_sigma2(u128 l2_squared, uint64_t rho_units, cc_scale *sigma2)
{
	u128		num;
	u128		den = (u128) 2 * rho_units;
	u128		d;

	if (rho_units == 0 || l2_squared == 0 ||
		__builtin_mul_overflow(l2_squared, (u128) CC_RHO_UNITS_PER_ONE, &num) ||
		den > CC_DGAUSS_MAX_PART)
		return CC_SCALE_TOO_LARGE;
	if (num > CC_DGAUSS_MAX_PART)
	{
		/* den * 2^62 < 2^103: no overflow */
		d = den * CC_DGAUSS_MAX_PART / num;
		if (d == 0)
			return CC_SCALE_TOO_LARGE;
		num = (num * d + den - 1) / den;
		den = d;
	}
	sigma2->num = (uint64_t) num;
	sigma2->den = (uint64_t) den;
	return cc_dgauss_check(*sigma2);
}

double
cc_dgauss_variance(cc_scale sigma2)
{
	double		s2;

	if (cc_dgauss_check(sigma2) != CC_OK)
		return 0.0;
	s2 = (double) sigma2.num / (double) sigma2.den;
	if (s2 <= 16.0)
	{
		/*
		 * Sum the weights exp(-x^2 / (2 s2)) and x^2 times them over x >= 1
		 * until the terms no longer change the sums (at most about 40 terms
		 * here): the variance is 2 sum x^2 w / (1 + 2 sum w).
		 */
		double		weights = 0.0;
		double		moments = 0.0;

		for (double x = 1.0;; x += 1.0)
		{
			double		w = exp(-x * x / (2.0 * s2));

			if (w * x * x <= 1e-20 * moments || w == 0.0)
				break;
			weights += w;
			moments += w * x * x;
		}
		return 2.0 * moments / (1.0 + 2.0 * weights);
	}
	else
	{
		/*
		 * Above 16, the sum over the dual lattice (Poisson summation)
		 * converges at once: with u_k = exp(-2 pi^2 s2 k^2), the variance is
		 * s2 (1 - 8 pi^2 s2 sum k^2 u_k / (1 + 2 sum u_k)), and u_1 is below
		 * 1e-137 already.
		 */
		double		u1 = exp(-2.0 * PI_SQUARED * s2);

		return s2 * (1.0 - 8.0 * PI_SQUARED * s2 * u1 / (1.0 + 2.0 * u1));
	}
}
