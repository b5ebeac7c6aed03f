/*
 * unit_log.h
 *		The rows each person gave each counter over a source, appended with
 *		the inserting transaction and bounded by the step that takes them.
 */
#ifndef CONTCOUNT_UNIT_LOG_H
#define CONTCOUNT_UNIT_LOG_H

#include "common/sha2.h"

/* Is contcount.counter_unit_log installed (0.6 on)? */
extern bool unit_log_installed(void);

/* The SHA-256 digest of a unit's text form, for the rows of this transaction. */
extern void unit_log_digest(const char *text, uint8 digest[PG_SHA256_DIGEST_LENGTH]);

/*
 * One row of the unit whose digest this is, for counter, in this
 * (sub)transaction; in key of the counter's dimension, or NULL without one.
 * The caller keeps key's text, one copy a key, until the transaction ends:
 * entries compare keys by address.
 */
extern void unit_log_add(int64 counter, const uint8 digest[PG_SHA256_DIGEST_LENGTH],
						 const char *key);

/*
 * The counter's logged rows, each unit's bounded by the room max_rows leaves
 * it; take: consume them into contcount.counter_unit (the step).  SPI
 * connected, as the extension's owner.
 */
extern int64 unit_log_rows(int64 counter, bool take);

/*
 * unit_log_rows(log_id, true) with max_rows given, not the source's: a
 * shard's feed of a coordinator's counter logs under a negative id of its
 * own (shard_feed.c), which no counter has.  SPI connected, as the
 * extension's owner.
 */
extern int64 unit_log_take_bounded(int64 log_id, int32 max_rows);

/*
 * Take a counter over a dimension's logged rows, each person bounded across
 * keys by max_groups and max_rows (their counted keys kept in
 * contcount.counter_unit_key): SPI's result is a row (key, rows) for each
 * key with rows.  SPI connected, as the extension's owner.
 */
extern void unit_log_key_rows(int64 counter);

/*
 * unit_log_key_rows(log_id) with the bounds given, not the source's, and
 * only the rows of the keys (a text[]) kept: a shard's feed of a
 * coordinator's counter over a dimension (shard_feed.c), whose trigger logs
 * every key.  SPI connected, as the extension's owner.
 */
extern void unit_log_take_key_bounded(int64 log_id, int32 max_rows, bool persons,
									  int32 max_groups, Datum keys);

/*
 * Delete what the persons logged for counter (dropped or finished): no
 * step will take it.  SPI connected, as the extension's owner.
 */
extern void unit_log_forget(int64 counter);

/* Buffer and write the log with the transaction; from _PG_init. */
extern void unit_log_install(void);

#endif							/* CONTCOUNT_UNIT_LOG_H */
