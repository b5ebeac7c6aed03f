/*
 * counter_keys.h
 *		The steps of counters over a source's dimension: a running count of
 *		every declared key, for one charge.
 */
#ifndef CONTCOUNT_COUNTER_KEYS_H
#define CONTCOUNT_COUNTER_KEYS_H

#include "core/mechanism.h"
#include "counters/key_rows.h"

/*
 * Step t of counter id (name, its own state clock, already pushed) over its
 * dimension: take its persons' logged rows, bounded across keys, and push
 * each declared key's rows (0 without) into that key's state, storing the
 * states and releases.  False (nothing done) if the counter has no
 * dimension.  The rows it pushed go into taken, in the current memory
 * context, for the sparse vector alerts on keys.  In the step's
 * transaction, SPI connected, as the owner.
 */
extern bool counter_keys_step(int64 id, const char *name, const cc_state *clock, int64 t,
							  KeyTaken *taken);

/* The rows a step took for key (0 if none): what the key's count grew by. */
extern int64 counter_keys_taken(const KeyTaken *taken, const char *key);

/*
 * Delete counter id's persons' keys, keys' states and releases (dropped):
 * after its row of contcount.counter, in a statement of its own.  SPI
 * connected, as the owner.
 */
extern void counter_keys_forget(int64 id);

#endif							/* CONTCOUNT_COUNTER_KEYS_H */
