/*
 * store_wal.c
 *		Making the ledger store's WAL records durable, and describing them:
 *		contcount's resource manager's desc, identify and mask.
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
 * What it owns: the wait for the flush and the synchronous standbys, and
 * how a record reads in pg_waldump.  The record format is in
 * store_internal.h; ledger_store.c inserts and redoes the records under
 * StoreShared->lock (its locking protocol); the flush here is made after
 * that lock is released, so that concurrent flushes group-commit.
 *
 * IDENTIFICATION
 *	  src/ledger/store_wal.c
 */
#include "postgres.h"

#include "access/bufmask.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlogreader.h"
#include "miscadmin.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"
#include "storage/lwlock.h"
#include "utils/guc.h"

#include "ledger/ledger_store.h"
#include "ledger/store_internal.h"

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
