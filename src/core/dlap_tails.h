/*
 * dlap_tails.h
 *		Tails of sums of discrete Laplace draws (dlap_tails.c), for the
 *		bound (bounds.c, whose head holds the proofs).
 */
#ifndef CC_DLAP_TAILS_H
#define CC_DLAP_TAILS_H

#include "mechanism_int.h"

/* Every ln of a tail is raised by this before it is compared (bounds.c). */
#define LOG_SAFETY 1e-9
/* The most draws of one scale whose sum's tail is exact. */
#define EXACT_DRAWS 256
/* above it p^2 = e^(-2/b) may underflow: no exact part */
#define EXACT_MAX_INV_B 300.0

/*
 * Exact sums of discrete Laplace draws (1. in the head of bounds.c).
 */
typedef struct dl_sum
{
	int			n;
	double		inv_b;
	double		p;
	double		q;
	double		log_q;
	double		log_gamma[EXACT_DRAWS + 1]; /* ln gamma_i, i = 1 .. n */
	double		suffix[EXACT_DRAWS];	/* Gamma_j = sum_(i>j) gamma_i */
	double		zero;			/* P(S = 0) */
} dl_sum;

extern double cc_log_add(double a, double b);
extern bool cc_dl_sum_init(dl_sum *s, int64_t n, double inv_b);
extern double cc_dl_sum_log_tail(const dl_sum *s, double m);
extern double cc_log_min_single(double inv_b, double mu, double log_k);
extern double cc_log_min_sum(const dl_sum *s, double mu, double log_k);
extern double cc_pieces_log_mgf(const cc_piece *pieces, int n, double lambda);
extern double cc_chernoff_log_tail(const cc_piece *pieces, int n, double x);
extern double cc_chernoff_quantile(const cc_piece *pieces, int n, double c, double *best_lambda);

#endif							/* CC_DLAP_TAILS_H */
