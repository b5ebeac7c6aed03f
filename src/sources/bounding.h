/*
 * bounding.h
 *		The bounding rule of protected sources: what each person's rows may
 *		add to a release's counts.
 *
 * A release fills a Bounding with the rule's parameters and the declared
 * keys, then runs its query through bounding_run(): the query's one
 * aggregate, contcount.bounded_counts(unit, key, t ORDER BY unit, t, key),
 * applies the rule to the rows in that order and adds the kept rows to
 * counts[key * nsteps + step].  Counting persons, the rule sees only each
 * unit's first row in each group: a unit counts once a group, at the step
 * of that row.
 */
#ifndef CONTCOUNT_BOUNDING_H
#define CONTCOUNT_BOUNDING_H

#include "datatype/timestamp.h"
#include "executor/spi.h"

typedef struct Bounding
{
	int32		max_rows;
	int32		max_groups;
	bool		persons;		/* count a unit once a group, not its rows */
	Oid			unit_type;
	Oid			unit_collation; /* the unit column's, as its ORDER BY sorts */
	/* the declared keys: a row's key is its position in them, from 0 */
	int			nkeys;
	Datum	   *keys;			/* text; NULL without a dimension: one key */
	int32	   *key_slots;		/* open addressing: position + 1, or 0 */
	uint32		slot_mask;
	/* steps of step_usec from start, nsteps of them (one, step_usec 0) */
	TimestampTz start;
	int64		step_usec;
	int64		nsteps;
	int64	   *counts;			/* nkeys * nsteps, zeroed */
} Bounding;

/*
 * Set up a bounding for keys (a text[] without nulls, or (Datum) 0 for one
 * key of all rows) and steps, in the current memory context; persons, it
 * counts each unit's first row in each group only.
 */
extern void bounding_init(Bounding *bounding, int32 max_rows, int32 max_groups, bool persons,
						  Oid unit_type, Oid unit_collation, Datum keys, TimestampTz start,
						  int64 step_usec, int64 nsteps);

/*
 * An error unless the aggregate is there: a database still at 0.4, until
 * ALTER EXTENSION UPDATE, refuses releases from sources before any charge.
 */
extern void bounding_require_aggregate(void);

/*
 * Run the release's query (owner scope, SPI connected) with bounding as the
 * one its aggregate fills.  Planned anew each time: the table may change.
 */
extern void bounding_run(Bounding *bounding, const char *sql, int nargs, const Oid *types,
						 const Datum *values);

#endif							/* CONTCOUNT_BOUNDING_H */
