/*
 * shard_counts.c
 *		Releases over sharded sources: the shard's side.
 *
 * contcount.shard_bounded_counts() applies the bounding rule (bounding.c) to
 * the rows of one table of the shard and returns the exact bounded counts
 * per key and step, to the coordinator that adds them up (shards.c).  It
 * draws no noise and charges nothing: a shard releases nothing of its own.
 * Its answer is exact, so it goes only to a role the shard's DBA trusted
 * with it twice: EXECUTE on the function (not PUBLIC) and SELECT on the
 * table, with no row level security to get around; every other role gets
 * 42501.  Its query is built from column names looked up in the catalog,
 * runs as the extension's owner and is sealed as every release's query
 * (src/common/seal.c): the coordinator's connection reports no more about
 * it than the coordinator's caller could.
 *
 * IDENTIFICATION
 *	  src/sources/shard_counts.c
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"
#include "utils/timestamp.h"

#include "common/args.h"
#include "common/owner_spi.h"
#include "sources/bounding.h"
#include "sources/shards.h"
#include "sources/source.h"

/* As a release: most filters, most counts (keys times steps). */
#define SHARD_MAX_FILTERS 16
#define SHARD_MAX_CELLS 10000000

Oid
shard_counts_table(const char *schema, const char *table)
{
	Oid			relid = get_relname_relid(table, get_namespace_oid(schema, false));

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation \"%s.%s\" does not exist", schema, table)));
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK ||
		check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for the bounded counts of table \"%s.%s\"", schema, table),
				 errhint("A shard answers the coordinator's connection user, which needs SELECT on "
						 "the table and EXECUTE on contcount.shard_bounded_counts.")));
	return relid;
}

static AttrNumber
shard_column(Oid relid, const char *column)
{
	AttrNumber	attnum = get_attnum(relid, column);

	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist", column,
						get_rel_name(relid))));
	return attnum;
}

static void
bad_shard_filter(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("a shard's filter maps columns to JSON arrays of strings")));
}

/* The keys of one column's filter, a JSON array of strings, as a text[]. */
static Datum
shard_filter_keys(JsonbIterator **it)
{
	JsonbValue	v;
	JsonbIteratorToken token;
	ArrayBuildState *keys = initArrayResult(TEXTOID, CurrentMemoryContext, false);

	if (JsonbIteratorNext(it, &v, false) != WJB_BEGIN_ARRAY)
		bad_shard_filter();
	while ((token = JsonbIteratorNext(it, &v, false)) == WJB_ELEM)
	{
		if (v.type != jbvString)
			bad_shard_filter();
		accumArrayResult(keys, PointerGetDatum(cstring_to_text_with_len(v.val.string.val,
																		  v.val.string.len)),
						 false, TEXTOID, CurrentMemoryContext);
	}
	if (token != WJB_END_ARRAY)
		bad_shard_filter();
	return makeArrayResult(keys, CurrentMemoryContext);
}

/* The filter {"column": ["key", ...], ...}: its columns and keys; how many. */
static int
shard_filters(Oid relid, Jsonb *filter, AttrNumber *columns, Datum *keys)
{
	JsonbIterator *it;
	JsonbValue	v;
	int			n = 0;

	if (filter == NULL)
		return 0;
	if (!JB_ROOT_IS_OBJECT(filter))
		bad_shard_filter();
	it = JsonbIteratorInit(&filter->root);
	(void) JsonbIteratorNext(&it, &v, false);	/* the object's start */
	while (JsonbIteratorNext(&it, &v, false) == WJB_KEY)
	{
		if (n == SHARD_MAX_FILTERS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a release takes at most %d filters", SHARD_MAX_FILTERS)));
		columns[n] = shard_column(relid, pnstrdup(v.val.string.val, v.val.string.len));
		keys[n++] = shard_filter_keys(&it);
	}
	return n;
}

/* The steps: step NULL is one step of all rows; else steps from start. */
static void
shard_steps(FunctionCallInfo fcinfo, int nkeys, TimestampTz *start, int64 *step_usec,
			int64 *steps)
{
	TimestampTz end;

	*steps = DatumGetInt64(arg_required(fcinfo, 10, "steps"));
	*start = 0;
	*step_usec = PG_ARGISNULL(9) ? 0 : step_usecs(PG_GETARG_INTERVAL_P(9));
	if (*step_usec == 0 ? *steps != 1 : *steps < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("steps must be 1 without a step, and at least 1 with one")));
	if (*steps > SHARD_MAX_CELLS / nkeys)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a running release holds at most %d counts (keys times steps)",
						SHARD_MAX_CELLS)));
	if (*step_usec == 0)
		return;
	*start = DatumGetTimestampTz(arg_required(fcinfo, 8, "start"));
	if (!step_end(*start, *steps, *step_usec, &end))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("the last step ends out of the range of timestamps")));
}

