/*
 * feed_cache.c
 *		A backend's copy of what the feeding triggers of protected sources
 *		looked up, kept until contcount's counters or sources change.
 *
 * The trigger of a source needs its running counters at each statement's
 * first row (source_counter.c); looking them up is one query as the
 * extension's owner, which cost a single-row insert about as much as the
 * insert itself.  The answer changes only when a counter over a source is
 * created (its source recorded), dropped or finished, when the worker records the blocks a counter paid, when a
 * source is declared, dropped or given blocks, or when the table's own
 * definition changes; so each backend keeps the answers, and forgets them
 * all when it learns of such a change.
 *
 * It learns of them through PostgreSQL's relation cache invalidation, which
 * has exactly the visibility the lookup has.  Every writer of those changes
 * calls feed_cache_changed, which queues an invalidation of contcount.counter
 * in its transaction; DDL on contcount's tables or on a counted table queues
 * one of its own.  Queued invalidations reach:
 *
 * - the writing backend at its next command (CommandCounterIncrement), and
 *   back again if its (sub)transaction aborts: a lookup made after the
 *   change sees the transaction's own changes, as the query did;
 * - every other backend only after the writing transaction has committed
 *   (AtEOXact_Inval), and never if it aborts: an uncommitted counter is fed
 *   by no one else, as the query's snapshot did not see it either.
 *
 * Each statement's first row takes in the invalidations sent so far
 * (AcceptInvalidationMessages: one unlocked read when there are none)
 * before it trusts a kept answer; PostgreSQL itself does so only when it
 * takes a lock it did not hold, which an insert in an open transaction
 * already holds.  Invalidations are sent before the commit is reported to
 * the writer's client, so a statement that begins after create_counter or
 * drop_counter has returned committed to its caller feeds exactly the
 * counters the query would have found.  A commit is visible to snapshots a
 * moment before its invalidations are sent: a statement that begins in that
 * moment feeds the counters as they were just before the commit, as a
 * statement that began just before it does.  Nothing depends on that
 * moment: a counter counts the rows of statements that begin after its
 * creation was reported, and a statement that races a drop or a finish may
 * log rows for the counter, which no step reads, as before
 * (docs/counters-and-sources.md).
 *
 * A lookup made while a change commits may see it or not: it is kept only
 * if no invalidation touching the cache came in from the moment it missed
 * (before its snapshot was taken) to the moment it is kept, and one that
 * comes in later empties the cache.  Nothing of it is shared or written:
 * after a restart, as in any new backend, the cache starts empty.
 *
 * IDENTIFICATION
 *	  src/sources/feed_cache.c
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "storage/sinval.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "sources/feed_cache.h"

/* Lookups kept at most: more are looked up each statement. */
#define FEED_CACHE_MAX 64

typedef struct FeedCacheEntry
{
	struct FeedCacheEntry *next;
	char	   *name;
	bool		by_source;
	Oid			relid;			/* the table the trigger fires on */
	Oid			source_relid;	/* the source's table (its parent, maybe) */
	Size		size;
	void	   *lookup;
} FeedCacheEntry;

static MemoryContext cache_cxt = NULL;
static FeedCacheEntry *entries = NULL;
static int	nentries = 0;

/*
 * Invalidations that touched the cache so far, and their number when the
 * last miss began its lookup: a lookup is kept only if none came in while
 * it ran (its snapshot may predate the change they announce).
 */
static uint64 generation = 0;
static uint64 miss_generation = 0;

/* contcount's tables whose invalidation empties the cache (InvalidOid: unknown) */
static Oid	counter_relid = InvalidOid;
static Oid	source_relid = InvalidOid;
static Oid	log_relid = InvalidOid;

/* contcount's table by name, or InvalidOid. */
static Oid
contcount_table(const char *name)
{
	Oid			schema = get_namespace_oid("contcount", true);

	return OidIsValid(schema) ? get_relname_relid(name, schema) : InvalidOid;
}

static void
forget_all(void)
{
	if (cache_cxt != NULL)
		MemoryContextReset(cache_cxt);
	entries = NULL;
	nentries = 0;
	counter_relid = source_relid = log_relid = InvalidOid;
}

/* Does an invalidation of relid (InvalidOid: of all) touch the cache? */
static bool
touches(Oid relid)
{
	if (!OidIsValid(relid) || relid == counter_relid || relid == source_relid ||
		relid == log_relid)
		return true;
	for (FeedCacheEntry *entry = entries; entry != NULL; entry = entry->next)
		if (relid == entry->relid || relid == entry->source_relid)
			return true;
	return false;
}

static void
relcache_callback(Datum arg, Oid relid)
{
	(void) arg;
	if (touches(relid))
	{
		generation++;
		forget_all();
	}
}

void *
feed_cache_get(const char *name, bool by_source, Oid relid, MemoryContext cxt)
{
	AcceptInvalidationMessages();
	for (FeedCacheEntry *entry = entries; entry != NULL; entry = entry->next)
		if (entry->relid == relid && entry->by_source == by_source && strcmp(entry->name, name) == 0)
		{
			void	   *copy = MemoryContextAlloc(cxt, entry->size);

			memcpy(copy, entry->lookup, entry->size);
			return copy;
		}
	/* from here on, the tables' invalidations count */
	if (!OidIsValid(counter_relid))
	{
		counter_relid = contcount_table("counter");
		source_relid = contcount_table("source");
		log_relid = contcount_table("counter_unit_log");
	}
	miss_generation = generation;
	return NULL;
}

void
feed_cache_put(const char *name, bool by_source, Oid relid, Oid source_table,
			   const void *lookup, Size size)
{
	FeedCacheEntry *entry;

	if (generation != miss_generation || !OidIsValid(counter_relid) || nentries >= FEED_CACHE_MAX)
		return;
	if (cache_cxt == NULL)
		cache_cxt = AllocSetContextCreate(CacheMemoryContext, "contcount feed cache",
										  ALLOCSET_SMALL_SIZES);
	entry = MemoryContextAlloc(cache_cxt, sizeof(FeedCacheEntry));
	entry->name = MemoryContextStrdup(cache_cxt, name);
	entry->by_source = by_source;
	entry->relid = relid;
	entry->source_relid = source_table;
	entry->size = size;
	entry->lookup = MemoryContextAlloc(cache_cxt, size);
	memcpy(entry->lookup, lookup, size);
	entry->next = entries;
	entries = entry;
	nentries++;
}

void
feed_cache_changed(void)
{
	Oid			relid = contcount_table("counter");

	if (OidIsValid(relid))
		CacheInvalidateRelcacheByRelid(relid);
}

void
feed_cache_install(void)
{
	CacheRegisterRelcacheCallback(relcache_callback, (Datum) 0);
}
