/*
 * alerts.h
 *		Alerts over counters' released values: a NOTIFY when a released
 *		running count crosses a threshold.
 */
#ifndef CONTCOUNT_ALERTS_H
#define CONTCOUNT_ALERTS_H

/*
 * In a step's transaction, after its release is stored: NOTIFY the channel
 * of each alert of the counter (and key: NULL for a counter without keys)
 * whose threshold the released value of step crosses (post-processing of
 * that released value: nothing is charged), and ask each sparse vector
 * alert of the counter about its window, with this step's exact increment
 * (paid when the alert was created; sparse_alerts.c).  An error on the way
 * (a NOTIFY queue too full, say) is logged and loses this step's
 * notifications, never the step.
 */
extern void alerts_fire(int64 counter, const char *key, int64 step, int64 increment);

#endif							/* CONTCOUNT_ALERTS_H */
