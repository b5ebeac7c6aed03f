/*
 * sparse_alerts.h
 *		Alerts over a quantity that is not released: the count of a counter's
 *		last steps against a threshold, by the sparse vector technique.
 */
#ifndef CONTCOUNT_SPARSE_ALERTS_H
#define CONTCOUNT_SPARSE_ALERTS_H

#include "counters/counter_keys.h"

/* Has the counter a sparse vector alert that has not stopped? */
extern bool sparse_alerts_exist(int64 counter);

/*
 * In a step's transaction: push the step's exact increment (the counter's
 * count, bounded over a source; for an alert on a key of a counter over a
 * dimension, keyed, the key's bounded rows) into each of the counter's
 * sparse vector alerts, and NOTIFY the channel of each that answers above.
 * Their states are stored with the step.
 */
extern void sparse_alerts_step(int64 counter, int64 step, int64 increment,
							   const KeyTaken *keyed);

#endif							/* CONTCOUNT_SPARSE_ALERTS_H */
