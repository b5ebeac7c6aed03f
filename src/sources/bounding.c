/*
 * bounding.c
 *		The bounding rule of protected sources, as one ordered aggregate.
 *
 * The rule, documented in the README: rows with a null unit, a key that is
 * not declared or a time outside the release's steps are left out first;
 * then each unit keeps its groups (keys) in the order of their first row's
 * time, ties by key, up to max_groups, and within them its rows in time
 * order, ties by key, up to max_rows.  What a unit keeps depends on its own
 * rows only, and is at most max_rows rows in at most max_groups groups, so
 * adding or removing all of one unit's rows moves the counts by at most
 * max_rows in all.  The order must not depend on other units' rows: that is
 * why ties in time are broken by key, in the sort itself.
 *
 * Counting persons (distinct units), a unit's rows after its first in a
 * group are left out before the rule, so that it keeps at most one row a
 * group, the earliest (the sort puts it first; rows of one unit, key and
 * time are alike to the counts), in at most max_groups groups and max_rows
 * rows: each count moves by at most 1, and a unit moves at most
 * min(max_rows, max_groups) of them, that many keys.
 *
 * contcount.bounded_counts(unit, key, t ORDER BY unit, t, key) sees every row
 * once, in that order (the executor sorts an aggregate's input by its ORDER
 * BY), and adds each kept row to its cell of the running release's counts:
 * one sort and one pass, no window, no row stored twice.  A unit ends where
 * the unit type's equality, under the column's collation, says so: the same
 * equality the sort groups by, so that a unit is never split in two.
 *
 * The aggregate takes its parameters (bounds, declared keys, steps) from the
 * release that runs it, through bounding_run(), rather than as arguments: an
 * ordered aggregate's arguments are sorted with every row, and the keys
 * would be copied a row at a time.  Called any other way it refuses.
 *
 * IDENTIFICATION
 *	  src/sources/bounding.c
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "parser/parse_func.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "common/owner_spi.h"
#include "common/seal.h"
#include "sources/bounding.h"

/* The release whose query is running, if any. */
static Bounding *running = NULL;

static uint32
key_hash(const text *key)
{
	return hash_bytes((const unsigned char *) VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key));
}

static bool
key_equal(const text *a, const text *b)
{
	return VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
}

void
bounding_init(Bounding *bounding, int32 max_rows, int32 max_groups, bool persons,
			  Oid unit_type, Oid unit_collation, Datum keys, TimestampTz start, int64 step_usec,
			  int64 nsteps)
{
	bool	   *nulls;

	bounding->max_rows = max_rows;
	bounding->max_groups = max_groups;
	bounding->persons = persons;
	bounding->unit_type = unit_type;
	bounding->unit_collation = unit_collation;
	bounding->start = start;
	bounding->step_usec = step_usec;
	bounding->nsteps = nsteps;
	bounding->keys = NULL;
	bounding->key_slots = NULL;
	bounding->nkeys = 1;
	if (keys != (Datum) 0)
	{
		deconstruct_array(DatumGetArrayTypeP(keys), TEXTOID, -1, false, TYPALIGN_INT,
						  &bounding->keys, &nulls, &bounding->nkeys);
		/* at most half full: a lookup probes a slot or two */
		bounding->slot_mask = pg_nextpower2_32(2 * bounding->nkeys) - 1;
		bounding->key_slots = palloc0_array(int32, bounding->slot_mask + 1);
		for (int i = 0; i < bounding->nkeys; i++)
		{
			text	   *key = DatumGetTextPP(bounding->keys[i]);
			uint32		slot = key_hash(key) & bounding->slot_mask;

			bounding->keys[i] = PointerGetDatum(key);
			while (bounding->key_slots[slot] != 0)
				slot = (slot + 1) & bounding->slot_mask;
			bounding->key_slots[slot] = i + 1;
		}
	}
	bounding->counts = palloc0_array(int64, bounding->nkeys * nsteps);
}

/* The position of key among the declared keys, or -1. */
static int
key_position(const Bounding *bounding, const text *key)
{
	uint32		slot = key_hash(key) & bounding->slot_mask;

	for (;;)
	{
		int32		entry = bounding->key_slots[slot];

		if (entry == 0)
			return -1;
		if (key_equal(DatumGetTextPP(bounding->keys[entry - 1]), key))
			return entry - 1;
		slot = (slot + 1) & bounding->slot_mask;
	}
}

void
bounding_require_aggregate(void)
{
	/* a database still at 0.4 (until ALTER EXTENSION UPDATE) has no aggregate */
	if (!OidIsValid(LookupFuncName(list_make2(makeString("contcount"), makeString("bounded_counts")),
								   -1, NULL, true)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("releases from protected sources need contcount 0.5's SQL objects"),
				 errhint("Run ALTER EXTENSION contcount UPDATE.")));
}

void
bounding_run(Bounding *bounding, const char *sql, int nargs, const Oid *types, const Datum *values)
{
	SPIPlanPtr	plan;
	SealedUsage usage;

	if (running != NULL)
		elog(ERROR, "a protected source's release runs inside another");
	plan = SPI_prepare(sql, nargs, (Oid *) types);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for a release from a protected source: %s",
			 SPI_result_code_string(SPI_result));
	running = bounding;
	seal_usage_save(&usage);
	PG_TRY();
	{
		/* on what is committed now, as a charge is: not the caller's older snapshot */
		owner_execute(plan, values, SPI_OK_SELECT);
	}
	PG_FINALLY();
	{
		running = NULL;
		/* even on a cancel, which a handler in plpgsql may catch */
		seal_usage_restore(&usage);
	}
	PG_END_TRY();
	SPI_freeplan(plan);
}

