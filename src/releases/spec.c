/*
 * spec.c
 *		Mechanism parameters: checking them, and the contcount.mechanism()
 *		constructor that aggregates take them from.
 *
 * Aggregates cannot take named arguments, so the parameters of a running
 * count travel as one composite value built by contcount.mechanism(), whose
 * named arguments and defaults read well in SQL.  The same checks run when a
 * value is built and when it is used, since a composite can also be written
 * by hand.
 *
 * IDENTIFICATION
 *	  src/releases/spec.c
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

#include "common/report.h"
#include "core/choice.h"
#include "releases/spec.h"

static void
require_not_null(const SpecArgs *args, SpecField field, const char *what)
{
	if (args->field[field].isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
}

uint64
spec_epsilon_units(NullableDatum epsilon)
{
	uint64_t	units;
	cc_status	status;

	if (epsilon.isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("epsilon must not be null")));
	status = cc_epsilon_units(DatumGetFloat8(epsilon.value), &units);
	if (status != CC_OK)
		report_status(status, NULL, 0);
	return units;
}

/* Rho as the core holds it, or an error. */
static uint64
spec_rho_units(NullableDatum rho)
{
	uint64_t	units;
	cc_status	status;

	if (rho.isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("rho must not be null")));
	status = cc_rho_units(DatumGetFloat8(rho.value), &units);
	if (status != CC_OK)
		report_status(status, NULL, 0);
	return units;
}

char *
spec_ledger(const SpecArgs *args)
{
	if (args->field[SPEC_LEDGER].isnull)
		return NULL;
	return TextDatumGetCString(args->field[SPEC_LEDGER].value);
}

bool
spec_monotone(const SpecArgs *args)
{
	return !args->monotone.isnull && DatumGetBool(args->monotone.value);
}

/* The core's mechanism names, "a, b, c", palloc'd: the hint never goes stale. */
static char *
mechanism_names(void)
{
	StringInfoData names;

	initStringInfo(&names);
	for (int kind = 0; kind < CC_NUM_KINDS; kind++)
		appendStringInfo(&names, "%s, ", cc_kind_name((cc_kind) kind));
	appendStringInfoString(&names, CC_AUTO_NAME);
	return names.data;
}

static bool
is_auto(const SpecArgs *args)
{
	return strcmp(TextDatumGetCString(args->field[SPEC_NAME].value), CC_AUTO_NAME) == 0;
}

static cc_objective
objective_of(const SpecArgs *args)
{
	cc_objective objective = CC_DEFAULT_OBJECTIVE;
	char	   *name;

	if (args->objective.isnull)
		return objective;
	name = TextDatumGetCString(args->objective.value);
	if (!cc_objective_from_name(name, &objective))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown objective \"%s\"", name),
				 errhint("Use mean or worst: the variance over the steps that mechanism \"auto\" minimizes.")));
	return objective;
}

/*
 * Resolve mechanism "auto" into params.  Its refusals name "auto", not a
 * mechanism the user never named.
 */
static void
choose_mechanism(const SpecArgs *args, cc_params *params)
{
	cc_status	status = cc_choose(params, objective_of(args));

	switch (status)
	{
		case CC_OK:
			return;
		case CC_NEED_HORIZON:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("mechanism \"auto\" needs a horizon"),
					 errhint("Give horizon, the number of steps to release: the choice weighs the variance over them. "
							 "Use mechanism \"hybrid\" for a stream of unknown length.")));
			break;
		case CC_BLOCK_NOT_APPLICABLE:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("block applies only to mechanisms \"two_level\" and \"kary\", not \"auto\""),
					 errhint("Mechanism \"auto\" weighs two_level with its default block and kary with the arity it picks; name one of them to choose a block.")));
			break;
		case CC_SCALE_TOO_LARGE:
			/* under zCDP: no mechanism's sigma^2 fits the sampler */
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("mechanism \"auto\" finds no mechanism whose noise the sampler draws exactly"),
					 errhint("Raise rho, or lower the horizon or the sensitivity.")));
			break;
		default:
			/* a parameter that every mechanism refuses: the message names none */
			report_status(status, NULL, 0);
	}
}

/*
 * The privacy notion of the release, from the mechanism's and from which of
 * epsilon and rho was given: a pure mechanism takes epsilon alone, a zCDP
 * one rho alone, "auto" either (and picks among that notion's mechanisms).
 * So the budget a release is charged in is the one its noise was calibrated
 * for, whatever a composite written by hand holds.
 */
