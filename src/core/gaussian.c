/*
 * gaussian.c
 *		Exact discrete Gaussian sampling with integer arithmetic only.
 *
 * The discrete Gaussian of variance parameter sigma^2 = n/d puts weight
 * w(x) = exp(-x^2 / (2 sigma^2)) on every integer x.  A draw is a table
 * lookup that one random word nearly always settles, with every weight
 * handled exactly:
 *
 * The table.  For a magnitude i >= 0 below N, bucket i holds w(i) 2^B units
 * (B = CC_DGAUSS_UNIT_BITS, 56): its first m_i = floor(lower bound) units accept i
 * outright, and each of its last c_i units, up to the floor of the upper
 * bound (exp_bounds.c), accepts i with probability w(i) 2^B - j, j the
 * unit, by comparing j + U, U uniform on [0, 1), with w(i) 2^B computed to
 * as many bits as that takes.  A bucket so accepts with probability
 * (m_i + sum_j clamp(w(i) 2^B - j, 0, 1)) / H = w(i) 2^B / H exactly, H the
 * table's total.  One uniform below H picks the unit; its guide, one of
 * 256 spans of H's units, names the bucket its span starts in, and a step
 * or two along the buckets' ends finds its own (cc_dgauss_bucket).
 *
 * The tail.  N is the least magnitude with w(N) <= 2^-B and
 * w(l + 1) <= w(l) / 2 for every l >= N: N^2 / (2 sigma^2) >= 0.7 B and
 * (2N + 1) / (2 sigma^2) >= 0.7 ensure both, 0.7 being above ln 2.  A last bucket of 2 units proposes N + k
 * with probability 2^-(k+1) (a fair coin per step) and accepts it with
 * probability w(N + k) 2^(B+k) = w(N) 2^B prod_{l<N+k} 2 w(l+1)/w(l), a
 * product of factors at most 1, each a comparison as above: w(N + k) 2^B
 * / H in all, like the buckets.  Every magnitude thus comes out with
 * probability proportional to its weight, the bounds' slack included.
 *
 * Signs.  Bucket 0 holds w(0)/2 = 1/2 (exact: 2^(B-1) sure units), and a
 * fair sign makes +i and -i of i > 0 each weigh w(i)/2 and 0 weigh 1/2:
 * the weights of the law, halved.
 *
 * Large sigma.  A table stays small while sigma^2 <= 64.  Above, with
 * M = 2^s the least power of two with sigma^2 / M^2 <= 64, the magnitude
 * is M i + j: i from the table of sigma^2 / M^2 (16 < sigma^2/M^2 <= 64,
 * weights w(M i), bucket 0 whole), j uniform below M, accepted with
 * probability exp(-((M i + j)^2 - (M i)^2) / (2 sigma^2)), a rational
 * exponent (noise.c's exact Bernoulli); it is w(M i + j) / w(M i), so the
 * magnitude's probability is proportional to w(M i + j).  About 95% of the
 * candidates are accepted.  A negative sign on magnitude 0 is redrawn, so
 * that 0 is not counted twice.
 *
 * Every step is exact but for two events of probability below 2^-2000 a draw:
 * a comparison still undecided at 2048 bits (exp_bounds.h), and a tail
 * walk past N + 2^20, both rejected.  Canonne, Kamath and Steinke's
 * sampler (2020, Algorithm 3), which contcount used before, is exact too
 * but needs about six uniforms and ten unpredictable branches a draw; this
 * one needs one uniform and, above sigma^2 = 64, two more.
 */
#include "gaussian.h"

#include <math.h>

#include "exp_bounds.h"

typedef unsigned __int128 u128;

#define PI_SQUARED 9.8696044010893586188

/* the table's largest variance parameter: larger ones are scaled down */
#define DG_TABLE_MAX_SIGMA2 64

/* the tail walk's last step, see the head of the file */
#define DG_TAIL_MAX_STEPS (1 << 20)

cc_status
cc_dgauss_check(cc_scale sigma2)
{
	if (sigma2.num == 0 || sigma2.den == 0 ||
		sigma2.num > CC_DGAUSS_MAX_PART || sigma2.den > CC_DGAUSS_MAX_PART)
		return CC_SCALE_TOO_LARGE;
	return CC_OK;
}

/* num / den >= tenths / 10 */
static bool
exponent_at_least(u128 num, uint64_t den, uint64_t tenths)
{
	return 10 * num >= (u128) tenths * den;
}

