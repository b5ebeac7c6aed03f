/*
 * unit_log.c
 *		The rows each person gave each counter over a source: appended with
 *		the inserting transaction, bounded by max_rows in the step that takes
 *		them.
 *
 * Up to 0.5 the source's trigger upserted the person's row of
 * contcount.counter_unit for every inserted row, and counted the row only
 * if the upsert found room under max_rows: an index probe, a row lock and a
 * new row version per inserted row, which made counted inserts cost up to
 * three times plain ones.  Now the trigger only adds one to the person's
 * entry in backend memory, per counter and per (sub)transaction level, as
 * counter_delta.c does for plain counts; just before the transaction
 * commits the entries are appended to contcount.counter_unit_log, rows of
 * about 40 persons of one counter each, their digests and rows as two
 * arrays (a row per person cost the log as much as the insert itself; a
 * row per counter was toasted, and pglz's attempt at the digests cost a
 * quarter of a 1000-row insert; no index, no lock on any row: concurrent
 * inserts of one person never wait on each other).  A row costs the insert
 * its SHA-256 digest (the unit's text form) and a probe of the entries'
 * table, hashed by the digest's first bytes.  An entry of a rolled-back
 * savepoint is dropped, a released one goes to its parent; a transaction
 * with many persons spills the entries of its current level early, into
 * the heap in that level, where an abort of the level rolls them back with
 * its rows.
 *
 * For a counter over a dimension an entry is also the row's key (the
 * trigger's text of it, by address: one text a declared key, kept until
 * the transaction ends), and the log row holds the keys as a third array,
 * unit_keys: the step takes those rows through
 * unit_log_key_rows, which bounds each person across keys by max_groups
 * (the keys it has, in counter_unit_key) and max_rows, per key.
 *
 * The bound is kept by the step (unit_log_rows with take): in one
 * transaction it deletes the counter's log rows that its snapshot sees,
 * adds each person's rows up to the room left in the person's row of
 * counter_unit, writes that row, and pushes the sum.  The log rows it
 * consumed and the bounded state it wrote commit together or not at all,
 * so each logged row is bounded and counted exactly once, across crashes;
 * the worker is the only writer of counter_unit, so no two bounds race,
 * and the step writes the rows it read by an update and the new persons
 * by an insert, with no upsert's speculative insertion (WRITE_UNITS_SQL).
 * One statement takes a counter's log, TAKE_SQL or KEY_TAKE_SQL, each
 * given the bound as a CTE: the source's (SOURCE_BOUND, KEY_SOURCE_BOUND)
 * or a shard feed's (GIVEN_BOUND).
 * Each person is counted at most max_rows times in all, as before: a step
 * adds min(room, rows) for a person, which is what the upserts of its rows
 * added one by one.
 *
 * A shard that feeds a coordinator's counters logs here too, under the
 * negative id of each feed (shard_feed.c), and seals its log with
 * unit_log_take_bounded, the bound given, or, for a counter over a
 * dimension, unit_log_take_key_bounded, the bounds and the declared keys
 * given (the shard's trigger logs every key; the others are dropped before
 * a person's keys count against max_groups): no counter of the shard's own
 * has such an id, so its step worker never takes those rows.
 *
 * IDENTIFICATION
 *	  src/sources/unit_log.c
 */
#include "postgres.h"

#include <openssl/evp.h>

#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "common/owner_spi.h"
#include "sources/unit_log.h"

/* Entries of one level kept in memory before they are written early. */
#define UNIT_LOG_SPILL 65536
/*
 * Entries up to which the table is kept from one transaction to the next: a
 * table keeps the buckets it grew to, and every commit scans them all.
 */
#define UNIT_LOG_KEPT 64

typedef struct LogKey
{
	int64		counter;
	/*
	 * The rows' key of the counter's dimension, or NULL: the source's
	 * trigger keeps the text until the transaction ends (one text a key, so
	 * that entries compare keys by address, with no digest a row).
	 */
	const char *key;
	int32		level;			/* transaction nesting level of the rows */
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
} LogKey;

typedef struct LogEntry
{
	LogKey		key;
	int64		rows;
} LogEntry;

