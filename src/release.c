/*
 * release.c
 *		A release as a row of type contcount.release.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "funcapi.h"

#include "release.h"

void
release_values(const cc_release *release, Datum *values, bool *nulls)
{
	values[0] = Int64GetDatum(release->t);
	values[1] = Int64GetDatum(release->noisy);
	values[2] = Float8GetDatum(sqrt(release->variance));
	values[3] = Float8GetDatum(release->bound);
	memset(nulls, 0, RELEASE_NATTS * sizeof(bool));
}

TupleDesc
release_tupdesc(FunctionCallInfo fcinfo)
{
	MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	TupleDesc	tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(CreateTupleDescCopy(tupdesc));
	MemoryContextSwitchTo(old);
	return tupdesc;
}

Datum
release_datum(TupleDesc tupdesc, const cc_release *release)
{
	Datum		values[RELEASE_NATTS];
	bool		nulls[RELEASE_NATTS];

	release_values(release, values, nulls);
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}
