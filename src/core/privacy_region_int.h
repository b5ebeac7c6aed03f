/*
 * privacy_region_int.h
 *		What the files of the privacy region share: its limits, the grid's
 *		arrays, the groups of charges, the curve's layout and its builder.
 *		Only privacy_region.c and region_*.c include it, after
 *		privacy_region.h.
 *
 * privacy_region.c holds the arguments (why each step keeps an upper
 * bound), the charges and the composition that builds a curve; region_grid.c
 * the grid, region_pure.c and region_dgauss.c each kind of charge's losses,
 * region_read.c the reading of a built curve.
 */
#ifndef CC_PRIVACY_REGION_INT_H
#define CC_PRIVACY_REGION_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"				/* cc_allocator */

/* privacy_region.h's, which is above this header: see README.md */
typedef struct cc_privacy_curve cc_privacy_curve;

#define UNIT 1e-9				/* an epsilon unit */
#define MAX_EPSILON_UNITS UINT64_C(1000000000000)
#define MAX_TOTAL_UNITS UINT64_C(1000000000000000)
#define MAX_PURE_COUNT (UINT64_C(1) << 32)
#define MAX_MU2 1e8
#define MAX_DG_SENSITIVITY UINT64_C(1000000)
#define MAX_DG_PART (UINT64_C(1) << 62)

/* Tails are cut where masses fall below this fraction of the mode. */
#define CUT 1e-50
/* After a convolution, each tail of at most this much mass is cut. */
#define TRIM 1e-45
/*
 * Grid points per standard deviation of the discrete part's loss: as many
 * as the convolutions' work allows (each costs the grid's length, about 30
 * standard deviations, times the atoms of a group) within these bounds;
 * the chords' error on epsilon falls as h^2 (2.8e-4 for 1000 different
 * epsilons at 2048, 4.5e-3 at 512; at most 3.3e-4 over 3000 random small
 * ledgers at 2048) ...
 */
#define MIN_POINTS_PER_SD 256.0
#define MAX_POINTS_PER_SD 2048.0
#define GRID_WORK 3e8
/* ... and at most this many over the sum of the charges' spans. */
#define MAX_POINTS (INT64_C(1) << 20)
/* Multiply-adds a discrete Gaussian group may spend on exact convolutions. */
#define GROUP_WORK 4e7
/* A group's sum is taken as one discrete Gaussian when 2 tau is below this. */
#define TAU_NEGLIGIBLE 1e-9
/* Splits tried by basic composition with charges known by their rho only. */
#define SPLITS 24
#define SPLIT_REFINE 16

/*
 * Floating point: every mass is a sum of products of positive numbers, so
 * its relative error is at most EPS_U (above 2^-53) times the operations
 * along the way, counted into rel as they happen; REL_ROUNDING adds room for
 * the few operations of each term of delta.
 */
#define EPS_U 1.2e-16
#define REL_ROUNDING 1e-12
/* Upward nudge of a stored loss: above its few roundings. */
#define LOSS_NUDGE 1e-15

#define SQRT_2PI 2.50662827463100050242
#define LOG_SQRT_2PI 0.91893853320467274178
#define PI_SQUARED 9.8696044010893586188

/* P-masses of a loss on the grid: sparse, indices ascending and distinct. */
typedef struct sparse
{
	int64_t		n;
	int64_t    *idx;
	double	   *mass;
} sparse;

/* P-masses of a loss at (lo + i) * h for i < len; also a lattice of x. */
typedef struct dense
{
	int64_t		lo;
	int64_t		len;
	double	   *p;
} dense;

/* n randomized responses of one epsilon: masses of j = lo .. hi favouring P. */
typedef struct pure_group
{
	uint64_t	units;
	int64_t		n;
	int64_t		lo;
	int64_t		hi;
	double	   *mass;
} pure_group;

typedef enum dg_mode
{
	DG_LATTICE,					/* n-fold on its lattice, then on the grid */
	DG_COARSE,					/* on a coarser grid, n-fold there */
	DG_BOUND					/* the shifted continuous bound */
} dg_mode;

