/*
 * source_blocks.h
 *		Per-block budgets of protected sources: what releases need of them.
 */
#ifndef CONTCOUNT_SOURCE_BLOCKS_H
#define CONTCOUNT_SOURCE_BLOCKS_H

#include "access/htup.h"
#include "access/tupdesc.h"

#include "ledger/ledger_store.h"

/* A source's blocks, as declared by source_blocks(). */
typedef struct SourceBlocks
{
	int64		length;			/* microseconds; 0: the source has no blocks */
	uint64		budget_units;	/* of each block, in its ledger's accounting */
	int64		retention;		/* microseconds */
} SourceBlocks;

/* Does contcount.source have the columns of blocks (0.5 on)? */
extern bool source_blocks_installed(void);

/*
 * Read a source's blocks from its catalog row: block_length, its block
 * budget in units and retention, from column first on (all null: none).
 */
extern void source_blocks_read(SourceBlocks *blocks, HeapTuple tuple, TupleDesc desc, int first);

/*
 * The window [*from, *to) of the time line a release reads from a source
 * with blocks, and the run of blocks that pays for it (none, when the window
 * is empty): rows no older than the retention, from start to end when the
 * release is stepped, else up to the end of the current block.  54000 if
 * the run holds more than contcount.max_blocks blocks.
 */
extern void source_blocks_window(const SourceBlocks *blocks, bool stepped, TimestampTz start,
								 TimestampTz end, TimestampTz *from, TimestampTz *to,
								 StoreBlockRun *run);

/* The start of the block of length (microseconds) that time falls in. */
extern TimestampTz source_blocks_start(TimestampTz time, int64 length);

/*
 * The blocks of length a counter pays before a step that ends at step_end
 * (exclusive), having paid the blocks up to paid_until (a block's start):
 * the run from paid_until to the end of the block of the step's last
 * microsecond, so that every row timed in the step lies in a paid block;
 * none if they are paid already.
 */
extern void source_blocks_counter_run(int64 length, TimestampTz paid_until,
									  TimestampTz step_end, StoreBlockRun *run);

/*
 * Refuse (55000, naming the other source) a source over relid that shares
 * rows with a source whose budget is held per block, or, with_blocks, a
 * source getting blocks that shares rows with any other source: blocks
 * belong to the rows, and every release over them must pay them.  Owner
 * scope; holds a lock on contcount.source to commit.
 */
extern void source_blocks_require_alone(const char *source, Oid relid, bool with_blocks);

#endif							/* CONTCOUNT_SOURCE_BLOCKS_H */