static HTAB *entries = NULL;

/*
 * SHA-256 through OpenSSL's EVP interface, the algorithm fetched once a
 * backend and one context kept for the backend's life.  PostgreSQL's
 * pg_cryptohash makes a context per use, and through OpenSSL 3 every
 * initialisation of it fetches the algorithm again, a locked lookup in the
 * library's store that concurrent inserts share: that cost each row more
 * than hashing its unit.  Neither holds anything of a transaction's.
 */
static const EVP_MD *sha256_md = NULL;
static EVP_MD_CTX *sha256_ctx = NULL;

bool
unit_log_installed(void)
{
	return contcount_has_column("counter_unit_log", "unit_digests");
}

/*
 * The hash of an entry's key: the person's digest is already uniformly
 * spread, so its first bytes, mixed with the counter, the key and the
 * level, do what hashing all 56 bytes of the key did, for a fraction of
 * the cost a row.
 */
static uint32
log_key_hash(const void *key, Size keysize)
{
	const LogKey *k = key;
	uint32		h;

	(void) keysize;
	memcpy(&h, k->digest, sizeof(h));
	h = hash_combine(h, murmurhash32((uint32) k->counter ^ (uint32) k->level));
	return hash_combine(h, murmurhash32((uint32) (uintptr_t) k->key));
}

/* The entry of key, made with no rows if new. */
static LogEntry *
entry_of(const LogKey *key)
{
	bool		found;
	LogEntry   *entry;

	if (entries == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(LogKey);
		ctl.entrysize = sizeof(LogEntry);
		ctl.hash = log_key_hash;
		entries = hash_create("contcount unit log", 16, &ctl, HASH_ELEM | HASH_FUNCTION);
	}
	entry = hash_search(entries, key, HASH_ENTER, &found);
	if (!found)
		entry->rows = 0;
	return entry;
}

/*
 * Forget every entry.  A small table is kept for the next transaction (a
 * single-row insert would otherwise make one a transaction), a large one
 * is freed.
 */
static void
clear_entries(void)
{
	HASH_SEQ_STATUS seq;
	LogEntry   *entry;

	if (entries == NULL || hash_get_num_entries(entries) == 0)
		return;
	if (hash_get_num_entries(entries) > UNIT_LOG_KEPT)
	{
		hash_destroy(entries);
		entries = NULL;
		return;
	}
	hash_seq_init(&seq, entries);
	while ((entry = hash_seq_search(&seq)) != NULL)
		hash_search(entries, &entry->key, HASH_REMOVE, NULL);
}

/* Order entries by counter. */
static int
by_counter(const void *a, const void *b)
{
	int64		x = ((const LogEntry *) a)->key.counter;
	int64		y = ((const LogEntry *) b)->key.counter;

	return (x > y) - (x < y);
}

/*
 * Bytes a log row may give its persons and stay below TOAST's threshold:
 * a toasted row cost more than the insert it logged (pglz tried the
 * digests' array whole, its elements' repeated headers making it go on,
 * and each chunk of the TOAST table has an index entry).  The rest is the
 * tuple's header, the counter and the arrays' headers.
 */
#define LOG_ROW_BYTES (TOAST_TUPLE_THRESHOLD - 128)

/* What an entry adds to a log row: its digest, its rows, its key's text. */
static Size
entry_bytes(const LogEntry *entry)
{
	Size		bytes = INTALIGN(VARHDRSZ + PG_SHA256_DIGEST_LENGTH) + sizeof(int64);

	return entry->key.key ? bytes + INTALIGN(VARHDRSZ + strlen(entry->key.key)) : bytes;
}

/*
 * One row of the log for the n entries of one counter: their digests, their
 * rows and (over a dimension) their keys as arrays, so that a few dozen
 * persons cost the log one row, not one row each.
 */
