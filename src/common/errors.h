/*
 * errors.h
 *		contcount's own SQLSTATEs, class ZB (privacy budget).
 *
 * Every other error uses PostgreSQL's codes; the README's table lists them
 * all.
 *
 * IDENTIFICATION
 *	  src/common/errors.h
 */
#ifndef CONTCOUNT_ERRORS_H
#define CONTCOUNT_ERRORS_H

/* the release would overspend its ledger */
#define ERRCODE_CONTCOUNT_BUDGET_EXCEEDED MAKE_SQLSTATE('Z','B','0','0','1')
/* no ledger is selected */
#define ERRCODE_CONTCOUNT_NO_LEDGER MAKE_SQLSTATE('Z','B','0','0','2')
/*
 * the ledger does not account that way: a zCDP (Gaussian) release on a pure
 * ledger, a budget given in the other measure, or a ledger that would change
 * its accounting (through an import or by being created again)
 */
#define ERRCODE_CONTCOUNT_ACCOUNTING MAKE_SQLSTATE('Z','B','0','0','3')

#endif							/* CONTCOUNT_ERRORS_H */
