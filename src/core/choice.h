/*
 * choice.h
 *		The mechanism of least variance for a horizon: mechanism "auto".
 *
 * Pure C: no PostgreSQL headers.  The choice is made from the parameters
 * alone (horizon, epsilon, sensitivity), never from the stream, so it
 * reveals nothing and costs no epsilon: every mechanism's variance at step t
 * is a public function of t and the parameters.
 */
#ifndef CC_CHOICE_H
#define CC_CHOICE_H

#include "mechanism.h"

/* The name that asks for the choice, wherever a mechanism name is taken. */
#define CC_AUTO_NAME "auto"

/* What the choice minimizes: the variance over the steps t = 1 .. T. */
typedef enum cc_objective
{
	CC_OBJECTIVE_MEAN,			/* its mean */
	CC_OBJECTIVE_WORST			/* its largest */
} cc_objective;

#define CC_DEFAULT_OBJECTIVE CC_OBJECTIVE_MEAN

extern bool cc_objective_from_name(const char *name, cc_objective *objective);
extern const char *cc_objective_name(cc_objective objective);

/*
 * The mean and the largest variance of a release over t = 1 .. horizon, for
 * prepared parameters with a horizon, from closed forms: O(log^2 horizon).
 * For honaker, gaussian_honaker and blt, the variance before rounding, as
 * their stddev reports it.
 */
extern void cc_variance_over_horizon(const cc_params *params, double *mean,
									 double *worst);

/*
 * Set params->kind to the mechanism of least objective among those of
 * params->privacy (pure DP or zCDP) and prepare the parameters for it; the
 * other fields are given as for cc_params_prepare().  A tie goes to the kind
 * listed first in cc_kind.  A mechanism whose noise scale would be too large,
 * or whose longest horizon is shorter, is passed over.
 *
 * CC_NEED_HORIZON without a horizon: the variances over the steps need T.
 * CC_BLOCK_NOT_APPLICABLE with a block: two_level is weighed with its
 * default block only.  Any other status is a parameter every mechanism
 * refuses (under pure DP simple_ii's noise scale always fits; under zCDP
 * CC_SCALE_TOO_LARGE when no sigma^2 does).
 */
extern cc_status cc_choose(cc_params *params, cc_objective objective);

#endif							/* CC_CHOICE_H */
