/*
 * source.h
 *		What counters need of protected sources.
 */
#ifndef CONTCOUNT_SOURCE_H
#define CONTCOUNT_SOURCE_H

#include "access/attnum.h"
#include "commands/trigger.h"

/* A source's table, unit column, bound on rows a unit and ledger's name. */
typedef struct SourceBounds
{
	Oid			relid;
	AttrNumber	unit;
	int32		max_rows;
	char	   *ledger;
} SourceBounds;

/*
 * The bounds of a source the calling role is granted, as committed now, for
 * a counter over it; an error unless the unit column's type has one text
 * form a value (the per-unit counts are kept by it).  In the caller's memory.
 */
extern void source_for_counter(const char *name, SourceBounds *bounds);

/*
 * The name of a counter that counts source (the first by name), or NULL.
 * Owner scope, with the current transaction's changes.
 */
extern char *source_counted_by(const char *source);

/* The name of the ledger of source, as committed now; an error if none. */
extern char *source_ledger_name(const char *source);

/*
 * Make the counter count the source's inserts, at most max_rows a unit: a
 * trigger on the source's table, created as the extension's owner.  And
 * drop it again, if the table is still there.
 */
extern void source_counter_attach(int64 counter, const char *counter_name,
								  const SourceBounds *bounds);
extern void source_counter_detach(int64 counter, const char *source);

#endif							/* CONTCOUNT_SOURCE_H */
