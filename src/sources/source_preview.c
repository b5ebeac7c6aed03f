/*
 * source_preview.c
 *		Free previews of releases from protected sources:
 *		source_preview() and source_preview_charge().
 *
 * A release from a source is calibrated to the source's max_rows (what one
 * person may add to the whole series; counting persons, the least of
 * max_rows, max_groups and the dimension's keys), so its preview is a
 * preview with that sensitivity, for a caller the source is granted to: what
 * source_running_counts would show at each step for every key (the keys
 * share their noise's parameters), and what it would charge the caller's
 * ledger and the source's ledger (or each block of the window it reads).
 * Nothing reads the source's table, and nothing is charged.  The source's
 * ledger's figures (how many releases it can still pay) are shown only to
 * a role that may see that ledger in contcount.ledgers.
 *
 * IDENTIFICATION
 *	  src/sources/source_preview.c
 */
#include "postgres.h"

#include "funcapi.h"
#include "utils/builtins.h"

#include "common/args.h"
#include "ledger/ledger.h"
#include "releases/preview.h"
#include "releases/spec.h"
#include "sources/source.h"

/*
 * The parameters of a release from the source named by argument 0 with
 * epsilon (1), steps (2, the horizon), mechanism (3) and rho (4), counting
 * rows or persons (count_arg) over a dimension (count_arg + 1), as
 * source_running_counts takes them; the source's bounds into bounds.
 * Returns whether it counts persons.
 */
static bool
source_preview_params(FunctionCallInfo fcinfo, int count_arg, SourceBounds *bounds,
					  cc_params *params)
{
	char	   *name = arg_text(fcinfo, 0, "source name");
	bool		persons = source_count_arg(fcinfo, count_arg);
	char	   *dimension = PG_NARGS() <= count_arg + 1 || PG_ARGISNULL(count_arg + 1) ? NULL :
		text_to_cstring(PG_GETARG_TEXT_PP(count_arg + 1));
	int64		sensitivity;
	NullableDatum epsilon = fcinfo->args[1];
	NullableDatum steps = fcinfo->args[2];
	SpecArgs	args;

	if (steps.isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("steps must not be null")));
	if (DatumGetInt64(steps.value) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("steps must be at least 1")));
	sensitivity = source_for_preview(name, dimension, persons, bounds);
	spec_with_defaults(&args, arg_text(fcinfo, 3, "mechanism"), epsilon, steps);
	args.field[SPEC_SENSITIVITY].value = Int64GetDatum(sensitivity);
	args.field[SPEC_RHO] = fcinfo->args[4];
	spec_to_params(&args, params);
	return persons;
}

/*
 * source_preview(source, epsilon, steps, mechanism, rho, count, dimension)
 * -> (t, stddev, bound): what source_running_counts would show at each of
 * its steps.
 */
PG_FUNCTION_INFO_V1(contcount_source_preview);
Datum
contcount_source_preview(PG_FUNCTION_ARGS)
{
	SourceBounds bounds;
	cc_params	params;

	bool		persons = source_preview_params(fcinfo, 5, &bounds, &params);

	(void) source_release_noise(persons, &params);
	preview_require_steps(params.horizon);
	preview_put_steps(fcinfo, &params, params.horizon);
	return (Datum) 0;
}

/*
 * source_preview_charge(source, epsilon, steps, mechanism, rho, ledger,
 * count, dimension) ->
 * (mechanism, epsilon, rho, ledger, accounting, charge, releases_left,
 * source_ledger, source_accounting, source_charge, source_releases_left,
 * per_block): what the release would charge the caller's ledger (the one
 * named, or contcount.ledger's) and the source's ledger, or with per-block
 * budgets each block of its window (source_releases_left then NULL: see
 * contcount.blocks); source_releases_left NULL too for a caller that may not
 * see the source's ledger.
 */
PG_FUNCTION_INFO_V1(contcount_source_preview_charge);
Datum
contcount_source_preview_charge(PG_FUNCTION_ARGS)
{
	SourceBounds bounds;
	cc_params	params;
	LedgerPreview team;
	LedgerPreview data;
	TupleDesc	tupdesc;
	Datum		values[12];
	bool		nulls[12] = {false};

	bool		persons = source_preview_params(fcinfo, 6, &bounds, &params);
	cc_params	noise = params;
	cc_cost		cost = source_release_noise(persons, &noise);

	ledger_preview_charge(PG_ARGISNULL(5) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(5)),
						  cost, &team);
	ledger_preview_source_charge(bounds.ledger, cost, &data);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	preview_charge_columns(&params, &team, values, nulls);
	values[7] = CStringGetTextDatum(data.name);
	values[8] = CStringGetTextDatum(ledger_accounting_name(data.accounting));
	values[9] = ledger_units_numeric(data.units, false);
	values[10] = Int64GetDatum(data.releases_left);
	values[11] = BoolGetDatum(bounds.blocks.length > 0);
	nulls[10] = data.releases_left < 0 || bounds.blocks.length > 0;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
