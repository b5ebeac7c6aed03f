/*
 * test_privacy_region.c
 *		The privacy curve of compositions against closed forms (randomized
 *		response, Kairouz et al.'s optimal composition, the analytic Gaussian
 *		mechanism) and against brute force computed here apart from the core
 *		(enumerating outcomes, summing pmfs, integrating densities): it must
 *		never fall below the true curve and stay close to it.  Deterministic.
 */
#include "unit.h"
#include "privacy_region.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static cc_privacy_curve *
build(const cc_charge *charges, size_t n)
{
	cc_privacy_curve *c;
	cc_region_status status = cc_privacy_curve_build(charges, n, NULL, &c);

	if (status != CC_REGION_OK)
	{
		fprintf(stderr, "build failed: %d\n", status);
		exit(2);
	}
	return c;
}

static double
Phi(double x)
{
	return 0.5 * erfc(-x / M_SQRT2);
}

/* Balle and Wang 2018, Theorem 8, as printed */
static double
analytic_gaussian(double mu, double eps)
{
	return Phi(mu / 2 - eps / mu) - exp(eps) * Phi(-mu / 2 - eps / mu);
}

static bool
close_rel(double got, double want, double rel)
{
	return fabs(got - want) <= rel * fabs(want);
}

/*
 * The exact curve of pure charges eps[0..k) by enumerating the 2^k outcomes
 * of their randomized responses.
 */
static double
enumerate_pure(const double *eps, int k, double epsilon)
{
	double		delta = 0.0;

	for (unsigned s = 0; s < (1u << k); s++)
	{
		double		p = 1.0;
		double		loss = 0.0;

		for (int i = 0; i < k; i++)
		{
			double		favour = exp(eps[i]) / (1 + exp(eps[i]));

			if (s & (1u << i))
			{
				p *= favour;
				loss += eps[i];
			}
			else
			{
				p *= 1 - favour;
				loss -= eps[i];
			}
		}
		if (loss > epsilon)
			delta += p * -expm1(epsilon - loss);
	}
	return delta;
}

/*
 * Pure charges eps[0..k) with a Gaussian of mu, by integrating
 * (P - e^epsilon Q)_+ over the Gaussian's output y (P = N(0,1), Q =
 * N(mu,1)) for each outcome of the responses: trapezoids of 1e-4.
 */
static double
integrate_mixed(const double *eps, int k, double mu, double epsilon)
{
	double		delta = 0.0;
	double		step = 1e-4;

	for (unsigned s = 0; s < (1u << k); s++)
	{
		double		p = 1.0;
		double		q = 1.0;
		double		sum = 0.0;

		for (int i = 0; i < k; i++)
		{
			double		favour = exp(eps[i]) / (1 + exp(eps[i]));

			p *= (s & (1u << i)) ? favour : 1 - favour;
			q *= (s & (1u << i)) ? 1 - favour : favour;
		}
		for (double y = -14.0 - mu; y <= 14.0 + mu; y += step)
		{
			double		f = p * exp(-0.5 * y * y) -
				exp(epsilon) * q * exp(-0.5 * (y - mu) * (y - mu));

			if (f > 0)
				sum += f;
		}
		delta += sum * step / sqrt(2 * M_PI);
	}
	return delta;
}

/* The normalizing constant of the discrete Gaussian of sigma2. */
static double
dg_z(double sigma2)
{
	double		z = 1.0;

	for (int x = 1; x <= 40 * sqrt(sigma2) + 10; x++)
		z += 2 * exp(-(double) x * x / (2 * sigma2));
	return z;
}

/*
 * Discrete Gaussians (sigma2[i], shift D[i]), i < k <= 2, and optionally
 * one randomized response of eps: sum over their outputs of (P - e^eps Q)_+,
 * P the noise, Q the noise shifted by D.
 */
static double
sum_discrete(const double *sigma2, const int *D, int k, double rr, double epsilon)
{
	int			R[2] = {0, 0};
	double		z[2] = {1, 1};
	double		delta = 0.0;

	for (int i = 0; i < k; i++)
	{
		R[i] = (int) ceil(16 * sqrt(sigma2[i])) + D[i] + 2;
		z[i] = dg_z(sigma2[i]);
	}
	for (int b = 0; b < (rr > 0 ? 2 : 1); b++)
	{
		double		favour = rr > 0 ? exp(rr) / (1 + exp(rr)) : 1.0;
		double		pb = rr > 0 ? (b ? favour : 1 - favour) : 1.0;
		double		qb = rr > 0 ? (b ? 1 - favour : favour) : 1.0;

		for (int x0 = -R[0]; x0 <= R[0]; x0++)
		{
			double		p0 = exp(-(double) x0 * x0 / (2 * sigma2[0])) / z[0];
			double		q0 = exp(-(double) (x0 - D[0]) * (x0 - D[0]) / (2 * sigma2[0])) / z[0];

			for (int x1 = (k > 1 ? -R[1] : 0); x1 <= (k > 1 ? R[1] : 0); x1++)
			{
				double		p1 = k > 1 ? exp(-(double) x1 * x1 / (2 * sigma2[1])) / z[1] : 1.0;
				double		q1 = k > 1 ? exp(-(double) (x1 - D[1]) * (x1 - D[1]) /
											 (2 * sigma2[1])) / z[1] : 1.0;
				double		f = pb * p0 * p1 - exp(epsilon) * qb * q0 * q1;

				if (f > 0)
					delta += f;
			}
		}
	}
	return delta;
}

/*
 * n equal discrete Gaussian coordinates of sigma^2 and shift 1 (a tree's
 * levels): the pmf of the sum S of their x's, by convolving here (beyond
 * 10 sigma a coordinate's tail is below 1e-23).
 */
typedef struct levels
{
	int			n;
	double		sigma2;
	int			lo;				/* S of sum[0] */
	int			width;
	double	   *sum;
} levels;

static levels
levels_pmf(int n, double sigma2)
{
	levels		lv = {n, sigma2, 0, 0, NULL};
	int			R = (int) ceil(10 * sqrt(sigma2)) + 2;
	int			len = 2 * R + 1;
	double		z = dg_z(sigma2);
	double	   *next = malloc(n * len * sizeof(double));

	lv.sum = calloc(n * len, sizeof(double));
	lv.lo = -R;
	lv.width = len;
	for (int x = -R; x <= R; x++)
		lv.sum[x + R] = exp(-(double) x * x / (2 * sigma2)) / z;
	for (int k = 1; k < n; k++)
	{
		memset(next, 0, n * len * sizeof(double));
		for (int i = 0; i < lv.width; i++)
			for (int x = -R; x <= R; x++)
				next[i + x + R] += lv.sum[i] * exp(-(double) x * x / (2 * sigma2)) / z;
		lv.width += len - 1;
		lv.lo -= R;
		memcpy(lv.sum, next, lv.width * sizeof(double));
	}
	free(next);
	return lv;
}

