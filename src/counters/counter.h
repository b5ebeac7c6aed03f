/*
 * counter.h
 *		Named counters: fed by triggers, stepped by the worker.
 */
#ifndef CONTCOUNT_COUNTER_H
#define CONTCOUNT_COUNTER_H

#include "utils/relcache.h"

/*
 * The id of the counter a trigger on table feeds.  A trigger whose counter
 * does not exist, or whose table's owner has neither the rights of the
 * counter's owner nor those of a role it allowed to feed it, counts nothing
 * (finished) and warns once a session for each counter name: an insert
 * never fails for a counter.
 */
extern int64 counter_to_feed(const char *name, Relation table, const char *trigger,
							 bool *finished);

/*
 * Where a counter's state lives: the cluster (its system identifier, with
 * the bits pg_control_system() shows), the database, and the table that
 * holds the state.  Tree nodes are drawn where the state lives; a counter
 * whose recorded place is not the place here is a copy (pg_dump and
 * pg_restore, pg_upgrade), which pays its epsilon (or rho) again before its
 * next step (counter_worker.c).
 */
typedef struct CounterPlace
{
	int64		system;
	Oid			database;
	Oid			table;
} CounterPlace;

/*
 * The place here, in the current database; false if contcount.counter has
 * no place columns (a database not yet updated to 0.3).
 */
extern bool counter_place_here(CounterPlace *place);

/*
 * Does counter id release a running count per key of a source's dimension
 * (its own releases then hold nothing)?  Owner scope, SPI connected.
 */
extern bool counter_has_dimension(int64 id);

/* The background worker that closes steps; from _PG_init. */
extern void counter_worker_register(void);

#endif							/* CONTCOUNT_COUNTER_H */
