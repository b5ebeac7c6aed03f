/*
 * ledger_store.c
 *		The durable truth of the privacy budget: ledger creations, charges and
 *		refunds, appended to pages of a relation of our own and written through
 *		a custom WAL resource manager; and the sums they add up to, kept in
 *		shared memory.
 *
 * Why a relation in WAL.  A charge must outlive the transaction that makes
 * it (ROLLBACK, an error, a cancel or PREPARE TRANSACTION cannot take it
 * back), be durable before the value it pays for is shown, and travel with
 * PostgreSQL's own WAL: crash recovery, streaming and log-shipping standbys,
 * point-in-time recovery and base backups must all know it.  So every change
 * to the store is a WAL record of our resource manager, inserted outside any
 * transaction and flushed (XLogFlush, where concurrent flushes group-commit;
 * then, if synchronous standbys are configured, waiting for them as a commit
 * does) before the release returns a value.  A refund is logged but not
 * flushed: losing one only keeps budget spent.
 *
 * Why the records go into pages.  PostgreSQL 15 gives extensions no
 * checkpoint callback, and WAL before a checkpoint's redo point is recycled.
 * Records that lived only in WAL (or in a file we write and sync ourselves)
 * would be lost with it.  Instead the store is an ordinary relation file,
 * global/<STORE_RELFILENODE>, of standard pages in shared buffers: each
 * record both appends an item to the last page and is logged against that
 * page, exactly as a heap insert is.  The buffer manager's rules then do
 * what we need: a checkpoint writes and fsyncs every page dirtied before its
 * redo point, the first change of a page after a checkpoint logs a full-page
 * image (torn pages), and redo applies a record only to a page older than it
 * (the page LSN).  A store file older than the WAL that follows it is
 * brought up to date by redo; one that is newer is left alone.  Base
 * backups copy the file with the WAL that completes it.  The file is not a
 * catalog relation: no SQL can read, vacuum or drop it; the relfilenode is a
 * fixed number in the global tablespace, where no user relation can live,
 * and GetNewRelFileNode skips numbers whose file exists.
 *
 * Sums.  Shared memory holds each ledger's accounting and what it spent,
 * added up from the pages by the first backend that needs them after start
 * (on a standby too) and kept current by every append and, once loaded, by
 * redo.  Redo of a record whose page already held it (BLK_DONE) adds
 * nothing: the load counted it from the page.
 *
 * Accounting.  A ledger accounts in pure epsilon or in zCDP rho, for good:
 * its creation item says which, and every charge item says both what its
 * releases cost in their own accounting (each pure release's epsilon, each
 * Gaussian release's rho and what its noise is, cc_gauss, and how many)
 * and what the ledger was charged in its own (units), so that the
 * composition can be rebuilt release by release (ledger_curve.c).  Applying an item checks that the two agree (a zCDP release on a
 * pure ledger, or units that are not the releases' cost, damage the store).
 *
 * Item formats.  An item's kind says its layout.  Format 1 (kinds 1 to 7),
 * written by 0.3 and 0.4, has no accounting: it is read, as pure, and never
 * written again.  Format 2 is the same kinds with ITEM_FORMAT_2 set and the
 * accounting fields between the fixed part and the text.  Why a flag in the
 * kind, and not a new page version: 0.4's pages go on receiving items, so a
 * page holds both formats, and each item must say its own.  Why not a
 * version field that 0.4 would skip: a 0.4 library reading a format 2 item
 * (a standby not yet given the new library, a downgrade) must fail closed
 * rather than read rho as epsilon, and it does, since it marks its store
 * damaged at a kind it does not know.  A compact item (ITEM_COMPACT as well)
 * is a format 2 charge or refund without the fields it would leave zero (the
 * database, legacy_end, the Gaussian noise): the charges of pure releases,
 * most of all items, take 56 bytes fewer in pages and WAL.  It is read as the
 * format 2 item it stands for; a library that does not know it fails closed
 * on it, as above.
 *
 * Blocks.  A protected source may hold its budget per block of time
 * (src/sources/source_blocks.c); the blocks' spending lives here too, under
 * the source's ledger, keyed by the block's start.  A block charge
 * (ITEM_BLOCK_CHARGE, format 2 only) pays for one release from each block of
 * a run of consecutive blocks of one length, the run (BlockRun) following
 * the statement: one item, one WAL record, so that redo, like the append
 * under the lock, applies all of the run's blocks or none.  A block is
 * created by its first charge and forgotten only with its ledger; redo finding a block with
 * another end damages the store, and an append refuses a run overlapping
 * blocks of another length.  A ledger's own charges (releases of all its
 * data, before its blocks were declared or from sources without blocks)
 * count against every block of it.  Blocks do not add to their ledger's
 * sum, nor are they in the audit of charges or its curve: they have their
 * own views; an import raises a block by a block charge of the difference.
 * A 0.4 library fails closed on the new kind, as on format 2.
 *
 * Forgetting.  A ledger that nothing can charge any more (its drop
 * committed, or its creation rolled back: ledger_forget.c) gives back its
 * room: an ITEM_FORGOTTEN item (format 2 only) removes its sum and its
 * blocks, in the append as in the load and redo, so the room stays free
 * through restarts and on standbys.  Its items stay on the pages, for the
 * audit and the export; an import keeps it forgotten.  A charge after it
 * finds no sum and is refused; a refund after it is dropped.  Each role that
 * is not a superuser creates at most contcount.max_ledgers_per_role live
 * ledgers (the sum keeps its creator), and each ledger holds at most
 * contcount.max_blocks_per_ledger blocks.  A 0.5 library fails closed on
 * the new kind.
 *
 * Failing closed.  An item whose CRC fails, a charge to a ledger the store
 * never created, more ledgers than contcount.max_ledgers, or a 0.2 store file
 * that is not the one taken in (ledger_legacy.c), mark the store damaged:
 * every charge is refused until the server is restored and restarted.  A lost
 * store file leaves the catalog's ledgers missing from the store: refused
 * too.  A standby refuses releases (it cannot log a charge) but shows spent
 * and the audit.
 *
 * The 0.2 store file.  On a primary, the first load takes contcount/ledger
 * into the store: a LEGACY_BEGIN item naming the file's size and CRC, each of
 * its records as an item that remembers where it ended in the file (so that
 * an import cut short by a crash resumes where it stopped, counting nothing
 * twice), a LEGACY_END item, a flush, and only then the file renamed to
 * contcount/ledger.imported.  A 0.2 file found beside a store that did not
 * take it in is a lone older file: refused.
 *
 * Locking protocol: StoreShared->lock guards StoreShared, the sums hash and
 * the blocks hash, and serializes appends (so the last page and the
 * relation's extension have one writer).  An append holds it exclusively
 * from the budget check (of every block of a block charge) through the page
 * change and WAL insert to the update of the sums, and releases it before
 * the flush, so that flushes of concurrent charges overlap and
 * group-commit.  A charge seen by others before its flush can only make
 * them refuse more, and their own flush, later in WAL, covers it.  Reading
 * a sum takes the lock shared; the first reader after start loads the sums
 * under it exclusively.  Redo takes it exclusively around each record, and
 * always before the buffer lock, as appends and the load do.  Scanning the
 * audit takes no store lock, only each page's buffer lock in turn.
 *
 * IDENTIFICATION
 *	  src/ledger/ledger_store.c
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/bufmask.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlogrecovery.h"
#include "access/xlogutils.h"
#include "access/xact.h"
#include "catalog/pg_tablespace_d.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"
#include "storage/bufmgr.h"
#include "storage/fd.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#include "common/errors.h"
#include "common/int.h"
#include "common/seal.h"
#include "common/settings.h"
#include "ledger/ledger_legacy.h"
#include "ledger/ledger_store.h"
#include "releases/spec.h"

/*
 * The resource manager id: the one PostgreSQL reserves for experiments,
 * until contcount registers one on the wiki's list.
 */
#define RM_CONTCOUNT_ID RM_EXPERIMENTAL_ID
#define RM_CONTCOUNT_NAME "contcount"

/* WAL record kinds (the high bits of xl_info are the resource manager's) */
#define XLOG_STORE_APPEND 0x10	/* an item added to a page */
#define XLOG_STORE_APPEND_INIT 0x20 /* the same, on a page it starts */

#define STORE_RELFILENODE 1668247156	/* "cont" */
/* Written by redo's end when recovery stopped at a target, until logged. */
#define STALE_DIR "contcount"
#define STALE_FILE STALE_DIR "/recovery_target_stop"
#define STORE_MAGIC 0x636f756e	/* "coun", in each page's special space */
#define STORE_VERSION 1
#define MAX_FUNCTION 63
#define MAX_STATEMENT 1023
/* a creation keeps the ledger's name as its statement: whole */
StaticAssertDecl(LEDGER_NAME_MAX <= MAX_STATEMENT, "a ledger name must fit an item");

typedef enum ItemKind
{
	ITEM_CREATED = 1,			/* a ledger is created */
	ITEM_CHARGE = 2,			/* epsilon spent from a ledger */
	ITEM_REFUND = 3,			/* unused advance payment given back */
	ITEM_LEGACY_BEGIN = 4,		/* taking in a 0.2 file: ledger = CRC, units =
								 * size */
	ITEM_LEGACY_END = 5,		/* the same, done */
	ITEM_STALE = 6,				/* recovery stopped at a target: charges may
								 * be missing */
	ITEM_ACCEPTED = 7,			/* a superuser accepted the store as it is */
	ITEM_BLOCK_CHARGE = 8,		/* units spent from each of a run of blocks of
								 * a ledger (format 2 only, with a BlockRun) */
	ITEM_FORGOTTEN = 9			/* a ledger dropped, or whose creation rolled
								 * back, gives its room back (format 2 only) */
} ItemKind;

/* set in the kind of every item written since 0.5: see "Item formats" */
#define ITEM_FORMAT_2 0x0100
/* and with it in the kind of a compact item */
#define ITEM_COMPACT 0x0200
#define ITEM_KIND(item) ((ItemKind) ((item)->kind & ~ITEM_FORMAT_2))

/* An item, in format 2; format 1 lacks the fields from release_units on. */
typedef struct StoreItem
{
	pg_crc32c	crc;			/* of the bytes after it, up to length */
	uint16		length;			/* of the whole item */
	uint16		kind;
	Oid			role;
	Oid			database;		/* where a ledger was created; else 0 */
	int64		ledger;
	uint64		units;			/* in all, in the ledger's accounting */
	TimestampTz at;
	int64		legacy_end;		/* taken from a 0.2 file: where its record
								 * ended there; else 0 */
	/* format 2 */
	uint64		release_units;	/* a charge or refund: what one release
								 * costs in its own accounting */
	int64		releases;		/* how many; 0: not recorded (format 1, a 0.2
								 * record) */
	uint32		accounting;		/* a creation: the ledger's; a charge or
								 * refund: its releases' (cc_accounting) */
	/* a zCDP charge or refund: what its releases' noise is (cc_gauss) */
	uint64		sigma2_num;
	uint64		sigma2_den;
	uint64		coordinates;
	uint64		shift;
	uint64		l1_units;
	/* the function, NUL, the statement, NUL */
	char		text[FLEXIBLE_ARRAY_MEMBER];
} StoreItem;

