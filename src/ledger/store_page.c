/*
 * store_page.c
 *		The ledger store's file: the layout of its items and pages, building,
 *		sealing and reading them back, and scanning the file.
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
 * What it owns: the bytes on disk.  It keeps no state and takes no store
 * lock: appends and redo write pages under StoreShared->lock
 * (ledger_store.c, where the locking protocol is); a scan takes only each
 * page's buffer lock in turn.
 *
 * IDENTIFICATION
 *	  src/ledger/store_page.c
 */
#include "postgres.h"

#include "catalog/pg_tablespace_d.h"
#include "mb/pg_wchar.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"

#include "common/int.h"
#include "ledger/ledger_store.h"
#include "ledger/store_internal.h"

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

/* a creation keeps the ledger's name as its statement: whole */
StaticAssertDecl(LEDGER_NAME_MAX <= MAX_STATEMENT, "a ledger name must fit an item");

const RelFileNode store_node = {GLOBALTABLESPACE_OID, InvalidOid, STORE_RELFILENODE};

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
StoreItem *
store_build_item(char *buf, ItemKind kind, int64 ledger, uint64 units,
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
const StoreItem *
store_seal_item(StoreItem *item, char *buf)
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

/*
 * A charge or refund of releases releases of cost each, units in all, to a
 * ledger accounting in ledger: does the ledger admit such releases, and are
 * units what they cost it?  (A charge recorded before 0.5 says only its
 * units, which a pure ledger was charged: releases 0.)
 */
bool
store_charge_adds_up(cc_accounting ledger, cc_cost cost, int64 releases, uint64 units)
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
bool
store_item_block_run(const StoreItem *item, BlockRun *run)
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
const StoreItem *
store_item_in_format_2(const StoreItem *item, char *buf)
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

/* Make page an empty page of the store, with its special space. */
void
store_page_init(Page page)
{
	StoreSpecial *special;

	PageInit(page, BLCKSZ, sizeof(StoreSpecial));
	special = (StoreSpecial *) PageGetSpecialPointer(page);
	special->magic = STORE_MAGIC;
	special->version = STORE_VERSION;
}

/*
 * The store's file as the storage manager holds it, owned here so that it
 * stays open from one transaction to the next: unowned, it is closed at
 * every transaction's end, and each new page would open the file again.
 * The storage manager forgets an owned handle when it closes it (an
 * invalidation, DROP DATABASE's barrier) by setting ours to NULL.
 */
SMgrRelation
store_smgr(void)
{
	static SMgrRelation srel = NULL;

	if (srel == NULL)
		smgrsetowner(&srel, smgropen(store_node, InvalidBackendId));
	return srel;
}

/* The number of pages, 0 when the file does not exist (yet). */
BlockNumber
store_blocks(void)
{
	SMgrRelation srel = store_smgr();

	if (!smgrexists(srel, MAIN_FORKNUM))
		return 0;
	return smgrnblocks(srel, MAIN_FORKNUM);
}

/*
 * Call fn for every item, oldest first, until it returns false.  A page
 * that is not ours or an item that fails its CRC ends the scan with
 * SCAN_DAMAGED and what was found in what.
 */
ScanResult
store_scan_items(bool (*fn) (const StoreItem *item, void *arg), void *arg,
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
				else if (!fn(store_item_in_format_2(item, format_2), arg))
					result = SCAN_STOPPED;
			}
		}
		UnlockReleaseBuffer(buf);
	}
	return result;
}
