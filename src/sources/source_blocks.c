/*
 * source_blocks.c
 *		Per-block budgets of protected sources: data that ages out renews
 *		the budget (PrivateKube's blocks).
 *
 * A DBA declares that a source's budget is held per block of time: blocks
 * of a fixed length, aligned on 2000-01-01 00:00 UTC, each with the same
 * budget, and a retention past which rows are never read.  A row belongs
 * to the block its time falls in, cast in UTC whatever the caller's
 * TimeZone.  A release then reads only the rows of a window of time, no
 * older than the retention, and charges every block that window touches,
 * in place of the source's ledger: the privacy loss of a row is bounded by
 * its block's budget, since every release that read it charged its block.
 * Rows with no time, or timed outside the window, are never read.
 *
 * No window reaches past the end of the current block (the one now falls
 * in): a release whose steps go further reads, and charges, only up to
 * there, and its later steps count no row.  Rows timed in the future are
 * read once their block is current, and charged then; a release cannot
 * make blocks in advance, which would hold the server's room
 * (contcount.max_blocks) for good.  Each ledger holds at most
 * contcount.max_blocks_per_ledger blocks (ledger_store.c).
 *
 * The blocks' spending is kept by the ledger store (ledger_store.c), under
 * the source's ledger (which says their accounting): a block is created by
 * its first charge, with that charge's length, and keeps what it spent for
 * good; its identity is its time range, so that no block is ever made
 * again with a fresh budget.  The length of a source's blocks is fixed once
 * declared, and the store refuses a charge to blocks that overlap blocks of
 * another length of the same ledger (a source declared again, or another
 * source of the same ledger).  A block whose end is older than the
 * retention is retired: releases no longer read its rows, so its budget no
 * longer matters; deleting those rows is the DBA's to do, and
 * source_expired_rows() counts the ones still there.  What the source's
 * ledger itself was charged (releases before the blocks were declared, or
 * from other sources of the ledger without blocks) paid for reading rows of
 * every block, and counts against each.
 *
 * IDENTIFICATION
 *	  src/sources/source_blocks.c
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "common/args.h"
#include "common/int.h"
#include "common/owner_spi.h"
#include "common/settings.h"
#include "ledger/ledger.h"
#include "ledger/ledger_store.h"
#include "sources/source_blocks.h"

bool
source_blocks_installed(void)
{
	return contcount_has_column("source", "block_length");
}

void
source_blocks_read(SourceBlocks *blocks, HeapTuple tuple, TupleDesc desc, int first)
{
	bool		isnull;
	Datum		length = SPI_getbinval(tuple, desc, first, &isnull);

	memset(blocks, 0, sizeof(*blocks));
	if (isnull)
		return;
	blocks->length = interval_usecs(DatumGetIntervalP(length), "block length");
	blocks->budget_units = DatumGetInt64(SPI_getbinval(tuple, desc, first + 1, &isnull));
	blocks->retention = interval_usecs(DatumGetIntervalP(SPI_getbinval(tuple, desc, first + 2, &isnull)),
									   "retention");
}

TimestampTz
source_blocks_start(TimestampTz time, int64 length)
{
	int64		q = time / length;

	/* floor, for times before 2000 too */
	if (time % length != 0 && time < 0)
		q--;
	return q * length;
}

void
source_blocks_window(const SourceBlocks *blocks, bool stepped, TimestampTz start, TimestampTz end,
					 TimestampTz *from, TimestampTz *to, StoreBlockRun *run)
{
	TimestampTz now = GetCurrentTimestamp();
	/* no overflow: retention < 2^63 and now > 0 */
	TimestampTz oldest = Max(now - blocks->retention, MIN_TIMESTAMP);
	/* the end of the current block: no later block is ever made */
	TimestampTz newest = source_blocks_start(now, blocks->length) + blocks->length;
	int64		span;

	*from = stepped ? Max(start, oldest) : oldest;
	*to = stepped ? Min(end, newest) : newest;
	run->length = blocks->length;
	run->first = source_blocks_start(*from, blocks->length);
	run->count = 0;
	if (*from >= *to)
	{
		*to = *from;
		return;
	}
	if (pg_sub_s64_overflow(*to, run->first, &span) ||
		(run->count = span / blocks->length + (span % blocks->length != 0)) > contcount_max_blocks)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a release reads at most contcount.max_blocks = %d blocks", contcount_max_blocks),
				 errhint("Release a shorter range of time.")));
}

void
source_blocks_counter_run(int64 length, TimestampTz paid_until, TimestampTz step_end,
						  StoreBlockRun *run)
{
	TimestampTz end = source_blocks_start(step_end - 1, length) + length;

	run->length = length;
	run->first = paid_until;
	run->count = end > paid_until ? (end - paid_until) / length : 0;
}

/*
 * Blocks belong to the data, not to one declaration: a source with blocks
 * must be the only source over its rows, or releases through another one
 * would read a block's rows without paying the block.  The other source
 * that shares rows with source over relid: the same table by oid (a rename
 * keeps it; a table made anew is other data), or a table above or below it
 * in an inheritance or partition tree; any such source when source has or
 * is getting blocks (with_blocks), else one with blocks.  Declarations
 * wait on each other (a lock on contcount.source to commit, which no
 * release or counter takes) so that two of them cannot both pass.  NULL if
 * none.  Owner scope.
 */
static char *
source_sharing_rows(const char *source, Oid relid, bool with_blocks)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[3] = {TEXTOID, OIDOID, BOOLOID};
	Datum		values[3] = {CStringGetTextDatum(source), ObjectIdGetDatum(relid), BoolGetDatum(with_blocks)};

	if (SPI_execute("LOCK TABLE contcount.source IN SHARE ROW EXCLUSIVE MODE", false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not lock contcount.source");
	owner_run(&plan, "WITH RECURSIVE up(r) AS (SELECT $2 UNION SELECT i.inhparent "
			  "FROM pg_catalog.pg_inherits i JOIN up ON i.inhrelid OPERATOR(pg_catalog.=) up.r), "
			  "down(r) AS (SELECT $2 UNION SELECT i.inhrelid "
			  "FROM pg_catalog.pg_inherits i JOIN down ON i.inhparent OPERATOR(pg_catalog.=) down.r) "
			  "SELECT s.name FROM contcount.source s "
			  "WHERE s.name OPERATOR(pg_catalog.<>) $1 "
			  "AND s.relid IN (SELECT r FROM up UNION SELECT r FROM down) "
			  "AND ($3 OR s.block_length IS NOT NULL) ORDER BY s.name LIMIT 1",
			  3, types, values, NULL, SPI_OK_SELECT);
	return SPI_processed > 0 ? SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1) : NULL;
}

void
source_blocks_require_alone(const char *source, Oid relid, bool with_blocks)
{
	char	   *other;

	if (!source_blocks_installed())
		return;
	other = source_sharing_rows(source, relid, with_blocks);
	if (other != NULL && with_blocks)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("protected source \"%s\" reads the rows of protected source \"%s\"", source, other),
				 errdetail("A source whose budget is held per block must be the only source over its rows."),
				 errhint("Drop protected source \"%s\" first.", other)));
	if (other != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("protected source \"%s\" holds its budget per block over the rows of table \"%s\"",
						other, get_rel_name(relid)),
				 errdetail("A second source over them would release without paying their blocks."),
				 errhint("Release through protected source \"%s\".", other)));
}
