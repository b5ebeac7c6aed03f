/*
 * owner_spi.h
 *		Working on contcount's tables as the extension's owner.
 *
 * Only the owner can read the ledger and counter tables.  The functions that
 * use them check the calling role's rights themselves, then switch to the
 * owner for the SPI work.
 */
#ifndef CONTCOUNT_OWNER_SPI_H
#define CONTCOUNT_OWNER_SPI_H

#include "executor/spi.h"

/* The calling role, and how to return to it from the owner's rights. */
typedef struct OwnerScope
{
	Oid			caller;
	int			caller_context;
	int			guc_nest_level; /* of the pinned search_path */
} OwnerScope;

/*
 * Set search_path to pg_catalog, pg_temp until AtEOXact_GUC(true, level)
 * with the level returned (or the end of the (sub)transaction).
 */
extern int	owner_pin_search_path(void);

/*
 * Switch to the owner, pin search_path and connect SPI.  An error on the way
 * is fine: aborting the (sub)transaction restores the user, the setting and
 * closes SPI.
 */
extern void owner_begin(OwnerScope *scope);
extern void owner_end(OwnerScope *scope);

/*
 * Run one statement through a plan prepared on first use and kept in *plan
 * for the life of the backend, on a snapshot of what is committed now plus
 * the current transaction's changes (never the caller's older snapshot).
 * nulls as SPI wants them, or NULL.  Raises an error unless SPI answers
 * expected.
 */
extern void owner_run(SPIPlanPtr *plan, const char *sql, int nargs, const Oid *types,
					  const Datum *values, const char *nulls, int expected);

/* The same for a plan the caller prepared and keeps. */
extern void owner_execute(SPIPlanPtr plan, const Datum *values, int expected);

/*
 * The same for a SELECT, on what is committed now, without any change of
 * the current transaction: what a charge may rely on.
 */
extern void owner_read_committed(SPIPlanPtr *plan, const char *sql, int nargs,
								 const Oid *types, const Datum *values, const char *nulls);

/*
 * A cursor on the SELECT of a plan the caller prepared and keeps, on a
 * snapshot as owner_execute's: for results too large to hold at once.
 */
extern Portal owner_open_cursor(SPIPlanPtr plan, const Datum *values);

#endif							/* CONTCOUNT_OWNER_SPI_H */