/* delta from the pmf of S: the loss is (n - 2 S) / (2 sigma^2). */
static double
levels_delta(const levels *lv, double epsilon)
{
	double		delta = 0.0;

	for (int i = 0; i < lv->width; i++)
	{
		double		loss = (lv->n - 2.0 * (lv->lo + i)) / (2 * lv->sigma2);

		if (loss > epsilon)
			delta += lv->sum[i] * -expm1(epsilon - loss);
	}
	return delta;
}

static void
test_empty(void)
{
	cc_privacy_curve *c = build(NULL, 0);

	CHECK(cc_privacy_curve_delta(c, 0.0) == 0.0, "no charges: delta(0) %g",
		  cc_privacy_curve_delta(c, 0.0));
	CHECK(cc_privacy_curve_epsilon(c, 1e-12) == 0.0, "no charges: epsilon %g",
		  cc_privacy_curve_epsilon(c, 1e-12));
	cc_privacy_curve_free(c);
}

/* One pure charge: randomized response's curve, 0 from epsilon on. */
static void
test_one_pure(void)
{
	const double eps[] = {1e-6, 0.1, 1.0, 3.0, 50.0};

	for (int i = 0; i < 5; i++)
	{
		cc_charge	ch = cc_charge_pure(eps[i]);
		cc_privacy_curve *c = build(&ch, 1);
		double		e1 = exp(eps[i]);

		for (int j = 0; j < 20; j++)
		{
			double		e = eps[i] * j / 20.0;
			double		want = exp(e) * expm1(eps[i] - e) / (1 + e1);

			CHECK(close_rel(cc_privacy_curve_delta(c, e), want, 1e-9),
				  "pure %g at %g: %.17g, want %.17g", eps[i], e,
				  cc_privacy_curve_delta(c, e), want);
		}
		/* eps[i] is the charge's units / 1e9 to the nearest double, either side */
		CHECK(cc_privacy_curve_delta(c, eps[i] * (1 + 4e-16)) == 0.0, "pure %g at epsilon",
			  eps[i]);
		CHECK(cc_privacy_curve_delta(c, eps[i] + 1.0) == 0.0, "pure %g above", eps[i]);
		CHECK(cc_privacy_curve_delta(c, 1e300) == 0.0, "pure %g at 1e300", eps[i]);
		CHECK(fabs(cc_privacy_curve_epsilon(c, 0.0) - eps[i]) <= 4e-16 * eps[i],
			  "pure %g: epsilon(0) %.17g", eps[i], cc_privacy_curve_epsilon(c, 0.0));
		if (eps[i] > 0.01)
		{
			/* the inverse of the line above at delta = 1e-3 */
			double		want = log(e1 - 1e-3 * (1 + e1));
			double		got = cc_privacy_curve_epsilon(c, 1e-3);

			CHECK(close_rel(got, want, 1e-9), "pure %g: epsilon(1e-3) %.17g, want %.17g",
				  eps[i], got, want);
		}
		cc_privacy_curve_free(c);
	}
}

/*
 * k charges of one epsilon against the optimal composition theorem
 * (Kairouz, Oh and Viswanath 2015, Thm 3.3 with delta = 0): at
 * (k - 2i) epsilon, delta_i = sum_{l < i} C(k, l) (e^((k-l) eps) -
 * e^((k-2i+l) eps)) / (1 + e^eps)^k, exactly.
 */
static void
test_kairouz(void)
{
	const double eps[] = {0.1, 0.5, 1.0, 2.0};

	for (int e = 0; e < 4; e++)
		for (int k = 1; k <= 12; k++)
		{
			cc_charge	ch[12];
			cc_privacy_curve *c;

			for (int i = 0; i < k; i++)
				ch[i] = cc_charge_pure(eps[e]);
			c = build(ch, k);
			for (int i = 0; i <= k / 2; i++)
			{
				double		want = 0.0;
				double		at = (k - 2 * i) * eps[e];
				double		got = cc_privacy_curve_delta(c, at);

				for (int l = 0; l < i; l++)
					want += binomial(k, l) * (exp((k - l) * eps[e]) - exp((k - 2 * i + l) * eps[e]));
				want /= pow(1 + exp(eps[e]), k);
				if (i == 0)
					CHECK(cc_privacy_curve_delta(c, at * (1 + 4e-16)) == 0.0,
						  "k = %d x %g at k eps: %g", k, eps[e], got);
				else
					CHECK(close_rel(got, want, 1e-10), "k = %d x %g at %g: %.17g, want %.17g",
						  k, eps[e], at, got, want);
			}
			cc_privacy_curve_free(c);
		}
}

/* Many equal pure charges against the binomial summed here with lgamma. */
static void
test_many_pure(void)
{
	int			n = 100000;
	double		e0 = 0.002;
	cc_charge  *ch = malloc(n * sizeof(cc_charge));
	cc_privacy_curve *c;
	double		lp = -log1p(exp(-e0));
	double		lq = -e0 - log1p(exp(-e0));

	for (int i = 0; i < n; i++)
		ch[i] = cc_charge_pure(e0);
	c = build(ch, n);
	for (double e = 0.0; e <= 2.5; e += 0.5)
	{
		double		want = 0.0;

		for (int j = 0; j <= n; j++)
		{
			double		loss = (2.0 * j - n) * e0;

			if (loss > e)
				want += exp(lgamma(n + 1.0) - lgamma(j + 1.0) - lgamma(n - j + 1.0) +
							j * lp + (n - j) * lq) * -expm1(e - loss);
		}
		/* lgamma near 1e6 carries about 1e-10 relative */
		CHECK(close_rel(cc_privacy_curve_delta(c, e), want, 1e-8),
			  "1e5 x 0.002 at %g: %.17g, want %.17g", e, cc_privacy_curve_delta(c, e), want);
	}
	cc_privacy_curve_free(c);
	free(ch);
}

