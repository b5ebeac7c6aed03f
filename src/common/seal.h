/*
 * seal.h
 *		The seal of every owner scope: settings pinned, the caller's
 *		instrumentation kept apart.
 *
 * A query run as the extension's owner over protected rows must not report
 * on itself through the caller's session.  Settings a role may change that
 * make the server describe a query or change how a value prints or a cast
 * fails are pinned for the scope's duration, in one GUC nest level; the
 * caller's buffer and WAL usage counters, which EXPLAIN (ANALYZE, BUFFERS,
 * WAL) and pg_stat_statements read, are saved before and restored after.
 * docs/sealed-releases.md classifies every setting a role may change.
 */
#ifndef CONTCOUNT_SEAL_H
#define CONTCOUNT_SEAL_H

#include "executor/instrument.h"

/*
 * Pin the sealed settings (search_path among them) in a new GUC nest level,
 * each only where its value differs, until AtEOXact_GUC(true, level) with
 * the level returned, or the end of the (sub)transaction.
 */
extern int	seal_settings(void);

/* The caller's instrumentation counters, as they were. */
typedef struct SealedUsage
{
	BufferUsage buffers;
	WalUsage	wal;
} SealedUsage;

extern void seal_usage_save(SealedUsage *usage);

/* Put back the counters saved: what ran since is not the caller's. */
extern void seal_usage_restore(const SealedUsage *usage);

#endif							/* CONTCOUNT_SEAL_H */