/*
 * The blocks a block charge pays for: count blocks of length usecs from
 * first on, each charged the item's units.  It follows the statement's NUL,
 * unaligned.  One item for the whole run, so that redo applies all of them
 * or none.
 */
typedef struct BlockRun
{
	int64		first;
	int64		length;
	int64		count;
} BlockRun;

/*
 * A compact item: a StoreItem's fields in another order, the ones it lacks
 * being zero.  The first three are at the same places.
 */
typedef struct CompactItem
{
	pg_crc32c	crc;
	uint16		length;
	uint16		kind;
	Oid			role;
	uint32		accounting;
	int64		ledger;
	uint64		units;
	TimestampTz at;
	uint64		release_units;
	int64		releases;
	char		text[FLEXIBLE_ARRAY_MEMBER];
} CompactItem;

/*
 * The fields a compact item keeps, under the same names in both layouts:
 * COMPACT_FIELDS(COPY_FIELD) copies them from "from" to "to", either way.
 */
#define COMPACT_FIELDS(COPY) \
	COPY(role) COPY(accounting) COPY(ledger) COPY(units) COPY(at) \
	COPY(release_units) COPY(releases)
#define COPY_FIELD(field) to->field = from->field;

#define ITEM_FIXED_1 ((int) offsetof(StoreItem, release_units))
#define COMPACT_FIXED ((int) offsetof(CompactItem, text))
#define ITEM_FIXED ((int) offsetof(StoreItem, text))
#define ITEM_TEXT_MAX (MAX_FUNCTION + 1 + MAX_STATEMENT + 1)
#define ITEM_MAX (ITEM_FIXED + ITEM_TEXT_MAX + (int) sizeof(BlockRun))

/* The WAL record: the item, and where it went. */
typedef struct xl_store_append
{
	OffsetNumber offnum;
	/* the item follows */
} xl_store_append;

#define SizeOfStoreAppend (offsetof(xl_store_append, offnum) + sizeof(OffsetNumber))

typedef struct StoreSpecial
{
	uint32		magic;
	uint32		version;
} StoreSpecial;

typedef struct StoreShared
{
	LWLock	   *lock;
	bool		loaded;			/* the sums are added up */
	bool		legacy_checked; /* a 0.2 file was looked for on a primary */
	BlockNumber last_block;		/* the last page, once loaded; or
								 * InvalidBlockNumber */
	/* a 0.2 file taken in: its size and CRC, how far, whether done */
	bool		legacy_begun;
	bool		legacy_done;
	int64		legacy_size;
	pg_crc32c	legacy_crc;
	int64		legacy_next;
	bool		damaged;
	char		damage[256];	/* what was found */
	pg_atomic_uint64 catalog_generation;	/* see ledger_store_generation */
	bool		stale;			/* recovery stopped at a target since the
								 * store was last accepted */
	char		stale_target[128];	/* which */
} StoreShared;

typedef struct LedgerSum
{
	int64		ledger;			/* hash key */
	uint64		spent_units;	/* in its accounting */
	cc_accounting accounting;
	Oid			created_by;		/* the role that created it: its share */
	Oid			database;		/* where; 0 for a 0.2 ledger */
} LedgerSum;

/*
 * A block of a ledger: its spending over the rows timed in [start, end).
 * Keyed by ledger and start; its end is fixed by its first charge.
 */
typedef struct BlockKey
{
	int64		ledger;
	TimestampTz start;
} BlockKey;

typedef struct BlockSum
{
	BlockKey	key;			/* hash key */
	TimestampTz end;
	uint64		spent_units;	/* in its ledger's accounting */
} BlockSum;

static StoreShared *store = NULL;
static HTAB *sums = NULL;		/* LedgerSum by ledger; store->lock */
static HTAB *blocks = NULL;		/* BlockSum by (ledger, start); store->lock */

static const RelFileNode store_node = {GLOBALTABLESPACE_OID, InvalidOid, STORE_RELFILENODE};

static void store_redo(XLogReaderState *record);
static void store_desc(StringInfo buf, XLogReaderState *record);
static const char *store_identify(uint8 info);
static void store_mask(char *pagedata, BlockNumber blkno pg_attribute_unused());
static void store_cleanup(void);
static bool forgotten(int64 ledger, uint64 *spent_units, cc_accounting *accounting);

static RmgrData store_rmgr = {
	.rm_name = RM_CONTCOUNT_NAME,
	.rm_redo = store_redo,
	.rm_desc = store_desc,
	.rm_identify = store_identify,
	.rm_cleanup = store_cleanup,
	.rm_mask = store_mask
};

static pg_crc32c
item_crc(const StoreItem *item)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, (const char *) item + sizeof(pg_crc32c),
				item->length - sizeof(pg_crc32c));
	FIN_CRC32C(crc);
	return crc;
}

const char *
ledger_accounting_name(cc_accounting accounting)
{
	return accounting == CC_ZCDP ? "zcdp" : "pure";
}

bool
ledger_accounting_parse(const char *name, cc_accounting *accounting)
{
	if (strcmp(name, "pure") == 0)
		*accounting = CC_PURE;
	else if (strcmp(name, "zcdp") == 0)
		*accounting = CC_ZCDP;
	else
		return false;
	return true;
}

/*
 * An item in buf (ITEM_MAX bytes), in format 2, to be sealed.  A creation's
 * charge->cost.accounting is the ledger's.
 */
static StoreItem *
build_item(char *buf, ItemKind kind, int64 ledger, uint64 units,
		   const StoreCharge *charge, const char *function_text)
{
	StoreItem  *item = (StoreItem *) buf;
	char		function[MAX_FUNCTION + 1];
	const char *statement = charge && charge->statement ? charge->statement : "";
	int			slen = pg_mbcliplen(statement, strlen(statement), MAX_STATEMENT);
	int			flen;

	/* the audit tells a batch or a refund by its function text */
	if (function_text != NULL)
		strlcpy(function, function_text, sizeof(function));
	else if (charge && (charge->refund || charge->releases > 1))
		snprintf(function, sizeof(function), "%s, " INT64_FORMAT " %s", charge->function,
				 charge->releases, charge->refund ? "unused" : "releases");
	else
		strlcpy(function, charge ? charge->function : "", sizeof(function));
	flen = strlen(function);

	memset(buf, 0, ITEM_FIXED);
	item->kind = kind | ITEM_FORMAT_2;
	item->role = charge ? charge->role : InvalidOid;
	item->ledger = ledger;
	item->units = units;
	item->at = charge ? charge->at : 0;
	item->accounting = charge ? charge->cost.accounting : 0;
	item->release_units = charge ? charge->cost.units : 0;
	item->releases = charge ? charge->releases : 0;
	if (charge)
	{
		item->sigma2_num = charge->cost.gauss.sigma2.num;
		item->sigma2_den = charge->cost.gauss.sigma2.den;
		item->coordinates = charge->cost.gauss.coordinates;
		item->shift = charge->cost.gauss.shift;
		item->l1_units = charge->cost.gauss.l1_units;
	}
	memcpy(item->text, function, flen);
	item->text[flen] = '\0';
	memcpy(item->text + flen + 1, statement, slen);
	item->text[flen + 1 + slen] = '\0';
	item->length = ITEM_FIXED + flen + 1 + slen + 1;
	return item;
}

/*
 * The item as it is stored, sealed: a charge or refund whose other fields
 * are zero as a compact item written into buf (ITEM_MAX bytes), any other
 * item as it is.
 */
static const StoreItem *
seal_item(StoreItem *item, char *buf)
{
	const StoreItem *from = item;
	CompactItem *to = (CompactItem *) buf;
	int			textlen = item->length - ITEM_FIXED;

	if ((ITEM_KIND(item) != ITEM_CHARGE && ITEM_KIND(item) != ITEM_REFUND) ||
		item->database != InvalidOid || item->legacy_end != 0 ||
		item->sigma2_num != 0 || item->sigma2_den != 0 || item->coordinates != 0 ||
		item->shift != 0 || item->l1_units != 0)
	{
		item->crc = item_crc(item);
		return item;
	}
	to->length = COMPACT_FIXED + textlen;
	to->kind = item->kind | ITEM_COMPACT;
	COMPACT_FIELDS(COPY_FIELD);
	memcpy(to->text, item->text, textlen);
	to->crc = item_crc((const StoreItem *) to);
	return (const StoreItem *) to;
}

static void
mark_damaged(const char *what)
{
	store->damaged = true;
	strlcpy(store->damage, what, sizeof(store->damage));
	ereport(LOG,
			(errmsg("the ledger store is damaged, releases will be refused: %s", what)));
}

