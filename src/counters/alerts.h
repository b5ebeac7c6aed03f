/*
 * alerts.h
 *		Alerts over counters' released values: a NOTIFY when a released
 *		running count crosses a threshold.
 */
#ifndef CONTCOUNT_ALERTS_H
#define CONTCOUNT_ALERTS_H

#include "counters/counter_keys.h"

/*
 * In a step's transaction, after its release is stored: NOTIFY the channel
 * of each alert of the counter whose threshold the released value of step
 * crosses (for a counter over a dimension, keyed, the released value of the
 * alert's key, which counter_keys_step stored in this transaction):
 * post-processing of released values, nothing is charged.  Ask each sparse
 * vector alert of the counter about its window, with this step's exact
 * increment (the counter's bounded count, or keyed, its key's bounded rows
 * in keyed; paid when the alert was created: sparse_alerts.c).  An error on
 * the way (a NOTIFY queue too full, say) is logged and loses this step's
 * notifications, never the step.
 */
extern void alerts_fire(int64 counter, const KeyTaken *keyed, int64 step, int64 increment);

#endif							/* CONTCOUNT_ALERTS_H */
