/*
 * class_tails.h
 *		A class's tail prepared for the bound (class_tails.c), and the node
 *		grid of honaker trees it shares; for bounds.c only.
 */
#ifndef CC_CLASS_TAILS_H
#define CC_CLASS_TAILS_H

#include "dlap_tails.h"
#include "mechanism_int.h"

#define GRID 128
#define NODE_LEVELS 64

/*
 * The node estimates of a honaker tree at a lambda grid (lambda_g = top
 * e^(-step g)): what every class of the parameters shares.  For each
 * quantity and grid point, the levels in decreasing order of it, so that a
 * class finds its extreme nodes in one pass.
 */
enum
{
	NODE_DISCRETE,				/* ln E[exp(lambda E_d)] */
	NODE_SMOOTH,				/* the same for the Laplace twins */
	NODE_VARIANCE,				/* their tilted variance */
	NODE_QUANTITIES
};

typedef struct node_grid
{
	bool		valid;
	cc_params	params;
	int			levels;
	double		top;
	double		step;
	double		squares[NODE_LEVELS];	/* sum of squared weights */
	uint8_t		square_order[NODE_LEVELS];
	double		at[GRID][NODE_QUANTITIES][NODE_LEVELS];
	uint8_t		order[GRID][NODE_QUANTITIES][NODE_LEVELS];
} node_grid;

/*
 * A class's tail, prepared for evaluations at many thresholds.
 */
typedef enum tail_way
{
	WAY_NONE,					/* no noise */
	WAY_GAUSSIAN,
	WAY_EXACT,					/* 1.: X0 alone */
	WAY_GRID,					/* 2.: X0 (maybe none) and R */
	WAY_CHERNOFF				/* 3. */
} tail_way;

typedef struct prepared
{
	tail_way	way;
	bool		segment;
	double		rounding;
	double		proxy;
	bool		has_exact;		/* X0 summed exactly */
	bool		single;			/* X0 is one draw: no dl_sum needed */
	double		exact_inv_b;
	double		exact_weight;
	int			ngrid;
	int			hint;			/* the grid point best at the last threshold */
	double		lambda[GRID];
	double		intercept[GRID];	/* A at lambda */
	int			npieces;		/* every draw, for Chernoff */
	cc_piece	pieces[CC_TAIL_PIECES + 1];
	dl_sum		exact;			/* X0, unless single or none: last, not zeroed */
} prepared;

/* The node grid of these parameters, computed once and kept. */
extern const node_grid *cc_node_grid_of(const cc_params *params);
/* The sum of the k largest (or smallest) of values[from .. levels - 1]. */
extern double cc_extreme_sum(const double *values, const uint8_t *order,
							 int levels, int from, int k, bool largest);
/* A class's tail t prepared into c: its way (1., 2. or 3.) and its grid. */
extern void cc_tail_prepare(const cc_params *params, const cc_tail *t,
							prepared *c);
/* ln of a bound on P(|N| >= x) of a prepared class (its segment's). */
extern double cc_prepared_log_tail(prepared *c, double x);

#endif							/* CC_CLASS_TAILS_H */
