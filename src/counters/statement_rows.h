/*
 * statement_rows.h
 *		The rows a statement inserted, for statement triggers without a
 *		transition table.
 */
#ifndef CONTCOUNT_STATEMENT_ROWS_H
#define CONTCOUNT_STATEMENT_ROWS_H

/*
 * Add the rows the running statement inserts into relid to counter once it
 * has finished; an error then if its row count is not that.  Called by the
 * trigger in the memory context it was called in.
 */
extern void statement_rows_count_later(int64 counter, Oid relid);

/* The executor and COPY hooks and their callbacks; from _PG_init. */
extern void statement_rows_install(void);

#endif							/* CONTCOUNT_STATEMENT_ROWS_H */
