/*
 * statement_cap.h
 *		What one top-level statement may spend in all:
 *		contcount.max_epsilon_per_statement and contcount.max_rho_per_statement.
 */
#ifndef CONTCOUNT_STATEMENT_CAP_H
#define CONTCOUNT_STATEMENT_CAP_H

#include "core/accounting.h"

/*
 * How many releases of cost, up to wanted (at least 1), the current
 * statement may still make under its cap; an error (54000) naming the cap
 * and what the statement spent when not even one may.  Called before a
 * charge, so that a refused release pays nothing.
 */
extern int64 statement_cap_allow(cc_cost cost, int64 wanted);

/* Count releases releases of cost as made by the current statement. */
extern void statement_cap_count(cc_cost cost, int64 releases);

#endif							/* CONTCOUNT_STATEMENT_CAP_H */
