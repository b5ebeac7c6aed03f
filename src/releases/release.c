/*
 * release.c
 *		A release as a row of type contcount.release, and the items array
 *		that the series functions (running_counts, window_counts) read.
 *
 * A window calls running_count's final function for every row, and
 * heap_form_tuple was most of what that cost.  But contcount.release is four
 * 8-byte pass-by-value fields, never null: every row has the same header and
 * its fields at fixed places.  So a row is built by copying the header of a
 * row formed once and storing the fields after it.
 *
 * IDENTIFICATION
 *	  src/releases/release.c
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/array.h"

#include "core/monotone.h"
#include "releases/release.h"

struct ReleaseRowType
{
	HeapTupleHeader first;		/* a row formed by heap_form_tuple */
	uint32		len;			/* the length of every row */
};

static void
release_fields(const cc_release *release, Datum *values)
{
	values[0] = Int64GetDatum(release->t);
	values[1] = Int64GetDatum(release->noisy);
	values[2] = Float8GetDatum(sqrt(release->variance));
	values[3] = Float8GetDatum(release->bound);
}

void
release_items_open(FunctionCallInfo fcinfo, int argno, ReleaseItems *items)
{
	ArrayType  *array;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("items must not be null")));
	array = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("items must be a one-dimensional array")));
	items->n = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	array_iter_setup(&items->iter, (AnyArrayType *) array);
}

int64
release_items_next(ReleaseItems *items, int i)
{
	bool		isnull;
	Datum		item = array_iter_next(&items->iter, &isnull, i, sizeof(int64),
									   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);

	return isnull ? 0 : DatumGetInt64(item);
}

void
release_put(ReturnSetInfo *rsinfo, const cc_release *release)
{
	Datum		values[RELEASE_NATTS];
	bool		nulls[RELEASE_NATTS] = {0};

	release_fields(release, values);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * The isotonic projection of the series, weighted by the inverse variance
 * of each step (a step with more noise moves less), rounded to counts.
 * Each output is a weighted mean of raw values over steps around it,
 * clamped at 0 (monotone.c), so a bound holding at every step at once
 * holds for the outputs with the largest bound of the series, plus 1/2 for
 * the rounding.  stddev stays that of the raw release's noise.
 */
void
release_monotone(cc_release *series, int64 n)
{
	Size		count = (Size) Max(n, 1);
	double	   *values = MemoryContextAllocHuge(CurrentMemoryContext, count * sizeof(double));
	double	   *weights = MemoryContextAllocHuge(CurrentMemoryContext, count * sizeof(double));
	cc_pav_block *blocks = MemoryContextAllocHuge(CurrentMemoryContext, count * sizeof(cc_pav_block));
	double		bound = 0;

	for (int64 t = 0; t < n; t++)
	{
		values[t] = (double) series[t].noisy;
		/* every mechanism's noise has a positive variance; guard anyway */
		weights[t] = 1.0 / Max(series[t].variance, 1e-300);
		bound = Max(bound, series[t].bound);
	}
	cc_monotone_series(values, weights, n, blocks);
	for (int64 t = 0; t < n; t++)
	{
		series[t].noisy = (int64) llround(values[t]);
		series[t].bound = bound + 0.5;
	}
	pfree(values);
	pfree(weights);
	pfree(blocks);
}

ReleaseRowType *
release_row_type(FunctionCallInfo fcinfo)
{
	MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	ReleaseRowType *type = palloc(sizeof(ReleaseRowType));
	TupleDesc	tupdesc;
	Datum		values[RELEASE_NATTS] = {0};
	bool		nulls[RELEASE_NATTS] = {0};
	HeapTuple	first;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE ||
		tupdesc->natts != RELEASE_NATTS)
		elog(ERROR, "return type must be contcount.release");
	for (int i = 0; i < RELEASE_NATTS; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);

		if (!att->attbyval || att->attlen != sizeof(Datum) || att->attalign != TYPALIGN_DOUBLE)
			elog(ERROR, "contcount.release must have four 8-byte pass-by-value fields");
	}
	tupdesc = BlessTupleDesc(CreateTupleDescCopy(tupdesc));
	first = heap_form_tuple(tupdesc, values, nulls);
	type->first = first->t_data;
	type->len = first->t_len;
	MemoryContextSwitchTo(old);
	return type;
}

Datum
release_row(const ReleaseRowType *type, const cc_release *release)
{
	HeapTupleHeader row = palloc(type->len);

	/* the fields are Datums in a row, right after the header */
	memcpy(row, type->first, type->first->t_hoff);
	release_fields(release, (Datum *) ((char *) row + row->t_hoff));
	return HeapTupleHeaderGetDatum(row);
}
