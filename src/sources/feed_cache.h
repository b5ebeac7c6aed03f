/*
 * feed_cache.h
 *		A backend's copy of what the feeding triggers of protected sources
 *		looked up, kept until contcount's counters or sources change.
 */
#ifndef CONTCOUNT_FEED_CACHE_H
#define CONTCOUNT_FEED_CACHE_H

/*
 * The lookup kept for the trigger naming name (by_source: a source, else a
 * counter) on table relid, copied into cxt, or NULL: then the caller looks
 * up (on a snapshot taken after this call) and offers it to feed_cache_put.
 * It first takes in the invalidations committed by others, so that a hit is
 * what the lookup would find now (feed_cache.c).
 */
extern void *feed_cache_get(const char *name, bool by_source, Oid relid, MemoryContext cxt);

/*
 * Keep a lookup (size bytes) for the trigger naming name on table relid,
 * which reads the table source_relid, unless a change came in since the
 * miss; valid until a change of contcount's counters or sources, or of
 * either table, is seen.
 */
extern void feed_cache_put(const char *name, bool by_source, Oid relid, Oid source_relid,
						   const void *lookup, Size size);

/*
 * The running counters of some source, or a source, change in this
 * transaction: every backend forgets its lookups, this one at its next
 * command, the others once the transaction commits.
 */
extern void feed_cache_changed(void);

/* Register the invalidation callback; from _PG_init. */
extern void feed_cache_install(void);

#endif							/* CONTCOUNT_FEED_CACHE_H */
