/*
 * ledger_store.c
 *		The durable truth of the privacy budget: an append-only file of
 *		ledger creations and charges, and the sums it adds up to, kept in
 *		shared memory.
 *
 * A charge is appended and fsynced before the release it pays for returns a
 * value, outside any transaction: ROLLBACK, a savepoint, an error, a cancel
 * or PREPARE TRANSACTION cannot take it back, and it survives kill -9.  Every
 * record carries a CRC32C.  At startup the postmaster replays the file into
 * shared memory.  A record whose CRC fails, a charge to a ledger the file
 * never created, or more ledgers than fit, mark the store damaged, and a
 * damaged store refuses every charge: it fails closed.  Only a record cut
 * short at the very end is dropped: it is a write that never completed, so
 * it never paid for a value that left the server.
 *
 * A charge may pay in advance for several releases of one call site (the
 * groups of a GROUP BY, say), so that many groups do not cost an fsync each;
 * when the call site ends with releases paid for and never made, a refund
 * record gives them back.  Nothing was computed for them, so nothing they
 * paid for left the server; a crash before the refund only keeps the budget
 * spent, which errs on the safe side.
 *
 * The file is per server, like pg_stat_statements' file: it is in base
 * backups but not replicated, and standbys refuse releases.
 *
 * Locking protocol: StoreShared->lock guards StoreShared, the ledger hash
 * and the file.  A charge holds it exclusively from the budget check through
 * the write and the fsync to the update of the sum, so charges against one
 * budget are serialized and each sees those before it.  Reading a sum takes
 * it shared; so does reading the file for the audit, which therefore never
 * sees half an append.  The postmaster reads the file at startup, before
 * any backend exists, under AddinShmemInitLock.
 *
 * IDENTIFICATION
 *	  src/ledger/ledger_store.c
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#include "common/errors.h"
#include "common/settings.h"
#include "ledger/ledger_store.h"
#include "releases/spec.h"

#define STORE_DIR "contcount"
#define STORE_FILE STORE_DIR "/ledger"
#define STORE_MAGIC INT64CONST(0x636f6e74636f756e)	/* "contcoun" */
#define STORE_VERSION 1
#define MAX_FUNCTION 63
#define MAX_STATEMENT 1023

typedef enum StoreKind
{
	STORE_HEADER = 1,			/* first record: ledger = magic, units = version */
	STORE_CREATED = 2,			/* a ledger is created */
	STORE_CHARGE = 3,			/* epsilon spent from a ledger */
	STORE_REFUND = 4			/* unused advance payment given back */
} StoreKind;

typedef struct StoreRecord
{
	pg_crc32c	crc;			/* of the bytes after it, up to length */
	uint32		length;			/* of the whole record */
	uint32		kind;
	Oid			role;
	int64		ledger;
	uint64		epsilon_units;	/* in all */
	TimestampTz at;
	/* the function, NUL, the statement, NUL */
	char		text[FLEXIBLE_ARRAY_MEMBER];
} StoreRecord;

#define RECORD_FIXED ((ssize_t) offsetof(StoreRecord, text))
#define RECORD_MAX (RECORD_FIXED + MAX_FUNCTION + 1 + MAX_STATEMENT + 1)

typedef struct StoreShared
{
	LWLock	   *lock;
	off_t		size;			/* bytes of the file that were checked or
								 * written */
	bool		damaged;
	char		damage[256];	/* what was found */
} StoreShared;

typedef struct LedgerSum
{
	int64		ledger;			/* hash key */
	uint64		spent_units;
} LedgerSum;

static StoreShared *store = NULL;
static HTAB *sums = NULL;

static pg_crc32c
record_crc(const StoreRecord *rec)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, (const char *) rec + sizeof(pg_crc32c),
				rec->length - sizeof(pg_crc32c));
	FIN_CRC32C(crc);
	return crc;
}