static void
write_row(Relation rel, const LogEntry *run, int n)
{
	Datum	   *digests = palloc(n * sizeof(Datum));
	Datum	   *rows = palloc(n * sizeof(Datum));
	Datum	   *keys = palloc(n * sizeof(Datum));
	bool		keyed = run[0].key.key != NULL;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, !keyed};

	for (int i = 0; i < n; i++)
	{
		bytea	   *digest = palloc(VARHDRSZ + PG_SHA256_DIGEST_LENGTH);

		SET_VARSIZE(digest, VARHDRSZ + PG_SHA256_DIGEST_LENGTH);
		memcpy(VARDATA(digest), run[i].key.digest, PG_SHA256_DIGEST_LENGTH);
		digests[i] = PointerGetDatum(digest);
		rows[i] = Int64GetDatum(run[i].rows);
		if (keyed)
			keys[i] = CStringGetTextDatum(run[i].key.key);
	}
	values[0] = Int64GetDatum(run[0].key.counter);
	values[1] = PointerGetDatum(construct_array(digests, n, BYTEAOID, -1, false, TYPALIGN_INT));
	values[2] = PointerGetDatum(construct_array(rows, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	if (keyed)
		values[3] = PointerGetDatum(construct_array(keys, n, TEXTOID, -1, false, TYPALIGN_INT));
	simple_heap_insert(rel, heap_form_tuple(RelationGetDescr(rel), values, nulls));
}

/*
 * The n entries of one counter as rows of the log, each as many entries as
 * fit in LOG_ROW_BYTES (an entry larger alone in its row).  The rows'
 * number shows no more than TOAST's chunks of one row did: the persons'
 * bytes over about 2 kB.
 */
static void
write_counter(Relation rel, const LogEntry *run, int n)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "contcount unit log row",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);

	for (int start = 0, end; start < n; start = end)
	{
		Size		bytes = entry_bytes(&run[start]);

		for (end = start + 1; end < n && bytes + entry_bytes(&run[end]) <= LOG_ROW_BYTES; end++)
			bytes += entry_bytes(&run[end]);
		write_row(rel, run + start, end - start);
		MemoryContextReset(cxt);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/*
 * Append the entries of one level (all levels: level 0) to the log, in the
 * current (sub)transaction, a row a counter, and forget them.  The log is
 * written as a catalog would be: no rights, triggers or indexes apply.
 */
static void
write_entries(int level)
{
	HASH_SEQ_STATUS seq;
	LogEntry   *entry;
	LogEntry   *batch;
	Relation	rel;
	int			n = 0;

	if (entries == NULL || hash_get_num_entries(entries) == 0)
		return;
	batch = palloc(hash_get_num_entries(entries) * sizeof(LogEntry));
	hash_seq_init(&seq, entries);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		if (level != 0 && entry->key.level != level)
			continue;
		batch[n++] = *entry;
		/* all levels: the table goes as a whole below */
		if (level != 0)
			hash_search(entries, &entry->key, HASH_REMOVE, NULL);
	}
	qsort(batch, n, sizeof(LogEntry), by_counter);
	rel = table_open(get_relname_relid("counter_unit_log", get_namespace_oid("contcount", false)),
					 RowExclusiveLock);
	for (int start = 0, end; start < n; start = end)
	{
		for (end = start + 1; end < n && batch[end].key.counter == batch[start].key.counter; end++)
			;
		write_counter(rel, batch + start, end - start);
	}
	table_close(rel, RowExclusiveLock);
	pfree(batch);
	if (level == 0)
		clear_entries();
}

/* The algorithm and the context, made on first use. */
static void
sha256_prepare(void)
{
	if (sha256_ctx != NULL)
		return;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
#else
	sha256_md = EVP_sha256();
#endif
	if (sha256_md != NULL)
		sha256_ctx = EVP_MD_CTX_new();
	if (sha256_ctx == NULL)
		elog(ERROR, "could not prepare SHA-256 digests");
}

void
unit_log_digest(const char *text, uint8 digest[PG_SHA256_DIGEST_LENGTH])
{
	unsigned int length;

	sha256_prepare();
	if (EVP_DigestInit_ex(sha256_ctx, sha256_md, NULL) != 1 ||
		EVP_DigestUpdate(sha256_ctx, text, strlen(text)) != 1 ||
		EVP_DigestFinal_ex(sha256_ctx, digest, &length) != 1 || length != PG_SHA256_DIGEST_LENGTH)
		elog(ERROR, "could not compute a SHA-256 digest");
}

