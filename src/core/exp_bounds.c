/*
 * exp_bounds.c
 *		exp(-num/den) to any precision with proven bounds, and a uniform real
 *		compared against it.
 *
 * Numbers are fixed point: n = f + 1 64-bit words, least significant first,
 * f of fraction and one of integer part, all non-negative.  Every operation
 * is exact or rounds down for a lower bound and up for an upper bound, so
 * that the pair encloses the true value whatever the precision:
 *
 *	- exp(-x), 0 <= x <= 1, by its Taylor series, whose terms T_j = x^j / j!
 *	  decrease and alternate in sign: the sum stops at the first term whose
 *	  upper bound is at most one unit of the last place, and the terms left
 *	  out add up to less than that term (Leibniz), so one unit either way
 *	  covers them.  T_j comes from T_{j-1} by floor(T r / (den j)) below and
 *	  the ceiling above (nested floors of quotients are the floor of the
 *	  whole quotient, likewise ceilings).
 *	- exp(-num/den) = exp(-1)^k exp(-r/den), k = floor(num/den), r the
 *	  remainder; exp(-1)^k by squaring, lower bounds multiplied with floors
 *	  and upper ones with ceilings.  From k >= 45 f on, exp(-k) is below
 *	  e^-45f < 2^-64f, one unit: the bounds are 0 and one unit.
 */
#include "exp_bounds.h"

typedef unsigned __int128 u128;

/* a value of f fraction limbs, one more for a shift, the integer word, a spare */
#define WORDS (CC_EXP_MAX_LIMBS + 3)

static void
fx_set(uint64_t *x, int n, uint64_t integer)
{
	for (int i = 0; i < n - 1; i++)
		x[i] = 0;
	x[n - 1] = integer;
}

static void
fx_copy(uint64_t *x, const uint64_t *y, int n)
{
	for (int i = 0; i < n; i++)
		x[i] = y[i];
}

static void
fx_add(uint64_t *x, const uint64_t *y, int n)
{
	uint64_t	carry = 0;

	for (int i = 0; i < n; i++)
	{
		u128		s = (u128) x[i] + y[i] + carry;

		x[i] = (uint64_t) s;
		carry = (uint64_t) (s >> 64);
	}
}

/* x -= y for x >= y */
static void
fx_sub(uint64_t *x, const uint64_t *y, int n)
{
	uint64_t	borrow = 0;

	for (int i = 0; i < n; i++)
	{
		u128		d = (u128) x[i] - y[i] - borrow;

		x[i] = (uint64_t) d;
		borrow = (uint64_t) (d >> 64) & 1;
	}
}

/* x += one unit of the last place */
static void
fx_increment(uint64_t *x, int n)
{
	for (int i = 0; i < n && ++x[i] == 0; i++)
		;
}

/* x -= one unit of the last place, x >= 1 unit */
static void
fx_decrement(uint64_t *x, int n)
{
	for (int i = 0; i < n && x[i]-- == 0; i++)
		;
}