/*
 * The table's sigma^2 in lowest terms (a release's has large common
 * factors), its d' = d 4^s for the least s with n / (d 4^s) <= 64 (then
 * above 16, so d 4^s < n / 16 < 2^58), and its number of buckets N.
 */
static void
table_shape(cc_scale sigma2, int unit_bits, cc_dgauss_table *table)
{
	uint64_t	g = cc_gcd(sigma2.num, sigma2.den);
	uint64_t	n = sigma2.num / g;
	int			i;

	table->sigma2 = sigma2;
	table->unit_bits = unit_bits;
	table->n = n;
	table->d = sigma2.den / g;
	table->scale_bits = 0;
	table->table_d = table->d;
	while (table->table_d * (u128) DG_TABLE_MAX_SIGMA2 < n)
	{
		table->scale_bits++;
		table->table_d *= 4;
	}

	/*
	 * N: exp's argument N^2 d'/(2n) >= 0.7 B and (2N + 1) d'/(2n) >= 0.7 (see
	 * the head of the file); at most 72 for sigma^2 <= 64.
	 */
	for (i = 1;; i++)
		if (exponent_at_least((u128) i * i * table->table_d, 2 * n, 7 * (uint64_t) unit_bits) &&
			exponent_at_least((u128) (2 * i + 1) * table->table_d, 2 * n, 7))
			break;
	table->entries = i;
}

/* Each bucket's units: the sure ones below its weight's lower bound. */
static void
table_buckets(cc_dgauss_table *table)
{
	int			unit_bits = table->unit_bits;
	uint64_t	total = 0;
	int			i;

	for (i = 0; i < table->entries; i++)
	{
		uint64_t	lo[2];
		uint64_t	hi[2];

		if (i == 0)
		{
			/* w(0) = 1 exactly, or 1/2 when the sign covers it: all sure */
			table->sure[0] = UINT64_C(1) << (table->scale_bits == 0 ? unit_bits - 1 : unit_bits);
			total = table->sure[0];
		}
		else
		{
			/* units below floor(lo) accept at once, up to floor(hi) by comparison */
			cc_exp_bounds((u128) i * i * table->table_d, 2 * table->n, unit_bits, 1, lo, hi);
			table->sure[i] = lo[1];
			total += hi[1] + 1;
		}
		table->ends[i] = total;
	}
	/* the tail's 2 units */
	total += 2;
	table->ends[table->entries] = total;
	table->total = total;
	for (i = table->entries + 1; i < CC_DGAUSS_SEARCH; i++)
		table->ends[i] = UINT64_MAX;
}

/* The guides: 2^CC_DGAUSS_GUIDE_BITS spans of 2^guide_shift units cover total. */
static void
table_guides(cc_dgauss_table *table)
{
	int			i;
	int			k;

	table->guide_shift = 0;
	while (((table->total - 1) >> table->guide_shift) >> CC_DGAUSS_GUIDE_BITS != 0)
		table->guide_shift++;
	for (i = 0, k = 0; k < (1 << CC_DGAUSS_GUIDE_BITS); k++)
	{
		while (table->ends[i] <= ((uint64_t) k << table->guide_shift))
			i++;
		table->guide[k] = (uint8_t) i;
	}
}

cc_status
cc_dgauss_table_build(cc_scale sigma2, int unit_bits, cc_dgauss_table *table)
{
	cc_status	status = cc_dgauss_check(sigma2);

	if (status != CC_OK)
		return status;
	if (unit_bits < 2 || unit_bits > CC_DGAUSS_UNIT_BITS)
		return CC_SCALE_TOO_LARGE;
	table_shape(sigma2, unit_bits, table);
	table_buckets(table);
	table_guides(table);
	return CC_OK;
}

/*
 * A proposal from the tail bucket: N + k with probability 2^-(k+1), accepted
 * with probability w(N + k) 2^(B+k) (the head of the file); -1 if rejected.
 */
static int64_t
tail_magnitude(cc_rng *rng, const cc_dgauss_table *table)
{
	uint64_t	den = 2 * table->n;
	uint64_t	l = (uint64_t) table->entries;

	if (!cc_uniform_below_exp(rng, 0, (u128) l * l * table->table_d, den, table->unit_bits))
		return -1;
	while (cc_random_bit(rng))
	{
		if (l - (uint64_t) table->entries >= DG_TAIL_MAX_STEPS ||
			!cc_uniform_below_exp(rng, 0, (u128) (2 * l + 1) * table->table_d, den, 1))
			return -1;
		l++;
	}
	return (int64_t) l;
}