void
unit_log_add(int64 counter, const uint8 digest[PG_SHA256_DIGEST_LENGTH], const char *key_name)
{
	LogKey		key;
	LogEntry   *entry;

	memset(&key, 0, sizeof(key));
	key.counter = counter;
	key.level = GetCurrentTransactionNestLevel();
	key.key = key_name;
	memcpy(key.digest, digest, PG_SHA256_DIGEST_LENGTH);
	entry = entry_of(&key);
	entry->rows++;
	/* many persons in one transaction: memory stays bounded */
	if (hash_get_num_entries(entries) >= UNIT_LOG_SPILL)
		write_entries(key.level);
}

/*
 * A subtransaction ends: its entries are dropped (abort) or handed to its
 * parent (commit), merged with the parent's own.
 */
static void
end_level(int level, bool commit)
{
	HASH_SEQ_STATUS seq;
	LogEntry   *entry;
	LogEntry   *moved = NULL;
	int			nmoved = 0;

	if (entries == NULL)
		return;
	hash_seq_init(&seq, entries);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		if (entry->key.level < level)
			continue;
		if (commit)
		{
			if (moved == NULL)
				moved = palloc(sizeof(LogEntry) * hash_get_num_entries(entries));
			moved[nmoved++] = *entry;
		}
		hash_search(entries, &entry->key, HASH_REMOVE, NULL);
	}
	for (int i = 0; i < nmoved; i++)
	{
		LogEntry   *parent;

		moved[i].key.level = level - 1;
		parent = entry_of(&moved[i].key);
		parent->rows += moved[i].rows;
	}
}

static void
xact_callback(XactEvent event, void *arg)
{
	(void) arg;
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			write_entries(0);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PREPARE:
			clear_entries();
			break;
		default:
			break;
	}
}

static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid,
				 SubTransactionId parentSubid, void *arg)
{
	(void) mySubid;
	(void) parentSubid;
	(void) arg;
	if (event == SUBXACT_EVENT_ABORT_SUB || event == SUBXACT_EVENT_COMMIT_SUB)
		end_level(GetCurrentTransactionNestLevel(), event == SUBXACT_EVENT_COMMIT_SUB);
}

void
unit_log_install(void)
{
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
}

/* max_rows given as $2 (a shard's feed, shard_feed.c): the CTE "bound". */
#define GIVEN_BOUND "bound AS (SELECT $2::pg_catalog.int4 AS max_rows), "

/*
 * The rows a person may count in all, for the counter c over the source s:
 * max_rows, or, counting distinct persons (c.count), one a key in at most
 * the counter's sensitivity keys (1 without a dimension): what its noise is
 * scaled to, fixed when it was created, so that keys declared later never
 * let a person move more counts.  persons: is it counting persons?
 */
#define PERSON_BOUND_SQL \
	"CASE WHEN c.count OPERATOR(pg_catalog.=) 'persons' THEN c.sensitivity " \
	"ELSE s.max_rows END AS max_rows, c.count OPERATOR(pg_catalog.=) 'persons' AS persons"

/* The counter's ($1) room a person, PERSON_BOUND_SQL's: the CTE "bound". */
#define SOURCE_BOUND \
	"bound AS (SELECT " PERSON_BOUND_SQL " FROM contcount.counter c JOIN contcount.source s " \
	"ON s.name OPERATOR(pg_catalog.=) c.source WHERE c.id OPERATOR(pg_catalog.=) $1), "

/*
 * Each person's logged rows (from rows_from: unit_digests, unit_rows), up to
 * the room that max_rows (the CTE "bound", defined first) leaves in the
 * person's row of counter_unit ($1: the counter): the CTEs "per" and "room"
 * (unit_digest; unit_row, the row's ctid, NULL if it has none; had; added).
 * A person's sum is capped at max_rows, which changes no room (at most
 * max_rows) and makes it an int4, whose sums are int8 (those of int8 are
 * numeric, slower).
 */