static int
fx_compare(const uint64_t *x, const uint64_t *y, int n)
{
	for (int i = n - 1; i >= 0; i--)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

static bool
fx_at_most_one_unit(const uint64_t *x, int n)
{
	for (int i = 1; i < n; i++)
		if (x[i] != 0)
			return false;
	return x[0] <= 1;
}

/* x = floor(x / d) over n words; is the division inexact? */
static bool
fx_divide(uint64_t *x, int n, uint64_t d)
{
	uint64_t	rem = 0;

	for (int i = n - 1; i >= 0; i--)
	{
		u128		cur = ((u128) rem << 64) | x[i];

		x[i] = (uint64_t) (cur / d);
		rem = (uint64_t) (cur % d);
	}
	return rem != 0;
}

/*
 * x = floor (or, up, ceil) of x r / (den j), for r <= den: the result is at
 * most x, so it fits its n words.
 */
static void
fx_scale(uint64_t *x, int n, uint64_t r, uint64_t den, uint64_t j, bool up)
{
	uint64_t	t[WORDS + 1];
	uint64_t	carry = 0;
	bool		inexact;

	for (int i = 0; i < n; i++)
	{
		u128		p = (u128) x[i] * r + carry;

		t[i] = (uint64_t) p;
		carry = (uint64_t) (p >> 64);
	}
	t[n] = carry;
	inexact = fx_divide(t, n + 1, den);
	inexact |= fx_divide(t, n + 1, j);
	fx_copy(x, t, n);
	if (up && inexact)
		fx_increment(x, n);
}

/*
 * x = floor (or, up, ceil) of x y, both of f fraction limbs and at most 2
 * (n = f + 1 words), so that the product is at most 4 and fits.
 */
static void
fx_multiply(uint64_t *x, const uint64_t *y, int f, bool up)
{
	int			n = f + 1;
	uint64_t	p[2 * WORDS] = {0};
	bool		inexact = false;

	for (int i = 0; i < n; i++)
	{
		uint64_t	carry = 0;

		for (int k = 0; k < n; k++)
		{
			u128		t = (u128) x[i] * y[k] + p[i + k] + carry;

			p[i + k] = (uint64_t) t;
			carry = (uint64_t) (t >> 64);
		}
		p[i + n] = carry;
	}
	for (int i = 0; i < f; i++)
		inexact |= p[i] != 0;
	fx_copy(x, p + f, n);
	if (up && inexact)
		fx_increment(x, n);
}

/* Bounds on exp(-r/den), r <= den, f fraction limbs. */
static void
exp_series(uint64_t r, uint64_t den, int f, uint64_t *lo, uint64_t *hi)
{
	int			n = f + 1;
	uint64_t	term_lo[WORDS];
	uint64_t	term_hi[WORDS];

	fx_set(lo, n, 1);
	fx_set(hi, n, 1);
	fx_set(term_lo, n, 1);
	fx_set(term_hi, n, 1);
	for (uint64_t j = 1;; j++)
	{
		fx_scale(term_lo, n, r, den, j, false);
		fx_scale(term_hi, n, r, den, j, true);
		if (j & 1)
		{
			fx_sub(lo, term_hi, n);
			fx_sub(hi, term_lo, n);
		}
		else
		{
			fx_add(lo, term_lo, n);
			fx_add(hi, term_hi, n);
		}
		if (fx_at_most_one_unit(term_hi, n))
			break;
	}
	/* the terms left out: less than the last one, at most one unit */
	fx_decrement(lo, n);
	fx_increment(hi, n);
}

/* Bounds on exp(-num/den), f fraction limbs. */
static void
exp_fixed(u128 num, uint64_t den, int f, uint64_t *lo, uint64_t *hi)
{
	int			n = f + 1;
	u128		k = num / den;

	if (num == 0)
	{
		fx_set(lo, n, 1);
		fx_set(hi, n, 1);
		return;
	}
	if (k >= (u128) 45 * f)
	{
		fx_set(lo, n, 0);
		fx_set(hi, n, 0);
		hi[0] = 1;
		return;
	}
	exp_series((uint64_t) (num % den), den, f, lo, hi);
	if (k > 0)
	{
		uint64_t	base_lo[WORDS];
		uint64_t	base_hi[WORDS];
		uint64_t	power_lo[WORDS];
		uint64_t	power_hi[WORDS];
		uint64_t	square[WORDS];

		exp_series(1, 1, f, base_lo, base_hi);
		fx_set(power_lo, n, 1);
		fx_set(power_hi, n, 1);
		for (;;)
		{
			if (k & 1)
			{
				fx_multiply(power_lo, base_lo, f, false);
				fx_multiply(power_hi, base_hi, f, true);
			}
			k >>= 1;
			if (k == 0)
				break;
			fx_copy(square, base_lo, n);
			fx_multiply(base_lo, square, f, false);
			fx_copy(square, base_hi, n);
			fx_multiply(base_hi, square, f, true);
		}
		fx_multiply(lo, power_lo, f, false);
		fx_multiply(hi, power_hi, f, true);
	}
}

void
cc_exp_bounds(u128 num, uint64_t den, int shift, int limbs,
			  uint64_t *lo, uint64_t *hi)
{
	uint64_t	wide_lo[WORDS];
	uint64_t	wide_hi[WORDS];
	int			right = 64 - shift;
	bool		inexact;

	if (shift == 0)
	{
		exp_fixed(num, den, limbs, lo, hi);
		return;
	}

	/*
	 * One more limb, then 2^shift: the value in units of the limbs' last
	 * place is the wide value in its own units shifted right by 64 - shift
	 * bits.  Its integer word is at most 1 and leaves nothing.
	 */
	exp_fixed(num, den, limbs + 1, wide_lo, wide_hi);
	for (int i = 0; i <= limbs; i++)
	{
		lo[i] = (wide_lo[i] >> right) | (wide_lo[i + 1] << (64 - right));
		hi[i] = (wide_hi[i] >> right) | (wide_hi[i + 1] << (64 - right));
	}
	inexact = (wide_hi[0] & ((UINT64_C(1) << right) - 1)) != 0;
	if (inexact)
		fx_increment(hi, limbs + 1);
}

bool
cc_uniform_below_exp(cc_rng *rng, uint64_t offset, u128 num, uint64_t den, int shift)
{
	uint64_t	u[CC_EXP_MAX_LIMBS];
	int			drawn = 0;

	for (int limbs = 1; limbs <= CC_EXP_MAX_LIMBS; limbs *= 2)
	{
		uint64_t	lo[WORDS];
		uint64_t	hi[WORDS];
		uint64_t	x[WORDS];

		while (drawn < limbs)
			u[drawn++] = cc_next_word(rng);
		cc_exp_bounds(num, den, shift, limbs, lo, hi);

		/*
		 * x = offset + U's first limbs words, U's first word the most
		 * significant: offset + U lies in [x, x + 1 unit).
		 */
		for (int i = 0; i < limbs; i++)
			x[limbs - 1 - i] = u[i];
		x[limbs] = offset;
		if (fx_compare(x, hi, limbs + 1) >= 0)
			return false;
		fx_increment(x, limbs + 1);
		if (fx_compare(x, lo, limbs + 1) <= 0)
			return true;
	}
	return false;
}
