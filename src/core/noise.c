/*
 * noise.c
 *		Exact discrete Laplace sampling with integer arithmetic only.
 *
 * The algorithms are those of Canonne, Kamath and Steinke, "The Discrete
 * Gaussian for Differential Privacy" (2020), section 5: Bernoulli(exp(-g))
 * by the series expansion of exp, a geometric variable split into its
 * fractional and whole parts, and a sign that rejects the negative zero.
 */
#include "noise.h"

#include <math.h>

/*
 * Bernoulli(a / b) for a <= b.  Certainty takes no randomness, Bernoulli(1/2)
 * a single bit.
 */
static inline bool
bernoulli_frac(cc_rng *rng, uint64_t a, uint64_t b)
{
	if (a == b)
		return true;
	if (b == 2 && a == 1)
		return cc_random_bit(rng);
	return cc_uniform_below(rng, b) < a;
}

/*
 * Bernoulli(exp(-a/b)) for 0 <= a <= b.  Draw A_k ~ Bernoulli(a / (b k)) for
 * k = 1, 2, ... until one fails; the first failing k is odd with probability
 * exp(-a/b).  Should b * k overflow, A_k is drawn as Bernoulli(a/b) and
 * Bernoulli(1/k) instead.  Inlined: a draw calls it three times or so, and
 * the call's register saves cost as much as its loop.
 *
 * The first two trials are one draw when 2 b^2 fits 64 bits: the first
 * failure is at k = 1 with probability (b - a) / b = 2b(b - a) / 2b^2, at
 * k = 2 with (a / b)(2b - a) / 2b = a(2b - a) / 2b^2, and later with
 * a^2 / 2b^2, so one uniform r below 2b^2 decides: r < 2b(b - a), odd;
 * r < 2b^2 - a^2, even; else on from k = 3.  The outcome is what the
 * trials are for, and an unpredictable branch costs more than the draw.
 * bernoulli_exp_from(a, b, k) goes on with the trials from k.
 */
static inline __attribute__((always_inline)) bool
bernoulli_exp_from(cc_rng *rng, uint64_t a, uint64_t b, uint64_t k)
{
	for (;;)
	{
		uint64_t	bk;
		bool		success = __builtin_mul_overflow(b, k, &bk) ?
			bernoulli_frac(rng, a, b) && bernoulli_frac(rng, 1, k) :
			bernoulli_frac(rng, a, bk);

		if (!success)
			return (k & 1) == 1;
		k++;
	}
}

static inline __attribute__((always_inline)) bool
bernoulli_exp_at_most_one(cc_rng *rng, uint64_t a, uint64_t b)
{
	if (a == 0)
		return true;			/* exp(0): no randomness needed */
	if (b <= UINT64_C(3037000499))	/* 2 b^2 < 2^64 */
	{
		uint64_t	r = cc_uniform_below(rng, 2 * b * b);

		if (r < 2 * b * (b - a))
			return true;
		if (r < 2 * b * b - a * a)
			return false;
		return bernoulli_exp_from(rng, a, b, 3);
	}
	return bernoulli_exp_from(rng, a, b, 1);
}

/*
 * Bernoulli(exp(-1)) (bernoulli_exp_at_most_one(1, 1), whose k = 1 always
 * succeeds): the first k >= 2 at which Bernoulli(1/k) fails is odd.  It is k
 * with probability (k - 1) / k!, so one uniform r below 6! = 720 settles
 * k <= 6, by the cumulative counts 360, 600, 690, 714, 719 of k = 2 .. 6,
 * and the trials go on from k = 7 only if r = 719 (probability 1/6!, that of
 * reaching k = 7).
 */
static inline bool
bernoulli_exp_minus_one(cc_rng *rng)
{
	uint64_t	r = cc_uniform_below(rng, 720);
	uint64_t	k = 7;

	if (r < 719)
		return (r >= 360 && r < 600) || (r >= 690 && r < 714);
	while (cc_uniform_below(rng, k) == 0)
		k++;
	return (k & 1) == 1;
}

bool
cc_bernoulli_exp(cc_rng *rng, uint64_t num, uint64_t den)
{
	/* exp(-g) = exp(-1)^floor(g) * exp(-(g - floor(g))) */
	while (num > den)
	{
		if (!bernoulli_exp_minus_one(rng))
			return false;
		num -= den;
	}
	return bernoulli_exp_at_most_one(rng, num, den);
}