#define ROOM_SQL(rows_from, bound) \
	bound \
	"per AS (SELECT u.unit_digest, LEAST(pg_catalog.sum(u.rows), (SELECT max_rows FROM bound)) " \
	"::pg_catalog.int4 AS rows FROM " rows_from " l, " \
	"ROWS FROM (pg_catalog.unnest(l.unit_digests), pg_catalog.unnest(l.unit_rows)) " \
	"AS u(unit_digest, rows) GROUP BY u.unit_digest), " \
	"room AS (SELECT p.unit_digest, u.ctid AS unit_row, " \
	"coalesce(u.rows, 0) AS had, LEAST(p.rows, GREATEST((SELECT max_rows FROM bound) " \
	"OPERATOR(pg_catalog.-) coalesce(u.rows, 0), 0))::pg_catalog.int4 AS added " \
	"FROM per p LEFT JOIN contcount.counter_unit u ON u.counter_id OPERATOR(pg_catalog.=) $1 " \
	"AND u.unit_digest OPERATOR(pg_catalog.=) p.unit_digest) "

/*
 * Write the persons' new rows (the CTE units_from: unit_digest, unit_row,
 * had, added) into counter_unit ($1: the counter): an update of the rows
 * read in this statement, by their ctid (no second index probe), and an
 * insert of the persons with none, in digest order (the index's order: each
 * insert lands on the page the last one did).  Not an upsert: with its
 * speculative insertions and conflict checks, a step without a dimension
 * that took 10^5 rows cost two thirds more CPU time.  No other writer can
 * change these rows between the read and the write: only the step worker
 * writes a counter's rows of counter_unit, holding the counter's row FOR
 * UPDATE for the whole transaction of the step (counter_worker.c,
 * read_counter), a shard's seal writes its feed's rows under the feed's
 * row lock (shard_feed.c), and the worker's sweep deletes only the rows of
 * counters no longer in contcount.counter, which have no step.
 */
#define WRITE_UNITS_SQL(units_from) \
	"grown AS (UPDATE contcount.counter_unit u SET rows = (n.had OPERATOR(pg_catalog.+) n.added)" \
	"::pg_catalog.int4 FROM " units_from " n WHERE u.ctid OPERATOR(pg_catalog.=) n.unit_row " \
	"AND n.added OPERATOR(pg_catalog.>) 0), " \
	"fresh AS (INSERT INTO contcount.counter_unit (counter_id, unit_digest, rows) " \
	"SELECT $1, unit_digest, (had OPERATOR(pg_catalog.+) added)::pg_catalog.int4 " \
	"FROM " units_from " WHERE unit_row IS NULL AND added OPERATOR(pg_catalog.>) 0 " \
	"ORDER BY unit_digest) "

/* Consume the log into the persons' rows, and count what the bound lets through. */
#define TAKE_SQL(bound) \
	"WITH taken AS (DELETE FROM contcount.counter_unit_log " \
	"WHERE counter_id OPERATOR(pg_catalog.=) $1 AND unit_keys IS NULL " \
	"RETURNING unit_digests, unit_rows), " \
	ROOM_SQL("taken", bound) ", " \
	WRITE_UNITS_SQL("room") \
	"SELECT coalesce(pg_catalog.sum(added), 0)::pg_catalog.int8 FROM room"

/* What a step would count now, nothing consumed. */
#define PEEK_SQL \
	"WITH logged AS (SELECT unit_digests, unit_rows FROM contcount.counter_unit_log " \
	"WHERE counter_id OPERATOR(pg_catalog.=) $1 AND unit_keys IS NULL), " \
	ROOM_SQL("logged", SOURCE_BOUND) \
	"SELECT coalesce(pg_catalog.sum(added), 0)::pg_catalog.int8 FROM room"

