/*
 * unit.h
 *		A small harness for the core's unit tests: checks that count, a
 *		seeded random source, and the statistical thresholds the tests share.
 *
 * The seeded generator exists only here: the core takes its random source as
 * a parameter, and the server passes pg_strong_random.
 */
#ifndef CC_UNIT_H
#define CC_UNIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "blt.h"
#include "mechanism.h"
#include "window.h"

extern int	unit_passed;
extern int	unit_failed;

#define CHECK(cond, ...) \
	do { \
		if (cond) \
			unit_passed++; \
		else \
		{ \
			unit_failed++; \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} while (0)

/* xoshiro256** seeded through splitmix64: reproducible runs for the tests */
typedef struct seeded_rng
{
	uint64_t	s[4];
	uint64_t	buffer[8];
	cc_rng		rng;
} seeded_rng;

extern void seeded_rng_init(seeded_rng *r, uint64_t seed);

/* Parameters with sensitivity 1 and beta 0.05; no horizon when it is 0. */
extern cc_params params_for(cc_kind kind, double epsilon, int64_t horizon);

/* The same for a zCDP kind, with rho. */
extern cc_params params_zcdp(cc_kind kind, double rho, int64_t horizon);

/* A prepared and initialized state, malloc'ed; exits if preparing fails. */
extern cc_state *new_state(cc_params *p);

/* A prepared and initialized sliding window, malloc'ed; exits if preparing fails. */
extern cc_window *unit_new_window(cc_window_params *p);

/*
 * Standard normal quantile for a two-sided false-alarm rate of 2e-9 a check.
 * The statistical checks here number 339 (30 on the samplers in
 * test_noise.c, 33 on the discrete Gaussian in test_gaussian.c, 11 for each
 * of the 18 runs of check_variance() in test_mechanisms.c, 3 for each of the
 * 11 runs of check_coverage() in test_bounds.c, 1 in test_blt.c, 23 in
 * test_continual_mean.c: 9 in the privacy audit, 2 on the median, 4 for each
 * of the 2 runs of check_noise(), 1 for each of the 4 of check_coverage();
 * 3 for each of the 7 steps of the 5 runs of check_variance() in
 * test_window.c), so together they fail by chance less often than about
 * once in 1.47 million runs (6.78e-7); the SQL suite's, at 3.7e-9 each,
 * 86 (71 in sql/statistics.sql, 12 in sql/gaussian_releases.sql, 3 bound
 * checks at beta 1e-9 in sql/window_counts.sql), add 3.19e-7; and
 * sql/outputs.sql's 3 (2 bound checks at beta 1e-12, one raw series in
 * order, below 1e-12) add under 4e-12; test_kary.c's 17, at seven standard
 * deviations or a binomial tail of 1e-12, add under 1e-10;
 * test_sparse_vector.c's 17, at 7 standard deviations (2.6e-12 each), add
 * 4.4e-11; test_blt_scaled.c's 10 checks and sql/blt_scaled.sql's 2, at 8
 * standard deviations, each below 1e-12, add under 1.2e-11; test_window.c's
 * 18 on the kary window (3 for each of the 6 steps of its 2 runs of
 * check_variance(), at 7 standard deviations) add 4.7e-11, and
 * sql/window_kary.sql's bound check at beta 1e-12 adds 1e-12, and
 * sql/window_blocks.sql's as much;
 * test_window_blocks.c's 46, at 7 standard deviations, add 1.2e-10: together,
 * under one in a million (9.99e-7).
 */
#define UNIT_Z 6.0

/* Upper 1 - 2e-9 quantile of chi-square with df degrees of freedom. */
extern double chi2_threshold(int df);

/*
 * Is the sample variance of n draws from a zero-mean law with variance var
 * and fourth cumulant kappa4 consistent with var?  Var(s^2) is about
 * (kappa4 + 2 var^2) / n.
 */
extern bool variance_consistent(double sample_var, double var, double kappa4,
								long n);

/*
 * An empirical privacy audit's check: is P_D(E) <= e^epsilon P_D'(E), given
 * x and y of n runs each in E?  x - e^eps y has mean <= 0 then; it may exceed
 * UNIT_Z of its standard deviation with probability about 1e-9.  excess: by
 * how many standard deviations it does.
 */
extern bool audit_ratio_within(long n, long x, long y, double epsilon, double *excess);

/* Variance and fourth cumulant of discrete Laplace noise of scale b. */
extern double dlap_var(double b);
extern double dlap_kappa4(double b);

/*
 * Variance of the discrete Gaussian of parameter s2, summed over its pmf
 * apart from the core (for s2 above 10^6, s2 itself: they differ by a
 * factor exp(-2 pi^2 s2) below 1e-300).
 */
extern double dgauss_var(double s2);

/* C(n, r), for n small enough that doubles are exact. */
extern double binomial(int n, int r);

/*
 * The smooth binary mechanism's tree height for a horizon, counted apart
 * from the core: the smallest even h with C(h, h/2) > horizon.
 */
extern int	smooth_binary_height(int64_t horizon);

/*
 * sum_{k<t} b_k^2 for blt's table entry of the horizon, B = A C^-1, from
 * the table's integers by running C^-1 on an impulse in long double
 * (test_blt.c).
 */
extern double blt_brute_error(int64_t horizon, int64_t t);

/*
 * A table entry's coefficients in long double, from its integers: b_0 ..
 * b_(n-1) of B = A C^-1, and c_0 .. c_(n-1), C's first column (test_blt.c).
 */
extern void blt_brute_b(const cc_blt_entry *entry, int64_t n, long double *b);
extern void blt_brute_c(const cc_blt_entry *entry, int64_t n, long double *c);

extern void test_noise(void);
extern void test_gaussian(void);
extern void test_mechanisms(void);
extern void test_honaker(void);
extern void test_smooth_binary(void);
extern void test_blt(void);
extern void test_blt_scaled(void);
extern void test_choice(void);
extern void test_bounds(void);
extern void test_accounting(void);
extern void test_privacy_region(void);
extern void test_continual_mean(void);
extern void test_streaming_composition(void);
extern void test_window(void);
extern void test_monotone(void);
extern void test_sparse_vector(void);
extern void test_kary(void);
extern void test_window_blocks(void);

#endif							/* CC_UNIT_H */
