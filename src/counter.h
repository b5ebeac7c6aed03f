/*
 * counter.h
 *		Named counters: fed by triggers, stepped by the worker.
 */
#ifndef CONTCOUNT_COUNTER_H
#define CONTCOUNT_COUNTER_H

/* The counter's id, or an error if there is no such counter. */
extern int64 counter_id_by_name(const char *name, bool *finished);

/* Count rows inserted by this (sub)transaction, committed with it. */
extern void counter_count_rows(int64 counter, int64 rows);

/* Buffer and write the triggers' counts with the transaction; from _PG_init. */
extern void counter_trigger_install(void);

/* The background worker that closes steps; from _PG_init. */
extern void counter_worker_register(void);

#endif							/* CONTCOUNT_COUNTER_H */