/* Differing epsilons, off any common grid: never below, and close. */
static void
test_differing_pure(void)
{
	/* whole units of 1e-9, as charges hold them */
	const double eps[] = {0.314159265, 0.123456789, 0.777777777, 0.05, 1.414213562,
	0.027182818, 0.999999999, 0.2};

	for (int k = 2; k <= 8; k++)
	{
		cc_charge	ch[8];
		cc_privacy_curve *c;
		double		total = 0.0;

		for (int i = 0; i < k; i++)
		{
			ch[i] = cc_charge_pure(eps[i]);
			total += eps[i];
		}
		c = build(ch, k);
		for (int j = 0; j <= 40; j++)
		{
			double		e = total * j / 40.0;
			double		got = cc_privacy_curve_delta(c, e);
			double		want = enumerate_pure(eps, k, e);

			CHECK(got >= want * (1 - 1e-12), "%d differing at %g: %.17g below %.17g",
				  k, e, got, want);
		}
		for (double d = 1e-2; d >= 1e-12; d *= 1e-2)
		{
			double		got = cc_privacy_curve_epsilon(c, d);
			double		lo = 0.0;
			double		hi = total;

			/* the true epsilon(d), by bisection on the enumeration */
			for (int it = 0; it < 100; it++)
			{
				double		mid = 0.5 * (lo + hi);

				if (enumerate_pure(eps, k, mid) <= d)
					hi = mid;
				else
					lo = mid;
			}
			CHECK(got >= lo && got <= hi + 1e-3, "%d differing: epsilon(%g) %.12g, true %.12g",
				  k, d, got, hi);
		}
		cc_privacy_curve_free(c);
	}
}

/* One Gaussian against the analytic Gaussian mechanism, and its integral. */
static void
test_one_gaussian(void)
{
	const double rho[] = {1e-4, 1.0 / 32, 0.5, 2.0, 50.0};

	for (int i = 0; i < 5; i++)
	{
		cc_charge	ch = cc_charge_rho(rho[i]);
		cc_privacy_curve *c = build(&ch, 1);
		double		mu = sqrt(2 * rho[i]);

		for (double e = 0.0; e <= 40.0; e += 0.25)
		{
			double		want = analytic_gaussian(mu, e);
			double		got = cc_privacy_curve_delta(c, e);

			if (want < 1e-12)
				break;
			CHECK(close_rel(got, want, 1e-9) && got >= want * (1 - 1e-13),
				  "rho %g at %g: %.17g, want %.17g", rho[i], e, got, want);
		}
		CHECK(cc_privacy_curve_delta(c, 1e6) == 0.0, "rho %g at 1e6", rho[i]);
		cc_privacy_curve_free(c);
	}

	/* the formula itself: E_P[(1 - e^(eps - L))_+], L ~ N(mu^2/2, mu^2) */
	{
		cc_charge	ch = cc_charge_rho(0.5);
		cc_privacy_curve *c = build(&ch, 1);

		for (double e = 0.0; e <= 4.0; e += 1.0)
		{
			double		sum = 0.0;

			for (double z = -12.0; z <= 12.0; z += 1e-4)
			{
				double		loss = 0.5 + z;

				if (loss > e)
					sum += exp(-0.5 * z * z) * -expm1(e - loss);
			}
			sum *= 1e-4 / sqrt(2 * M_PI);
			CHECK(close_rel(cc_privacy_curve_delta(c, e), sum, 1e-6),
				  "rho 0.5 at %g: %.17g, integral %.17g", e, cc_privacy_curve_delta(c, e), sum);
		}
		cc_privacy_curve_free(c);
	}
}

/* k Gaussians of rho/k are one of rho; epsilon(delta) its inverse. */
static void
test_k_gaussians(void)
{
	for (int k = 1; k <= 64; k *= 4)
	{
		cc_charge	ch[64];
		cc_charge	one = cc_charge_rho(0.5);
		cc_privacy_curve *c;
		cc_privacy_curve *c1 = build(&one, 1);

		for (int i = 0; i < k; i++)
			ch[i] = cc_charge_rho(0.5 / k);
		c = build(ch, k);
		for (double e = 0.0; e <= 8.0; e += 0.5)
			CHECK(close_rel(cc_privacy_curve_delta(c, e), cc_privacy_curve_delta(c1, e), 1e-12),
				  "%d Gaussians at %g: %.17g against %.17g", k, e,
				  cc_privacy_curve_delta(c, e), cc_privacy_curve_delta(c1, e));
		for (double d = 1e-1; d >= 1e-12; d *= 1e-1)
		{
			double		e = cc_privacy_curve_epsilon(c, d);

			/* at the analytic curve: e the least with delta(e) <= d */
			CHECK(analytic_gaussian(1.0, e) <= d * (1 + 1e-9) &&
				  analytic_gaussian(1.0, e * (1 - 1e-9)) > d,
				  "%d Gaussians: epsilon(%g) = %.17g", k, d, e);
		}
		cc_privacy_curve_free(c);
		cc_privacy_curve_free(c1);
	}
}

/*
 * rho = 1/32 at delta = 1e-3: zCDP gives epsilon 0.960 by rho + 2 sqrt(rho
 * ln(1/delta)) and 0.688 by Canonne, Kamath and Steinke's conversion (Prop.
 * 12); the region must give no more.
 */
static void
test_zcdp_conversion(void)
{
	cc_charge	ch = cc_charge_rho(1.0 / 32);
	cc_privacy_curve *c = build(&ch, 1);
	double		e = cc_privacy_curve_epsilon(c, 1e-3);
	double		classic = 1.0 / 32 + 2 * sqrt(log(1e3) / 32);

	printf("privacy region: rho = 1/32 at delta = 1e-3: epsilon %.6f (zCDP %.6f, CKS 0.688)\n",
		   e, classic);
	CHECK(e <= 0.688 && e <= classic, "rho 1/32: epsilon(1e-3) %g", e);
	CHECK(e > 0.59 && analytic_gaussian(0.25, e) <= 1e-3, "rho 1/32: epsilon(1e-3) %.17g", e);
	cc_privacy_curve_free(c);
}

/* Pure charges off the grid with a Gaussian, against integration. */
static void
test_mixed(void)
{
	const double eps[] = {0.314159265, 0.123456789, 0.777777777};
	const double rho[] = {0.005, 0.125, 1.0};

	for (int r = 0; r < 3; r++)
		for (int k = 1; k <= 3; k++)
		{
			cc_charge	ch[4];
			cc_privacy_curve *c;
			double		mu = sqrt(2 * rho[r]);

			for (int i = 0; i < k; i++)
				ch[i] = cc_charge_pure(eps[i]);
			ch[k] = cc_charge_rho(rho[r]);
			c = build(ch, k + 1);
			for (double e = 0.0; e <= 4.0; e += 0.5)
			{
				double		want = integrate_mixed(eps, k, mu, e);
				double		got = cc_privacy_curve_delta(c, e);

				if (want < 1e-10)
					break;
				CHECK(got >= want * (1 - 1e-7), "mixed %d, rho %g at %g: %.17g below %.17g",
					  k, rho[r], e, got, want);
				CHECK(got <= want * (1 + 1e-3), "mixed %d, rho %g at %g: %.17g far above %.17g",
					  k, rho[r], e, got, want);
			}
			cc_privacy_curve_free(c);
		}
}