/* A record in buf (RECORD_MAX bytes), CRC included. */
static StoreRecord *
build_record(char *buf, StoreKind kind, int64 ledger, uint64 units,
			 const StoreCharge *charge)
{
	StoreRecord *rec = (StoreRecord *) buf;
	char		function[MAX_FUNCTION + 1];
	const char *statement = charge && charge->statement ? charge->statement : "";
	int			slen = pg_mbcliplen(statement, strlen(statement), MAX_STATEMENT);
	int			flen;

	/* the audit tells a batch or a refund by its function text */
	if (charge && (charge->refund || charge->releases > 1))
		snprintf(function, sizeof(function), "%s, " INT64_FORMAT " %s", charge->function,
				 charge->releases, charge->refund ? "unused" : "releases");
	else
		strlcpy(function, charge ? charge->function : "", sizeof(function));
	flen = strlen(function);

	memset(buf, 0, RECORD_FIXED);
	rec->kind = kind;
	rec->role = charge ? charge->role : InvalidOid;
	rec->ledger = ledger;
	rec->epsilon_units = units;
	rec->at = charge ? charge->at : 0;
	memcpy(rec->text, function, flen);
	rec->text[flen] = '\0';
	memcpy(rec->text + flen + 1, statement, slen);
	rec->text[flen + 1 + slen] = '\0';
	rec->length = RECORD_FIXED + flen + 1 + slen + 1;
	rec->crc = record_crc(rec);
	return rec;
}

static void
mark_damaged(const char *what)
{
	store->damaged = true;
	strlcpy(store->damage, what, sizeof(store->damage));
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
				 errhint("Restore the file \"%s\" in the data directory from a backup and restart the server.",
						 STORE_FILE)));
}

/*
 * Apply one checked record to the sums: the header first, then creations
 * and charges of created ledgers.  Returns false, with the store marked
 * damaged, if it cannot be applied.
 */
static bool
replay(const StoreRecord *rec, off_t offset)
{
	LedgerSum  *sum;
	bool		found;
	char		what[128];

	if (offset == 0)
	{
		if (rec->kind == STORE_HEADER && rec->ledger == STORE_MAGIC &&
			rec->epsilon_units == STORE_VERSION)
			return true;
	}
	else if (rec->kind == STORE_CREATED)
	{
		sum = hash_search(sums, &rec->ledger, HASH_ENTER_NULL, &found);
		if (sum == NULL)
		{
			mark_damaged("more ledgers than contcount.max_ledgers");
			return false;
		}
		if (!found)
			sum->spent_units = 0;
		return true;
	}
	else if (rec->kind == STORE_CHARGE || rec->kind == STORE_REFUND)
	{
		sum = hash_search(sums, &rec->ledger, HASH_FIND, NULL);
		if (sum != NULL && rec->kind == STORE_CHARGE)
		{
			sum->spent_units += rec->epsilon_units;
			return true;
		}
		/* a refund never exceeds what its ledger was charged */
		if (sum != NULL && rec->epsilon_units <= sum->spent_units)
		{
			sum->spent_units -= rec->epsilon_units;
			return true;
		}
	}
	snprintf(what, sizeof(what), "unexpected record of kind %u at offset %lld",
			 rec->kind, (long long) offset);
	mark_damaged(what);
	return false;
}

/* Read up to n bytes; fewer only at the end of the file, -1 on error. */
static ssize_t
read_fully(int fd, char *buf, size_t n)
{
	size_t		done = 0;

	while (done < n)
	{
		ssize_t		got = read(fd, buf + done, n - done);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		done += got;
	}
	return done;
}

/*
 * Replay the file into shared memory, in the postmaster.  Nothing here may
 * raise an error: every problem is logged and marks the store damaged.
 */
static void
load_store(void)
{
	int			fd = OpenTransientFile(STORE_FILE, O_RDWR | PG_BINARY);
	char	   *buf = palloc(RECORD_MAX);
	StoreRecord *rec = (StoreRecord *) buf;
	off_t		offset = 0;

	if (fd < 0)
	{
		if (errno != ENOENT)
			mark_damaged("the file cannot be opened");
		pfree(buf);
		return;
	}
	for (;;)
	{
		ssize_t		got = read_fully(fd, buf, RECORD_FIXED);
		char		what[128];

		if (got == 0)
			break;
		if (got == RECORD_FIXED &&
			(rec->length < RECORD_FIXED + 2 || rec->length > RECORD_MAX))
		{
			snprintf(what, sizeof(what), "a record with a bad length at offset %lld",
					 (long long) offset);
			mark_damaged(what);
			break;
		}
		if (got == RECORD_FIXED)
		{
			ssize_t		rest = read_fully(fd, buf + RECORD_FIXED, rec->length - RECORD_FIXED);

			got = rest < 0 ? -1 : got + rest;
		}
		if (got < 0)
		{
			mark_damaged("the file cannot be read");
			break;
		}
		if (got < RECORD_FIXED || got < rec->length)
		{
			/* a write cut short by a crash: its charge never returned */
			ereport(LOG,
					(errmsg("dropping an incomplete ledger record at offset %lld",
							(long long) offset)));
			if (ftruncate(fd, offset) != 0 || pg_fsync(fd) != 0)
				mark_damaged("an incomplete record at the end cannot be cut off");
			break;
		}
		if (record_crc(rec) != rec->crc)
		{
			snprintf(what, sizeof(what), "a CRC mismatch in the record at offset %lld",
					 (long long) offset);
			mark_damaged(what);
			break;
		}
		if (!replay(rec, offset))
			break;
		offset += rec->length;
	}
	store->size = offset;
	CloseTransientFile(fd);
	pfree(buf);
	if (store->damaged)
		ereport(LOG,
				(errmsg("the ledger store is damaged, releases will be refused: %s",
						store->damage)));
}