/*
 * What a unit that is not sure proposes: magnitude i, accepted with
 * probability w(i) 2^B - unit, or the tail's; -1 if rejected.
 */
static __attribute__((noinline)) int64_t
unsure_magnitude(cc_rng *rng, const cc_dgauss_table *table, int i, uint64_t unit)
{
	if (i == table->entries)
		return tail_magnitude(rng, table);
	return cc_uniform_below_exp(rng, unit, (u128) i * i * table->table_d, 2 * table->n,
								table->unit_bits) ? i : -1;
}

/* A magnitude of the table's law, or -1 for a rejected proposal. */
static inline int64_t
table_magnitude(cc_rng *rng, const cc_dgauss_table *table)
{
	uint64_t	u = cc_uniform_below(rng, table->total);
	int			i = cc_dgauss_bucket(table, u);
	uint64_t	unit = u - (i == 0 ? 0 : table->ends[i - 1]);

	if (__builtin_expect(i < table->entries && unit < table->sure[i], 1))
		return i;
	return unsure_magnitude(rng, table, i, unit);
}

/*
 * Bernoulli(w(M i + j) / w(M i)) = Bernoulli(exp(-(2 M i j + j^2) d / (2 n))).
 * The numerator is below 2^80: 2 M i j d < 2 i M^2 d < 2^59 i for the
 * table's d M^2 < 2^58 and i below 2^20 (the tail walk's limit).
 */
static bool
accept_offset(cc_rng *rng, const cc_dgauss_table *table, uint64_t i, uint64_t j)
{
	u128		num = ((((u128) 2 * i * j) << table->scale_bits) + (u128) j * j) * table->d;
	uint64_t	den = 2 * table->n;

	if (num <= UINT64_MAX)
		return cc_bernoulli_exp(rng, (uint64_t) num, den);
	/* exp(-num/den) = exp(-1)^q exp(-(num mod den)/den) */
	for (u128 q = num / den; q > 0; q--)
		if (!cc_bernoulli_exp(rng, 1, 1))
			return false;
	return cc_bernoulli_exp(rng, (uint64_t) (num % den), den);
}

int64_t
cc_dgauss_table_draw(cc_rng *rng, const cc_dgauss_table *table)
{
	for (;;)
	{
		int64_t		i = table_magnitude(rng, table);
		uint64_t	magnitude;
		bool		negative;

		if (i < 0)
			continue;
		if (table->scale_bits == 0)
			magnitude = (uint64_t) i;
		else
		{
			/* scale_bits <= 29: sigma^2 / M^2 > 16 and sigma^2 <= 2^62 */
			uint64_t	j = cc_random_bits32(rng) & ((UINT32_C(1) << table->scale_bits) - 1);

			if (!accept_offset(rng, table, (uint64_t) i, j))
				continue;
			magnitude = ((uint64_t) i << table->scale_bits) + j;
		}
		negative = cc_random_bit(rng);
		if (negative && magnitude == 0 && table->scale_bits > 0)
			continue;			/* 0 would otherwise be twice as likely */
		return negative ? -(int64_t) magnitude : (int64_t) magnitude;
	}
}

/* tables kept for the variance parameters drawn for last */
#define DG_CACHED 4

cc_status
cc_dgauss_draw(cc_rng *rng, cc_scale sigma2, int64_t *out)
{
	static cc_dgauss_table tables[DG_CACHED];
	static unsigned built = 0;
	static unsigned last = 0;
	cc_status	status = cc_dgauss_check(sigma2);

	if (status != CC_OK)
		return status;
	if (built == 0 ||
		tables[last].sigma2.num != sigma2.num || tables[last].sigma2.den != sigma2.den)
	{
		unsigned	k;

		for (k = 0; k < built && k < DG_CACHED; k++)
			if (tables[k].sigma2.num == sigma2.num && tables[k].sigma2.den == sigma2.den)
				break;
		if (k == built || k == DG_CACHED)
		{
			/* built counts on: a new table replaces the oldest */
			k = built % DG_CACHED;
			cc_dgauss_table_build(sigma2, CC_DGAUSS_UNIT_BITS, &tables[k]);
			built++;
		}
		last = k;
	}
	*out = cc_dgauss_table_draw(rng, &tables[last]);
	return CC_OK;
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