/*
 * Discrete Gaussians: against sums over their pmfs, for one, two different
 * ones, and one with a randomized response; sigma^2 = 1e6 alone on a grid
 * coarser than its lattice, and next to a pure charge (then its lattice is
 * finer than a grid step) through its bound by the shifted continuous
 * Gaussian.  Also: the discrete curve is above the continuous one at the
 * same rho at epsilon 0, which is why they are charged apart.
 */
static void
test_discrete_gaussian(void)
{
	struct
	{
		double		sigma2[2];
		int			D[2];
		int			k;
		double		rr;
	}			cases[] = {
		{{0.25, 0}, {1, 0}, 1, 0},
		{{21.0, 0}, {1, 0}, 1, 0},
		{{3.5, 0}, {3, 0}, 1, 0},
		{{2.0, 10.0}, {1, 2}, 2, 0},
		{{0.5, 4.0}, {1, 1}, 2, 0},
		{{6.0, 0}, {1, 0}, 1, 0.314159265},
		{{1e6, 0}, {1, 0}, 1, 0},
		{{1e6, 0}, {1, 0}, 1, 1.0},
	};

	for (int t = 0; t < (int) (sizeof(cases) / sizeof(cases[0])); t++)
	{
		cc_charge	ch[3];
		int			n = 0;
		cc_privacy_curve *c;

		for (int i = 0; i < cases[t].k; i++)
		{
			double		s2 = cases[t].sigma2[i];

			/* sigma^2 as num/den with den 4: all the cases' are exact */
			ch[n++] = cc_charge_dgauss((cc_scale) {(uint64_t) llround(s2 * 4), 4}, cases[t].D[i]);
		}
		if (cases[t].rr > 0)
			ch[n++] = cc_charge_pure(cases[t].rr);
		c = build(ch, n);
		for (double e = 0.0; e <= 12.0; e += 0.5)
		{
			double		want = sum_discrete(cases[t].sigma2, cases[t].D, cases[t].k,
											cases[t].rr, e);
			double		got = cc_privacy_curve_delta(c, e);

			CHECK(got >= want * (1 - 1e-9), "discrete case %d at %g: %.17g below %.17g",
				  t, e, got, want);
		}
		for (double d = 1e-2; d >= 1e-10; d *= 1e-2)
		{
			double		got = cc_privacy_curve_epsilon(c, d);
			double		lo = 0.0;
			double		hi = 40.0;

			for (int it = 0; it < 60; it++)
			{
				double		mid = 0.5 * (lo + hi);

				if (sum_discrete(cases[t].sigma2, cases[t].D, cases[t].k, cases[t].rr, mid) <= d)
					hi = mid;
				else
					lo = mid;
			}
			/* a grid step is 2 standard deviations of the loss / 2048 here */
			CHECK(got >= lo && got <= hi + 2e-3, "discrete case %d: epsilon(%g) %.12g, true %.12g",
				  t, d, got, hi);
		}
		if (t == 1)
			CHECK(cc_privacy_curve_delta(c, 0.0) > analytic_gaussian(1 / sqrt(21.0), 0.0) * 1.001,
				  "discrete Gaussian at 0: %.17g against continuous %.17g",
				  cc_privacy_curve_delta(c, 0.0), analytic_gaussian(1 / sqrt(21.0), 0.0));
		cc_privacy_curve_free(c);
	}

	/*
	 * A tree's 21 levels, as one group: at sigma^2 = 21 convolved 21 times on
	 * the lattice; at 1000 too long a lattice for the work allowed, so on a
	 * coarser grid.
	 */
	for (int s2 = 21; s2 <= 1000; s2 += 979)
	{
		levels		lv = levels_pmf(21, s2);
		cc_charge	ch[21];
		cc_privacy_curve *c;

		for (int i = 0; i < 21; i++)
			ch[i] = cc_charge_dgauss((cc_scale) {s2, 1}, 1);
		c = build(ch, 21);
		for (double e = 0.0; e <= 8.0; e += 0.25)
			CHECK(cc_privacy_curve_delta(c, e) >= levels_delta(&lv, e) * (1 - 1e-9),
				  "21 levels of %d at %g: %.17g below %.17g", s2, e,
				  cc_privacy_curve_delta(c, e), levels_delta(&lv, e));
		for (double d = 1e-2; d >= 1e-14; d *= 1e-3)
		{
			double		got = cc_privacy_curve_epsilon(c, d);
			double		lo = 0.0;
			double		hi = 10.0;

			for (int it = 0; it < 60; it++)
			{
				double		mid = 0.5 * (lo + hi);

				if (levels_delta(&lv, mid) <= d)
					hi = mid;
				else
					lo = mid;
			}
			CHECK(got >= lo && got <= hi + 1e-3, "21 levels of %d: epsilon(%g) %.12g, true %.12g",
				  s2, d, got, hi);
		}
		cc_privacy_curve_free(c);
		free(lv.sum);
	}

	/* too wide for a pmf: the bound, at most the continuous curve shifted */
	{
		cc_charge	ch = cc_charge_dgauss((cc_scale) {UINT64_C(1000000000000), 1}, 1000000);
		cc_privacy_curve *c = build(&ch, 1);

		for (double e = 0.0; e <= 6.0; e += 0.5)
			CHECK(cc_privacy_curve_delta(c, e) >= analytic_gaussian(1.0, e) &&
				  cc_privacy_curve_delta(c, e) <= analytic_gaussian(1.0, e - 2e-6) * (1 + 1e-9),
				  "sigma^2 1e12, sensitivity 1e6 at %g: %.17g against %.17g", e,
				  cc_privacy_curve_delta(c, e), analytic_gaussian(1.0, e));
		cc_privacy_curve_free(c);
	}
}

