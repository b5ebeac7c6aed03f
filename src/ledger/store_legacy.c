/*
 * store_legacy.c
 *		Taking contcount 0.2's store file into the ledger store, once, or
 *		checking that the one found is the one taken in.
 *
 * The 0.2 store file.  On a primary, the first load takes contcount/ledger
 * into the store: a LEGACY_BEGIN item naming the file's size and CRC, each of
 * its records as an item that remembers where it ended in the file (so that
 * an import cut short by a crash resumes where it stopped, counting nothing
 * twice), a LEGACY_END item, a flush, and only then the file renamed to
 * contcount/ledger.imported.  A 0.2 file found beside a store that did not
 * take it in is a lone older file: refused.
 *
 * What it owns: the decision and the items of the take-in; reading the file
 * is ledger_legacy.c's.  It runs in the first load on a primary, under
 * StoreShared->lock held exclusively (ledger_store.c, where the locking
 * protocol is).
 *
 * IDENTIFICATION
 *	  src/ledger/store_legacy.c
 */
#include "postgres.h"

#include "access/xlog.h"
#include "storage/fd.h"

#include "ledger/ledger_legacy.h"
#include "ledger/ledger_store.h"
#include "ledger/store_internal.h"

/* Where the take-in appends its items, and the last record's end. */
typedef struct LegacyTakeIn
{
	StoreAppendFn append;
	XLogRecPtr	last;
} LegacyTakeIn;

/* Append one 0.2 record as an item that remembers where it ended there. */
static void
import_legacy_one(const LegacyRecord *record, void *arg)
{
	LegacyTakeIn *take = (LegacyTakeIn *) arg;
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
	item = store_build_item(buf, kind, record->ledger, record->epsilon_units, &charge, record->function);
	item->legacy_end = record->end;
	take->last = take->append(item);
}

/*
 * Bring a 0.2 store file into the store, or check that the one found is the
 * one already taken in: state is the store's (how far a take-in went),
 * store_empty whether it holds no ledger, append how an item is added.
 * Returns what damages the store, or NULL.  Exclusive lock held, on a
 * primary.
 */
const char *
store_import_legacy(const StoreShared *state, bool store_empty, StoreAppendFn append)
{
	int64		size;
	pg_crc32c	crc;
	char		buf[ITEM_MAX];
	LegacyTakeIn take = {append, InvalidXLogRecPtr};

	if (!legacy_read(&size, &crc, 0, NULL, NULL))
	{
		if (state->legacy_begun && !state->legacy_done)
			return "taking in the store file of contcount 0.2 was cut short, and the file is gone";
		return NULL;
	}
	if (state->legacy_begun && (size != state->legacy_size || crc != state->legacy_crc))
		return psprintf("the store file of contcount 0.2 \"%s\" is not the one taken into WAL: "
						"charges live in WAL since 0.3; remove the file and restart", LEGACY_FILE);
	if (!state->legacy_begun && !store_empty)
		return psprintf("a lone store file of contcount 0.2 \"%s\" beside the ledger store in WAL: "
						"charges live in WAL since 0.3; remove the file and restart", LEGACY_FILE);
	if (!state->legacy_done)
	{
		if (!state->legacy_begun)
			take.last = append(store_build_item(buf, ITEM_LEGACY_BEGIN, (int64) crc, (uint64) size,
												NULL, "the store file of contcount 0.2"));
		(void) legacy_read(&size, &crc, state->legacy_next, import_legacy_one, &take);
		take.last = append(store_build_item(buf, ITEM_LEGACY_END, (int64) crc, (uint64) size,
											NULL, "the store file of contcount 0.2"));
		XLogFlush(take.last);
		ereport(LOG,
				(errmsg("the ledger store file of contcount 0.2 \"%s\" is taken into WAL", LEGACY_FILE)));
	}
	/* only now: a crash before the rename takes in nothing twice */
	(void) durable_rename(LEGACY_FILE, LEGACY_IMPORTED_FILE, ERROR);
	return NULL;
}
