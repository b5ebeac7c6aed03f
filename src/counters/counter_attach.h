/*
 * counter_attach.h
 *		The triggers contcount attaches to tables for counters.
 */
#ifndef CONTCOUNT_COUNTER_ATTACH_H
#define CONTCOUNT_COUNTER_ATTACH_H

/*
 * Create, as the calling role, an AFTER INSERT trigger on table that feeds
 * the counter (one a row or one a statement), and record it.  PostgreSQL's
 * own checks decide whether the caller may (42501 without the TRIGGER
 * privilege; 42710 if the table has a trigger of that name already).
 */
extern void attachment_create(int64 counter, const char *name, Oid table, bool for_row);

/*
 * Forget the attachment of the counter (id and name) to table and drop its
 * trigger if it still feeds that counter, waiting for the table's lock (the
 * caller may create triggers on table): false if there was none.
 */
extern bool attachment_remove(int64 counter, const char *name, Oid table);

/*
 * Forget every attachment of a counter being dropped and drop each trigger
 * on a table the caller may create triggers on and can lock at once; any
 * other stays, an orphan that counts nothing (NOTICE): an analyst never
 * locks the application's table.
 */
extern void attachments_remove_all(int64 counter, const char *name);

#endif							/* CONTCOUNT_COUNTER_ATTACH_H */