/* Monotone curves, and epsilon(delta) the least epsilon reaching delta. */
static void
test_monotone_inverse(void)
{
	cc_charge	ledgers[4][40];
	int			sizes[4] = {10, 1, 31, 40};
	const char *names[4] = {"10 x 0.1", "rho 0.5", "mix", "40 differing"};

	for (int i = 0; i < 10; i++)
		ledgers[0][i] = cc_charge_pure(0.1);
	ledgers[1][0] = cc_charge_rho(0.5);
	for (int i = 0; i < 10; i++)
		ledgers[2][i] = cc_charge_pure(0.1 + 0.05 * (i % 3));
	for (int i = 10; i < 30; i++)
		ledgers[2][i] = cc_charge_dgauss((cc_scale) {40, 1}, 1);
	ledgers[2][30] = cc_charge_rho(0.05);
	for (int i = 0; i < 40; i++)
		ledgers[3][i] = cc_charge_pure(0.0123456789 * (i + 1));

	for (int l = 0; l < 4; l++)
	{
		cc_privacy_curve *c = build(ledgers[l], sizes[l]);
		double		last = 2.0;
		double		last_eps = 0.0;

		for (double e = 0.0; e <= 30.0; e += 0.01)
		{
			double		d = cc_privacy_curve_delta(c, e);

			if (!(d <= last && d >= 0))
			{
				CHECK(false, "%s: delta(%g) = %.17g after %.17g", names[l], e, d, last);
				break;
			}
			last = d;
		}
		for (double d = 0.5; d >= 1e-14; d *= 0.1)
		{
			double		e = cc_privacy_curve_epsilon(c, d);

			CHECK(isfinite(e) && cc_privacy_curve_delta(c, e) <= d &&
				  (e == 0.0 || cc_privacy_curve_delta(c, e * (1 - 1e-9)) > d) &&
				  (d == 0.5 || e >= last_eps),
				  "%s: epsilon(%g) = %.17g, delta there %.17g", names[l], d, e,
				  cc_privacy_curve_delta(c, e));
			last_eps = e;
		}
		cc_privacy_curve_free(c);
	}
}

/*
 * Thousands of charges: 400 pure charges of each of 0.01, 0.02, ... 0.05
 * and 1000 Gaussians of rho 0.001, against their loss distribution on the
 * lattice of 0.01 convolved here from binomials (lgamma), each atom then
 * composed with the Gaussian of mu^2 = 2 by the analytic formula.
 */
static void
test_many_charges(void)
{
	int			n = 3000;
	int			span = 2 * 400 * 15;	/* losses -span/2 .. span/2 hundredths */
	cc_charge  *ch = malloc(n * sizeof(cc_charge));
	double	   *dist = calloc(span + 1, sizeof(double));
	double	   *next = malloc((span + 1) * sizeof(double));
	cc_privacy_curve *c;
	clock_t		start = clock();

	for (int i = 0; i < n; i++)
		ch[i] = i < 2000 ? cc_charge_pure(0.01 * (1 + i % 5)) : cc_charge_rho(0.001);
	c = build(ch, n);
	printf("privacy region: 3000 charges built in %.1f ms (sanitized build)\n",
		   (clock() - start) * 1000.0 / CLOCKS_PER_SEC);

	dist[span / 2] = 1.0;
	for (int m = 1; m <= 5; m++)
	{
		double		e0 = 0.01 * m;
		double		lp = -log1p(exp(-e0));
		double		lq = -e0 - log1p(exp(-e0));

		memset(next, 0, (span + 1) * sizeof(double));
		for (int j = 0; j <= 400; j++)
		{
			double		pj = exp(lgamma(401.0) - lgamma(j + 1.0) - lgamma(401.0 - j) +
								 j * lp + (400 - j) * lq);
			int			shift = m * (2 * j - 400);

			for (int k = 0; k <= span; k++)
				if (dist[k] > 0 && k + shift >= 0 && k + shift <= span)
					next[k + shift] += dist[k] * pj;
		}
		memcpy(dist, next, (span + 1) * sizeof(double));
	}
	for (double e = 2.0; e <= 8.0; e += 2.0)
	{
		double		want = 0.0;

		for (int k = 0; k <= span; k++)
			if (dist[k] > 0)
				want += dist[k] * analytic_gaussian(sqrt(2.0), e - 0.01 * (k - span / 2));
		CHECK(close_rel(cc_privacy_curve_delta(c, e), want, 1e-9),
			  "3000 charges at %g: %.17g, want %.17g", e, cc_privacy_curve_delta(c, e), want);
	}
	cc_privacy_curve_free(c);
	free(ch);
	free(dist);
	free(next);
}

/*
 * Coordinates of independent discrete Gaussians of sigma2 moved by v[0..k)
 * (the Q side shifted): the losses are (v^2 - 2 v x) / (2 sigma^2), integer
 * multiples of 1 / (2 sigma^2), whose distribution is convolved here
 * coordinate by coordinate on that lattice.  The pmf comes from lgamma-free
 * sums over |x| <= 14 sigma + 2: tails below 1e-40.
 */
typedef struct moves
{
	double		sigma2;
	int64_t		lo;				/* lattice index of p[0] */
	int64_t		len;
	double	   *p;
} moves;

static moves
moves_pmf(double sigma2, const int *v, int k)
{
	moves		m = {sigma2, 0, 1, calloc(1, sizeof(double))};
	int			R = (int) ceil(14 * sqrt(sigma2)) + 2;
	double		z = dg_z(sigma2);

	double	   *w = malloc((2 * R + 1) * sizeof(double));

	for (int x = -R; x <= R; x++)
		w[x + R] = exp(-(double) x * x / (2 * sigma2)) / z;
	m.p[0] = 1.0;
	for (int i = 0; i < k; i++)
	{
		int64_t		span = 4 * (int64_t) v[i] * R;
		int64_t		lo = m.lo + (int64_t) v[i] * v[i] - 2 * (int64_t) v[i] * R;
		double	   *next = calloc(m.len + span, sizeof(double));

		for (int64_t j = 0; j < m.len; j++)
			if (m.p[j] > 0)
				for (int x = -R; x <= R; x++)
				{
					int64_t		at = m.lo + j + (int64_t) v[i] * v[i] - 2 * (int64_t) v[i] * x;

					next[at - lo] += m.p[j] * w[x + R];
				}
		free(m.p);
		m.p = next;
		m.lo = lo;
		m.len += span;
	}
	free(w);
	return m;
}

static double
moves_delta(const moves *m, double epsilon)
{
	double		delta = 0.0;

	for (int64_t j = 0; j < m->len; j++)
	{
		double		loss = (double) (m->lo + j) / (2 * m->sigma2);

		if (loss > epsilon)
			delta += m->p[j] * -expm1(epsilon - loss);
	}
	return delta;
}

