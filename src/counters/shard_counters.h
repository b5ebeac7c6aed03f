/*
 * shard_counters.h
 *		Counters fed by many servers: the coordinator's step reads the
 *		shards' sealed batches of counts and records how far it read.
 */
#ifndef CONTCOUNT_SHARD_COUNTERS_H
#define CONTCOUNT_SHARD_COUNTERS_H

#include "access/attnum.h"

#include "counters/key_rows.h"

/*
 * The exact bounded counts that the shards of the counter's source sealed
 * since the step last read them, added up, with each shard's new watermark
 * (or why it could not be read: its counts then wait for a later step)
 * written to contcount.counter_shard, in the step's transaction; 0 for a
 * counter whose source has no shards.  A counter over a dimension reads
 * its shards only when keys is not NULL (its keys' step), and puts into
 * keys each shard's rows of each declared key (unsorted, a key once a
 * shard, in the current memory context); keys NULL, it is not read.  SPI
 * connected, in the step worker.
 */
extern int64 shard_counters_collect(int64 counter, KeyTaken *keys);

/*
 * Make sure every shard of the counter's source logs its rows for the
 * counter (its feed there made if new), as soon as the worker sees the
 * counter: a shard counts the rows committed once its feed exists.  What
 * a shard has sealed stays for the next step; a shard that cannot be
 * reached opens the feed at the first step that reaches it.  In a
 * transaction of the step worker's, SPI connected.
 */
extern void shard_counters_open(int64 counter);

/*
 * Drop the shards' feeds of the counters that are gone: ask each shard a
 * row of contcount.counter_shard names for a dropped counter to drop the
 * feed (contcount.shard_feed_drop), and delete the row once it answered;
 * a shard that cannot be reached, or errs, is asked again at a later call
 * (its row kept, the error logged).  A row whose foreign server is gone is
 * deleted, with the feed's name logged for the shard's DBA.  In a
 * transaction of the step worker's, SPI connected.
 */
extern void shard_counters_forget(void);

/*
 * Has the table (of a source, with this unit column) a shard among its
 * partitions, so that a counter over it is fed by many servers?
 */
extern bool shard_counters_sharded(Oid relid, AttrNumber unit);

#endif							/* CONTCOUNT_SHARD_COUNTERS_H */
