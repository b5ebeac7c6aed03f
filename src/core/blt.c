/*
 * blt.c
 *		Closed forms for buffered linear Toeplitz matrices: the inverse, the
 *		sensitivity and the error of the factorization A = (A C^-1) C.
 *
 * Everything is a sum of geometric series.  Near theta = 1, where long
 * horizons put their slowest buffer, 1 - theta^n and its relatives lose
 * their precision when formed directly; they are formed from phi = 1 - theta
 * with log1p and expm1 instead, and the one difference that cancels (in the
 * sum weighted by n - k) is expanded in series where it is small.
 */
#include "blt.h"

#include <math.h>

void
cc_blt_of_entry(const cc_blt_entry *entry, cc_blt *blt)
{
	blt->buffers = (int) entry->buffers;
	for (int j = 0; j < blt->buffers; j++)
	{
		blt->phi[j] = ldexp((double) entry->phi[j], -62);
		blt->omega[j] = ldexp((double) entry->omega[j], -62);
	}
}

/* sum_{k<n} (1 - phi)^k */
double
cc_geometric_sum(double phi, double n)
{
	if (phi == 0.0)
		return n;
	return -expm1(n * log1p(-phi)) / phi;
}

/* phi + log1p(-phi) = -(phi^2/2 + phi^3/3 + ...), for 0 <= phi < 1 */
static double
log1p_rest(double phi)
{
	double		sum = 0.0;
	double		power = phi;

	if (phi >= 0.25)
		return phi + log1p(-phi);
	for (int m = 2; m < 80; m++)
	{
		power *= phi;
		sum += power / m;
		if (power / m <= 1e-18 * sum)
			break;
	}
	return -sum;
}

/* expm1(y) - y = y^2/2! + y^3/3! + ... */
static double
expm1_rest(double y)
{
	double		sum = 0.0;
	double		term = y;

	if (fabs(y) >= 0.5)
		return expm1(y) - y;
	for (int m = 2; m < 40; m++)
	{
		term *= y / m;
		sum += term;
		if (fabs(term) <= 1e-18 * fabs(sum))
			break;
	}
	return sum;
}

/*
 * sum_{k<n} (n - k) (1 - phi)^k = sum_{t=1}^{n} cc_geometric_sum(phi, t).
 * With G = cc_geometric_sum(phi, n) and L = log1p(-phi) it is
 * (n - G) / phi + G, and n - G = (n (phi + L) + (expm1(n L) - n L)) / phi,
 * where the two parts are formed without cancellation above.
 */
static double
weighted_geometric_sum(double phi, double n)
{
	double		log_theta;

	if (phi == 0.0)
		return n * (n + 1.0) / 2.0;
	log_theta = log1p(-phi);
	return (n * log1p_rest(phi) + expm1_rest(n * log_theta)) / (phi * phi) +
		cc_geometric_sum(phi, n);
}

/* 1 - (1 - a)(1 - b), without rounding 1 - a first */
static double
pair_phi(double a, double b)
{
	return a + b - a * b;
}

/*
 * f(psi) = 1 + sum_j omega_j / (phi_j - psi): C^-1's decays are the theta'
 * with C(1 / theta') = 0, that is 1 - theta' = psi with f(psi) = 0.
 */
static double
inverse_equation(const cc_blt *blt, double psi)
{
	double		f = 1.0;

	for (int j = 0; j < blt->buffers; j++)
		f += blt->omega[j] / (blt->phi[j] - psi);
	return f;
}

/*
 * The root of f in (lo, hi), where f rises from -infinity (or below zero) to
 * +infinity (or above zero): bisection down to adjacent doubles.
 */
static double
bisect(const cc_blt *blt, double lo, double hi)
{
	for (;;)
	{
		double		mid = lo + (hi - lo) / 2.0;

		if (mid <= lo || mid >= hi)
			return mid;
		if (inverse_equation(blt, mid) < 0.0)
			lo = mid;
		else
			hi = mid;
	}
}

