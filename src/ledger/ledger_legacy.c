/*
 * ledger_legacy.c
 *		Reading the ledger store file of contcount 0.2 (an fsynced append-only
 *		file outside WAL), once, to take it into the store in WAL.
 *
 * The format is 0.2's: a header record, then records of ledger creations,
 * charges and refunds, each with a CRC32C of its bytes.  ledger_store.c
 * decides when the file is taken in and what a file found later means.
 *
 * IDENTIFICATION
 *	  src/ledger/ledger_legacy.c
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/fd.h"

#include "ledger/ledger_legacy.h"

#define LEGACY_MAGIC INT64CONST(0x636f6e74636f756e)	/* "contcoun" */
#define LEGACY_VERSION 1
#define LEGACY_HEADER 1

typedef struct LegacyFileRecord
{
	pg_crc32c	crc;			/* of the bytes after it, up to length */
	uint32		length;			/* of the whole record */
	uint32		kind;
	Oid			role;
	int64		ledger;
	uint64		epsilon_units;
	TimestampTz at;
	char		text[FLEXIBLE_ARRAY_MEMBER];	/* function NUL statement NUL */
} LegacyFileRecord;

#define LEGACY_FIXED ((int64) offsetof(LegacyFileRecord, text))

static void
damaged(const char *what, int64 offset)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("the ledger store file of contcount 0.2 \"%s\" is damaged: %s at offset " INT64_FORMAT,
					LEGACY_FILE, what, offset),
			 errhint("Restore the server from a base backup taken before the update, with its WAL.")));
}

/* The whole 0.2 file, palloc'd, its size in *size; NULL if there is none. */
static char *
read_legacy_file(int64 *size)
{
	struct stat st;
	int			fd;
	char	   *data;

	if (stat(LEGACY_FILE, &st) != 0)
	{
		if (errno == ENOENT)
			return NULL;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat \"%s\": %m", LEGACY_FILE)));
	}
	fd = OpenTransientFile(LEGACY_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open \"%s\": %m", LEGACY_FILE)));
	data = palloc_extended(st.st_size + 1, MCXT_ALLOC_HUGE);
	if (pg_pread(fd, data, st.st_size, 0) != st.st_size)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read \"%s\": %m", LEGACY_FILE)));
	CloseTransientFile(fd);
	*size = st.st_size;
	return data;
}

/*
 * The record at offset of the file's size bytes of data, into *rec, checked
 * (a damaged one is an error); false if it is cut short at the end: a write
 * that never returned.
 */
static bool
record_at(const char *data, int64 size, int64 offset, LegacyFileRecord *rec)
{
	pg_crc32c	rec_crc;

	if (size - offset < LEGACY_FIXED)
		return false;
	memcpy(rec, data + offset, LEGACY_FIXED);
	if (rec->length < LEGACY_FIXED + 2 || rec->length > 4096)
		damaged("a record with a bad length", offset);
	if (size - offset < rec->length)
		return false;
	INIT_CRC32C(rec_crc);
	COMP_CRC32C(rec_crc, data + offset + sizeof(pg_crc32c), rec->length - sizeof(pg_crc32c));
	FIN_CRC32C(rec_crc);
	if (rec_crc != rec->crc || data[offset + rec->length - 1] != '\0')
		damaged("a CRC mismatch", offset);
	if (offset == 0 ? (rec->kind != LEGACY_HEADER || rec->ledger != LEGACY_MAGIC ||
					   rec->epsilon_units != LEGACY_VERSION) :
		(rec->kind != LEGACY_CREATED && rec->kind != LEGACY_CHARGE && rec->kind != LEGACY_REFUND))
		damaged("an unexpected record", offset);
	return true;
}

bool
legacy_read(int64 *size, pg_crc32c *crc, int64 from,
			void (*fn) (const LegacyRecord *record, void *arg), void *arg)
{
	int64		file_size;
	char	   *data = read_legacy_file(&file_size);
	int64		offset = 0;
	LegacyFileRecord rec;

	if (data == NULL)
		return false;
	while (offset < file_size && record_at(data, file_size, offset, &rec))
	{
		const char *text = data + offset + LEGACY_FIXED;

		if (fn != NULL && offset > 0 && offset + rec.length > from)
		{
			LegacyRecord record = {
				.kind = rec.kind,.role = rec.role,.ledger = rec.ledger,
				.epsilon_units = rec.epsilon_units,.at = rec.at,
				.function = text,.statement = text + strlen(text) + 1,
				.end = offset + rec.length
			};

			fn(&record, arg);
		}
		offset += rec.length;
	}
	*size = offset;
	INIT_CRC32C(*crc);
	COMP_CRC32C(*crc, data, offset);
	FIN_CRC32C(*crc);
	pfree(data);
	return true;
}