/* count makes one charge of many: the same curve as the charges apart */
static void
test_counts(void)
{
	cc_charge	apart[31];
	cc_charge	counted[4];
	cc_privacy_curve *a;
	cc_privacy_curve *b;
	int			same = 0;

	for (int i = 0; i < 10; i++)
		apart[i] = cc_charge_pure(0.1);
	for (int i = 10; i < 30; i++)
		apart[i] = cc_charge_dgauss((cc_scale) {40, 1}, 1);
	apart[30] = cc_charge_rho(0.05);
	counted[0] = cc_charge_pure(0.1);
	counted[0].count = 10;
	counted[1] = cc_charge_dgauss((cc_scale) {40, 1}, 1);
	counted[1].count = 20;
	counted[2] = cc_charge_rho(0.025);
	counted[2].count = 2;
	counted[3] = cc_charge_pure(5.0);
	counted[3].count = 0;		/* none */
	a = build(apart, 31);
	b = build(counted, 4);
	for (double e = 0.0; e <= 6.0; e += 0.25)
		same += cc_privacy_curve_delta(a, e) == cc_privacy_curve_delta(b, e);
	CHECK(same == 25, "counted charges: %d of 25 deltas as apart", same);
	cc_privacy_curve_free(a);
	cc_privacy_curve_free(b);
}

/*
 * Equal discrete Gaussians summed into one (see privacy_region.c): against
 * brute force over the sum's lattice for 60 coordinates of sigma^2 = 3;
 * at sigma^2 = 1 they are not summed (2 tau would be 4e-4) but convolved,
 * also against brute force; a million coordinates of 1e4 against one
 * coordinate of 1e10 moved by 1e6, their exact sum, and never below the
 * continuous Gaussian's curve.
 */
static void
test_summed_dgauss(void)
{
	static const double sigma2[] = {3.0, 1.0};

	for (int t = 0; t < 2; t++)
	{
		int			n = 60;
		int			v[60];
		moves		m;
		cc_charge	ch = cc_charge_dgauss((cc_scale) {(uint64_t) sigma2[t], 1}, 1);
		cc_privacy_curve *c;

		for (int i = 0; i < n; i++)
			v[i] = 1;
		m = moves_pmf(sigma2[t], v, n);
		ch.count = n;
		c = build(&ch, 1);
		for (double e = 0.0; e <= 12.0; e += 0.5)
			CHECK(cc_privacy_curve_delta(c, e) >= moves_delta(&m, e) * (1 - 1e-9),
				  "60 x sigma^2 %g at %g: %.17g below %.17g", sigma2[t], e,
				  cc_privacy_curve_delta(c, e), moves_delta(&m, e));
		for (double d = 1e-2; d >= 1e-12; d *= 1e-2)
		{
			double		got = cc_privacy_curve_epsilon(c, d);
			double		lo = 0.0;
			double		hi = 200.0;

			for (int it = 0; it < 60; it++)
			{
				double		mid = 0.5 * (lo + hi);

				if (moves_delta(&m, mid) <= d)
					hi = mid;
				else
					lo = mid;
			}
			CHECK(got >= lo && got <= hi + 1e-3, "60 x sigma^2 %g: epsilon(%g) %.12g, true %.12g",
				  sigma2[t], d, got, hi);
		}
		cc_privacy_curve_free(c);
		free(m.p);
	}

	{
		cc_charge	many = cc_charge_dgauss((cc_scale) {10000, 1}, 1);
		cc_charge	one = cc_charge_dgauss((cc_scale) {UINT64_C(10000000000), 1}, 1000000);
		cc_privacy_curve *a;
		cc_privacy_curve *b;
		clock_t		start = clock();
		int			close = 0;
		int			above = 0;

		many.count = 1000000;
		a = build(&many, 1);
		printf("privacy region: a million discrete Gaussians built in %.1f ms (sanitized build)\n",
			   (clock() - start) * 1000.0 / CLOCKS_PER_SEC);
		b = build(&one, 1);
		/* mu = 10: delta from 1 down to 1e-13 */
		for (double e = 0.0; e <= 80.0; e += 2.0)
		{
			double		da = cc_privacy_curve_delta(a, e);
			double		db = cc_privacy_curve_delta(b, e);

			close += fabs(da - db) <= 1e-6 * db;
			above += da >= analytic_gaussian(10.0, e);
		}
		CHECK(close == 41, "a million coordinates as their sum: %d of 41 close", close);
		CHECK(above == 41, "and above the continuous curve: %d of 41", above);
		CHECK(fabs(cc_privacy_curve_epsilon(a, 1e-9) - cc_privacy_curve_epsilon(b, 1e-9)) < 1e-6,
			  "epsilon at 1e-9: %.12g and %.12g", cc_privacy_curve_epsilon(a, 1e-9),
			  cc_privacy_curve_epsilon(b, 1e-9));
		cc_privacy_curve_free(a);
		cc_privacy_curve_free(b);
	}
}

/*
 * Bounded discrete Gaussians: coordinates moved by (2, 1) and (3, 1) at
 * sigma^2 1 and 4 against brute force; the curve is the continuous one of
 * mu^2 = 2 rho shifted by l1 (plus kappa' a coordinate at infinity).
 */
static void
test_dgauss_bound(void)
{
	static const int v[2][2] = {{2, 1}, {3, 1}};

	for (int s = 1; s <= 4; s += 3)
		for (int t = 0; t < 2; t++)
		{
			moves		m = moves_pmf(s, v[t], 2);
			cc_charge	ch;
			cc_privacy_curve *c;
			double		mu2 = (double) (v[t][0] * v[t][0] + v[t][1] * v[t][1]) / s;
			double		l1 = (double) (v[t][0] + v[t][1]) / s;
			double		kappa = 2 * exp(-2 * M_PI * M_PI * s);

			memset(&ch, 0, sizeof(ch));
			ch.kind = CC_CHARGE_DGAUSS_BOUND;
			ch.count = 1;
			ch.sigma2.num = (uint64_t) s;
			ch.sigma2.den = 1;
			ch.rho = mu2 / 2;
			ch.l1 = l1;
			ch.coordinates = 2;
			c = build(&ch, 1);
			for (double e = 0.0; e <= 12.0; e += 0.25)
			{
				double		got = cc_privacy_curve_delta(c, e);
				double		shifted = analytic_gaussian(sqrt(mu2), e - l1);

				CHECK(got >= moves_delta(&m, e) * (1 - 1e-9),
					  "moves (%d, %d) at sigma^2 %d, epsilon %g: %.17g below %.17g",
					  v[t][0], v[t][1], s, e, got, moves_delta(&m, e));
				/* or the zCDP conversion of rho, where that is less */
				CHECK(got >= fmin(shifted, cc_zcdp_delta(mu2 / 2, e)) &&
					  got <= fmin(1, 2 * kappa + shifted) * (1 + 1e-9) + 1e-300,
					  "moves (%d, %d) at sigma^2 %d, epsilon %g: %.17g, not %.17g shifted",
					  v[t][0], v[t][1], s, e, got, shifted);
			}
			cc_privacy_curve_free(c);
			free(m.p);
		}
}