static void
require_store(void)
{
	if (store == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("contcount must be loaded through shared_preload_libraries"),
				 errhint("Add contcount to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/* The error every use of a damaged store gets.  Lock held. */
static void
refuse_if_damaged(void)
{
	if (store->damaged)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the privacy budget ledger store is damaged: releases are refused"),
				 errdetail("%s", store->damage),
				 errhint("Restore the server from a base backup and its WAL (point-in-time recovery), "
						 "or import the ledgers' last export with contcount.import_ledgers(), and restart.")));
}

/*
 * A charge or refund of releases releases of cost each, units in all, to a
 * ledger accounting in ledger: does the ledger admit such releases, and are
 * units what they cost it?  (A charge recorded before 0.5 says only its
 * units, which a pure ledger was charged: releases 0.)
 */
static bool
charge_adds_up(cc_accounting ledger, cc_cost cost, int64 releases, uint64 units)
{
	uint64		each;
	uint64		total;

	if (releases == 0)
		return ledger == CC_PURE && cost.accounting == CC_PURE;
	return releases > 0 && cc_ledger_cost(ledger, cost, &each) &&
		!pg_mul_u64_overflow(each, (uint64) releases, &total) && total == units;
}

/*
 * The run of blocks a block charge item pays for, into *run; false if the
 * item does not end with a sound one.
 */
static bool
item_block_run(const StoreItem *item, BlockRun *run)
{
	const char *statement = item->text + strlen(item->text) + 1;
	const char *end = statement + strlen(statement) + 1;
	int64		last;

	if (end - (const char *) item + (int) sizeof(BlockRun) != item->length)
		return false;
	memcpy(run, end, sizeof(BlockRun));
	return run->length > 0 && run->count > 0 &&
		!pg_mul_s64_overflow(run->length, run->count, &last) &&
		!pg_add_s64_overflow(run->first, last, &last);
}

/*
 * Add units to each block of run of ledger, creating those it is the first
 * charge of.  Lock held exclusively.  Returns false, with the store marked
 * damaged, if a block had another end or there is no room for one.
 */
static bool
apply_block_run(int64 ledger, const BlockRun *run, uint64 units)
{
	for (int64 i = 0; i < run->count; i++)
	{
		BlockKey	key = {ledger, run->first + i * run->length};
		bool		found;
		BlockSum   *block = hash_search(blocks, &key, HASH_ENTER_NULL, &found);

		if (block == NULL)
		{
			mark_damaged("more blocks than contcount.max_blocks");
			return false;
		}
		if (!found)
		{
			block->end = key.start + run->length;
			block->spent_units = 0;
		}
		else if (block->end != key.start + run->length)
		{
			char		what[160];

			snprintf(what, sizeof(what), "a block charge of ledger " INT64_FORMAT
					 " whose block at " INT64_FORMAT " has another length", ledger, key.start);
			mark_damaged(what);
			return false;
		}
		block->spent_units += units;
	}
	return true;
}

/*
 * Give back the room of a ledger that nothing can charge any more: its sum
 * and its blocks.  Its items stay on the pages, for the audit.  Lock held
 * exclusively.
 */
static void
forget_ledger(int64 ledger)
{
	HASH_SEQ_STATUS scan;
	BlockSum   *block;

	hash_seq_init(&scan, blocks);
	while ((block = hash_seq_search(&scan)) != NULL)
		if (block->key.ledger == ledger)
			(void) hash_search(blocks, &block->key, HASH_REMOVE, NULL);
	(void) hash_search(sums, &ledger, HASH_REMOVE, NULL);
}

/*
 * Apply one item, in format 2, to the sums and the 0.2 import's state.  Lock
 * held exclusively.  Returns false, with the store marked damaged, if it
 * cannot be applied.
 */
static bool
apply_item(const StoreItem *item)
{
	LedgerSum  *sum;
	bool		found;
	char		what[160];

	if (item->legacy_end > store->legacy_next)
		store->legacy_next = item->legacy_end;
	switch (ITEM_KIND(item))
	{
		case ITEM_CREATED:
			if (item->accounting != CC_PURE && item->accounting != CC_ZCDP)
				break;
			sum = hash_search(sums, &item->ledger, HASH_ENTER_NULL, &found);
			if (sum == NULL)
			{
				mark_damaged("more ledgers than contcount.max_ledgers");
				return false;
			}
			if (!found)
			{
				sum->spent_units = 0;
				sum->accounting = (cc_accounting) item->accounting;
				sum->created_by = item->role;
				sum->database = item->database;
			}
			if (sum->accounting == item->accounting)
				return true;
			break;
		case ITEM_CHARGE:
		case ITEM_REFUND:
			sum = hash_search(sums, &item->ledger, HASH_FIND, NULL);
			if (sum == NULL ||
				!charge_adds_up(sum->accounting,
								(cc_cost) {.accounting = (cc_accounting) item->accounting,
										   .units = item->release_units},
								item->releases, item->units))
				break;
			if (ITEM_KIND(item) == ITEM_CHARGE)
			{
				sum->spent_units += item->units;
				return true;
			}
			/* a refund never exceeds what its ledger was charged */
			if (item->units <= sum->spent_units)
			{
				sum->spent_units -= item->units;
				return true;
			}
			break;
		case ITEM_LEGACY_BEGIN:
			store->legacy_begun = true;
			store->legacy_size = (int64) item->units;
			store->legacy_crc = (pg_crc32c) item->ledger;
			return true;
		case ITEM_LEGACY_END:
			store->legacy_done = true;
			return true;
		case ITEM_STALE:
			store->stale = true;
			strlcpy(store->stale_target, item->text + strlen(item->text) + 1,
					sizeof(store->stale_target));
			return true;
		case ITEM_ACCEPTED:
			store->stale = false;
			return true;
		case ITEM_BLOCK_CHARGE:
			{
				BlockRun	run;

				sum = hash_search(sums, &item->ledger, HASH_FIND, NULL);
				if (sum == NULL || !item_block_run(item, &run) ||
					!charge_adds_up(sum->accounting,
									(cc_cost) {.accounting = (cc_accounting) item->accounting,
											   .units = item->release_units},
									item->releases, item->units) || item->releases != 1)
					break;
				return apply_block_run(item->ledger, &run, item->units);
			}
		case ITEM_FORGOTTEN:
			/* appended only for a ledger the store knows, under the lock */
			if (hash_search(sums, &item->ledger, HASH_FIND, NULL) == NULL)
				break;
			forget_ledger(item->ledger);
			return true;
	}
	snprintf(what, sizeof(what), "an unexpected item of kind %u (accounting %u) for ledger " INT64_FORMAT,
			 item->kind, item->accounting, item->ledger);
	mark_damaged(what);
	return false;
}

/* Is this a page of the store, and is the item whole? */
static bool
page_is_ours(Page page)
{
	StoreSpecial *special;

	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(StoreSpecial)))
		return false;
	special = (StoreSpecial *) PageGetSpecialPointer(page);
	return special->magic == STORE_MAGIC && special->version == STORE_VERSION;
}

static const StoreItem *
page_item(Page page, OffsetNumber off)
{
	ItemId		iid = PageGetItemId(page, off);
	const StoreItem *item;

	if (!ItemIdIsNormal(iid) || ItemIdGetLength(iid) < ITEM_FIXED_1 + 2)
		return NULL;
	item = (const StoreItem *) PageGetItem(page, iid);
	if (item->length != ItemIdGetLength(iid) || item_crc(item) != item->crc)
		return NULL;
	/* no longer than the longest item of its format */
	if ((item->kind & ITEM_COMPACT) ?
		!(item->kind & ITEM_FORMAT_2) || item->length < COMPACT_FIXED + 2 ||
		item->length > COMPACT_FIXED + ITEM_TEXT_MAX :
		(item->kind & ITEM_FORMAT_2) ? item->length < ITEM_FIXED + 2 || item->length > ITEM_MAX :
		item->length > ITEM_FIXED_1 + ITEM_TEXT_MAX)
		return NULL;
	return item;
}

/*
 * A whole item, as format 2: itself, or rewritten into buf (ITEM_MAX bytes)
 * as what it was: a compact item's fields in their places, or a format 1
 * item as a pure charge whose releases were not recorded.  Its CRC is not
 * recomputed: it is read, never written.
 */
static const StoreItem *
item_in_format_2(const StoreItem *item, char *buf)
{
	StoreItem  *copy = (StoreItem *) buf;

	if (item->kind & ITEM_COMPACT)
	{
		const CompactItem *from = (const CompactItem *) item;
		StoreItem  *to = copy;

		memset(buf, 0, ITEM_FIXED);
		to->crc = from->crc;
		to->kind = from->kind & ~ITEM_COMPACT;
		COMPACT_FIELDS(COPY_FIELD);
		memcpy(to->text, from->text, from->length - COMPACT_FIXED);
		to->length = from->length + (ITEM_FIXED - COMPACT_FIXED);
		return to;
	}
	if (item->kind & ITEM_FORMAT_2)
		return item;
	memset(buf, 0, ITEM_FIXED);
	memcpy(buf, item, ITEM_FIXED_1);
	copy->kind |= ITEM_FORMAT_2;
	copy->release_units = item->units;
	copy->releases = 0;
	copy->accounting = CC_PURE;
	memcpy(copy->text, (const char *) item + ITEM_FIXED_1, item->length - ITEM_FIXED_1);
	copy->length = item->length + (ITEM_FIXED - ITEM_FIXED_1);
	return copy;
}

/*
 * The store's file as the storage manager holds it, owned here so that it
 * stays open from one transaction to the next: unowned, it is closed at
 * every transaction's end, and each new page would open the file again.
 * The storage manager forgets an owned handle when it closes it (an
 * invalidation, DROP DATABASE's barrier) by setting ours to NULL.
 */
static SMgrRelation
store_smgr(void)
{
	static SMgrRelation srel = NULL;

	if (srel == NULL)
		smgrsetowner(&srel, smgropen(store_node, InvalidBackendId));
	return srel;
}

/* The number of pages, 0 when the file does not exist (yet). */
static BlockNumber
store_blocks(void)
{
	SMgrRelation srel = store_smgr();

	if (!smgrexists(srel, MAIN_FORKNUM))
		return 0;
	return smgrnblocks(srel, MAIN_FORKNUM);
}

typedef enum ScanResult
{
	SCAN_DONE,
	SCAN_STOPPED,				/* fn returned false */
	SCAN_DAMAGED
} ScanResult;

/*
 * Call fn for every item, oldest first, until it returns false.  A page
 * that is not ours or an item that fails its CRC ends the scan with
 * SCAN_DAMAGED and what was found in what.
 */
static ScanResult
scan_items(bool (*fn) (const StoreItem *item, void *arg), void *arg,
		   char *what, size_t whatlen)
{
	BlockNumber nblocks = store_blocks();
	ScanResult	result = SCAN_DONE;
	char		format_2[ITEM_MAX];

	for (BlockNumber blkno = 0; blkno < nblocks && result == SCAN_DONE; blkno++)
	{
		Buffer		buf = ReadBufferWithoutRelcache(store_node, MAIN_FORKNUM, blkno,
													RBM_NORMAL, NULL, true);
		Page		page;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		/* a page added by an extension that a crash cut short is empty */
		if (!PageIsNew(page))
		{
			if (!page_is_ours(page))
			{
				snprintf(what, whatlen, "block %u is not a page of the ledger store", blkno);
				result = SCAN_DAMAGED;
			}
			for (OffsetNumber off = FirstOffsetNumber;
				 result == SCAN_DONE && off <= PageGetMaxOffsetNumber(page); off++)
			{
				const StoreItem *item = page_item(page, off);

				if (item == NULL)
				{
					snprintf(what, whatlen, "a damaged item at block %u, item %u", blkno, off);
					result = SCAN_DAMAGED;
				}
				else if (!fn(item_in_format_2(item, format_2), arg))
					result = SCAN_STOPPED;
			}
		}
		UnlockReleaseBuffer(buf);
	}
	return result;
}

static bool
load_one(const StoreItem *item, void *arg pg_attribute_unused())
{
	return apply_item(item);
}

static void import_legacy(void);
static void log_recovery_stop(void);
static void refuse_in_recovery(void);

/*
 * Add up the sums from the pages, once after start, and on a primary take in
 * or check a 0.2 file.  Exclusive lock held.
 */
static void
load_store(void)
{
	if (!store->loaded)
	{
		char		what[128];
		BlockNumber nblocks = store_blocks();

		if (scan_items(load_one, NULL, what, sizeof(what)) == SCAN_DAMAGED)
			mark_damaged(what);
		store->last_block = nblocks > 0 ? nblocks - 1 : InvalidBlockNumber;
		store->loaded = true;
	}
	if (!store->legacy_checked && !store->damaged && !RecoveryInProgress())
	{
		import_legacy();
		log_recovery_stop();
		store->legacy_checked = true;
	}
}