static cc_accounting
privacy_of(const SpecArgs *args, const char *name, const cc_params *params)
{
	bool		has_epsilon = !args->field[SPEC_EPSILON].isnull;
	bool		has_rho = !args->field[SPEC_RHO].isnull;
	cc_accounting privacy;

	if (is_auto(args))
	{
		if (has_epsilon && has_rho)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("mechanism \"auto\" takes epsilon or rho, not both"),
					 errhint("Give epsilon to pick among the mechanisms with Laplace noise (pure DP), "
							 "rho among those with Gaussian noise (zCDP).")));
		return has_rho ? CC_ZCDP : CC_PURE;
	}
	privacy = cc_kind_privacy(params->kind);
	if (privacy == CC_ZCDP && has_epsilon)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("mechanism \"%s\" adds Gaussian noise and is charged in rho (zCDP), not epsilon",
						name),
				 errhint("Give rho, and no epsilon.")));
	if (privacy == CC_PURE && has_rho)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("mechanism \"%s\" adds Laplace noise and is charged in epsilon, not rho", name),
				 errhint("Give epsilon, and no rho; or name a mechanism with Gaussian noise: gaussian_honaker, blt, blt_scaled or auto.")));
	return privacy;
}

void
spec_to_params(const SpecArgs *args, cc_params *params)
{
	char	   *name;
	cc_status	status;

	require_not_null(args, SPEC_NAME, "mechanism");
	require_not_null(args, SPEC_SENSITIVITY, "sensitivity");
	require_not_null(args, SPEC_BETA, "beta");

	memset(params, 0, sizeof(*params));
	name = TextDatumGetCString(args->field[SPEC_NAME].value);
	if (!is_auto(args) && !cc_kind_from_name(name, &params->kind))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown mechanism \"%s\"", name),
				 errhint("Use one of %s.", mechanism_names())));
	params->privacy = privacy_of(args, name, params);
	if (params->privacy == CC_ZCDP)
		params->rho_units = spec_rho_units(args->field[SPEC_RHO]);
	else
		params->epsilon_units = spec_epsilon_units(args->field[SPEC_EPSILON]);
	params->has_horizon = !args->field[SPEC_HORIZON].isnull;
	if (params->has_horizon)
		params->horizon = DatumGetInt64(args->field[SPEC_HORIZON].value);
	params->has_block = !args->field[SPEC_BLOCK].isnull;
	if (params->has_block)
		params->block = DatumGetInt64(args->field[SPEC_BLOCK].value);
	params->sensitivity = DatumGetInt64(args->field[SPEC_SENSITIVITY].value);
	params->beta = DatumGetFloat8(args->field[SPEC_BETA].value);

	if (is_auto(args))
	{
		choose_mechanism(args, params);
		return;
	}
	if (!args->objective.isnull)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("objective applies only to mechanism \"auto\", not \"%s\"", name)));
	status = cc_params_prepare(params);
	if (status != CC_OK)
		report_status(status, params, 0);
}

void
spec_notice_choice(const SpecArgs *args, const cc_params *params)
{
	cc_objective objective;
	double		mean;
	double		worst;

	if (!is_auto(args))
		return;
	objective = objective_of(args);
	cc_variance_over_horizon(params, &mean, &worst);
	ereport(NOTICE,
			(errmsg("mechanism \"auto\" picked \"%s\"", cc_kind_name(params->kind)),
			 errdetail("Its %s variance over the " INT64_FORMAT " steps, %.6g, is the least of all %smechanisms.",
					   cc_objective_name(objective), params->horizon,
					   objective == CC_OBJECTIVE_MEAN ? mean : worst,
					   params->privacy == CC_ZCDP ? "zCDP " : "")));
}

void
spec_with_defaults(SpecArgs *args, const char *name, NullableDatum epsilon,
				   NullableDatum horizon)
{
	args->field[SPEC_NAME].value = CStringGetTextDatum(name);
	args->field[SPEC_NAME].isnull = false;
	args->field[SPEC_EPSILON] = epsilon;
	args->field[SPEC_HORIZON] = horizon;
	args->field[SPEC_BLOCK].value = (Datum) 0;
	args->field[SPEC_BLOCK].isnull = true;
	args->field[SPEC_SENSITIVITY].value = Int64GetDatum(SPEC_DEFAULT_SENSITIVITY);
	args->field[SPEC_SENSITIVITY].isnull = false;
	args->field[SPEC_BETA].value = Float8GetDatum(SPEC_DEFAULT_BETA);
	args->field[SPEC_BETA].isnull = false;
	args->field[SPEC_LEDGER].value = (Datum) 0;
	args->field[SPEC_LEDGER].isnull = true;
	args->field[SPEC_RHO].value = (Datum) 0;
	args->field[SPEC_RHO].isnull = true;
	args->objective.value = (Datum) 0;
	args->objective.isnull = true;
	args->monotone.value = (Datum) 0;
	args->monotone.isnull = true;
}

