/*
 * unit.c
 *		Entry point and shared helpers of the core's unit tests.
 */
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int			unit_passed;
int			unit_failed;

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t	z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t
xoshiro_next(uint64_t *s)
{
	uint64_t	result = rotl(s[1] * 5, 7) * 9;
	uint64_t	t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

static void
xoshiro_refill(cc_rng *rng)
{
	seeded_rng *r = rng->ctx;

	for (int i = 0; i < 8; i++)
		r->buffer[i] = xoshiro_next(r->s);
	rng->next = 0;
	rng->count = 8;
}

void
seeded_rng_init(seeded_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
	r->rng = (cc_rng)
	{
		.words = r->buffer,.refill = xoshiro_refill,.ctx = r
	};
}

cc_params
params_for(cc_kind kind, double epsilon, int64_t horizon)
{
	cc_params	p;

	memset(&p, 0, sizeof(p));
	p.kind = kind;
	cc_epsilon_units(epsilon, &p.epsilon_units);
	p.has_horizon = horizon > 0;
	p.horizon = horizon;
	p.sensitivity = 1;
	p.beta = 0.05;
	return p;
}

cc_params
params_zcdp(cc_kind kind, double rho, int64_t horizon)
{
	cc_params	p = params_for(kind, 1.0, horizon);

	p.privacy = CC_ZCDP;
	cc_rho_units(rho, &p.rho_units);
	return p;
}

cc_state *
new_state(cc_params *p)
{
	cc_status	status = cc_params_prepare(p);
	cc_state   *s;

	if (status != CC_OK)
	{
		fprintf(stderr, "prepare failed: %d\n", status);
		exit(2);
	}
	s = malloc(cc_state_size(p));
	cc_state_init(s, p);
	return s;
}

double
chi2_threshold(int df)
{
	/* Wilson-Hilferty, with the one-sided 2e-9 normal quantile */
	double		k = df;
	double		z = 5.88;
	double		c = 1.0 - 2.0 / (9.0 * k) + z * sqrt(2.0 / (9.0 * k));

	return k * c * c * c;
}

bool
variance_consistent(double sample_var, double var, double kappa4, long n)
{
	double		sd = sqrt((kappa4 + 2.0 * var * var) / (double) n);

	return fabs(sample_var - var) <= UNIT_Z * sd;
}

bool
audit_ratio_within(long n, long x, long y, double epsilon, double *excess)
{
	double		w = exp(epsilon);
	double		sd = sqrt(x * (1.0 - x / (double) n) + w * w * y * (1.0 - y / (double) n));

	*excess = (x - w * y) / (sd > 0.0 ? sd : 1.0);
	return x - w * y <= UNIT_Z * sd;
}

double
dlap_var(double b)
{
	double		p = exp(-1.0 / b);
	double		q = -expm1(-1.0 / b);

	return 2.0 * p / (q * q);
}

double
dlap_kappa4(double b)
{
	/* the difference of two geometrics: cumulants of each, doubled */
	double		p = exp(-1.0 / b);
	double		q = -expm1(-1.0 / b);

	return 2.0 * p * (1.0 + 4.0 * p + p * p) / (q * q * q * q);
}

double
dgauss_var(double s2)
{
	long double weights = 0.0L;
	long double moments = 0.0L;

	if (s2 > 1e6)
		return s2;
	/* beyond 40 sigma the weights are below e^-800 of the total */
	for (long x = 1; x <= (long) (40.0 * sqrt(s2)) + 40; x++)
	{
		long double w = expl(-(long double) x * x / (2.0L * s2));

		weights += w;
		moments += w * x * x;
	}
	return (double) (2.0L * moments / (1.0L + 2.0L * weights));
}

double
binomial(int n, int r)
{
	double		c = 1.0;

	for (int i = 1; i <= r; i++)
		c = c * (n - r + i) / i;
	return c;
}

int
smooth_binary_height(int64_t horizon)
{
	int			h = 2;

	while (binomial(h, h / 2) <= (double) horizon)
		h += 2;
	return h;
}

int
main(void)
{
	test_noise();
	test_gaussian();
	test_mechanisms();
	test_honaker();
	test_smooth_binary();
	test_blt();
	test_blt_scaled();
	test_choice();
	test_bounds();
	test_accounting();
	test_privacy_region();
	test_continual_mean();
	test_streaming_composition();
	test_window();
	test_monotone();
	test_sparse_vector();
	test_kary();
	test_window_blocks();
	printf("%d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed == 0 ? 0 : 1;
}