/*
 * Take the store lock in mode, the sums loaded.  The first caller after start
 * loads them, exclusively.
 */
static void
lock_store(LWLockMode mode)
{
	require_store();
	LWLockAcquire(store->lock, mode);
	if (store->loaded && (store->legacy_checked || RecoveryInProgress()))
		return;
	if (mode == LW_SHARED)
	{
		LWLockRelease(store->lock);
		LWLockAcquire(store->lock, LW_EXCLUSIVE);
		load_store();
		LWLockRelease(store->lock);
		LWLockAcquire(store->lock, LW_SHARED);
	}
	else
		load_store();
}

/*
 * Append an item (format 2, stored as seal_item says): to the last page if
 * it fits, else to a new one; logged, not flushed.  Exclusive lock held.
 * Returns the record's end.  The page read and the record written are not
 * the caller's buffer and WAL usage (common/seal.h): EXPLAIN (ANALYZE,
 * BUFFERS, WAL) around a release shows the call, not how full the store's
 * last page was.
 */
static XLogRecPtr
append_item(StoreItem *item)
{
	SealedUsage usage;
	Buffer		buf = InvalidBuffer;
	Page		page;
	bool		init = false;
	xl_store_append xlrec;
	XLogRecPtr	recptr;
	char		compact[ITEM_MAX];
	const StoreItem *stored;

	Assert(!RecoveryInProgress());
	seal_usage_save(&usage);
	stored = seal_item(item, compact);
	if (store->last_block != InvalidBlockNumber)
	{
		buf = ReadBufferWithoutRelcache(store_node, MAIN_FORKNUM, store->last_block,
										RBM_NORMAL, NULL, true);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buf);
		if (PageIsNew(page))
			init = true;
		else if (PageGetFreeSpace(page) < MAXALIGN(stored->length))
		{
			UnlockReleaseBuffer(buf);
			buf = InvalidBuffer;
		}
	}
	if (buf == InvalidBuffer)
	{
		SMgrRelation srel = store_smgr();

		/*
		 * A store with a page has its file.  Only the first page asks:
		 * smgrexists() closes and reopens the file, two system calls that
		 * would otherwise come with every new page, under the lock.
		 */
		if (store->last_block == InvalidBlockNumber && !smgrexists(srel, MAIN_FORKNUM))
			smgrcreate(srel, MAIN_FORKNUM, false);
		buf = ReadBufferWithoutRelcache(store_node, MAIN_FORKNUM, P_NEW,
										RBM_NORMAL, NULL, true);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		store->last_block = BufferGetBlockNumber(buf);
		init = true;
	}
	page = BufferGetPage(buf);

	START_CRIT_SECTION();
	if (init)
	{
		StoreSpecial *special;

		PageInit(page, BLCKSZ, sizeof(StoreSpecial));
		special = (StoreSpecial *) PageGetSpecialPointer(page);
		special->magic = STORE_MAGIC;
		special->version = STORE_VERSION;
	}
	xlrec.offnum = PageAddItem(page, (Item) stored, stored->length, InvalidOffsetNumber, false, false);
	if (xlrec.offnum == InvalidOffsetNumber)
		elog(PANIC, "could not add an item to the ledger store");
	MarkBufferDirty(buf);

	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, SizeOfStoreAppend);
	XLogRegisterData((char *) stored, stored->length);
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD | (init ? REGBUF_WILL_INIT : 0));
	recptr = XLogInsert(RM_CONTCOUNT_ID, init ? XLOG_STORE_APPEND_INIT : XLOG_STORE_APPEND);
	PageSetLSN(page, recptr);
	END_CRIT_SECTION();

	UnlockReleaseBuffer(buf);
	seal_usage_restore(&usage);
	if (!apply_item(item))
		refuse_if_damaged();
	return recptr;
}

/*
 * Make a record durable before anything it pays for is shown: flushed here,
 * and received and flushed by the synchronous standbys if there are any.  The
 * caller's synchronous_commit does not lower this (any role may set it): the
 * wait is at least remote_flush.  A wait that ends without the standby's
 * confirmation (a cancel, a terminate) raises an error, so that the value is
 * not shown; the charge stays.
 */
/*
 * Are synchronous standbys configured, as commits see it: the shared state
 * the checkpointer keeps, not this backend's copy of the setting, which a
 * long statement may not have reloaded yet.
 */
static bool
sync_standbys_defined(void)
{
#ifdef SYNC_STANDBY_DEFINED
	bits8		status = ((volatile WalSndCtlData *) WalSndCtl)->sync_standbys_status;

	if (status & SYNC_STANDBY_INIT)
		return (status & SYNC_STANDBY_DEFINED) != 0;
	return SyncRepStandbyNames != NULL && SyncRepStandbyNames[0] != '\0';
#else
	return ((volatile WalSndCtlData *) WalSndCtl)->sync_standbys_defined;
#endif
}

static void
make_durable(XLogRecPtr recptr)
{
	bool		confirmed;

	XLogFlush(recptr);

	/*
	 * Flushed: a transaction without an xid need not ask the WAL writer to
	 * flush it again at its end.  (One with an xid keeps XactLastRecEnd: its
	 * commit record must be flushed as it would be.)
	 */
	if (!TransactionIdIsValid(GetTopTransactionIdIfAny()) && XactLastRecEnd <= recptr)
		XactLastRecEnd = InvalidXLogRecPtr;
	if (max_wal_senders == 0 || !sync_standbys_defined())
		return;
	/* as at commit: the wait itself watches for cancel and terminate */
	HOLD_INTERRUPTS();
	if (synchronous_commit < SYNCHRONOUS_COMMIT_REMOTE_FLUSH)
	{
		int			level = NewGUCNestLevel();

		(void) set_config_option("synchronous_commit", "on",
								 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
		SyncRepWaitForLSN(recptr, false);
		AtEOXact_GUC(false, level);
	}
	else
		SyncRepWaitForLSN(recptr, false);
	RESUME_INTERRUPTS();

	/*
	 * Standbys are configured, so the wait ended either with the flush
	 * confirmed or cut short.  (Just after synchronous_standby_names is set,
	 * before the checkpointer has taken it in, the wait may not have begun:
	 * refusing then errs on the safe side.)
	 */
	LWLockAcquire(SyncRepLock, LW_SHARED);
	confirmed = WalSndCtl->lsn[SYNC_REP_WAIT_FLUSH] >= recptr;
	LWLockRelease(SyncRepLock);
	if (!confirmed)
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("the charge was not confirmed by a synchronous standby: the value is withheld"),
				 errdetail("The charge is recorded on this server and stays spent.")));
}

/*
 * Bring a 0.2 store file into the store, or check that the one found is the
 * one already taken in.  Exclusive lock held, on a primary.
 */
static void
import_legacy_one(const LegacyRecord *record, void *arg)
{
	char		buf[ITEM_MAX];
	/* pure, 0.2 having no other accounting; releases not recorded */
	StoreCharge charge = {
		.at = record->at,.role = record->role,.ledger = record->ledger,
		.cost = cc_pure_cost(record->kind == LEGACY_CREATED ? 0 : record->epsilon_units),
		.function = record->function,.statement = record->statement
	};
	StoreItem  *item;
	ItemKind	kind = record->kind == LEGACY_CREATED ? ITEM_CREATED :
		record->kind == LEGACY_CHARGE ? ITEM_CHARGE : ITEM_REFUND;

	/* 0.2 kept batch and refund counts in the function text: keep it as is */
	item = build_item(buf, kind, record->ledger, record->epsilon_units, &charge, record->function);
	item->legacy_end = record->end;
	*(XLogRecPtr *) arg = append_item(item);
}

static void
import_legacy(void)
{
	int64		size;
	pg_crc32c	crc;
	char		buf[ITEM_MAX];
	XLogRecPtr	last = InvalidXLogRecPtr;
	char		what[200];

	if (!legacy_read(&size, &crc, 0, NULL, NULL))
	{
		if (store->legacy_begun && !store->legacy_done)
			mark_damaged("taking in the store file of contcount 0.2 was cut short, and the file is gone");
		return;
	}
	if (store->legacy_begun && (size != store->legacy_size || crc != store->legacy_crc))
	{
		snprintf(what, sizeof(what),
				 "the store file of contcount 0.2 \"%s\" is not the one taken into WAL: "
				 "charges live in WAL since 0.3; remove the file and restart", LEGACY_FILE);
		mark_damaged(what);
		return;
	}
	if (!store->legacy_begun && hash_get_num_entries(sums) > 0)
	{
		snprintf(what, sizeof(what),
				 "a lone store file of contcount 0.2 \"%s\" beside the ledger store in WAL: "
				 "charges live in WAL since 0.3; remove the file and restart", LEGACY_FILE);
		mark_damaged(what);
		return;
	}
	if (!store->legacy_done)
	{
		if (!store->legacy_begun)
			last = append_item(build_item(buf, ITEM_LEGACY_BEGIN, (int64) crc, (uint64) size,
										  NULL, "the store file of contcount 0.2"));
		(void) legacy_read(&size, &crc, store->legacy_next, import_legacy_one, &last);
		last = append_item(build_item(buf, ITEM_LEGACY_END, (int64) crc, (uint64) size,
									  NULL, "the store file of contcount 0.2"));
		XLogFlush(last);
		ereport(LOG,
				(errmsg("the ledger store file of contcount 0.2 \"%s\" is taken into WAL", LEGACY_FILE)));
	}
	/* only now: a crash before the rename takes in nothing twice */
	(void) durable_rename(LEGACY_FILE, LEGACY_IMPORTED_FILE, ERROR);
}

/*
 * At the end of redo, in the startup process: if archive recovery stopped at
 * a target (point-in-time recovery, or a standby told where to stop), the
 * WAL after it may hold charges whose values were shown.  No WAL can be
 * written yet, so a file says so, durably, until the first load logs it.
 */
