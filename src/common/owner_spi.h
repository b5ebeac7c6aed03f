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

#include "common/seal.h"

/* The calling role, and how to return to it from the owner's rights. */
typedef struct OwnerScope
{
	Oid			caller;
	int			caller_context;
	int			guc_nest_level; /* of the sealed settings */
	SealedUsage usage;			/* the caller's, put back at the end */
} OwnerScope;

/*
 * Switch to the owner, seal the scope (seal.h: search_path and the other
 * settings pinned, the caller's buffer and WAL counters saved) and connect
 * SPI.  An error on the way is fine: aborting the (sub)transaction restores
 * the user and the settings and closes SPI.  owner_end puts the counters
 * back; an error does not (queries that read protected rows put them back
 * on an error as well: bounding.c, source_mean.c).
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

/*
 * owner_run for the INSERT ... ON CONFLICT DO NOTHING of a new named object
 * (kind "ledger", name its name): 42710 if it inserted nothing, that is if
 * an object of that name exists (a concurrent creation commits first, or
 * aborts: the INSERT waits).
 */
extern void owner_insert_new(SPIPlanPtr *plan, const char *sql, int nargs, const Oid *types,
							 const Datum *values, const char *kind, const char *name);

/*
 * owner_run for a SELECT of a named object's row (kind "ledger", name its
 * name): 42704 if it returns no row.
 */
extern void owner_select_existing(SPIPlanPtr *plan, const char *sql, int nargs,
								  const Oid *types, const Datum *values, const char *kind,
								  const char *name);

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

/*
 * Has contcount's table this column?  A database not yet updated (ALTER
 * EXTENSION UPDATE) lacks the columns of later versions, and each caller
 * asks for the one its feature came with.
 */
extern bool contcount_has_column(const char *table, const char *column);

#endif							/* CONTCOUNT_OWNER_SPI_H */
