/*
 * store_stale.c
 *		Recovery that stopped at a target: the file the end of redo leaves, so
 *		that the first load on the new primary logs it and releases are refused
 *		until a superuser accepts the store.
 *
 * What it owns: the file contcount/recovery_target_stop.  It is written in
 * the startup process (rm_cleanup), where no store lock exists yet, and read
 * and removed under StoreShared->lock held exclusively by the first load
 * (ledger_store.c, where the locking protocol is).
 *
 * IDENTIFICATION
 *	  src/ledger/store_stale.c
 */
#include "postgres.h"

#include "access/xlog_internal.h"
#include "access/xlogrecovery.h"
#include "storage/fd.h"
#include "utils/timestamp.h"

#include "ledger/ledger_store.h"
#include "ledger/store_internal.h"

/* Written by redo's end when recovery stopped at a target, until logged. */
#define STALE_DIR "contcount"
#define STALE_FILE STALE_DIR "/recovery_target_stop"

/*
 * At the end of redo, in the startup process: if archive recovery stopped at
 * a target (point-in-time recovery, or a standby told where to stop), the
 * WAL after it may hold charges whose values were shown.  No WAL can be
 * written yet, so a file says so, durably, until the first load logs it.
 */
void
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
 * What store_cleanup left: the target recovery stopped at, into target
 * (len bytes), or false if it left nothing.  Read by the first load on a
 * primary, exclusive lock held, which logs it so that it binds on this
 * server, its standbys and its base backups, then calls store_stale_logged.
 */
bool
store_stale_target(char *target, size_t len)
{
	FILE	   *file = AllocateFile(STALE_FILE, PG_BINARY_R);

	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not open \"%s\": %m", STALE_FILE)));
		return false;
	}
	if (fgets(target, len, file) == NULL && ferror(file))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read \"%s\": %m", STALE_FILE)));
	FreeFile(file);
	return true;
}

/* The stop is logged, and flushed: remove the file. */
void
store_stale_logged(void)
{
	durable_unlink(STALE_FILE, ERROR);
}