int64
unit_log_rows(int64 counter, bool take)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(counter)};
	bool		isnull;

	if (!unit_log_installed())
		return 0;
	if (SPI_execute_with_args(take ? TAKE_SQL(SOURCE_BOUND) : PEEK_SQL, 1, types, values, NULL,
							  !take, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read the persons' rows of counter " INT64_FORMAT, counter);
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

int64
unit_log_take_bounded(int64 log_id, int32 max_rows)
{
	Oid			types[2] = {INT8OID, INT4OID};
	Datum		values[2] = {Int64GetDatum(log_id), Int32GetDatum(max_rows)};
	bool		isnull;

	if (SPI_execute_with_args(TAKE_SQL(GIVEN_BOUND), 2, types, values, NULL, false, 0) !=
		SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not take the persons' rows of log " INT64_FORMAT, log_id);
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * The bounds of a counter ($1) over a dimension: PERSON_BOUND_SQL's and
 * the source's max_groups, the CTE "bound" of KEY_TAKE_SQL.
 */
#define KEY_SOURCE_BOUND \
	"bound AS (SELECT " PERSON_BOUND_SQL ", s.max_groups FROM contcount.counter c " \
	"JOIN contcount.source s " \
	"ON s.name OPERATOR(pg_catalog.=) c.source WHERE c.id OPERATOR(pg_catalog.=) $1), "

/*
 * The bounds given (a shard's feed, shard_feed.c): max_rows $2, persons $3,
 * max_groups $4; and the keys declared on the coordinator, $5, which alone
 * the shard keeps (its trigger logs every key, not knowing them), before
 * any person's keys are counted against max_groups.
 */
#define GIVEN_KEY_BOUND \
	"bound AS (SELECT $2::pg_catalog.int4 AS max_rows, $3::pg_catalog.bool AS persons, " \
	"$4::pg_catalog.int4 AS max_groups), "
#define DECLARED_KEYS \
	"WHERE u.key OPERATOR(pg_catalog.=) ANY (SELECT pg_catalog.unnest($5::pg_catalog.text[])) "

/*
 * A person's rows in a key, p.rows; counting persons, one if the person has
 * not counted in the key yet (k: its row of counter_unit_key), else none.
 */
#define PERSON_KEY_ROWS_SQL \
	"CASE WHEN NOT (SELECT persons FROM bound) THEN p.rows WHEN k.key IS NULL THEN 1 " \
	"ELSE 0 END AS rows"

/*
 * Each person's logged rows by key, of the keys keep lets through (a WHERE
 * clause, or ""): the CTE "per", capped at max_rows as in ROOM_SQL.
 */
#define KEY_PER_SQL(keep) \
	"per AS (SELECT u.unit_digest, u.key, LEAST(pg_catalog.sum(u.rows), " \
	"(SELECT max_rows FROM bound))::pg_catalog.int4 AS rows FROM taken l, " \
	"ROWS FROM (pg_catalog.unnest(l.unit_digests), pg_catalog.unnest(l.unit_rows), " \
	"pg_catalog.unnest(l.unit_keys)) AS u(unit_digest, rows, key) " keep \
	"GROUP BY u.unit_digest, u.key), "

/*
 * Each person's rows by key, bounded across keys: the CTE "room"
 * (unit_digest, key, had_key, unit_row, had, added).  The keys the person
 * already counted in (counter_unit_key) stay theirs, new keys are taken in
 * key order up to max_groups in all (the step is the person's time: keys of
 * earlier steps come first, ties in a step by key, as the bounding rule
 * breaks ties), and the rows of the kept keys, in key order, up to the room
 * max_rows leaves in counter_unit.  What a person keeps depends on their own
 * rows only: at most max_rows rows in at most max_groups keys, in all
 * steps.  Counting persons, a row a key, and max_rows is PERSON_BOUND_SQL's.
 * Both windows run in one order, (person, key), so the rows are sorted
 * once: a new key's rank is the count of new keys up to it.
 */
#define KEY_ROOM_SQL \
	"marked AS (SELECT p.unit_digest, p.key, " PERSON_KEY_ROWS_SQL ", k.key IS NOT NULL AS had_key, " \
	"u.ctid AS unit_row, coalesce(u.rows, 0) AS had, " \
	"(SELECT pg_catalog.count(*) FROM contcount.counter_unit_key h " \
	"WHERE h.counter_id OPERATOR(pg_catalog.=) $1 " \
	"AND h.unit_digest OPERATOR(pg_catalog.=) p.unit_digest) AS had_keys FROM per p " \
	"LEFT JOIN contcount.counter_unit_key k ON k.counter_id OPERATOR(pg_catalog.=) $1 " \
	"AND k.unit_digest OPERATOR(pg_catalog.=) p.unit_digest AND k.key OPERATOR(pg_catalog.=) p.key " \
	"LEFT JOIN contcount.counter_unit u ON u.counter_id OPERATOR(pg_catalog.=) $1 " \
	"AND u.unit_digest OPERATOR(pg_catalog.=) p.unit_digest), " \
	"ranked AS (SELECT m.*, m.had_key OR m.had_keys OPERATOR(pg_catalog.+) " \
	"pg_catalog.count(*) FILTER (WHERE NOT m.had_key) OVER (PARTITION BY m.unit_digest " \
	"ORDER BY m.key COLLATE \"C\" ROWS UNBOUNDED PRECEDING) " \
	"OPERATOR(pg_catalog.<=) (SELECT max_groups FROM bound) AS kept FROM marked m), " \
	"room AS (SELECT r.unit_digest, r.key, r.had_key, r.unit_row, r.had, " \
	"LEAST(r.rows, GREATEST((SELECT max_rows FROM bound) OPERATOR(pg_catalog.-) r.had " \
	"OPERATOR(pg_catalog.-) (pg_catalog.sum(r.rows) OVER (PARTITION BY r.unit_digest " \
	"ORDER BY r.key COLLATE \"C\" ROWS UNBOUNDED PRECEDING) OPERATOR(pg_catalog.-) r.rows), 0)) " \
	"::pg_catalog.int4 AS added FROM ranked r WHERE r.kept), "

/*
 * Take the counter's ($1) log by key, bounded by the CTE bound (max_rows,
 * persons, max_groups), of the keys keep lets through: each person's rows as KEY_ROOM_SQL keeps them,
 * written to counter_unit (WRITE_UNITS_SQL) and the person's new keys to
 * counter_unit_key, and each key's count returned.
 */
#define KEY_TAKE_SQL(bound, keep) \
	"WITH taken AS (DELETE FROM contcount.counter_unit_log " \
	"WHERE counter_id OPERATOR(pg_catalog.=) $1 AND unit_keys IS NOT NULL " \
	"RETURNING unit_digests, unit_rows, unit_keys), " \
	bound KEY_PER_SQL(keep) KEY_ROOM_SQL \
	"units AS (SELECT unit_digest, unit_row, had, pg_catalog.sum(added) AS added FROM room " \
	"GROUP BY unit_digest, unit_row, had), " \
	WRITE_UNITS_SQL("units") ", " \
	"kept_keys AS (INSERT INTO contcount.counter_unit_key (counter_id, unit_digest, key) " \
	"SELECT $1, unit_digest, key FROM room " \
	"WHERE added OPERATOR(pg_catalog.>) 0 AND NOT had_key) " \
	"SELECT key, pg_catalog.sum(added)::pg_catalog.int8 FROM room GROUP BY key"

void
unit_log_key_rows(int64 counter)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(counter)};

	if (SPI_execute_with_args(KEY_TAKE_SQL(KEY_SOURCE_BOUND, ""), 1, types, values, NULL, false, 0) !=
		SPI_OK_SELECT)
		elog(ERROR, "could not read the persons' rows by key of counter " INT64_FORMAT, counter);
}

void
unit_log_take_key_bounded(int64 log_id, int32 max_rows, bool persons, int32 max_groups,
						  Datum keys)
{
	Oid			types[5] = {INT8OID, INT4OID, BOOLOID, INT4OID, TEXTARRAYOID};
	Datum		values[5] = {Int64GetDatum(log_id), Int32GetDatum(max_rows), BoolGetDatum(persons),
	Int32GetDatum(max_groups), keys};

	if (SPI_execute_with_args(KEY_TAKE_SQL(GIVEN_KEY_BOUND, DECLARED_KEYS), 5, types, values, NULL,
							  false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not take the persons' rows by key of log " INT64_FORMAT, log_id);
}

void
unit_log_forget(int64 counter)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(counter)};

	if (unit_log_installed() &&
		SPI_execute_with_args("DELETE FROM contcount.counter_unit_log "
							  "WHERE counter_id OPERATOR(pg_catalog.=) $1",
							  1, types, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not forget the persons' rows of counter " INT64_FORMAT, counter);
}