void
ledger_store_shmem_request(void)
{
	RequestAddinShmemSpace(add_size(MAXALIGN(sizeof(StoreShared)),
									hash_estimate_size(contcount_max_ledgers,
													   sizeof(LedgerSum))));
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
	if (!found)
	{
		store->lock = &(GetNamedLWLockTranche("contcount_ledger"))->lock;
		store->size = 0;
		store->damaged = false;
		store->damage[0] = '\0';
		load_store();
	}
}

/*
 * Write len bytes at offset.  A short write sets no errno: the disk is full,
 * and the error says so (53100) rather than "Success".
 */
static bool
write_at(int fd, const void *buf, size_t len, off_t offset)
{
	ssize_t		written;

	errno = 0;
	written = pg_pwrite(fd, buf, len, offset);
	if (written == (ssize_t) len)
		return true;
	if (written >= 0 || errno == 0)
		errno = ENOSPC;
	return false;
}

/*
 * Append records and fsync them, or raise an error having appended nothing.
 * Exclusive lock held.  A new file starts with its header, and its directory
 * entry is made durable too.
 */
static void
append_durably(const StoreRecord *rec)
{
	char		header[RECORD_MAX];
	bool		new_file = store->size == 0;
	int			fd;
	bool		ok;

	if (new_file && MakePGDirectory(STORE_DIR) != 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", STORE_DIR)));
	fd = OpenTransientFile(STORE_FILE, O_RDWR | O_CREAT | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open \"%s\": %m", STORE_FILE)));
	if (new_file)
	{
		const StoreRecord *head = build_record(header, STORE_HEADER, STORE_MAGIC,
											   STORE_VERSION, NULL);

		ok = write_at(fd, head, head->length, 0) &&
			write_at(fd, rec, rec->length, head->length);
	}
	else
		ok = write_at(fd, rec, rec->length, store->size);
	ok = ok && pg_fdatasync(fd) == 0;
	if (!ok)
	{
		int			save_errno = errno;
		bool		full;

		/* take back what may have been written, or stop trusting the file */
		if (ftruncate(fd, store->size) != 0 || pg_fsync(fd) != 0)
			mark_damaged("a failed write could not be taken back");
		CloseTransientFile(fd);
		errno = save_errno;
		/* a file size limit or a quota is a full disk for this file too */
		full = errno == EFBIG || errno == EDQUOT;
		ereport(ERROR,
				(full ? errcode(ERRCODE_DISK_FULL) : errcode_for_file_access(),
				 errmsg("could not write the ledger store \"%s\": %m", STORE_FILE)));
	}
	CloseTransientFile(fd);
	if (new_file)
	{
		fsync_fname(STORE_FILE, false);
		fsync_fname(STORE_DIR, true);
		store->size = ((const StoreRecord *) header)->length;
	}
	store->size += rec->length;
}

void
ledger_store_create(int64 ledger, const char *name, Oid role)
{
	char		buf[RECORD_MAX];
	StoreCharge creation = {
		.at = GetCurrentTimestamp(),.role = role,.ledger = ledger,
		.function = "create_ledger",.statement = name
	};
	LedgerSum  *sum;
	bool		found;

	require_store();
	LWLockAcquire(store->lock, LW_EXCLUSIVE);
	refuse_if_damaged();
	if (hash_get_num_entries(sums) >= contcount_max_ledgers)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("the server already holds contcount.max_ledgers = %d ledgers",
						contcount_max_ledgers),
				 errhint("Raise contcount.max_ledgers and restart the server.")));
	append_durably(build_record(buf, STORE_CREATED, ledger, 0, &creation));
	sum = hash_search(sums, &ledger, HASH_ENTER, &found);
	if (!found)
		sum->spent_units = 0;
	LWLockRelease(store->lock);
}