void
spec_from_composite(Datum composite, SpecArgs *args)
{
	HeapTupleHeader tuple = DatumGetHeapTupleHeader(composite);
	int			natts = HeapTupleHeaderGetNatts(tuple);

	/*
	 * A value has fewer fields than the type when it was made before the
	 * type gained some (they are null then), and the type itself has no rho
	 * in a database not yet updated to 0.5: read only the fields it holds.
	 */
	for (int f = 0; f < SPEC_NFIELDS; f++)
	{
		args->field[f].value = (Datum) 0;
		args->field[f].isnull = true;
		if (f < natts)
			args->field[f].value = GetAttributeByNum(tuple, f + 1, &args->field[f].isnull);
	}
	args->objective.value = (Datum) 0;
	args->objective.isnull = true;
	args->monotone.value = (Datum) 0;
	args->monotone.isnull = true;
	if (natts >= SPEC_MONOTONE_ATTNO)
		args->monotone.value = GetAttributeByNum(tuple, SPEC_MONOTONE_ATTNO,
												 &args->monotone.isnull);
}

void
spec_from_call(FunctionCallInfo fcinfo, const int argno[SPEC_NFIELDS],
			   SpecArgs *args)
{
	for (int f = 0; f < SPEC_NFIELDS; f++)
	{
		args->field[f].value = (Datum) 0;
		args->field[f].isnull = true;
		if (argno[f] < PG_NARGS())
			args->field[f] = fcinfo->args[argno[f]];
	}
	args->objective.value = (Datum) 0;
	args->objective.isnull = true;
	args->monotone.value = (Datum) 0;
	args->monotone.isnull = true;
}

void
spec_objective_from_call(FunctionCallInfo fcinfo, int argno, SpecArgs *args)
{
	if (PG_NARGS() > argno)
		args->objective = fcinfo->args[argno];
}

/*
 * contcount.mechanism(name, epsilon, horizon, block, sensitivity, beta,
 * ledger, objective, rho, monotone): the checked parameters, with epsilon
 * or rho as it will be charged (the other null) and the block size filled
 * in, and monotone as given (false by default).  For "auto", the name is
 * the mechanism it picked: that is how a caller learns it, and the value
 * then releases with that mechanism wherever it is used.  A database not
 * yet updated to 0.5 has neither the argument rho nor the field, one not
 * yet updated to 0.6 neither monotone.
 */
PG_FUNCTION_INFO_V1(contcount_mechanism);
Datum
contcount_mechanism(PG_FUNCTION_ARGS)
{
	static const int argno[SPEC_NFIELDS] = {0, 1, 2, 3, 4, 5, 6, 8};
	SpecArgs	args;
	cc_params	params;
	TupleDesc	tupdesc;
	Datum		values[SPEC_MONOTONE_ATTNO];
	bool		nulls[SPEC_MONOTONE_ATTNO] = {false};

	spec_from_call(fcinfo, argno, &args);
	spec_objective_from_call(fcinfo, 7, &args);
	spec_to_params(&args, &params);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE ||
		tupdesc->natts > SPEC_MONOTONE_ATTNO || tupdesc->natts < SPEC_RHO)
		elog(ERROR, "return type must be contcount.mechanism");
	values[SPEC_NAME] = CStringGetTextDatum(cc_kind_name(params.kind));
	values[SPEC_EPSILON] = Float8GetDatum((double) params.epsilon_units /
										  (double) CC_EPSILON_UNITS_PER_ONE);
	nulls[SPEC_EPSILON] = params.privacy != CC_PURE;
	values[SPEC_HORIZON] = Int64GetDatum(params.horizon);
	nulls[SPEC_HORIZON] = !params.has_horizon;
	values[SPEC_BLOCK] = Int64GetDatum(params.block);
	nulls[SPEC_BLOCK] = !params.has_block;
	values[SPEC_SENSITIVITY] = Int64GetDatum(params.sensitivity);
	values[SPEC_BETA] = Float8GetDatum(params.beta);
	values[SPEC_LEDGER] = args.field[SPEC_LEDGER].value;
	nulls[SPEC_LEDGER] = args.field[SPEC_LEDGER].isnull;
	values[SPEC_RHO] = Float8GetDatum((double) params.rho_units / (double) CC_RHO_UNITS_PER_ONE);
	nulls[SPEC_RHO] = params.privacy != CC_ZCDP;
	/* a null monotone is false: the composite says what running_count does */
	values[SPEC_NFIELDS] = BoolGetDatum(PG_NARGS() > 9 && !PG_ARGISNULL(9) && PG_GETARG_BOOL(9));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}
