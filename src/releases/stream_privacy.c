/*
 * stream_privacy.c
 *		contcount.streaming_composition(): seed 002's Theorem 4 bound for a
 *		mechanism run at every step of a stream whose oldest rows are
 *		replaced.
 *
 * A calculator, not a release: it draws nothing and charges nothing.  The
 * bound is a coupled-worlds guarantee that holds only under the seed's
 * assumptions about the data (rows drawn independently, the oldest
 * replaced, gamma bounding the influence of the rows that outlive a step);
 * the ledger never relies on it and keeps charging every release its own
 * epsilon.  The per-step guarantee comes either as numbers or from a
 * mechanism's parameters and a delta, through the release's privacy curve.
 *
 * IDENTIFICATION
 *	  src/releases/stream_privacy.c
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "core/streaming_composition.h"
#include "releases/spec.h"

#define STREAM_NATTS 3

/* Raise the error of a status other than CC_STREAM_OK. */
static void
stream_report(cc_stream_status status, double epsilon_max)
{
	switch (status)
	{
		case CC_STREAM_OK:
			return;
		case CC_STREAM_BAD_EPSILON:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("epsilon_max must be finite and at least 0")));
			break;
		case CC_STREAM_BAD_DELTA:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("delta_max must be between 0 and 1")));
			break;
		case CC_STREAM_BAD_GAMMA:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("gamma must be finite and at least the per-step epsilon %g",
							epsilon_max),
					 errdetail("gamma bounds the ratio of the step's output laws given "
							   "any two values of the rows that outlive it, and so bounds it "
							   "given equal ones too.")));
			break;
		case CC_STREAM_BAD_STEPS:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("steps must be at least 1")));
			break;
		case CC_STREAM_BAD_COST:
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("the mechanism's privacy curve cannot be computed")));
			break;
		case CC_STREAM_NO_MEMORY:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory computing the mechanism's privacy curve")));
			break;
	}
}

/* The bound as the row (epsilon, delta, vacuous[, epsilon_max]). */
static Datum
stream_result(FunctionCallInfo fcinfo, double epsilon_max, double delta_max,
			  double gamma, int64 steps)
{
	TupleDesc	desc;
	cc_stream_bound bound;
	Datum		values[STREAM_NATTS + 1];
	bool		nulls[STREAM_NATTS + 1] = {false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	stream_report(cc_streaming_composition(epsilon_max, delta_max, gamma, steps, &bound),
				  epsilon_max);
	values[0] = Float8GetDatum(bound.epsilon);
	values[1] = Float8GetDatum(bound.delta);
	values[2] = BoolGetDatum(bound.vacuous);
	values[3] = Float8GetDatum(epsilon_max);
	Assert(desc->natts <= STREAM_NATTS + 1);
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls));
}

/* (epsilon_max, delta_max, gamma, steps) */
PG_FUNCTION_INFO_V1(contcount_streaming_composition);
Datum
contcount_streaming_composition(PG_FUNCTION_ARGS)
{
	return stream_result(fcinfo, PG_GETARG_FLOAT8(0), PG_GETARG_FLOAT8(1),
						 PG_GETARG_FLOAT8(2), PG_GETARG_INT64(3));
}

/*
 * (mechanism, delta_max, gamma, steps): the per-step epsilon is the least
 * epsilon of one release's privacy curve at delta_max.
 */
PG_FUNCTION_INFO_V1(contcount_streaming_composition_mechanism);
Datum
contcount_streaming_composition_mechanism(PG_FUNCTION_ARGS)
{
	SpecArgs	args;
	cc_params	params;
	double		epsilon_max;

	spec_from_composite(PG_GETARG_DATUM(0), &args);
	spec_to_params(&args, &params);

	/*
	 * malloc'ed (NULL allocator): the curve is freed before anything here
	 * can raise an error
	 */
	stream_report(cc_stream_step_epsilon(cc_params_cost(&params), PG_GETARG_FLOAT8(1),
										 NULL, &epsilon_max), 0);
	if (isinf(epsilon_max))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the mechanism is not (epsilon, %g)-private for any epsilon",
						PG_GETARG_FLOAT8(1)),
				 errhint("Give a larger delta_max.")));
	return stream_result(fcinfo, epsilon_max, PG_GETARG_FLOAT8(1), PG_GETARG_FLOAT8(2),
						 PG_GETARG_INT64(3));
}