/*
 * Is the BLT's C valid (each theta_j in (0, 1), each omega_j positive and
 * finite, distinct thetas, f(1) > 0)?  Its thetas largest first into
 * sorted, and C(1) into *c1.
 */
static bool
blt_sorted_valid(const cc_blt *blt, double *sorted, double *c1)
{
	int			d = blt->buffers;
	double		pillutla = 0.0;

	*c1 = 1.0;
	if (d < 1 || d > CC_BLT_MAX_BUFFERS)
		return false;
	for (int j = 0; j < d; j++)
	{
		int			i = j;

		if (!(blt->phi[j] > 0.0 && blt->phi[j] < 1.0 && blt->omega[j] > 0.0 &&
			  isfinite(blt->omega[j])))
			return false;
		*c1 += blt->omega[j] / blt->phi[j];
		pillutla += blt->omega[j] / (1.0 - blt->phi[j]);
		/* insertion, largest phi first */
		while (i > 0 && sorted[i - 1] < blt->phi[j])
		{
			sorted[i] = sorted[i - 1];
			i--;
		}
		sorted[i] = blt->phi[j];
	}
	/* f(1) = 1 - sum omega_j / theta_j must be positive: theta' > 0 */
	if (!(pillutla < 1.0))
		return false;
	for (int j = 1; j < d; j++)
		if (!(sorted[j] < sorted[j - 1]))
			return false;
	return true;
}

/*
 * C^-1 = 1 + sum_i w_i x / (1 - theta'_i x) with the residues
 * w_i = prod_j (theta'_i - theta_j) / prod_{j != i} (theta'_i - theta'_j),
 * negative; the prefix sums of its coefficients are B's,
 * b_k = 1 + sum_i w_i (1 - theta'_i^k) / phi'_i, so alpha_i = -w_i / phi'_i
 * and beta = 1 - sum_i alpha_i, which is 1 / C(1).  False unless every
 * alpha_i is positive; *sum gains the alphas, to check beta against.
 */
static bool
noise_residues(const cc_blt *blt, cc_blt_noise *noise, double *sum)
{
	int			d = blt->buffers;

	for (int i = 0; i < d; i++)
	{
		double		w = 1.0;

		for (int j = 0; j < d; j++)
		{
			w *= blt->phi[j] - noise->phi[i];
			if (j != i)
				w /= noise->phi[j] - noise->phi[i];
		}
		noise->alpha[i] = -w / noise->phi[i];
		noise->log_theta[i] = log1p(-noise->phi[i]);
		if (!(noise->alpha[i] > 0.0) || !(noise->phi[i] > 0.0 && noise->phi[i] < 1.0))
			return false;
		*sum += noise->alpha[i];
	}
	return true;
}

/* The sums over pairs of B's geometric terms that the variances take. */
static void
noise_pairs(cc_blt_noise *noise)
{
	int			d = noise->buffers;

	for (int j = 0; j < d; j++)
	{
		noise->linear[j] = noise->alpha[j] / noise->phi[j];
		noise->pair_row[j] = 0.0;
		for (int l = j; l < d; l++)
		{
			noise->pair[j][l] = (j == l ? 1.0 : 2.0) * noise->alpha[j] * noise->alpha[l] /
				pair_phi(noise->phi[j], noise->phi[l]);
			noise->pair_row[j] += noise->pair[j][l];
		}
	}
}

