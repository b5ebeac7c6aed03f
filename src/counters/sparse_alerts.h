/*
 * sparse_alerts.h
 *		Alerts over a quantity that is not released: the count of a counter's
 *		last steps against a threshold, by the sparse vector technique.
 */
#ifndef CONTCOUNT_SPARSE_ALERTS_H
#define CONTCOUNT_SPARSE_ALERTS_H

/* Has the counter a sparse vector alert that has not stopped? */
extern bool sparse_alerts_exist(int64 counter);

/*
 * In a step's transaction: push the step's exact increment into each of the
 * counter's sparse vector alerts, and NOTIFY the channel of each that
 * answers above.  Their states are stored with the step.
 */
extern void sparse_alerts_step(int64 counter, int64 step, int64 increment);

#endif							/* CONTCOUNT_SPARSE_ALERTS_H */