/*
 * What gaussian_honaker and blt charge (cc_params_cost, cc_charge_of_cost)
 * bounds their releases: a tree of 3 levels (horizon 4) at rho 1, whose
 * levels each see one of the moves a unit of sensitivity Delta can make,
 * against brute force for every level moved alike by (Delta), (1, 1),
 * (2, 1), (1, 1, 1) as they fit, and the levels mixed.  Exact for Delta <= 2:
 * within 2e-3 in epsilon (the grid's) of the worst pattern, (Delta).
 */
static void
test_tree_records(void)
{
	static const int patterns[4][3] = {{0}, {1, 1}, {2, 1}, {1, 1, 1}};
	static const int sizes[4] = {1, 2, 2, 3};

	for (int delta = 1; delta <= 3; delta++)
	{
		cc_params	p = params_zcdp(CC_GAUSSIAN_HONAKER, 1.0, 4);
		cc_cost		cost;
		cc_charge	ch;
		cc_privacy_curve *c;
		double		s2;

		p.sensitivity = delta;
		cost = cc_params_cost(&p);
		cc_charge_of_cost(cost, 1, &ch);
		s2 = (double) cost.gauss.sigma2.num / (double) cost.gauss.sigma2.den;
		CHECK(cost.accounting == CC_ZCDP && cost.units == 1000000000 &&
			  fabs(s2 - 3.0 * delta * delta / 2) < 1e-9 &&
			  (delta <= 2 ? ch.kind == CC_CHARGE_DGAUSS && ch.count == 3 &&
			   ch.sensitivity == (uint64_t) delta :
			   ch.kind == CC_CHARGE_DGAUSS_BOUND && ch.coordinates == 9 &&
			   fabs(ch.l1 - 9 / s2) < 1e-8 && ch.rho == 1.0),
			  "gaussian_honaker, sensitivity %d: kind %d", delta, ch.kind);
		c = build(&ch, 1);
		for (int pat = 0; pat < 4; pat++)
		{
			int			v[9];
			int			k = 0;
			int			size = pat == 0 ? 1 : sizes[pat];
			int			sum = 0;
			moves		m;
			int			below = 0;
			int			exact = 0;

			for (int i = 0; i < size; i++)
				sum += pat == 0 ? delta : patterns[pat][i];
			if (sum > delta)
				continue;
			for (int level = 0; level < 3; level++)
				for (int i = 0; i < size; i++)
					v[k++] = pat == 0 ? delta : patterns[pat][i];
			m = moves_pmf(s2, v, k);
			for (double e = 0.0; e <= 10.0; e += 0.25)
			{
				double		got = cc_privacy_curve_delta(c, e);
				double		want = moves_delta(&m, e);

				below += got < want * (1 - 1e-9);
				exact += got <= moves_delta(&m, e - 2e-3);
			}
			CHECK(below == 0, "sensitivity %d, pattern %d: %d deltas below the true", delta, pat,
				  below);
			if (pat == 0 && delta <= 2)
				CHECK(exact == 41, "sensitivity %d: %d of 41 deltas exact", delta, exact);
			free(m.p);
		}
		/* and the three levels mixed: (1, 1, 1), (2, 1), (3) */
		if (delta == 3)
		{
			int			v[] = {1, 1, 1, 2, 1, 3};
			moves		m = moves_pmf(s2, v, 6);
			int			below = 0;

			for (double e = 0.0; e <= 10.0; e += 0.25)
				below += cc_privacy_curve_delta(c, e) < moves_delta(&m, e) * (1 - 1e-9);
			CHECK(below == 0, "sensitivity 3, levels mixed: %d deltas below the true", below);
			free(m.p);
		}
		cc_privacy_curve_free(c);
	}

	/* blt: a bound; the pure kinds: their epsilon; unknown noise: rho only */
	{
		cc_params	p = params_zcdp(CC_BLT, 0.5, 1000);
		cc_params	q = params_for(CC_BINARY, 0.25, 1000);
		cc_charge	ch;
		cc_cost		cost = cc_params_cost(&p);

		cc_charge_of_cost(cost, 7, &ch);
		CHECK(ch.kind == CC_CHARGE_DGAUSS_BOUND && ch.count == 7 && ch.coordinates == 1000 &&
			  ch.l1 > 0 && ch.l1 < 1e-4 && ch.rho == 0.5, "blt: kind %d, l1 %g", ch.kind, ch.l1);
		cc_charge_of_cost(cc_params_cost(&q), 3, &ch);
		CHECK(ch.kind == CC_CHARGE_PURE && ch.count == 3 && ch.epsilon_units == 250000000,
			  "binary: kind %d", ch.kind);
		cc_charge_of_cost(cc_zcdp_cost(500000000), 2, &ch);
		CHECK(ch.kind == CC_CHARGE_ZCDP && ch.count == 2 && ch.rho == 0.5, "rho only: kind %d",
			  ch.kind);
		cost = cc_params_cost(&p);
		cost.gauss.shift = 1;
		cost.gauss.coordinates = UINT64_MAX;
		cc_charge_of_cost(cost, 2, &ch);
		CHECK(ch.kind == CC_CHARGE_ZCDP && ch.count == 2, "coordinates overflowing: kind %d",
			  ch.kind);
	}
}

/*
 * Charges known by their rho only: alone, the zCDP conversion; with a pure
 * charge of 1, basic composition, above the exact curve of one 0.5-zCDP
 * mechanism (the Gaussian) with it, and below the conversion of the whole
 * (rho 1).  And the conversion of the whole caps a loose region: a bounded
 * discrete Gaussian shifted by 5.
 */