bool
cc_blt_noise_of(const cc_blt *blt, cc_blt_noise *noise)
{
	int			d = blt->buffers;
	double		sorted[CC_BLT_MAX_BUFFERS];
	double		c1;
	double		b0;

	if (!blt_sorted_valid(blt, sorted, &c1))
		return false;

	/*
	 * f increases on each interval between its poles phi_j, from -infinity
	 * just right of a pole to +infinity just left of the next one: a root
	 * between each two neighbours, and one between the largest and 1, where
	 * f(1) > 0.  That is d roots, all real, in (0, 1).
	 */
	noise->buffers = d;
	noise->phi[0] = bisect(blt, sorted[0], 1.0);
	for (int j = 1; j < d; j++)
		noise->phi[j] = bisect(blt, sorted[j], sorted[j - 1]);

	b0 = 1.0 / c1;
	noise->beta = b0;
	if (!noise_residues(blt, noise, &b0))
		return false;
	noise_pairs(noise);
	return fabs(b0 - 1.0) <= 1e-9;
}

double
cc_blt_column_norm2(const cc_blt *blt, double n)
{
	double		sum = 1.0;

	for (int j = 0; j < blt->buffers; j++)
		for (int l = 0; l < blt->buffers; l++)
			sum += blt->omega[j] * blt->omega[l] *
				cc_geometric_sum(pair_phi(blt->phi[j], blt->phi[l]), n - 1.0);
	return sum;
}

/*
 * b_k^2 = beta^2 + 2 beta sum_j alpha_j theta_j^k
 *		   + sum_{j,l} alpha_j alpha_l (theta_j theta_l)^k,
 * summed over k < t term by term.  With p_j = theta_j^t and e_j = 1 - p_j,
 * 1 - p_j p_l = e_j + p_j e_l: one expm1 a buffer (cc_blt_decays), none a
 * pair.  p_j is taken as 1 - e_j, which is off by an ulp of 1 at most: where
 * p_j is tiny e_j is near 1 and that ulp is lost in e_j + p_j e_l.
 */
void
cc_blt_decays(const cc_blt_noise *noise, double t, double *e)
{
	for (int j = 0; j < noise->buffers; j++)
	{
		double		tl = t * noise->log_theta[j];

		/* below -38, theta_j^t < 2^-54 and 1 - theta_j^t rounds to 1 */
		e[j] = tl < -38.0 ? 1.0 : -expm1(tl);
	}
}

/*
 * The pairs' sum_{l>=j} pair_jl (e_j + p_j e_l) is taken row by row as
 * pair_row_j e_j + p_j sum_{l>=j} pair_jl e_l: positive terms still, and
 * the rows are independent sums where one running sum made a read wait on
 * each addition in turn.
 */
double
cc_blt_step_error_of(const cc_blt_noise *noise, double t, const double *e,
					 double *coefficients)
{
	double		linear = 0.0;
	double		pairs = 0.0;

	for (int j = 0; j < noise->buffers; j++)
	{
		double		row = 0.0;

		linear += noise->linear[j] * e[j];
		for (int l = j; l < noise->buffers; l++)
			row += noise->pair[j][l] * e[l];
		pairs += noise->pair_row[j] * e[j] + (1.0 - e[j]) * row;
	}
	if (coefficients)
		*coefficients = t * noise->beta + linear;
	return t * noise->beta * noise->beta + 2.0 * noise->beta * linear + pairs;
}

double
cc_blt_step_error(const cc_blt_noise *noise, double t, double *coefficients)
{
	double		e[CC_BLT_MAX_BUFFERS];

	cc_blt_decays(noise, t, e);
	return cc_blt_step_error_of(noise, t, e, coefficients);
}

double
cc_blt_error_sum(const cc_blt_noise *noise, double n)
{
	double		sum = noise->beta * noise->beta * n * (n + 1.0) / 2.0;

	for (int j = 0; j < noise->buffers; j++)
	{
		sum += 2.0 * noise->beta * noise->alpha[j] *
			weighted_geometric_sum(noise->phi[j], n);
		for (int l = 0; l < noise->buffers; l++)
			sum += noise->alpha[j] * noise->alpha[l] *
				weighted_geometric_sum(pair_phi(noise->phi[j], noise->phi[l]), n);
	}
	return sum;
}
