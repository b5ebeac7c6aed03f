/*
 * store_internal.h
 *		What the files of the ledger store share, and no other file may use:
 *		the layout of its items, pages and WAL records (store_page.c, and
 *		byte for byte what the store has always written), its state in shared
 *		memory (ledger_store.c, whose head states the locking protocol), and
 *		the functions each of its files offers the others.
 *
 * The store's files call one way: store_page.c, store_wal.c, store_stale.c
 * and store_legacy.c below ledger_store.c (the shared state, the load, the
 * append and redo); store_room.c, store_charge.c, store_audit.c,
 * store_blocks.c and store_import.c above it, in that order.
 *
 * IDENTIFICATION
 *	  src/ledger/store_internal.h
 */
#ifndef CONTCOUNT_STORE_INTERNAL_H
#define CONTCOUNT_STORE_INTERNAL_H

#include "access/xlogdefs.h"
#include "access/xlogreader.h"
#include "datatype/timestamp.h"
#include "lib/stringinfo.h"
#include "port/pg_crc32c.h"
#include "port/atomics.h"
#include "storage/block.h"
#include "storage/bufpage.h"
#include "storage/lwlock.h"
#include "storage/relfilenode.h"
#include "storage/smgr.h"
#include "utils/hsearch.h"

#include "core/accounting.h"

/*
 * A charge as the store's API (ledger_store.h) has it; that header is not
 * included here, so that no include goes from ledger_store.c's own header
 * back to this one.
 */
struct StoreCharge;

/* ---- The resource manager and its record kinds (store_wal.c) ---- */

/*
 * The resource manager ids.  PostgreSQL leaves ids 128 to 255 to extensions
 * and keeps the registry of who uses which on its wiki, on the page
 * "CustomWALResourceManagers"; its rule: develop with RM_EXPERIMENTAL_ID
 * (128), and before a release take an id the list does not name and add it
 * there, since two extensions on one id replay each other's records.  197
 * was not on the list when 0.6 took it (the list grows from 129 upwards and
 * names 241), so 0.6 writes every record under it.
 *
 * contcount 0.5 and earlier wrote the same records under 128.  A cluster
 * upgraded from 0.5 may still have them to replay (a crash before the first
 * checkpoint, a standby behind, point-in-time recovery from an older base
 * backup), so 128 stays registered as a second, redo-only name of the same
 * resource manager while contcount.replay_legacy_wal is on: the same
 * callbacks, a name of its own (PostgreSQL refuses two resource managers of
 * one name, and wal_consistency_checking = 'contcount' names the new one).
 */
#define RM_CONTCOUNT_ID 197
#define RM_CONTCOUNT_NAME "contcount"
#define RM_CONTCOUNT_LEGACY_ID RM_EXPERIMENTAL_ID
#define RM_CONTCOUNT_LEGACY_NAME "contcount_legacy"

/* WAL record kinds (the high bits of xl_info are the resource manager's) */
#define XLOG_STORE_APPEND 0x10	/* an item added to a page */
#define XLOG_STORE_APPEND_INIT 0x20 /* the same, on a page it starts */

/* ---- Items and pages (store_page.c): formats never change ---- */

#define STORE_RELFILENODE 1668247156	/* "cont" */
#define STORE_MAGIC 0x636f756e	/* "coun", in each page's special space */
#define STORE_VERSION 1
#define MAX_FUNCTION 63
#define MAX_STATEMENT 1023

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

#define ITEM_FIXED ((int) offsetof(StoreItem, text))
#define ITEM_TEXT_MAX (MAX_FUNCTION + 1 + MAX_STATEMENT + 1)
#define ITEM_MAX (ITEM_FIXED + ITEM_TEXT_MAX + (int) sizeof(BlockRun))

/* ---- The WAL record (store_wal.c) ---- */

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

/* ---- The shared state (ledger_store.c, and its locking protocol) ---- */

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

/* The shared state (ledger_store.c): StoreShared->lock guards all three. */
extern StoreShared *store_state;
extern HTAB *store_sums;		/* LedgerSum by ledger */
extern HTAB *store_block_sums;	/* BlockSum by (ledger, start) */

typedef enum ScanResult
{
	SCAN_DONE,
	SCAN_STOPPED,				/* fn returned false */
	SCAN_DAMAGED
} ScanResult;

/* store_page.c: items and pages */
extern const RelFileNode store_node;
extern StoreItem *store_build_item(char *buf, ItemKind kind, int64 ledger, uint64 units,
								   const struct StoreCharge *charge,
								   const char *function_text);
extern const StoreItem *store_seal_item(StoreItem *item, char *buf);
extern bool store_charge_adds_up(cc_accounting ledger, cc_cost cost, int64 releases, uint64 units);
extern bool store_item_block_run(const StoreItem *item, BlockRun *run);
extern const StoreItem *store_item_in_format_2(const StoreItem *item, char *buf);
extern void store_page_init(Page page);
extern SMgrRelation store_smgr(void);
extern BlockNumber store_blocks(void);
extern ScanResult store_scan_items(bool (*fn) (const StoreItem *item, void *arg), void *arg,
								   char *what, size_t whatlen);

/* store_wal.c: the records, their redo on pages, durability, desc, identify, mask */
extern XLogRecPtr store_wal_append(const StoreItem *stored, BlockNumber *last_block);
extern const StoreItem *store_wal_record_item(XLogReaderState *record);
extern bool store_wal_redo_page(XLogReaderState *record, const StoreItem *item,
								BlockNumber *blkno);
extern void store_make_durable(XLogRecPtr recptr);
extern void store_desc(StringInfo buf, XLogReaderState *record);
extern const char *store_identify(uint8 info);
extern void store_mask(char *pagedata, BlockNumber blkno);

/* store_stale.c: recovery stopped at a target */
extern void store_cleanup(void);
extern bool store_stale_target(char *target, size_t len);
extern void store_stale_logged(void);

/* How an item is appended, for the files below ledger_store.c. */
typedef XLogRecPtr (*StoreAppendFn) (StoreItem *item);

/* store_legacy.c: the 0.2 file */
extern const char *store_import_legacy(const StoreShared *state, bool store_empty,
									   StoreAppendFn append);

/* ledger_store.c: the shared state */
extern void store_mark_damaged(const char *what);
extern void store_refuse_if_damaged(void);
extern void store_refuse_in_recovery(void);
extern void store_lock(LWLockMode mode);
extern XLogRecPtr store_append_item(StoreItem *item);

/* store_room.c: room and shares */
extern const char *store_role_name(Oid role);
extern void store_require_ledger_room(Oid role, bool superuser);
extern void store_require_ledger_share(Oid role, const char *name);
extern void store_require_block_room(int64 ledger, const char *name, int64 fresh, bool superuser);

/* store_charge.c: charges */
extern XLogRecPtr store_append_creation(int64 ledger, const char *name, Oid role, TimestampTz at,
										cc_accounting accounting, bool superuser);
extern LedgerSum *store_lock_for_charge(int64 ledger, const char *name);

/* store_audit.c: reading items back */
extern bool store_forgotten(int64 ledger, uint64 *spent_units, cc_accounting *accounting);

/* store_blocks.c: blocks */
extern void store_refuse_other_length(int64 ledger, const BlockRun *run, const char *shown);

#endif							/* CONTCOUNT_STORE_INTERNAL_H */
