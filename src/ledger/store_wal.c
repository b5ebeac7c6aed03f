/*
 * store_wal.c
 *		The ledger store's WAL records: appending an item to a page and
 *		logging it, redoing it on its page, making it durable, and
 *		describing it (contcount's resource manager's desc, identify and
 *		mask).
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
 * What it owns: the record (its format is in store_internal.h) and the
 * pages' side of it: which page an item goes to, the page change and the
 * insert, the page's redo, the wait for the flush and the synchronous
 * standbys, and how a record reads in pg_waldump.  ledger_store.c calls the
 * append and the redo under StoreShared->lock held exclusively, always
 * taken before a buffer lock (its locking protocol), and applies the item
 * to the sums; the flush here is made after that lock is released, so that
 * concurrent flushes group-commit.
 *
 * IDENTIFICATION
 *	  src/ledger/store_wal.c
 */
#include "postgres.h"

#include "access/bufmask.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlogutils.h"
#include "miscadmin.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"
#include "storage/bufmgr.h"
#include "storage/lwlock.h"
#include "utils/guc.h"

#include "common/settings.h"
#include "ledger/ledger_store.h"
#include "ledger/store_internal.h"

/*
 * The store's last page, locked exclusively, if it has room for need bytes
 * (*init if it is new: a crash cut its extension short); else a new page
 * added to the file, *init set, and *last_block moved to it.
 */
static Buffer
page_with_room(Size need, BlockNumber *last_block, bool *init)
{
	Buffer		buf;
	SMgrRelation srel;

	*init = false;
	if (*last_block != InvalidBlockNumber)
	{
		buf = ReadBufferWithoutRelcache(store_node, MAIN_FORKNUM, *last_block,
										RBM_NORMAL, NULL, true);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		if (PageIsNew(BufferGetPage(buf)))
			*init = true;
		if (*init || PageGetFreeSpace(BufferGetPage(buf)) >= need)
			return buf;
		UnlockReleaseBuffer(buf);
	}
	srel = store_smgr();

	/*
	 * A store with a page has its file.  Only the first page asks:
	 * smgrexists() closes and reopens the file, two system calls that would
	 * otherwise come with every new page, under the lock.
	 */
	if (*last_block == InvalidBlockNumber && !smgrexists(srel, MAIN_FORKNUM))
		smgrcreate(srel, MAIN_FORKNUM, false);
	buf = ReadBufferWithoutRelcache(store_node, MAIN_FORKNUM, P_NEW,
									RBM_NORMAL, NULL, true);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	*last_block = BufferGetBlockNumber(buf);
	*init = true;
	return buf;
}

/*
 * Add a sealed item to the store's last page if it fits, else to a new one
 * (*last_block: the last page, or InvalidBlockNumber; moved to a new one),
 * and log it, as a heap insert does: the page change and the WAL insert in
 * one critical section.  Not flushed.  StoreShared->lock held exclusively.
 * Returns the record's end.
 */
XLogRecPtr
store_wal_append(const StoreItem *stored, BlockNumber *last_block)
{
	bool		init;
	Buffer		buf = page_with_room(MAXALIGN(stored->length), last_block, &init);
	Page		page = BufferGetPage(buf);
	xl_store_append xlrec;
	XLogRecPtr	recptr;

	START_CRIT_SECTION();
	if (init)
		store_page_init(page);
	xlrec.offnum = PageAddItem(page, (Item) stored, stored->length, InvalidOffsetNumber, false, false);
	if (xlrec.offnum == InvalidOffsetNumber)
		elog(PANIC, "could not add an item to the ledger store");
	MarkBufferDirty(buf);

	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, SizeOfStoreAppend);
	XLogRegisterData((char *) stored, stored->length);
	XLogRegisterBuffer(0, buf, REGBUF_STANDARD | (init ? REGBUF_WILL_INIT : 0));
	recptr = XLogInsert(contcount_write_legacy_wal_id ? RM_CONTCOUNT_LEGACY_ID : RM_CONTCOUNT_ID,
						init ? XLOG_STORE_APPEND_INIT : XLOG_STORE_APPEND);
	PageSetLSN(page, recptr);
	END_CRIT_SECTION();

	UnlockReleaseBuffer(buf);
	return recptr;
}

/* The item a record of ours carries; PANIC on a kind we do not know. */
const StoreItem *
store_wal_record_item(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info != XLOG_STORE_APPEND && info != XLOG_STORE_APPEND_INIT)
		elog(PANIC, "contcount redo: unknown record kind %u", info);
	return (const StoreItem *) (XLogRecGetData(record) + SizeOfStoreAppend);
}

/*
 * Redo a record's item on its page unless the page has it already (the
 * page LSN).  Returns whether the sums need it too (the page took it now,
 * or was restored from a full-page image), with the page's number in
 * *blkno.  StoreShared->lock held exclusively, taken before the buffer lock
 * as appends do.
 */
bool
store_wal_redo_page(XLogReaderState *record, const StoreItem *item, BlockNumber *blkno)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	xl_store_append *xlrec = (xl_store_append *) XLogRecGetData(record);
	Buffer		buf;
	XLogRedoAction action;

	if (info == XLOG_STORE_APPEND_INIT)
	{
		buf = XLogInitBufferForRedo(record, 0);
		store_page_init(BufferGetPage(buf));
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
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
	XLogRecGetBlockTag(record, 0, NULL, NULL, blkno);
	return action == BLK_NEEDS_REDO || action == BLK_RESTORED;
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

void
store_make_durable(XLogRecPtr recptr)
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

const char *
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

void
store_desc(StringInfo buf, XLogReaderState *record)
{
	char		format_2[ITEM_MAX];
	const StoreItem *raw = (const StoreItem *) (XLogRecGetData(record) + SizeOfStoreAppend);
	const StoreItem *item = store_item_in_format_2(raw, format_2);
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
	if (ITEM_KIND(item) == ITEM_BLOCK_CHARGE && store_item_block_run(item, &run))
		appendStringInfo(buf, ", each of " INT64_FORMAT " block(s) of " INT64_FORMAT " us from " INT64_FORMAT,
						 run.count, run.length, run.first);
}

void
store_mask(char *pagedata, BlockNumber blkno pg_attribute_unused())
{
	mask_page_lsn_and_checksum(pagedata);
	mask_unused_space(pagedata);
}
