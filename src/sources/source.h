/*
 * source.h
 *		What counters and releases outside source.c need of protected sources.
 */
#ifndef CONTCOUNT_SOURCE_H
#define CONTCOUNT_SOURCE_H

#include "access/attnum.h"
#include "commands/trigger.h"

#include "core/mechanism.h"
#include "sources/source_blocks.h"

/*
 * A source's table, unit column, bound on rows a unit, ledger's name, and
 * its blocks (length 0: none).
 */
typedef struct SourceBounds
{
	Oid			relid;
	AttrNumber	unit;
	int32		max_rows;
	char	   *ledger;
	SourceBlocks blocks;
} SourceBounds;

/*
 * The bounds of a source the calling role is granted, as committed now, for
 * a counter over it; an error unless the unit column's type has one text
 * form a value (the per-unit counts are kept by it), or, with blocks, the
 * time column's type is one a row's block can be told from (42804).  In the
 * caller's memory.
 */
extern void source_for_counter(const char *name, SourceBounds *bounds);

/*
 * The bounds of a source the calling role is granted, as committed now, for
 * a preview of a release from it: nothing of its table is read.  Returns
 * the release's sensitivity, what one unit moves its counts by in all:
 * max_rows, or counting persons (over dimension, a declared one: 42704
 * otherwise; or none) the least of max_rows, max_groups and the keys.
 */
extern int64 source_for_preview(const char *name, const char *dimension, bool persons,
								SourceBounds *bounds);

/*
 * The noise and the charge of a release from a source whose parameters,
 * params, are calibrated to its sensitivity k (L1) and charged.  Counting
 * persons (persons) with a zCDP mechanism and k >= 2, a person moves at
 * most k keys' streams, each by 1 at one step: an L2 norm of sqrt(k).  The
 * keys' streams are independent mechanisms, so the release is the
 * composition of k of them each moved as a stream of sensitivity 1: params
 * becomes one key's noise, sensitivity 1 at rho / k (rounded down: more
 * noise), the variance k times less than at sensitivity k and rho, and the
 * cost returned is that composition's (the pair's moved coordinates k
 * times one key's), charged the release's own rho, which bounds its rho.
 * Otherwise (pure, rows, k = 1, or rho / k out of range) params stays and
 * the cost is cc_params_cost(params).
 */
extern cc_cost source_release_noise(bool persons, cc_params *params);

/*
 * Argument argno, count: "rows" (false) or "persons" (true, counting each
 * unit once a group, at its first row there); 22004 if null, 22023 if
 * another.  Rows when the function has no such argument (a database not
 * yet updated to 0.6).
 */
extern bool source_count_arg(FunctionCallInfo fcinfo, int argno);

/*
 * A source's table as a release that builds its own query needs it: the
 * table (quoted, schema-qualified), its unit column (quoted), its time
 * column as source_time_sql gives it, the unit column's type and
 * collation, the source's ledger.
 */
typedef struct SourceTable
{
	Oid			relid;
	char	   *relation;
	char	   *unit;
	char	   *time;
	Oid			unit_type;
	Oid			unit_collation;
	char	   *ledger;
} SourceTable;

/*
 * The table of a source the calling role is granted, as committed now; an
 * error if the table or a declared column is gone (42P01, 42703) or the
 * source's ledger was dropped (42704), or its budget is held per block
 * (0A000).  In the caller's memory.
 */
extern void source_for_release(const char *name, SourceTable *table);

/*
 * The table of a source, for managing it: as committed now and with the
 * current transaction's changes; an error (42704) if there is none.  Owner
 * scope.
 */
extern Oid	source_relid(const char *name);

/* A live column of relid named by argument argno; an error (42703) if none. */
extern AttrNumber source_column_arg(FunctionCallInfo fcinfo, int argno, Oid relid,
									const char *what);

/* The name of a column of a table, or NULL if it was dropped or never was. */
extern char *source_live_column(Oid relid, AttrNumber attnum);

/*
 * A time column (quoted: column) as a timestamptz, in SQL that no row's
 * value can make fail, for an owner scope (whose seal pins TimeZone to
 * UTC): a timestamp is read as UTC, a date as its midnight UTC, a date
 * beyond timestamp's range is null.  An error (42804) unless the column is
 * a timestamptz, a timestamp or a date.
 */
extern char *source_time_sql(Oid relid, AttrNumber attnum, const char *column);

/*
 * The query of a release over a table (a source's, a partition of it, a
 * shard's): contcount.bounded_counts() over the rows with a unit, stepped
 * those with a time in [$1, $2), those whose columns filters (text[] each,
 * from $3 stepped, else $1) keep, and with window those in the window of
 * the two parameters after.  Column numbers are the table's.  42P01, 42703
 * if the table or a column is gone, 42804 for a time column of another type.
 */
extern char *source_rows_sql(Oid relid, AttrNumber unit, AttrNumber time, AttrNumber dimension,
							 bool stepped, int nfilters, const AttrNumber *filters, bool window);

/*
 * The name of a counter that counts source (the first by name), or NULL.
 * Owner scope, with the current transaction's changes.
 */
extern char *source_counted_by(const char *source);

/* The name of the ledger of source, as committed now; an error if none. */
extern char *source_ledger_name(const char *source);

/*
 * The trigger that feeds the counters of a source (source_counter.c): one
 * a source, created by the DBA's protect_table, so that counters attach
 * and detach without a lock on the table.  source_counter_feed creates it
 * if it is not there (42P01 if the table is gone; nothing before 0.6),
 * source_counter_unfeed drops it if the table and it are there, and
 * source_counter_require_feed raises 0A000 for a view (no trigger feeds
 * it), 55000 unless the trigger is there.
 */
extern bool source_feed_installed(void);

/*
 * Can counters count protected sources here (contcount.counter has its
 * source column)?  Not in a database not yet updated to 0.5.
 */
extern bool counter_sources_installed(void);
extern void source_counter_feed(const char *source, Oid relid);
extern void source_counter_unfeed(const char *source, Oid relid);
extern void source_counter_require_feed(const char *source, Oid relid);

#endif							/* CONTCOUNT_SOURCE_H */
