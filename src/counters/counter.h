/*
 * counter.h
 *		Named counters: fed by triggers, stepped by the worker.
 */
#ifndef CONTCOUNT_COUNTER_H
#define CONTCOUNT_COUNTER_H

#include "utils/relcache.h"

/*
 * The id of the counter a trigger on table feeds: an error if there is no
 * such counter (42704), or if the table's owner has neither the rights of
 * the counter's owner nor those of a role it allowed to feed it (42501).
 */
extern int64 counter_to_feed(const char *name, Relation table, bool *finished);

/* Count rows inserted by this (sub)transaction, committed with it. */
extern void counter_count_rows(int64 counter, int64 rows);

/* Buffer and write the triggers' counts with the transaction; from _PG_init. */
extern void counter_trigger_install(void);

/* The background worker that closes steps; from _PG_init. */
extern void counter_worker_register(void);

#endif							/* CONTCOUNT_COUNTER_H */