static void
test_rho_only(void)
{
	cc_charge	z;
	cc_charge	ch[2];
	cc_privacy_curve *c;
	const double one = 1.0;
	int			ok = 0;
	int			cases = 0;

	memset(&z, 0, sizeof(z));
	z.kind = CC_CHARGE_ZCDP;
	z.count = 1;
	z.rho = 0.5;
	c = build(&z, 1);
	for (double e = 0.0; e <= 10.0; e += 0.5)
	{
		cases++;
		ok += fabs(cc_privacy_curve_delta(c, e) - cc_zcdp_delta(0.5, e)) <=
			1e-9 * cc_zcdp_delta(0.5, e);
	}
	CHECK(ok == cases, "rho only: %d of %d deltas the conversion's", ok, cases);
	CHECK(fabs(cc_privacy_curve_epsilon(c, 1e-6) - cc_zcdp_epsilon(0.5, 1e-6)) < 1e-9 &&
		  isinf(cc_privacy_curve_epsilon(c, 0.0)) && cc_privacy_curve_epsilon(c, 1.0) == 0.0,
		  "rho only: epsilon %.12g", cc_privacy_curve_epsilon(c, 1e-6));
	cc_privacy_curve_free(c);

	ch[0] = cc_charge_pure(1.0);
	ch[1] = z;
	c = build(ch, 2);
	ok = cases = 0;
	for (double e = 0.5; e <= 6.0; e += 0.5)
	{
		double		got = cc_privacy_curve_delta(c, e);

		cases++;
		/* the conversions of the whole, and of the rho-only part beyond 1 */
		ok += got >= integrate_mixed(&one, 1, 1.0, e) &&
			got <= cc_zcdp_delta(1.0, e) * (1 + 1e-9) &&
			got <= cc_zcdp_delta(0.5, e - 1.0) * (1 + 1e-9);
	}
	CHECK(ok == cases, "pure 1 and rho 0.5: %d of %d deltas between the bounds", ok, cases);
	for (double d = 1e-2; d >= 1e-10; d *= 1e-2)
	{
		double		got = cc_privacy_curve_epsilon(c, d);

		CHECK(cc_privacy_curve_delta(c, got) <= d * (1 + 1e-6) &&
			  got <= cc_zcdp_epsilon(1.0, d) && got <= 1.0 + cc_zcdp_epsilon(0.5, d) + 1e-9 &&
			  integrate_mixed(&one, 1, 1.0, got) <= d,
			  "pure 1 and rho 0.5: epsilon(%g) %.12g", d, got);
	}
	cc_privacy_curve_free(c);

	memset(&z, 0, sizeof(z));
	z.kind = CC_CHARGE_DGAUSS_BOUND;
	z.count = 1;
	z.sigma2.num = 100;
	z.sigma2.den = 1;
	z.rho = 0.5;
	z.l1 = 5.0;
	z.coordinates = 10;
	c = build(&z, 1);
	ok = cases = 0;
	for (double e = 0.0; e <= 10.0; e += 0.5)
	{
		cases++;
		ok += cc_privacy_curve_delta(c, e) <= cc_zcdp_delta(0.5, e) * (1 + 1e-9);
	}
	CHECK(ok == cases, "a loose region under the conversion: %d of %d", ok, cases);
	CHECK(cc_privacy_curve_epsilon(c, 1e-6) <= cc_zcdp_epsilon(0.5, 1e-6) + 1e-9,
		  "a loose region: epsilon %.12g", cc_privacy_curve_epsilon(c, 1e-6));
	cc_privacy_curve_free(c);
}

/* Counts allocations, failing the one numbered fail_at; checks frees. */
typedef struct counting
{
	int			calls;
	int			fail_at;
	int			live;
} counting;

static void *
counting_alloc(void *ctx, size_t size)
{
	counting   *k = ctx;

	if (k->calls++ == k->fail_at)
		return NULL;
	k->live++;
	return malloc(size);
}

static void
counting_release(void *ctx, void *p)
{
	counting   *k = ctx;

	k->live--;
	free(p);
}

static void
test_refusals(void)
{
	cc_charge	bad[] = {cc_charge_rho(-1.0), cc_charge_rho(NAN), cc_charge_rho(1e9), cc_charge_dgauss((cc_scale) {0, 1}, 1),
	cc_charge_dgauss((cc_scale) {1, 0}, 1), cc_charge_dgauss((cc_scale) {1, 1}, 0), cc_charge_dgauss((cc_scale) {1, 1}, 1000001)};
	cc_charge	big[1001];
	cc_charge	mix[] = {cc_charge_pure(0.1), cc_charge_pure(0.3333333333), cc_charge_dgauss((cc_scale) {5, 2}, 1), cc_charge_dgauss((cc_scale) {1000000, 1}, 1),
	cc_charge_rho(0.1)};
	cc_privacy_curve *c;
	counting	k = {0, -1, 0};
	cc_allocator counted = {counting_alloc, counting_release, &k};
	int			total;

	for (int i = 0; i < (int) (sizeof(bad) / sizeof(bad[0])); i++)
		CHECK(cc_privacy_curve_build(&bad[i], 1, NULL, &c) == CC_REGION_BAD_CHARGE && c == NULL,
			  "bad charge %d accepted", i);
	big[0] = cc_charge_pure(1001.0);
	CHECK(cc_privacy_curve_build(big, 1, NULL, &c) == CC_REGION_TOO_LARGE && c == NULL,
		  "epsilon 1001 accepted");
	for (int i = 0; i < 1001; i++)
		big[i] = cc_charge_pure(1000.0);
	CHECK(cc_privacy_curve_build(big, 1001, NULL, &c) == CC_REGION_TOO_LARGE && c == NULL,
		  "epsilon 1001000 in all accepted");

	/* every allocation failing in turn: a clean refusal, nothing leaked */
	CHECK(cc_privacy_curve_build(mix, 5, &counted, &c) == CC_REGION_OK, "counted build");
	cc_privacy_curve_free(c);
	CHECK(k.live == 0, "counted build leaves %d blocks", k.live);
	total = k.calls;
	for (int f = 0; f < total; f++)
	{
		k = (counting)
		{
			0, f, 0
		};
		CHECK(cc_privacy_curve_build(mix, 5, &counted, &c) == CC_REGION_NO_MEMORY &&
			  c == NULL && k.live == 0, "allocation %d failing: %d blocks left", f, k.live);
	}
}

void
test_privacy_region(void)
{
	test_empty();
	test_one_pure();
	test_kairouz();
	test_many_pure();
	test_differing_pure();
	test_one_gaussian();
	test_k_gaussians();
	test_zcdp_conversion();
	test_mixed();
	test_discrete_gaussian();
	test_monotone_inverse();
	test_many_charges();
	test_counts();
	test_summed_dgauss();
	test_dgauss_bound();
	test_tree_records();
	test_rho_only();
	test_refusals();
}
