/*
 * alerts.h
 *		Alerts over counters' released values: a NOTIFY when a released
 *		running count crosses a threshold.
 */
#ifndef CONTCOUNT_ALERTS_H
#define CONTCOUNT_ALERTS_H

/*
 * In a step's transaction, after its release is stored: NOTIFY the channel
 * of each alert of the counter whose threshold the released value of step
 * crosses (for a keyed counter, one over a dimension, the released value
 * of the alert's key, which counter_keys_step stored in this transaction):
 * post-processing of released values, nothing is charged.  Ask each sparse
 * vector alert of the counter (a keyed one has none) about its window,
 * with this step's exact increment (paid when the alert was created;
 * sparse_alerts.c).  An error on the way (a NOTIFY queue too full, say)
 * is logged and loses this step's notifications, never the step.
 */
extern void alerts_fire(int64 counter, bool keyed, int64 step, int64 increment);

#endif							/* CONTCOUNT_ALERTS_H */