/*
 * The fractional part of a geometric of parameter 1/t: u uniform below t,
 * kept with probability exp(-u/t) (bernoulli_exp_at_most_one), else false.
 * For t up to JOINT_MAX_T, one uniform R below 2 t^3 < 2^32 is both draws
 * of a try: its quotient by 2 t^2 is u and its remainder the r that settles
 * the first two trials, independent and uniform as R is.  The division by
 * the invariant 2 t^2 is two multiplications (Lemire, Kaser and Kurz,
 * "Faster remainder by direct computation", 2019: exact for 32-bit
 * numerators and divisors), with the last t's factor kept.
 */
#define JOINT_MAX_T 1290		/* 2 * 1290^3 < 2^32 */

static inline __attribute__((always_inline)) bool
geometric_fraction(cc_rng *rng, uint64_t t, uint64_t *u)
{
	static uint64_t joint_t = 0;
	static uint64_t joint_m;

	if (t == 1 || t > JOINT_MAX_T)
	{
		/* t = 1 takes no randomness: u = 0, kept */
		*u = cc_uniform_below(rng, t);
		return bernoulli_exp_at_most_one(rng, *u, t);
	}
	else
	{
		uint64_t	d = 2 * t * t;
		uint64_t	whole;
		uint64_t	r;

		if (t != joint_t)
		{
			joint_m = UINT64_MAX / d + 1;
			joint_t = t;
		}
		whole = cc_uniform_below(rng, d * t);
		*u = (uint64_t) (((unsigned __int128) joint_m * whole) >> 64);
		r = (uint64_t) (((unsigned __int128) (joint_m * whole) * d) >> 64);
		if (r < 2 * t * (t - *u))
			return true;		/* also every u = 0 */
		if (r < d - *u * *u)
			return false;
		return bernoulli_exp_from(rng, *u, t, 3);
	}
}

int64_t
cc_discrete_laplace(cc_rng *rng, cc_scale b)
{
	uint64_t	t = b.num;
	uint64_t	s = b.den;

	for (;;)
	{
		uint64_t	u;
		uint64_t	v = 0;
		uint64_t	narrow;
		unsigned __int128 magnitude;
		bool		negative;

		if (!geometric_fraction(rng, t, &u))
			continue;
		/* v is its whole part: the number of Bernoulli(exp(-1)) successes */
		while (bernoulli_exp_minus_one(rng))
			v++;
		/* t v + u fits 64 bits but after some 2^64 / t draws in a row */
		if (!__builtin_mul_overflow(t, v, &narrow) &&
			!__builtin_add_overflow(narrow, u, &narrow))
			magnitude = s > 1 ? narrow / s : narrow;
		else
		{
			magnitude = (unsigned __int128) t * v + u;
			if (s > 1)
				magnitude /= s;
		}
		negative = cc_random_bit(rng);
		if (negative && magnitude == 0)
			continue;			/* zero would otherwise be twice as likely */

		/*
		 * cc_scale_make() keeps t/s <= 1e15, so reaching INT64_MAX needs v
		 * above 9000, which has probability below exp(-9000).  Clamping keeps
		 * the arithmetic defined all the same.
		 */
		if (magnitude > INT64_MAX)
			magnitude = INT64_MAX;
		return negative ? -(int64_t) magnitude : (int64_t) magnitude;
	}
}

double
cc_dlap_variance(cc_scale b)
{
	double		x = (double) b.den / (double) b.num;	/* 1 / b */
	double		p = exp(-x);
	double		one_minus_p = -expm1(-x);

	return 2.0 * p / (one_minus_p * one_minus_p);
}

uint64_t
cc_gcd(uint64_t a, uint64_t b)
{
	while (b != 0)
	{
		uint64_t	r = a % b;

		a = b;
		b = r;
	}
	return a;
}

bool
cc_scale_make(uint64_t mult, uint64_t eps_num, uint64_t eps_den,
			  cc_scale *out)
{
	uint64_t	g1;
	uint64_t	g2;
	uint64_t	num;

	if (mult == 0 || eps_num == 0 || eps_den == 0)
		return false;
	/* mult / (eps_num / eps_den) = mult * eps_den / eps_num, reduced */
	g1 = cc_gcd(mult, eps_num);
	g2 = cc_gcd(eps_den, eps_num / g1);
	if (__builtin_mul_overflow(mult / g1, eps_den / g2, &num))
		return false;
	out->num = num;
	out->den = eps_num / g1 / g2;
	return cc_scale_value(*out) <= CC_MAX_SCALE;
}