static void
store_cleanup(void)
{
	char		target[128];
	FILE	   *file;

	if (!ArchiveRecoveryRequested || recoveryTarget == RECOVERY_TARGET_UNSET)
		return;
	switch (recoveryTarget)
	{
		case RECOVERY_TARGET_XID:
			snprintf(target, sizeof(target), "recovery_target_xid %u", recoveryTargetXid);
			break;
		case RECOVERY_TARGET_TIME:
			snprintf(target, sizeof(target), "recovery_target_time %s",
					 timestamptz_to_str(recoveryTargetTime));
			break;
		case RECOVERY_TARGET_NAME:
			snprintf(target, sizeof(target), "recovery_target_name %s", recoveryTargetName);
			break;
		case RECOVERY_TARGET_LSN:
			snprintf(target, sizeof(target), "recovery_target_lsn %X/%X",
					 LSN_FORMAT_ARGS(recoveryTargetLSN));
			break;
		default:
			strlcpy(target, "recovery_target immediate", sizeof(target));
			break;
	}
	if (MakePGDirectory(STALE_DIR) != 0 && errno != EEXIST)
		ereport(FATAL,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", STALE_DIR)));
	file = AllocateFile(STALE_FILE, PG_BINARY_W);
	if (file == NULL || fputs(target, file) < 0 || fflush(file) != 0 ||
		pg_fsync(fileno(file)) != 0 || FreeFile(file) != 0)
		ereport(FATAL,
				(errcode_for_file_access(),
				 errmsg("could not write \"%s\": %m", STALE_FILE)));
	fsync_fname(STALE_DIR, true);
	ereport(LOG,
			(errmsg("recovery stopped at a target (%s): contcount refuses releases until its ledgers are checked",
					target)));
}

/*
 * Log what store_cleanup left, so that it binds on this server, its
 * standbys and its base backups; then remove the file.  Exclusive lock
 * held, on a primary.
 */
static void
log_recovery_stop(void)
{
	char		buf[ITEM_MAX];
	char		target[128] = "";
	StoreCharge marker = {.at = GetCurrentTimestamp(),.role = InvalidOid,.statement = target};
	FILE	   *file = AllocateFile(STALE_FILE, PG_BINARY_R);

	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not open \"%s\": %m", STALE_FILE)));
		return;
	}
	if (fgets(target, sizeof(target), file) == NULL && ferror(file))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read \"%s\": %m", STALE_FILE)));
	FreeFile(file);
	XLogFlush(append_item(build_item(buf, ITEM_STALE, 0, 0, &marker, "recovery stopped at a target")));
	durable_unlink(STALE_FILE, ERROR);
}

void
ledger_store_accept(void)
{
	char		buf[ITEM_MAX];
	StoreCharge accept = {.at = GetCurrentTimestamp(),.role = GetUserId(),.statement = ""};
	XLogRecPtr	recptr = InvalidXLogRecPtr;

	refuse_in_recovery();
	lock_store(LW_EXCLUSIVE);
	refuse_if_damaged();
	if (store->stale)
		recptr = append_item(build_item(buf, ITEM_ACCEPTED, 0, 0, &accept, "accept_ledger_store"));
	LWLockRelease(store->lock);
	if (recptr != InvalidXLogRecPtr)
		make_durable(recptr);
}

uint64
ledger_store_generation(void)
{
	return store == NULL ? 0 : pg_atomic_read_u64(&store->catalog_generation);
}

void
ledger_store_catalog_changed(void)
{
	if (store != NULL)
		pg_atomic_fetch_add_u64(&store->catalog_generation, 1);
}

void
ledger_store_register_rmgr(void)
{
	RegisterCustomRmgr(RM_CONTCOUNT_ID, &store_rmgr);
}

void
ledger_store_shmem_request(void)
{
	RequestAddinShmemSpace(add_size(add_size(MAXALIGN(sizeof(StoreShared)),
											 hash_estimate_size(contcount_max_ledgers,
																sizeof(LedgerSum))),
									hash_estimate_size(contcount_max_blocks, sizeof(BlockSum))));
	RequestNamedLWLockTranche("contcount_ledger", 1);
}

void
ledger_store_shmem_startup(void)
{
	HASHCTL		info;
	bool		found;

	store = ShmemInitStruct("contcount ledger store", sizeof(StoreShared), &found);
	info.keysize = sizeof(int64);
	info.entrysize = sizeof(LedgerSum);
	sums = ShmemInitHash("contcount ledger sums", contcount_max_ledgers,
						 contcount_max_ledgers, &info, HASH_ELEM | HASH_BLOBS);
	info.keysize = sizeof(BlockKey);
	info.entrysize = sizeof(BlockSum);
	blocks = ShmemInitHash("contcount ledger blocks", contcount_max_blocks,
						   contcount_max_blocks, &info, HASH_ELEM | HASH_BLOBS);
	if (!found)
	{
		memset(store, 0, sizeof(*store));
		pg_atomic_init_u64(&store->catalog_generation, 1);
		store->lock = &(GetNamedLWLockTranche("contcount_ledger"))->lock;
		store->last_block = InvalidBlockNumber;
	}
}

static void
refuse_in_recovery(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot change the ledger store during recovery"),
				 errdetail("A standby shows what was spent but cannot record a charge.")));
}

/*
 * Who holds the room of a shared table, for a refusal: keys (roles or
 * ledgers, with a ledger's database) and how many entries each holds.
 */
typedef struct RoomHolder
{
	int64		key;
	int64		count;
	Oid			database;
} RoomHolder;

/* Count one more entry of key among the n holders; returns the new n. */
static int
count_holder(RoomHolder *holders, int n, int64 key)
{
	for (int i = 0; i < n; i++)
		if (holders[i].key == key)
		{
			holders[i].count++;
			return n;
		}
	holders[n].key = key;
	holders[n].count = 1;
	holders[n].database = InvalidOid;
	return n + 1;
}

static int
holder_order(const void *a, const void *b)
{
	const RoomHolder *x = a;
	const RoomHolder *y = b;

	return x->count > y->count ? -1 : x->count < y->count;
}

/*
 * "lead key (count), ...", the five that hold most, for a superuser: roles
 * by name (a catalog lookup: not under the store lock), or ledgers by id
 * and database.
 */
static char *
room_detail(const char *lead, const RoomHolder *holders, int n, bool roles)
{
	StringInfoData detail;

	initStringInfo(&detail);
	appendStringInfoString(&detail, lead);
	for (int i = 0; i < n && i < 5; i++)
	{
		const char *name = roles ? GetUserNameFromId((Oid) holders[i].key, true) : NULL;

		if (roles)
			appendStringInfo(&detail, "%s role %s (" INT64_FORMAT ")", i > 0 ? "," : "",
							 name ? quote_identifier(name) : "(dropped)", holders[i].count);
		else
			appendStringInfo(&detail, "%s ledger id " INT64_FORMAT " of database %u (" INT64_FORMAT ")",
							 i > 0 ? "," : "", holders[i].key, holders[i].database, holders[i].count);
	}
	appendStringInfoString(&detail, n > 5 ? ", and others." : ".");
	return detail.data;
}

/* A role's name for a message, or "?".  Not under the store lock. */
static const char *
role_name(Oid role)
{
	const char *name = GetUserNameFromId(role, true);

	return name ? name : "?";
}

/* How many ledgers role created that the store holds.  Lock held. */
static int64
role_ledgers(Oid role)
{
	HASH_SEQ_STATUS scan;
	LedgerSum  *sum;
	int64		n = 0;

	hash_seq_init(&scan, sums);
	while ((sum = hash_seq_search(&scan)) != NULL)
		n += sum->created_by == role;
	return n;
}

/* The roles that created the store's ledgers, most first.  Lock held. */
static int
ledger_room_holders(RoomHolder **holders)
{
	HASH_SEQ_STATUS scan;
	LedgerSum  *sum;
	int			n = 0;

	*holders = palloc_array(RoomHolder, hash_get_num_entries(sums) + 1);
	hash_seq_init(&scan, sums);
	while ((sum = hash_seq_search(&scan)) != NULL)
		n = count_holder(*holders, n, sum->created_by);
	qsort(*holders, n, sizeof(RoomHolder), holder_order);
	return n;
}

/*
 * Refuse a new ledger when the server holds contcount.max_ledgers, saying
 * who created them as far as the caller may see: a superuser, the five
 * roles that created most; any other role, its own count.  Exclusive lock
 * held; released before the message is made (it looks names up).
 */
static void
require_ledger_room(Oid role, bool superuser)
{
	RoomHolder *holders = NULL;
	int			n = 0;
	int64		own;

	if (hash_get_num_entries(sums) < contcount_max_ledgers)
		return;
	if (superuser)
		n = ledger_room_holders(&holders);
	own = role_ledgers(role);
	LWLockRelease(store->lock);
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("the server already holds contcount.max_ledgers = %d ledgers",
					contcount_max_ledgers),
			 superuser ? errdetail("%s", room_detail("Created by", holders, n, true)) :
			 errdetail("Role \"%s\" created " INT64_FORMAT " of them.", role_name(role), own),
			 errhint("Drop a ledger, or raise contcount.max_ledgers and restart the server.")));
}

/*
 * Append the creation of a ledger in this database under name (which it is
 * found by again after a dropped extension), if there is room (refusals
 * worded for a superuser caller, or not).  Exclusive lock held.
 */
static XLogRecPtr
append_creation(int64 ledger, const char *name, Oid role, TimestampTz at, cc_accounting accounting,
				bool superuser)
{
	char		buf[ITEM_MAX];
	StoreCharge creation = {
		.at = at,.role = role,.ledger = ledger,.cost = {accounting, 0},
		.function = "create_ledger",.statement = name
	};
	StoreItem  *item;

	require_ledger_room(role, superuser);
	item = build_item(buf, ITEM_CREATED, ledger, 0, &creation, NULL);
	item->database = MyDatabaseId;
	return append_item(item);
}

/*
 * A role that is not a superuser holds at most
 * contcount.max_ledgers_per_role live ledgers, in all databases: its share
 * of contcount.max_ledgers.  Lock held.
 */
static void
require_ledger_share(Oid role, const char *name)
{
	int64		held = role_ledgers(role);

	if (held >= contcount_max_ledgers_per_role)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("role \"%s\" already holds contcount.max_ledgers_per_role = %d ledgers",
						name, contcount_max_ledgers_per_role),
				 errdetail("It created " INT64_FORMAT " ledgers that are not dropped, in all databases.", held),
				 errhint("Drop a ledger it created, or ask a superuser to raise contcount.max_ledgers_per_role.")));
}

void
ledger_store_create(int64 ledger, const char *name, Oid role, cc_accounting accounting)
{
	/* looked up before the lock: catalog access */
	bool		superuser = superuser_arg(role);
	const char *creator = role_name(role);

	refuse_in_recovery();
	lock_store(LW_EXCLUSIVE);
	refuse_if_damaged();
	if (!superuser)
		require_ledger_share(role, creator);
	/* flushed by the commit of the catalog row, which follows it in WAL */
	(void) append_creation(ledger, name, role, GetCurrentTimestamp(), accounting, superuser);
	LWLockRelease(store->lock);
}

void
ledger_store_forget(int64 ledger)
{
	char		buf[ITEM_MAX];
	StoreCharge forget = {
		.at = GetCurrentTimestamp(),.role = GetUserId(),.ledger = ledger,
		.function = "drop_ledger",.statement = ""
	};

	refuse_in_recovery();
	lock_store(LW_EXCLUSIVE);
	refuse_if_damaged();
	if (hash_search(sums, &ledger, HASH_FIND, NULL) != NULL)
		(void) append_item(build_item(buf, ITEM_FORGOTTEN, ledger, 0, &forget, NULL));
	LWLockRelease(store->lock);
}

