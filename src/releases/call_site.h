/*
 * call_site.h
 *		Where an aggregate support function runs, and what it may trust.
 */
#ifndef CONTCOUNT_CALL_SITE_H
#define CONTCOUNT_CALL_SITE_H

#include "fmgr.h"
#include "nodes/primnodes.h"

/*
 * Raise an error unless the support function called with fcinfo runs inside
 * one of contcount's own aggregates (plain, grouped or window).  Unless
 * first_parameter is negative, also require the aggregate's arguments from
 * first_parameter on to be one value for the whole call (see
 * call_site_require_constant).  Once per query: cache the outcome.
 */
extern void call_site_check(FunctionCallInfo fcinfo, int first_parameter, const char *function);

/*
 * Raise an error (22023) unless expr has one value for every row, group and
 * partition of a call: made of constants, query parameters and immutable
 * functions only.
 */
extern void call_site_require_constant(Expr *expr, const char *function);

/*
 * Raise an error (0A000) unless the window aggregate called with fcinfo has
 * a frame that only grows: starting at UNBOUNDED PRECEDING, excluding
 * nothing.  A moving frame makes PostgreSQL restart the aggregate for every
 * row, which would push the same items again and redraw their noise.
 */
extern void call_site_require_growing_frame(FunctionCallInfo fcinfo, const char *function);

#endif							/* CONTCOUNT_CALL_SITE_H */
