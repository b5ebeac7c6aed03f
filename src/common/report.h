/*
 * report.h
 *		The core's status codes as PostgreSQL errors.
 */
#ifndef CONTCOUNT_REPORT_H
#define CONTCOUNT_REPORT_H

#include "core/mechanism.h"

/*
 * Raise the error for a status other than CC_OK.  params may be NULL before
 * they are known; step is the stream step the status belongs to, or 0.
 */
extern void report_status(cc_status status, const cc_params *params,
						  int64 step) pg_attribute_noreturn();

/* Push one item and raise the error if the core refuses it. */
extern void push_or_report(cc_state *state, int64 item);

/* Epsilon or rho units as a decimal, without trailing zeros ("0.6"), palloc'd. */
extern char *format_budget_units(uint64 units);

#endif							/* CONTCOUNT_REPORT_H */
