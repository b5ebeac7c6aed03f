/*
 * blt.h
 *		Buffered linear Toeplitz (BLT) matrices: the closed forms that the
 *		mechanism blt (mech_blt.c) and the search for its parameters
 *		(report/blt_table.c) share.
 *
 * Pure C: no PostgreSQL headers, and no randomness: everything here is a
 * public function of public parameters, in doubles.
 *
 * A BLT with d buffers is the lower-triangular Toeplitz matrix C whose
 * coefficients are c_0 = 1 and c_k = sum_j omega_j theta_j^(k-1) for k >= 1
 * (Dvijotham, McMahan, Pillutla, Steinke and Thakurta 2024, "Efficient and
 * near-optimal noise generation for streaming differential privacy";
 * McMahan, Pillutla et al. 2024-2025).  Multiplying by C or C^-1 takes d
 * buffers, each decayed by its theta_j at every step.  Here theta_j is held
 * as phi_j = 1 - theta_j, which keeps its precision near 1, where the decays
 * of long horizons are.
 *
 * The prefix-sum matrix A factors as A = B C with B = A C^-1: the mechanism
 * releases A x + B z, z the noise.  For the BLTs used here (0 < theta_j < 1,
 * omega_j > 0, sum_j omega_j / theta_j < 1) C^-1 is a BLT too, with d real
 * decays in (0, 1) and negative scales, and B's coefficients are
 *		b_k = beta + sum_j alpha_j (1 - phi'_j)^k,  beta > 0, alpha_j > 0,
 * a sum of positive terms (b_0 = 1 and b_k decreases to beta = 1 / C(1)).
 * cc_blt_noise holds that form: every sum below is then of positive terms,
 * without cancellation.
 */
#ifndef CC_BLT_H
#define CC_BLT_H

#include <stdbool.h>
#include <stdint.h>

#define CC_BLT_MAX_BUFFERS 8

typedef struct cc_blt
{
	int			buffers;
	double		phi[CC_BLT_MAX_BUFFERS];	/* 1 - theta_j, in (0, 1) */
	double		omega[CC_BLT_MAX_BUFFERS];	/* > 0 */
} cc_blt;

/* B = A C^-1: b_k = beta + sum_j alpha_j (1 - phi_j)^k */
typedef struct cc_blt_noise
{
	int			buffers;
	double		phi[CC_BLT_MAX_BUFFERS];
	double		alpha[CC_BLT_MAX_BUFFERS];
	double		beta;
	double		log_theta[CC_BLT_MAX_BUFFERS];	/* log1p(-phi_j) */
	/*
	 * cc_blt_step_error's constant factors, so that a read divides nothing:
	 * alpha_j / phi_j, and for l >= j, (2 - [j = l]) alpha_j alpha_l / (1 -
	 * theta_j theta_l)
	 */
	double		linear[CC_BLT_MAX_BUFFERS];
	double		pair[CC_BLT_MAX_BUFFERS][CC_BLT_MAX_BUFFERS];
	double		pair_row[CC_BLT_MAX_BUFFERS];	/* sum_{l>=j} pair[j][l] */
} cc_blt_noise;

/*
 * B's coefficients for C, or false if C is not of the kind above (a decay
 * outside (0, 1), a scale not positive, sum omega_j / theta_j >= 1, or a
 * numerical failure: b_0 must come out 1 within 1e-9).
 */
extern bool cc_blt_noise_of(const cc_blt *blt, cc_blt_noise *noise);

/*
 * The squared L2 norm of C's first column over n rows, 1 + sum_{k=1}^{n-1}
 * c_k^2: the largest of its columns, since the others are its truncations.
 * Every term is positive, so the relative error is a few units in the last
 * place; the caller that needs an upper bound inflates it.
 */
extern double cc_blt_column_norm2(const cc_blt *blt, double n);

/*
 * sum_{k<t} b_k^2: the variance of (B z)_t for noise of variance 1; and
 * into *sum, unless NULL, sum_{k<t} b_k.
 */
extern double cc_blt_step_error(const cc_blt_noise *noise, double t, double *sum);

/*
 * Its two halves: e_j = 1 - theta_j^t for each buffer, and the sums from
 * them, for a caller that has e_j by other means (mech_blt.c).
 */
extern void cc_blt_decays(const cc_blt_noise *noise, double t, double *e);
extern double cc_blt_step_error_of(const cc_blt_noise *noise, double t, const double *e,
								   double *sum);

/* sum_{t=1}^{n} cc_blt_step_error(t): n times the mean variance over n steps. */
extern double cc_blt_error_sum(const cc_blt_noise *noise, double n);

/*
 * The BLTs the mechanisms use, exactly: phi_j and omega_j are the integers
 * here divided by 2^62.  Entry k serves the horizons (2^(k-1), 2^k].  blt's
 * table, of at most CC_BLT_BUFFERS buffers made for the worst step, is
 * written by report/blt_table.c into blt_table.c; blt_scaled's, of at most
 * CC_BLT_SCALED_BUFFERS made for the mean under its scaling, by
 * report/blt_scaled_table.c into blt_scaled_table.c.
 */
#define CC_BLT_BUFFERS 4
#define CC_BLT_SCALED_BUFFERS 8
#define CC_BLT_ENTRIES 41
#define CC_BLT_ONE (UINT64_C(1) << 62)

typedef struct cc_blt_entry
{
	int64_t		buffers;		/* 1 .. the table's most; the rest zero */
	uint64_t	phi[CC_BLT_SCALED_BUFFERS];
	uint64_t	omega[CC_BLT_SCALED_BUFFERS];
} cc_blt_entry;

extern const cc_blt_entry cc_blt_table[CC_BLT_ENTRIES];
extern const cc_blt_entry cc_blt_scaled_table[CC_BLT_ENTRIES];

/* The entry as doubles (within a unit in the last place). */
extern void cc_blt_of_entry(const cc_blt_entry *entry, cc_blt *blt);

/* sum_{k<n} (1 - phi)^k, for 0 <= phi < 1 and n >= 0 */
extern double cc_geometric_sum(double phi, double n);

#endif							/* CC_BLT_H */