/* The query's parameters: the steps' [$1, $2), the filters, the window. */
static int
shard_query_params(FunctionCallInfo fcinfo, const Bounding *bounding, int nfilters,
				   const Datum *filter_keys, Oid *types, Datum *values)
{
	int			n = 0;

	if (bounding->step_usec > 0)
	{
		types[n] = TIMESTAMPTZOID;
		values[n++] = TimestampTzGetDatum(bounding->start);
		types[n] = TIMESTAMPTZOID;
		values[n++] = TimestampTzGetDatum(bounding->start + bounding->step_usec * bounding->nsteps);
	}
	for (int i = 0; i < nfilters; i++)
	{
		types[n] = TEXTARRAYOID;
		values[n++] = filter_keys[i];
	}
	if (!PG_ARGISNULL(12) || !PG_ARGISNULL(13))
	{
		types[n] = TIMESTAMPTZOID;
		values[n++] = arg_required(fcinfo, 12, "window_start");
		types[n] = TIMESTAMPTZOID;
		values[n++] = arg_required(fcinfo, 13, "window_end");
	}
	return n;
}

/* The declared keys, a text[] without nulls, or 0 for one key of all rows. */
static Datum
shard_keys(FunctionCallInfo fcinfo, int *nkeys)
{
	ArrayType  *keys;

	if (PG_ARGISNULL(4) != PG_ARGISNULL(5))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("key_column and keys are given together or not at all")));
	*nkeys = 1;
	if (PG_ARGISNULL(5))
		return (Datum) 0;
	keys = PG_GETARG_ARRAYTYPE_P(5);
	*nkeys = ArrayGetNItems(ARR_NDIM(keys), ARR_DIMS(keys));
	if (*nkeys < 1 || array_contains_nulls(keys))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("keys must be a non-empty array without nulls")));
	return PointerGetDatum(keys);
}

/*
 * shard_bounded_counts(schema_name, table_name, unit_column, time_column,
 * key_column, keys, max_rows, max_groups, start, step, steps, filter,
 * window_start, window_end, persons): the exact bounded counts of the table's
 * rows (or persons), nkeys * steps of them, key after key.
 */
PG_FUNCTION_INFO_V1(contcount_shard_bounded_counts);
Datum
contcount_shard_bounded_counts(PG_FUNCTION_ARGS)
{
	Oid			relid = shard_counts_table(arg_text(fcinfo, 0, "schema_name"),
									arg_text(fcinfo, 1, "table_name"));
	AttrNumber	unit = shard_column(relid, arg_text(fcinfo, 2, "unit_column"));
	AttrNumber	time = shard_column(relid, arg_text(fcinfo, 3, "time_column"));
	AttrNumber	key = PG_ARGISNULL(4) ? InvalidAttrNumber :
		shard_column(relid, arg_text(fcinfo, 4, "key_column"));
	int32		max_rows = DatumGetInt32(arg_required(fcinfo, 6, "max_rows"));
	int32		max_groups = DatumGetInt32(arg_required(fcinfo, 7, "max_groups"));
	bool		persons = DatumGetBool(arg_required(fcinfo, 14, "persons"));
	AttrNumber	filters[SHARD_MAX_FILTERS];
	Datum		filter_keys[SHARD_MAX_FILTERS];
	int			nfilters = shard_filters(relid, PG_ARGISNULL(11) ? NULL : PG_GETARG_JSONB_P(11),
										 filters, filter_keys);
	Oid			types[2 + SHARD_MAX_FILTERS + 2];
	Datum		values[2 + SHARD_MAX_FILTERS + 2];
	int			nkeys;
	Datum		keys = shard_keys(fcinfo, &nkeys);
	TimestampTz start;
	int64		step_usec;
	int64		steps;
	Oid			unit_type;
	int32		typmod;
	Oid			unit_collation;
	Bounding	bounding;
	int			nparams;
	OwnerScope	scope;
	Datum	   *cells;

	if (max_rows < 1 || max_groups < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_rows and max_groups must be at least 1")));
	shard_steps(fcinfo, nkeys, &start, &step_usec, &steps);
	get_atttypetypmodcoll(relid, unit, &unit_type, &typmod, &unit_collation);
	bounding_require_aggregate();
	bounding_init(&bounding, max_rows, max_groups, persons, unit_type, unit_collation, keys, start,
				  step_usec, steps);
	nparams = shard_query_params(fcinfo, &bounding, nfilters, filter_keys, types, values);
	owner_begin(&scope);
	bounding_run(&bounding, source_rows_sql(relid, unit, time, key, step_usec > 0, nfilters,
											filters, !PG_ARGISNULL(12) || !PG_ARGISNULL(13)),
				 nparams, types, values);
	owner_end(&scope);
	cells = palloc_array(Datum, nkeys * steps);
	for (int64 i = 0; i < nkeys * steps; i++)
		cells[i] = Int64GetDatum(bounding.counts[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(cells, nkeys * steps, INT8OID, 8, true, TYPALIGN_DOUBLE));
}
