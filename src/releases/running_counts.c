/*
 * running_counts.c
 *		running_counts(items bigint[], epsilon, ..., rho): the release of
 *		every step of a whole series.
 *
 * The series is released as one result set, built before any row is
 * returned, so a bad item anywhere means an error and no output at all.
 * Each call is one release of its series and draws its own noise; it pays
 * once the result is built, so that bad input costs nothing, and before the
 * result is returned.  A Gaussian release is first checked to be one its
 * ledger can pay for: a pure ledger refuses it before any noise is drawn.
 * With monotone, the whole series is projected onto the non-negative
 * non-decreasing ones before any row is returned (release_monotone()): it
 * reads only the released values, so the charge is the same.
 *
 * IDENTIFICATION
 *	  src/releases/running_counts.c
 */
#include "postgres.h"

#include "funcapi.h"

#include "common/report.h"
#include "ledger/ledger.h"
#include "releases/release.h"
#include "releases/spec.h"

/*
 * Arguments: items, epsilon, mechanism, horizon, block, sensitivity, beta,
 * ledger, objective, rho (from 0.5), monotone (from 0.6).
 */
static const int spec_argno[SPEC_NFIELDS] = {
	[SPEC_NAME] = 2,
	[SPEC_EPSILON] = 1,
	[SPEC_HORIZON] = 3,
	[SPEC_BLOCK] = 4,
	[SPEC_SENSITIVITY] = 5,
	[SPEC_BETA] = 6,
	[SPEC_LEDGER] = 7,
	[SPEC_RHO] = 9,
};

/* monotone: post-process the series into a non-decreasing one, >= 0 */
#define MONOTONE_ARG 10

PG_FUNCTION_INFO_V1(running_counts);
Datum
running_counts(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ReleaseItems items;
	SpecArgs	args;
	cc_params	params;
	cc_state   *state;
	cc_release *series;
	/* the 0.5 function, until ALTER EXTENSION UPDATE, has no monotone */
	bool		monotone = PG_NARGS() > MONOTONE_ARG && !PG_ARGISNULL(MONOTONE_ARG) &&
		PG_GETARG_BOOL(MONOTONE_ARG);

	release_items_open(fcinfo, 0, &items);

	/* the series is all there is: its length is the horizon by default */
	spec_from_call(fcinfo, spec_argno, &args);
	spec_objective_from_call(fcinfo, 8, &args);
	if (args.field[SPEC_HORIZON].isnull)
		args.field[SPEC_HORIZON] = (NullableDatum)
		{
			Int64GetDatum(Max(items.n, 1)), false
		};
	spec_to_params(&args, &params);
	spec_notice_choice(&args, &params);
	ledger_check_cost(spec_ledger(&args), cc_params_cost(&params));

	InitMaterializedSRF(fcinfo, 0);
	state = palloc(cc_state_size(&params));
	cc_state_init(state, &params);
	series = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(cc_release) * Max(items.n, 1));
	for (int i = 0; i < items.n; i++)
	{
		push_or_report(state, release_items_next(&items, i));
		cc_read(state, &series[i]);
	}
	if (monotone)
		release_monotone(series, items.n);
	for (int i = 0; i < items.n; i++)
		release_put(rsinfo, &series[i]);
	ledger_charge(spec_ledger(&args), cc_params_cost(&params), "running_counts");
	return (Datum) 0;
}