/* What one release of cost costs a ledger of accounting; ZB003 if it cannot pay. */
uint64
ledger_store_release_units(cc_accounting accounting, const char *name, cc_cost cost)
{
	uint64		units;

	if (!cc_ledger_cost(accounting, cost, &units))
		ereport(ERROR,
				(errcode(ERRCODE_CONTCOUNT_ACCOUNTING),
				 errmsg("ledger \"%s\" accounts in pure epsilon and cannot pay for a zCDP release", name),
				 errdetail("A release with Gaussian noise is rho-zCDP (here rho %s), which no epsilon bounds.",
						   spec_format_epsilon(cost.units)),
				 errhint("Charge it to a zCDP ledger, created with contcount.create_ledger(name, rho => ..., delta => ...).")));
	return units;
}

/*
 * Take the store lock exclusively for a charge to ledger, on a primary whose
 * store is whole and knows the ledger, and return its sum; else an error.
 */
static LedgerSum *
lock_for_charge(int64 ledger, const char *name)
{
	LedgerSum  *sum;

	refuse_in_recovery();
	lock_store(LW_EXCLUSIVE);
	refuse_if_damaged();
	if (store->stale)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the ledger store may be missing charges: releases are refused"),
				 errdetail("Recovery stopped at its target (%s); charges made after it, whose values "
						   "were shown, are not in this store.", store->stale_target),
				 errhint("Import the ledgers' latest export with contcount.import_ledgers(), then "
						 "accept the store with contcount.accept_ledger_store().")));
	sum = hash_search(sums, &ledger, HASH_FIND, NULL);
	if (sum == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("ledger \"%s\" is missing from the ledger store: releases are refused", name),
				 errdetail("The store does not hold it: it was dropped since the release looked it up, "
						   "or the store in WAL never recorded its creation (the ledger was restored or "
						   "upgraded without its spending, or the store was lost)."),
				 errhint("Import the ledger's export with contcount.import_ledgers(), or restore the "
						 "server from a base backup and its WAL.")));
	return sum;
}

/*
 * Refuse an overspend of a ledger the caller may not see (the data's, of a
 * protected source): what it has left tells what other roles spent.
 */
static void
refuse_hidden_overspend(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONTCOUNT_BUDGET_EXCEEDED),
			 errmsg("the data's privacy budget cannot pay for this release"),
			 errdetail("Ledger \"%s\" holds it; what it has left is shown to its admins.", name)));
}

int64
ledger_store_charge(int64 ledger, const char *name, uint64 budget_units,
					StoreCharge *charge, int64 max_releases)
{
	char		buf[ITEM_MAX];
	LedgerSum  *sum;
	uint64		each;
	uint64		remaining;
	uint64		affordable;
	XLogRecPtr	recptr;

	Assert(charge->cost.units > 0 && max_releases >= 1);
	sum = lock_for_charge(ledger, name);
	/* at least a unit: cost.units > 0, and a rho of an epsilon rounds up */
	each = ledger_store_release_units(sum->accounting, name, charge->cost);
	remaining = sum->spent_units > budget_units ? 0 : budget_units - sum->spent_units;
	affordable = remaining / each;
	if (affordable == 0 && charge->figures_hidden)
		refuse_hidden_overspend(name);
	if (affordable == 0 && sum->accounting == CC_PURE)
		ereport(ERROR,
				(errcode(ERRCODE_CONTCOUNT_BUDGET_EXCEEDED),
				 errmsg("privacy budget of ledger \"%s\" would be overspent", name),
				 errdetail("Requested epsilon %s, remaining epsilon %s.",
						   spec_format_epsilon(each), spec_format_epsilon(remaining))));
	if (affordable == 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONTCOUNT_BUDGET_EXCEEDED),
				 errmsg("privacy budget of ledger \"%s\" would be overspent", name),
				 charge->cost.accounting == CC_PURE ?
				 errdetail("Requested rho %s (a release of epsilon %s), remaining rho %s.",
						   spec_format_epsilon(each), spec_format_epsilon(charge->cost.units),
						   spec_format_epsilon(remaining)) :
				 errdetail("Requested rho %s, remaining rho %s.",
						   spec_format_epsilon(each), spec_format_epsilon(remaining))));
	/* each * releases <= remaining: no overflow */
	charge->releases = (uint64) max_releases < affordable ? max_releases : (int64) affordable;
	charge->units = each * charge->releases;
	recptr = append_item(build_item(buf, ITEM_CHARGE, ledger, charge->units, charge, NULL));
	LWLockRelease(store->lock);
	make_durable(recptr);
	return charge->releases;
}

/* "start, end", for messages, palloc'd. */
static char *
block_range(TimestampTz start, TimestampTz end)
{
	char	   *first = pstrdup(timestamptz_to_str(start));

	return psprintf("%s, %s", first, timestamptz_to_str(end));
}

/*
 * The first block of ledger charged with another length than run's that
 * overlaps run's blocks, or NULL.  Lock held.
 */
static BlockSum *
other_block(int64 ledger, const BlockRun *run)
{
	HASH_SEQ_STATUS scan;
	BlockSum   *block;
	TimestampTz end = run->first + run->count * run->length;

	hash_seq_init(&scan, blocks);
	while ((block = hash_seq_search(&scan)) != NULL)
		if (block->key.ledger == ledger && block->key.start < end && block->end > run->first &&
			(block->end - block->key.start != run->length ||
			 (block->key.start - run->first) % run->length != 0))
		{
			hash_seq_term(&scan);
			return block;
		}
	return NULL;
}

/*
 * Append a block charge of charge->units to each block of run, built in buf
 * (ITEM_MAX bytes).  Exclusive lock held.  Returns the record's end.
 */
static XLogRecPtr
append_block_charge(char *buf, const StoreCharge *charge, const BlockRun *run)
{
	StoreItem  *item = build_item(buf, ITEM_BLOCK_CHARGE, charge->ledger, charge->units, charge, NULL);

	memcpy((char *) item + item->length, run, sizeof(BlockRun));
	item->length += sizeof(BlockRun);
	return append_item(item);
}

/* How many blocks ledger holds, retired ones included.  Lock held. */
static int64
ledger_blocks(int64 ledger)
{
	HASH_SEQ_STATUS scan;
	BlockSum   *block;
	int64		n = 0;

	hash_seq_init(&scan, blocks);
	while ((block = hash_seq_search(&scan)) != NULL)
		n += block->key.ledger == ledger;
	return n;
}

/*
 * Who holds the blocks' room, as far as the caller may see: a superuser,
 * the five ledgers that hold most (by id, as contcount.ledger shows it, and
 * database); any other role, the count of the ledger it charges.  Lock
 * held: no catalog access.
 */
static char *
block_holders(int64 ledger, const char *name, bool superuser)
{
	HASH_SEQ_STATUS scan;
	BlockSum   *block;
	RoomHolder *holders;
	int			n = 0;

	if (!superuser)
		return psprintf("Ledger \"%s\" holds " INT64_FORMAT " of them.", name, ledger_blocks(ledger));
	holders = palloc_array(RoomHolder, hash_get_num_entries(blocks) + 1);
	hash_seq_init(&scan, blocks);
	while ((block = hash_seq_search(&scan)) != NULL)
		n = count_holder(holders, n, block->key.ledger);
	for (int i = 0; i < n; i++)
	{
		LedgerSum  *sum = hash_search(sums, &holders[i].key, HASH_FIND, NULL);

		holders[i].database = sum ? sum->database : InvalidOid;
	}
	qsort(holders, n, sizeof(RoomHolder), holder_order);
	return room_detail("Held by", holders, n, false);
}

/*
 * Room for fresh more blocks of ledger: within its share,
 * contcount.max_blocks_per_ledger, and within the server's,
 * contcount.max_blocks; else 53400, saying who holds the room.  Lock held.
 */
static void
require_block_room(int64 ledger, const char *name, int64 fresh, bool superuser)
{
	int64		held = ledger_blocks(ledger);

	if (held + fresh > contcount_max_blocks_per_ledger)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("ledger \"%s\" would hold more than contcount.max_blocks_per_ledger = %d blocks",
						name, contcount_max_blocks_per_ledger),
				 errdetail("It holds " INT64_FORMAT " blocks, retired ones included; the release needs "
						   INT64_FORMAT " more.  No block was charged.", held, fresh),
				 errhint("Release a shorter range of time, or ask a superuser to raise "
						 "contcount.max_blocks_per_ledger.")));
	if (hash_get_num_entries(blocks) + fresh > contcount_max_blocks)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("the server holds room for contcount.max_blocks = %d blocks", contcount_max_blocks),
				 errdetail("%s", block_holders(ledger, name, superuser)),
				 errhint("Raise contcount.max_blocks and restart the server.")));
}

/* How many of run's blocks ledger does not hold yet.  Lock held. */
static int64
fresh_blocks(int64 ledger, const BlockRun *run)
{
	int64		fresh = 0;

	for (int64 i = 0; i < run->count; i++)
	{
		BlockKey	key = {ledger, run->first + i * run->length};

		fresh += hash_search(blocks, &key, HASH_FIND, NULL) == NULL;
	}
	return fresh;
}

void
ledger_store_check_block_room(int64 ledger, const char *name, const StoreBlockRun *want, Oid role)
{
	BlockRun	run = {want->first, want->length, want->count};
	int64		fresh;
	/* looked up before the lock: catalog access */
	bool		superuser = superuser_arg(role);

	lock_store(LW_SHARED);
	refuse_if_damaged();
	fresh = fresh_blocks(ledger, &run);
	if (fresh > 0)
		require_block_room(ledger, name, fresh, superuser);
	LWLockRelease(store->lock);
}

void
ledger_store_charge_blocks(int64 ledger, const char *name, uint64 budget_units,
						   StoreCharge *charge, const StoreBlockRun *want)
{
	char		buf[ITEM_MAX];
	BlockRun	run = {want->first, want->length, want->count};
	LedgerSum  *sum;
	BlockSum   *block;
	uint64		each;
	int64		fresh;
	XLogRecPtr	recptr;
	/* looked up before the lock: catalog access */
	bool		superuser = superuser_arg(charge->role);

	Assert(charge->ledger == ledger && charge->cost.units > 0 && run.length > 0 && run.count > 0);
	sum = lock_for_charge(ledger, name);
	each = ledger_store_release_units(sum->accounting, name, charge->cost);
	block = other_block(ledger, &run);
	if (block != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the blocks of ledger \"%s\" were charged with another length", name),
				 errdetail("Block [%s) was charged, and a block is never made again with a fresh budget.",
						   block_range(block->key.start, block->end)),
				 errhint("Declare the blocks' length as it was when they were charged.")));
	/* every block pays, or none */
	for (int64 i = 0; i < run.count; i++)
	{
		BlockKey	key = {ledger, run.first + i * run.length};
		uint64		spent;

		block = hash_search(blocks, &key, HASH_FIND, NULL);
		/* the ledger's own charges read rows of every block */
		if (pg_add_u64_overflow(block ? block->spent_units : 0, sum->spent_units, &spent))
			spent = PG_UINT64_MAX;
		if (spent > budget_units || budget_units - spent < each)
			ereport(ERROR,
					(errcode(ERRCODE_CONTCOUNT_BUDGET_EXCEEDED),
					 errmsg("privacy budget of block [%s) of ledger \"%s\" would be overspent",
							block_range(key.start, key.start + run.length), name),
					 errdetail("Requested %s %s, remaining %s; no block of the release was charged.",
							   sum->accounting == CC_PURE ? "epsilon" : "rho", spec_format_epsilon(each),
							   spec_format_epsilon(spent > budget_units ? 0 : budget_units - spent))));
	}
	fresh = fresh_blocks(ledger, &run);
	if (fresh > 0)
		require_block_room(ledger, name, fresh, superuser);
	charge->releases = 1;
	charge->units = each;
	recptr = append_block_charge(buf, charge, &run);
	LWLockRelease(store->lock);
	make_durable(recptr);
}

