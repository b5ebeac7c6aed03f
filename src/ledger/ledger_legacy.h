/*
 * ledger_legacy.h
 *		Reading the ledger store file of contcount 0.2, to take it into the
 *		store in WAL.
 */
#ifndef CONTCOUNT_LEDGER_LEGACY_H
#define CONTCOUNT_LEDGER_LEGACY_H

#include "datatype/timestamp.h"
#include "port/pg_crc32c.h"

#define LEGACY_FILE "contcount/ledger"
#define LEGACY_IMPORTED_FILE "contcount/ledger.imported"

/* The kinds of 0.2's records that carry ledgers and charges. */
#define LEGACY_CREATED 2
#define LEGACY_CHARGE 3
#define LEGACY_REFUND 4

typedef struct LegacyRecord
{
	uint32		kind;
	Oid			role;
	int64		ledger;
	uint64		epsilon_units;
	TimestampTz at;
	const char *function;
	const char *statement;
	int64		end;			/* offset in the file just past this record */
} LegacyRecord;

/*
 * If the 0.2 file exists, check it whole and return true with its size and
 * CRC32C (a record cut short at the end, a write that never returned, is not
 * counted); then, if fn is given, call it for every record that ends past
 * from.  A damaged file raises an error.
 */
extern bool legacy_read(int64 *size, pg_crc32c *crc, int64 from,
						void (*fn) (const LegacyRecord *record, void *arg), void *arg);

#endif							/* CONTCOUNT_LEDGER_LEGACY_H */
