/*
 * counter_delta.h
 *		The rows inserted for each counter, written with the transaction.
 */
#ifndef CONTCOUNT_COUNTER_DELTA_H
#define CONTCOUNT_COUNTER_DELTA_H

/* Count rows inserted by this (sub)transaction, committed with it. */
extern void counter_count_rows(int64 counter, int64 rows);

/* Buffer and write the triggers' counts with the transaction; from _PG_init. */
extern void counter_delta_install(void);

#endif							/* CONTCOUNT_COUNTER_DELTA_H */