/* One aggregate's walk through the units, in its aggregate context. */
typedef struct BoundingWalk
{
	Bounding   *bounding;
	FmgrInfo   *unit_equal;
	bool		has_unit;
	Datum		unit;			/* the current unit, a copy */
	bool		unit_byval;
	int16		unit_len;
	int64		serial;			/* of the current unit, from 1 */
	int64	   *group_of;		/* per key: serial of the unit it is a group of */
	int32		ngroups;
	int32		kept_rows;
} BoundingWalk;

static BoundingWalk *
walk_start(MemoryContext aggcontext, Oid unit_type)
{
	Bounding   *bounding = running;
	BoundingWalk *walk;
	TypeCacheEntry *type;

	if (bounding == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bounded_counts is called only by releases from protected sources")));
	if (unit_type != bounding->unit_type)
		elog(ERROR, "the unit of a protected source changed type during its release");
	type = lookup_type_cache(unit_type, TYPECACHE_EQ_OPR_FINFO);
	if (!OidIsValid(type->eq_opr_finfo.fn_oid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("the unit column's type %s has no equality operator",
						format_type_be(unit_type))));
	walk = MemoryContextAllocZero(aggcontext, sizeof(BoundingWalk));
	walk->bounding = bounding;
	walk->unit_equal = MemoryContextAlloc(aggcontext, sizeof(FmgrInfo));
	fmgr_info_copy(walk->unit_equal, &type->eq_opr_finfo, aggcontext);
	walk->unit_byval = type->typbyval;
	walk->unit_len = type->typlen;
	walk->group_of = MemoryContextAllocZero(aggcontext, bounding->nkeys * sizeof(int64));
	return walk;
}

/* Is unit the one being walked?  If not, it is from now on. */
static void
walk_to_unit(BoundingWalk *walk, MemoryContext aggcontext, Datum unit)
{
	MemoryContext old;

	if (walk->has_unit &&
		DatumGetBool(FunctionCall2Coll(walk->unit_equal, walk->bounding->unit_collation,
									   walk->unit, unit)))
		return;
	if (walk->has_unit && !walk->unit_byval)
		pfree(DatumGetPointer(walk->unit));
	old = MemoryContextSwitchTo(aggcontext);
	walk->unit = datumCopy(unit, walk->unit_byval, walk->unit_len);
	MemoryContextSwitchTo(old);
	walk->has_unit = true;
	walk->serial++;
	walk->ngroups = 0;
	walk->kept_rows = 0;
}

/*
 * bounded_counts_step(walk, unit, key, t): the rule applied to one row, in
 * the order of the aggregate's ORDER BY unit, t, key.
 */
PG_FUNCTION_INFO_V1(contcount_bounded_counts_step);
Datum
contcount_bounded_counts_step(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	BoundingWalk *walk;
	Bounding   *bounding;
	int			key = 0;
	int64		step = 0;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "bounded_counts_step called in a non-aggregate context");
	walk = PG_ARGISNULL(0) ? walk_start(aggcontext, get_fn_expr_argtype(fcinfo->flinfo, 1))
		: (BoundingWalk *) PG_GETARG_POINTER(0);
	bounding = walk->bounding;
	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(walk);
	walk_to_unit(walk, aggcontext, PG_GETARG_DATUM(1));
	/* a unit's rows past its bound cost nothing more */
	if (walk->kept_rows >= bounding->max_rows)
		PG_RETURN_POINTER(walk);
	if (bounding->keys != NULL)
	{
		if (PG_ARGISNULL(2))
			PG_RETURN_POINTER(walk);
		key = key_position(bounding, PG_GETARG_TEXT_PP(2));
		if (key < 0)
			PG_RETURN_POINTER(walk);
	}
	if (bounding->step_usec > 0)
	{
		TimestampTz t;

		if (PG_ARGISNULL(3))
			PG_RETURN_POINTER(walk);
		t = PG_GETARG_TIMESTAMPTZ(3);
		/* the query keeps only rows in the steps; one outside is a bug */
		if (t < bounding->start)
			elog(ERROR, "a row before the first step reached the bounding");
		step = (t - bounding->start) / bounding->step_usec;
		if (step >= bounding->nsteps)
			elog(ERROR, "a row after the last step reached the bounding");
	}
	if (walk->group_of[key] != walk->serial)
	{
		if (walk->ngroups >= bounding->max_groups)
			PG_RETURN_POINTER(walk);
		walk->group_of[key] = walk->serial;
		walk->ngroups++;
	}
	else if (bounding->persons)
		PG_RETURN_POINTER(walk);	/* counted once in this group already */
	walk->kept_rows++;
	bounding->counts[key * bounding->nsteps + step]++;
	PG_RETURN_POINTER(walk);
}

/*
 * 0.4's window function for the rule, which 0.5's update drops: the symbol
 * stays for 0.4's script, which every new database runs on its way to 0.5.
 */
PG_FUNCTION_INFO_V1(contcount_bounded_keep);
Datum
contcount_bounded_keep(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("contcount.bounded_keep was replaced in contcount 0.5"),
			 errhint("Run ALTER EXTENSION contcount UPDATE.")));
	PG_RETURN_NULL();
}

/* The number of units seen; the counts are in the release's Bounding. */
PG_FUNCTION_INFO_V1(contcount_bounded_counts_final);
Datum
contcount_bounded_counts_final(PG_FUNCTION_ARGS)
{
	BoundingWalk *walk = PG_ARGISNULL(0) ? NULL : (BoundingWalk *) PG_GETARG_POINTER(0);

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "bounded_counts_final called in a non-aggregate context");
	if (walk == NULL && running == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bounded_counts is called only by releases from protected sources")));
	PG_RETURN_INT64(walk == NULL ? 0 : walk->serial);
}