/* n discrete Gaussian charges of one sigma^2 and sensitivity. */
typedef struct dg_group
{
	uint64_t	num;			/* sigma^2 = num/den, reduced */
	uint64_t	den;
	uint64_t	sensitivity;
	int64_t		n;
	double		sigma2;
	double		D;				/* the move; both n D and n sigma^2 once summed */
	double		step;			/* s = D / sigma^2 */
	double		offset;			/* D^2 / (2 sigma^2) */
	dense		x;				/* pmf of x over [-R, R], once computed */
	dg_mode		mode;
	int64_t		coarse;			/* DG_COARSE: its grid's step in steps */
} dg_group;

struct cc_privacy_curve
{
	cc_allocator allocator;
	double		rho_all;		/* the whole composition is rho_all-zCDP */
	double		rho_z;			/* CC_CHARGE_ZCDP charges, by basic
								 * composition with the rest: */
	double		scale;			/* every mass is this many times what it
								 * says (summed discrete Gaussians) */
	double		mu2;			/* Gaussian part */
	double		p_inf;			/* mass at +infinity */
	double		max_loss;		/* no loss exceeds it; INFINITY if unknown */
	double		rel;			/* bound on the masses' relative error */
	int64_t		natoms;
	double	   *loss;			/* ascending */
	double	   *mass;
	double	   *below;			/* below[k] = sum of mass[j] for j < k */
};

typedef struct builder
{
	cc_allocator allocator;
	bool		failed;
	double		h;
	int64_t		H;				/* h = H units */
	dense		acc;			/* the discrete part so far */
	double		p_inf;
	double		shift;			/* added to every discrete loss */
	double		log_scale;		/* ln of the curve's scale */
	double		mu2;
	double		rel;			/* bound on the masses' relative error */
} builder;

/* n elements of size bytes, or NULL (and the build fails) */
static inline void *
get(builder *b, int64_t n, size_t size)
{
	void	   *p;

	if (b->failed)
		return NULL;
	p = b->allocator.alloc(b->allocator.ctx, (size_t) (n > 0 ? n : 1) * size);
	if (p == NULL)
		b->failed = true;
	return p;
}

static inline void
put(builder *b, void *p)
{
	if (p != NULL)
		b->allocator.release(b->allocator.ctx, p);
}

/* floor(a / b) for b > 0 */
static inline int64_t
floor_div(int64_t a, int64_t b)
{
	int64_t		q = a / b;

	return q - (a % b < 0);
}

/* region_grid.c: the grid of the discrete part */
extern void cc_region_convolve(builder *b, dense *d, const int64_t *offset,
							   const double *mass, int64_t n, bool lattice_x);
extern void cc_region_convolve_sparse(builder *b, const sparse *s);
extern void cc_region_sparse_dense(builder *b, const sparse *s, dense *d);
extern void cc_region_sparse_add(sparse *s, int64_t i, double m);
extern void cc_region_sparse_split(sparse *s, int64_t j, double d, double h,
								   double m);
extern void cc_region_choose_grid(builder *b, uint64_t gcd, double var,
								  double span, double atoms, bool fine_needed);
extern void cc_region_coarsen(builder *b, double mu);
extern double cc_region_units_up(int64_t u);
extern void cc_region_finish(builder *b, cc_privacy_curve *c);

/* region_pure.c: pure charges */
extern void cc_region_pure_binomial(builder *b, pure_group *g);
extern void cc_region_pure_convolve(builder *b, const pure_group *g);

/* region_dgauss.c: discrete Gaussian charges */
extern double cc_region_dg_kappa_prime(double sigma2);
extern double cc_region_dg_atoms(const dg_group *g);
extern double cc_region_dg_sum_tau(double sigma2, int64_t n);
extern void cc_region_dg_plan(builder *b, dg_group *g);
extern void cc_region_dg_convolve(builder *b, dg_group *g);

#endif							/* CC_PRIVACY_REGION_INT_H */
