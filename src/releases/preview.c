/*
 * preview.c
 *		Free previews: what a release would show at each step and what it
 *		would charge, from its public parameters alone.
 *
 * preview() returns, for each step t, the stddev and the bound a running
 * count with these parameters shows (src/core/preview.h: the mechanism's
 * state moved on without data or secure noise); preview_charge() the
 * mechanism "auto" picks, the release's epsilon or rho, and what it would
 * charge the ledger that pays and how many such releases that ledger can
 * still pay.  Neither reads a row nor charges anything: a release's
 * variance and bound are public functions of its parameters.  Parameters
 * as running_counts takes them, and their errors; the horizon is the number
 * of steps shown when not given, as running_counts' is the series' length.
 *
 * IDENTIFICATION
 *	  src/releases/preview.c
 */
#include "postgres.h"

#include <math.h>

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "common/report.h"
#include "core/preview.h"
#include "ledger/ledger.h"
#include "releases/preview.h"
#include "releases/spec.h"

/* An argument no function here has: the field is NULL. */
#define NO_ARG 1000

/*
 * Arguments of both: mechanism, epsilon, horizon, block, sensitivity, beta,
 * objective, rho; then preview's steps, preview_charge's ledger.
 */
static const int preview_argno[SPEC_NFIELDS] = {
	[SPEC_NAME] = 0,
	[SPEC_EPSILON] = 1,
	[SPEC_HORIZON] = 2,
	[SPEC_BLOCK] = 3,
	[SPEC_SENSITIVITY] = 4,
	[SPEC_BETA] = 5,
	[SPEC_LEDGER] = NO_ARG,
	[SPEC_RHO] = 7,
};

void
preview_put_steps(FunctionCallInfo fcinfo, const cc_params *params, int64 steps)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	cc_preview	preview;

	InitMaterializedSRF(fcinfo, 0);
	cc_preview_init(&preview, palloc(cc_state_size(params)), params);
	for (int64 i = 0; i < steps; i++)
	{
		cc_release	release;
		Datum		values[3];
		bool		nulls[3] = {false};

		CHECK_FOR_INTERRUPTS();
		if (cc_preview_next(&preview, &release) != CC_OK)
			elog(ERROR, "a preview went past its horizon");
		values[0] = Int64GetDatum(release.t);
		values[1] = Float8GetDatum(sqrt(release.variance));
		values[2] = Float8GetDatum(release.bound);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

void
preview_require_steps(int64 steps)
{
	if (steps > PREVIEW_MAX_STEPS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a preview shows at most %d steps", PREVIEW_MAX_STEPS),
				 errhint("Give steps, the first steps to show, to preview a longer horizon.")));
}

/* The steps a preview shows (argument 8, by default the horizon). */
static int64
preview_steps(FunctionCallInfo fcinfo, SpecArgs *args)
{
	int64		steps;

	if (PG_ARGISNULL(8) && args->field[SPEC_HORIZON].isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("a preview needs a horizon or a number of steps")));
	steps = PG_ARGISNULL(8) ? DatumGetInt64(args->field[SPEC_HORIZON].value) : PG_GETARG_INT64(8);
	if (steps < 1 || (!args->field[SPEC_HORIZON].isnull &&
					  steps > DatumGetInt64(args->field[SPEC_HORIZON].value)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("steps must be between 1 and the horizon")));
	preview_require_steps(steps);
	/* like running_counts' series, the steps shown are the horizon by default */
	if (args->field[SPEC_HORIZON].isnull)
		args->field[SPEC_HORIZON] = (NullableDatum)
		{
			Int64GetDatum(steps), false
		};
	return steps;
}

/*
 * preview(mechanism, epsilon, horizon, block, sensitivity, beta, objective,
 * rho, steps) -> (t, stddev, bound): steps 1 .. steps as a release would
 * show them.
 */
PG_FUNCTION_INFO_V1(contcount_preview);
Datum
contcount_preview(PG_FUNCTION_ARGS)
{
	SpecArgs	args;
	cc_params	params;
	int64		steps;

	spec_from_call(fcinfo, preview_argno, &args);
	spec_objective_from_call(fcinfo, 6, &args);
	steps = preview_steps(fcinfo, &args);
	spec_to_params(&args, &params);

	preview_put_steps(fcinfo, &params, steps);
	return (Datum) 0;
}

/*
 * preview_charge(mechanism, epsilon, horizon, block, sensitivity, beta,
 * objective, rho, ledger) -> (mechanism, epsilon, rho, ledger, accounting,
 * charge, releases_left): the mechanism a release would use, its cost, and
 * what it would charge the ledger (NULL: contcount.ledger's, which the
 * caller must see), in the ledger's accounting, and how many such releases
 * the ledger can still pay.
 */
PG_FUNCTION_INFO_V1(contcount_preview_charge);
Datum
contcount_preview_charge(PG_FUNCTION_ARGS)
{
	SpecArgs	args;
	cc_params	params;
	LedgerPreview charge;
	TupleDesc	tupdesc;
	Datum		values[7];
	bool		nulls[7] = {false};

	spec_from_call(fcinfo, preview_argno, &args);
	spec_objective_from_call(fcinfo, 6, &args);
	spec_to_params(&args, &params);
	ledger_preview_charge(PG_ARGISNULL(8) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(8)),
						  cc_params_cost(&params), &charge);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	preview_charge_columns(&params, &charge, values, nulls);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

void
preview_charge_columns(const cc_params *params, const LedgerPreview *charge, Datum *values,
					   bool *nulls)
{
	bool		pure = params->privacy == CC_PURE;

	values[0] = CStringGetTextDatum(cc_kind_name(params->kind));
	values[1] = Float8GetDatum((double) params->epsilon_units / CC_EPSILON_UNITS_PER_ONE);
	values[2] = Float8GetDatum((double) params->rho_units / CC_RHO_UNITS_PER_ONE);
	nulls[1] = !pure;
	nulls[2] = pure;
	values[3] = CStringGetTextDatum(charge->name);
	values[4] = CStringGetTextDatum(ledger_accounting_name(charge->accounting));
	values[5] = ledger_units_numeric(charge->units, false);
	values[6] = Int64GetDatum(charge->releases_left);
}