void
ledger_store_import_blocks(int64 ledger, const StoreBlock *exported, int nblocks)
{
	char		buf[ITEM_MAX];
	char		name[32];
	LedgerSum  *sum;
	XLogRecPtr	last = InvalidXLogRecPtr;

	snprintf(name, sizeof(name), "id " INT64_FORMAT, ledger);
	sum = lock_for_charge(ledger, name);
	for (int i = 0; i < nblocks; i++)
	{
		BlockKey	key = {ledger, exported[i].start};
		BlockRun	run = {exported[i].start, exported[i].end - exported[i].start, 1};
		BlockSum   *block;
		uint64		spent;
		StoreCharge raise = {
			.at = GetCurrentTimestamp(),.role = GetUserId(),.ledger = ledger,.releases = 1,
			.function = "import_ledgers",.statement = "what the export's block spent beyond this store's"
		};

		if (run.length <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a block of the export ends before it starts"),
					 errdetail("A block of ledger %s.", name)));
		block = other_block(ledger, &run);
		if (block != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("a block of the export overlaps a block of another length in this store"),
					 errdetail("Block [%s) of ledger %s is in this store.",
							   block_range(block->key.start, block->end), name)));
		block = hash_search(blocks, &key, HASH_FIND, NULL);
		spent = block ? block->spent_units : 0;
		if (exported[i].spent_units <= spent)
			continue;
		if (block == NULL && hash_get_num_entries(blocks) >= contcount_max_blocks)
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("the server holds room for contcount.max_blocks = %d blocks", contcount_max_blocks),
					 errhint("Raise contcount.max_blocks and restart the server.")));
		/* the difference, as one release of the ledger's own kind */
		raise.cost.accounting = sum->accounting;
		raise.cost.units = exported[i].spent_units - spent;
		raise.units = raise.cost.units;
		last = append_block_charge(buf, &raise, &run);
	}
	LWLockRelease(store->lock);
	if (last != InvalidXLogRecPtr)
		make_durable(last);
}

void
ledger_store_refund(StoreCharge *refund)
{
	char		buf[ITEM_MAX];
	LedgerSum  *sum;

	refuse_in_recovery();
	lock_store(LW_EXCLUSIVE);
	refuse_if_damaged();
	sum = hash_search(sums, &refund->ledger, HASH_FIND, NULL);
	/*
	 * Charged by this backend, so known to the store then: forgotten since
	 * (dropped), and what it spent no longer matters.
	 */
	if (sum == NULL)
	{
		LWLockRelease(store->lock);
		return;
	}
	/* the caller charged at least this much, and nothing lowers a sum else */
	if (!cc_ledger_cost(sum->accounting, refund->cost, &refund->units) ||
		pg_mul_u64_overflow(refund->units, (uint64) refund->releases, &refund->units) ||
		sum->spent_units < refund->units)
		elog(ERROR, "refund of more than ledger " INT64_FORMAT " was charged", refund->ledger);
	/* not flushed: a refund lost in a crash only keeps the budget spent */
	(void) append_item(build_item(buf, ITEM_REFUND, refund->ledger, refund->units, refund, NULL));
	LWLockRelease(store->lock);
}

bool
ledger_store_spent(int64 ledger, uint64 *spent_units, cc_accounting *accounting)
{
	LedgerSum  *sum;

	lock_store(LW_SHARED);
	refuse_if_damaged();
	sum = hash_search(sums, &ledger, HASH_FIND, NULL);
	if (sum != NULL)
	{
		*spent_units = sum->spent_units;
		if (accounting != NULL)
			*accounting = sum->accounting;
	}
	LWLockRelease(store->lock);
	return sum != NULL;
}

typedef struct AuditScan
{
	void		(*fn) (const StoreCharge *charge, void *arg);
	void		(*block_fn) (const StoreCharge *charge, const StoreBlockRun *run, void *arg);
	void	   *arg;
} AuditScan;

/* A charge, refund or block charge item as the audit shows it. */
static void
item_charge(const StoreItem *item, StoreCharge *charge)
{
	charge->at = item->at;
	charge->role = item->role;
	charge->ledger = item->ledger;
	charge->cost.accounting = (cc_accounting) item->accounting;
	charge->cost.units = item->release_units;
	charge->cost.gauss.sigma2.num = item->sigma2_num;
	charge->cost.gauss.sigma2.den = item->sigma2_den;
	charge->cost.gauss.coordinates = item->coordinates;
	charge->cost.gauss.shift = item->shift;
	charge->cost.gauss.l1_units = item->l1_units;
	charge->releases = item->releases;
	charge->units = item->units;
	charge->refund = ITEM_KIND(item) == ITEM_REFUND;
	charge->function = item->text;
	charge->statement = item->text + strlen(item->text) + 1;
}

static bool
audit_one(const StoreItem *item, void *arg)
{
	AuditScan  *scan = (AuditScan *) arg;
	StoreCharge charge;

	if (ITEM_KIND(item) == ITEM_CHARGE || ITEM_KIND(item) == ITEM_REFUND)
	{
		item_charge(item, &charge);
		scan->fn(&charge, scan->arg);
	}
	return true;
}

static bool
block_audit_one(const StoreItem *item, void *arg)
{
	AuditScan  *scan = (AuditScan *) arg;
	StoreCharge charge;
	BlockRun	run;
	StoreBlockRun shown;

	/* applied when the store was loaded: sound */
	if (ITEM_KIND(item) == ITEM_BLOCK_CHARGE && item_block_run(item, &run))
	{
		item_charge(item, &charge);
		shown.first = run.first;
		shown.length = run.length;
		shown.count = run.count;
		scan->block_fn(&charge, &shown, scan->arg);
	}
	return true;
}

/* Every item of a store that is not damaged, without the store lock. */
static void
scan_store(bool (*fn) (const StoreItem *item, void *arg), void *arg)
{
	char		what[128];

	lock_store(LW_SHARED);
	refuse_if_damaged();
	LWLockRelease(store->lock);
	if (scan_items(fn, arg, what, sizeof(what)) == SCAN_DAMAGED)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("could not read the ledger store: %s", what)));
}

void
ledger_store_scan(void (*fn) (const StoreCharge *charge, void *arg), void *arg)
{
	AuditScan	scan = {.fn = fn,.arg = arg};

	scan_store(audit_one, &scan);
}

void
ledger_store_scan_blocks(void (*fn) (const StoreCharge *charge, const StoreBlockRun *run, void *arg),
						 void *arg)
{
	AuditScan	scan = {.block_fn = fn,.arg = arg};

	scan_store(block_audit_one, &scan);
}

StoreBlock *
ledger_store_blocks(int64 *nblocks)
{
	HASH_SEQ_STATUS scan;
	BlockSum   *block;
	StoreBlock *all;
	int64		n = 0;

	lock_store(LW_SHARED);
	refuse_if_damaged();
	all = palloc_array(StoreBlock, Max(hash_get_num_entries(blocks), 1));
	hash_seq_init(&scan, blocks);
	while ((block = hash_seq_search(&scan)) != NULL)
	{
		LedgerSum  *sum = hash_search(sums, &block->key.ledger, HASH_FIND, NULL);

		all[n].ledger = block->key.ledger;
		all[n].start = block->key.start;
		all[n].end = block->end;
		all[n].spent_units = block->spent_units;
		/* a block's charge found its ledger in the store */
		all[n].ledger_spent_units = sum->spent_units;
		n++;
	}
	LWLockRelease(store->lock);
	*nblocks = n;
	return all;
}

/*
 * Refuse (22023) a ledger of an export whose name the store could not keep,
 * or whose audit does not add up as the store would: each charge what its
 * releases cost a ledger of that accounting, no refund beyond the charges
 * before it, and spent_units exactly what they sum to (an export's spending
 * is its audit's).  Nothing else can be trusted of such an export.
 */
static void
check_import_audit(const char *name, cc_accounting accounting, uint64 spent_units,
				   const StoreCharge *charges, int ncharges)
{
	uint64		running = 0;

	if (strlen(name) > LEDGER_NAME_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ledger name must be at most %d bytes", LEDGER_NAME_MAX)));
	for (int i = 0; i < ncharges; i++)
	{
		if (!charge_adds_up(accounting, charges[i].cost, charges[i].releases, charges[i].units))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a charge of the export of ledger \"%s\" is not what its releases cost a %s ledger",
							name, ledger_accounting_name(accounting))));
		if (!charges[i].refund)
		{
			if (pg_add_u64_overflow(running, charges[i].units, &running))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("the charges of the export of ledger \"%s\" exceed what a ledger can spend",
								name)));
		}
		else if (charges[i].units > running)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the export of ledger \"%s\" refunds more than it charged", name)));
		else
			running -= charges[i].units;
	}
	if (running != spent_units)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the export of ledger \"%s\" says it spent " UINT64_FORMAT
						" units, and its charges add up to " UINT64_FORMAT, name, spent_units, running)));
}

/* ZB003 if the store knows the ledger (sum) in another accounting. */
static void
check_import_accounting(const LedgerSum *sum, const char *name, cc_accounting accounting)
{
	if (sum != NULL && sum->accounting != accounting)
		ereport(ERROR,
				(errcode(ERRCODE_CONTCOUNT_ACCOUNTING),
				 errmsg("ledger \"%s\" accounts in %s here, and the export accounts it in %s",
						name, ledger_accounting_name(sum->accounting), ledger_accounting_name(accounting)),
				 errdetail("A ledger's accounting never changes: what it spent is in its own measure.")));
}

void
ledger_store_check_import(int64 ledger, const char *name, cc_accounting accounting,
						  uint64 spent_units, const StoreCharge *charges, int ncharges)
{
	lock_store(LW_SHARED);
	refuse_if_damaged();
	check_import_accounting(hash_search(sums, &ledger, HASH_FIND, NULL), name, accounting);
	LWLockRelease(store->lock);
	check_import_audit(name, accounting, spent_units, charges, ncharges);
}