int64
ledger_store_charge(int64 ledger, const char *name, uint64 budget_units,
					StoreCharge *charge, int64 max_releases)
{
	char		buf[RECORD_MAX];
	LedgerSum  *sum;
	uint64		remaining;
	uint64		affordable;

	Assert(charge->epsilon_units > 0 && max_releases >= 1);
	require_store();
	LWLockAcquire(store->lock, LW_EXCLUSIVE);
	refuse_if_damaged();
	sum = hash_search(sums, &ledger, HASH_FIND, NULL);
	if (sum == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("ledger \"%s\" is missing from the ledger store: releases are refused", name),
				 errdetail("Its creation is not in \"%s\"; the file may have been lost or replaced.",
						   STORE_FILE),
				 errhint("Restore the file from a backup, or drop and create the ledger again.")));
	remaining = sum->spent_units > budget_units ? 0 : budget_units - sum->spent_units;
	affordable = remaining / charge->epsilon_units;
	if (affordable == 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONTCOUNT_BUDGET_EXCEEDED),
				 errmsg("privacy budget of ledger \"%s\" would be overspent", name),
				 errdetail("Requested epsilon %s, remaining epsilon %s.",
						   spec_format_epsilon(charge->epsilon_units),
						   spec_format_epsilon(remaining))));
	charge->releases = (uint64) max_releases < affordable ? max_releases : (int64) affordable;
	charge->epsilon_units *= charge->releases;
	append_durably(build_record(buf, STORE_CHARGE, ledger, charge->epsilon_units, charge));
	sum->spent_units += charge->epsilon_units;
	LWLockRelease(store->lock);
	return charge->releases;
}

void
ledger_store_refund(StoreCharge *refund)
{
	char		buf[RECORD_MAX];
	LedgerSum  *sum;

	require_store();
	LWLockAcquire(store->lock, LW_EXCLUSIVE);
	refuse_if_damaged();
	sum = hash_search(sums, &refund->ledger, HASH_FIND, NULL);
	/* the caller charged at least this much, and nothing lowers a sum else */
	if (sum == NULL || sum->spent_units < refund->epsilon_units)
		elog(ERROR, "refund of more than ledger " INT64_FORMAT " was charged", refund->ledger);
	append_durably(build_record(buf, STORE_REFUND, refund->ledger, refund->epsilon_units, refund));
	sum->spent_units -= refund->epsilon_units;
	LWLockRelease(store->lock);
}

bool
ledger_store_spent(int64 ledger, uint64 *spent_units)
{
	LedgerSum  *sum;

	require_store();
	LWLockAcquire(store->lock, LW_SHARED);
	refuse_if_damaged();
	sum = hash_search(sums, &ledger, HASH_FIND, NULL);
	if (sum != NULL)
		*spent_units = sum->spent_units;
	LWLockRelease(store->lock);
	return sum != NULL;
}

void
ledger_store_scan(void (*fn) (const StoreCharge *charge, void *arg), void *arg)
{
	char	   *buf = palloc(RECORD_MAX);
	StoreRecord *rec = (StoreRecord *) buf;
	off_t		offset = 0;
	int			fd;

	require_store();
	LWLockAcquire(store->lock, LW_SHARED);
	refuse_if_damaged();
	fd = store->size > 0 ? OpenTransientFile(STORE_FILE, O_RDONLY | PG_BINARY) : -1;
	if (store->size > 0 && fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open \"%s\": %m", STORE_FILE)));
	while (offset < store->size)
	{
		StoreCharge charge;

		if (pg_pread(fd, buf, RECORD_FIXED, offset) != RECORD_FIXED ||
			rec->length > RECORD_MAX ||
			pg_pread(fd, buf + RECORD_FIXED, rec->length - RECORD_FIXED,
					 offset + RECORD_FIXED) != rec->length - RECORD_FIXED ||
			record_crc(rec) != rec->crc)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("could not read the ledger store \"%s\" at offset %lld",
							STORE_FILE, (long long) offset)));
		if (rec->kind == STORE_CHARGE || rec->kind == STORE_REFUND)
		{
			charge.at = rec->at;
			charge.role = rec->role;
			charge.ledger = rec->ledger;
			charge.epsilon_units = rec->epsilon_units;
			charge.refund = rec->kind == STORE_REFUND;
			charge.function = rec->text;
			charge.statement = rec->text + strlen(rec->text) + 1;
			fn(&charge, arg);
		}
		offset += rec->length;
	}
	if (fd >= 0)
		CloseTransientFile(fd);
	LWLockRelease(store->lock);
	pfree(buf);
}