int
ledger_store_check_import_blocks(int64 ledger, const char *name, const StoreBlock *exported,
								 int nblocks)
{
	int			fresh = 0;

	lock_store(LW_SHARED);
	refuse_if_damaged();
	for (int i = 0; i < nblocks; i++)
	{
		BlockRun	run = {exported[i].start, exported[i].end - exported[i].start, 1};
		BlockSum   *block;

		/* as the store holds them: in order, none overlapping another */
		if (exported[i].end <= exported[i].start ||
			(i > 0 && exported[i].start < exported[i - 1].end))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the blocks of the export of ledger \"%s\" are not in order, "
							"each ending after it starts", name)));
		block = other_block(ledger, &run);
		if (block != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("a block of the export overlaps a block of another length in this store"),
					 errdetail("Block [%s) of ledger \"%s\" is in this store.",
							   block_range(block->key.start, block->end), name)));
		fresh += hash_search(blocks, &(BlockKey) {ledger, exported[i].start}, HASH_FIND, NULL) == NULL;
	}
	LWLockRelease(store->lock);
	return fresh;
}

void
ledger_store_check_import_room(int ledgers, int64 nblocks)
{
	lock_store(LW_SHARED);
	if (hash_get_num_entries(sums) + ledgers > contcount_max_ledgers)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("the server already holds contcount.max_ledgers = %d ledgers",
						contcount_max_ledgers),
				 errdetail("The export has %d ledgers this store does not hold.", ledgers),
				 errhint("Raise contcount.max_ledgers and restart the server.")));
	if (hash_get_num_entries(blocks) + nblocks > contcount_max_blocks)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("the server holds room for contcount.max_blocks = %d blocks", contcount_max_blocks),
				 errdetail("The export has " INT64_FORMAT " blocks this store does not hold.", nblocks),
				 errhint("Raise contcount.max_blocks and restart the server.")));
	LWLockRelease(store->lock);
}

const char *
ledger_store_import(int64 ledger, const char *name, cc_accounting accounting,
					TimestampTz created_at, Oid created_by, uint64 spent_units,
					const StoreCharge *charges, int ncharges)
{
	char		buf[ITEM_MAX];
	LedgerSum  *sum;
	const char *action = "kept";
	XLogRecPtr	last = InvalidXLogRecPtr;
	uint64		forgotten_units;
	cc_accounting forgotten_accounting;

	refuse_in_recovery();
	lock_store(LW_EXCLUSIVE);
	refuse_if_damaged();
	sum = hash_search(sums, &ledger, HASH_FIND, NULL);
	/* a ledger dropped here stays dropped, and takes no room again */
	if (sum == NULL && forgotten(ledger, &forgotten_units, &forgotten_accounting))
	{
		LWLockRelease(store->lock);
		return "kept";
	}
	check_import_accounting(sum, name, accounting);
	check_import_audit(name, accounting, spent_units, charges, ncharges);
	if (sum == NULL)
	{
		/* only a superuser imports */
		last = append_creation(ledger, name, created_by, created_at, accounting, true);
		for (int i = 0; i < ncharges; i++)
			last = append_item(build_item(buf, charges[i].refund ? ITEM_REFUND : ITEM_CHARGE,
										  ledger, charges[i].units, &charges[i],
										  charges[i].function));
		sum = hash_search(sums, &ledger, HASH_FIND, NULL);
		action = "created";
	}
	if (sum->spent_units < spent_units)
	{
		/* the difference, as one release of the ledger's own kind */
		StoreCharge raise = {
			.at = GetCurrentTimestamp(),.role = GetUserId(),.ledger = ledger,
			.cost = {accounting, spent_units - sum->spent_units},.releases = 1,
			.statement = "what the export spent beyond its audit"
		};

		last = append_item(build_item(buf, ITEM_CHARGE, ledger, spent_units - sum->spent_units,
									  &raise, "import_ledgers"));
		if (strcmp(action, "kept") == 0)
			action = "raised";
	}
	LWLockRelease(store->lock);
	if (last != InvalidXLogRecPtr)
		make_durable(last);
	return action;
}

/* What a forgotten ledger had spent, added up from its items. */
typedef struct ForgottenScan
{
	int64		ledger;
	bool		forgotten;		/* its last word is that it was forgotten */
	uint64		spent_units;
	cc_accounting accounting;
} ForgottenScan;

static bool
forgotten_one(const StoreItem *item, void *arg)
{
	ForgottenScan *scan = (ForgottenScan *) arg;

	if (item->ledger != scan->ledger)
		return true;
	switch (ITEM_KIND(item))
	{
		case ITEM_CREATED:
			scan->forgotten = false;
			scan->accounting = (cc_accounting) item->accounting;
			break;
		case ITEM_CHARGE:
			scan->spent_units += item->units;
			break;
		case ITEM_REFUND:
			scan->spent_units -= Min(item->units, scan->spent_units);
			break;
		case ITEM_FORGOTTEN:
			scan->forgotten = true;
			break;
		default:
			break;
	}
	return true;
}

/*
 * Did the store forget ledger (dropped)?  If so, what it had spent and its
 * accounting.  A full scan: for exports and imports only.
 */
static bool
forgotten(int64 ledger, uint64 *spent_units, cc_accounting *accounting)
{
	ForgottenScan scan = {ledger, false, 0, CC_PURE};
	char		what[128];

	if (scan_items(forgotten_one, &scan, what, sizeof(what)) == SCAN_DAMAGED)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("could not read the ledger store: %s", what)));
	*spent_units = scan.spent_units;
	*accounting = scan.accounting;
	return scan.forgotten;
}

bool
ledger_store_forgotten(int64 ledger, uint64 *spent_units, cc_accounting *accounting)
{
	bool		found;

	lock_store(LW_SHARED);
	refuse_if_damaged();
	found = hash_search(sums, &ledger, HASH_FIND, NULL) == NULL &&
		forgotten(ledger, spent_units, accounting);
	LWLockRelease(store->lock);
	return found;
}

typedef struct FindCreated
{
	Oid			database;
	const char *name;
	bool		(*known) (int64 ledger, void *arg);
	void	   *arg;
	int64		found;
} FindCreated;

static bool
find_created_one(const StoreItem *item, void *arg)
{
	FindCreated *find = (FindCreated *) arg;

	if (ITEM_KIND(item) == ITEM_CREATED && item->database == find->database &&
		strcmp(item->text + strlen(item->text) + 1, find->name) == 0 &&
		!find->known(item->ledger, find->arg))
		find->found = item->ledger;
	/* dropped, or its creation rolled back: nothing to take back */
	else if (ITEM_KIND(item) == ITEM_FORGOTTEN && item->ledger == find->found)
		find->found = 0;
	return true;
}

int64
ledger_store_find_created(Oid database, const char *name,
						  bool (*known) (int64 ledger, void *arg), void *arg)
{
	FindCreated find = {database, name, known, arg, 0};

	scan_store(find_created_one, &find);
	return find.found;
}

/*
 * Redo: add the item to its page unless the page has it already, and, once
 * the sums are loaded, to the sums.
 */
static void
store_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_store_append *xlrec = (xl_store_append *) XLogRecGetData(record);
	const StoreItem *item = (const StoreItem *) (XLogRecGetData(record) + SizeOfStoreAppend);
	Buffer		buf;
	XLogRedoAction action;

	if (info != XLOG_STORE_APPEND && info != XLOG_STORE_APPEND_INIT)
		elog(PANIC, "contcount redo: unknown record kind %u", info);
	LWLockAcquire(store->lock, LW_EXCLUSIVE);
	if (info == XLOG_STORE_APPEND_INIT)
	{
		StoreSpecial *special;

		buf = XLogInitBufferForRedo(record, 0);
		PageInit(BufferGetPage(buf), BLCKSZ, sizeof(StoreSpecial));
		special = (StoreSpecial *) PageGetSpecialPointer(BufferGetPage(buf));
		special->magic = STORE_MAGIC;
		special->version = STORE_VERSION;
		action = BLK_NEEDS_REDO;
	}
	else
		action = XLogReadBufferForRedo(record, 0, &buf);
	if (action == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);

		if (PageAddItem(page, (Item) item, item->length, xlrec->offnum, false, false) != xlrec->offnum)
			elog(PANIC, "contcount redo: could not add an item to the ledger store");
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buf);
	}
	if (store->loaded && (action == BLK_NEEDS_REDO || action == BLK_RESTORED))
	{
		BlockNumber blkno;

		XLogRecGetBlockTag(record, 0, NULL, NULL, &blkno);
		if (store->last_block == InvalidBlockNumber || blkno > store->last_block)
			store->last_block = blkno;
		if (!store->damaged)
		{
			/* a 0.4 primary's record, or this library's */
			char		format_2[ITEM_MAX];

			(void) apply_item(item_in_format_2(item, format_2));
		}
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
	LWLockRelease(store->lock);
}

static const char *
store_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_STORE_APPEND:
			return "APPEND";
		case XLOG_STORE_APPEND_INIT:
			return "APPEND+INIT";
	}
	return NULL;
}

static void
store_desc(StringInfo buf, XLogReaderState *record)
{
	char		format_2[ITEM_MAX];
	const StoreItem *raw = (const StoreItem *) (XLogRecGetData(record) + SizeOfStoreAppend);
	const StoreItem *item = item_in_format_2(raw, format_2);
	static const char *const kinds[] = {"?", "create", "charge", "refund", "legacy begin", "legacy end",
	"recovery stopped at a target", "accepted", "block charge", "forgotten"};
	BlockRun	run;

	appendStringInfo(buf, "%s ledger " INT64_FORMAT " units " UINT64_FORMAT " role %u: %s",
					 ITEM_KIND(item) < lengthof(kinds) ? kinds[ITEM_KIND(item)] : "?",
					 item->ledger, item->units, item->role, item->text);
	if (ITEM_KIND(item) == ITEM_CREATED)
		appendStringInfo(buf, " (%s)", ledger_accounting_name((cc_accounting) item->accounting));
	else if (item->releases > 0)
		appendStringInfo(buf, " (" INT64_FORMAT " %s release(s) of " UINT64_FORMAT ")", item->releases,
						 ledger_accounting_name((cc_accounting) item->accounting), item->release_units);
	if (item->sigma2_num > 0)
		appendStringInfo(buf, ", noise sigma^2 " UINT64_FORMAT "/" UINT64_FORMAT " on " UINT64_FORMAT
						 " coordinates moved by " UINT64_FORMAT " (l1 " UINT64_FORMAT ")",
						 item->sigma2_num, item->sigma2_den, item->coordinates, item->shift,
						 item->l1_units);
	if (ITEM_KIND(item) == ITEM_BLOCK_CHARGE && item_block_run(item, &run))
		appendStringInfo(buf, ", each of " INT64_FORMAT " block(s) of " INT64_FORMAT " us from " INT64_FORMAT,
						 run.count, run.length, run.first);
}

static void
store_mask(char *pagedata, BlockNumber blkno pg_attribute_unused())
{
	mask_page_lsn_and_checksum(pagedata);
	mask_unused_space(pagedata);
}
