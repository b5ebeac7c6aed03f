/*
 * window_counts.c
 *		window_counts(items bigint[], width, epsilon, ...): the count of the
 *		last width steps, released at every step of a whole series.
 *
 * As running_counts does: the series is released as one result set, built
 * before any row is returned (a bad item anywhere means an error and no
 * output), drawn once, and charged its epsilon once the result is built and
 * before it is returned.  An event is in up to width windows; the
 * construction (src/core/window.c) pays for all of them with one epsilon.
 * The horizon is the array's length.
 *
 * IDENTIFICATION
 *	  src/releases/window_counts.c
 */
#include "postgres.h"

#include "funcapi.h"
#include "utils/builtins.h"

#include "common/random.h"
#include "common/report.h"
#include "core/window.h"
#include "ledger/ledger.h"
#include "releases/release.h"
#include "releases/spec.h"

/* Check the arguments into params, or raise the error; auto resolved. */
static void
window_params_from_call(FunctionCallInfo fcinfo, int nitems, cc_window_params *params)
{
	const char *name;
	cc_status	status;

	for (int i = 1; i < 6; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("only ledger may be null")));
	memset(params, 0, sizeof(*params));
	params->width = PG_GETARG_INT64(1);
	params->horizon = Max(nitems, 1);
	params->epsilon_units = spec_epsilon_units(fcinfo->args[2]);
	name = text_to_cstring(PG_GETARG_TEXT_PP(3));
	if (!cc_window_kind_from_name(name, &params->kind))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown window construction \"%s\"", name),
				 errhint("Use tree, honaker, difference, kary, blocks or auto.")));
	params->sensitivity = PG_GETARG_INT64(4);
	params->beta = PG_GETARG_FLOAT8(5);
	status = cc_window_prepare(params);
	if (status == CC_BAD_BLOCK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("width must be at least 1")));
	if (status == CC_BAD_HORIZON)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("window_counts takes at most " INT64_FORMAT " items",
						CC_WINDOW_MAX_WIDTH)));
	if (status != CC_OK)
		report_status(status, NULL, 0);
	if (strcmp(name, "auto") == 0)
		ereport(NOTICE,
				(errmsg("window_counts: construction \"auto\" picked \"%s\"",
						cc_window_kind_name(params->kind))));
}

PG_FUNCTION_INFO_V1(contcount_window_counts);
Datum
contcount_window_counts(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ReleaseItems items;
	cc_window_params params;
	cc_window  *window;
	char	   *ledger = PG_ARGISNULL(6) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(6));
	/* from 0.6: a window's count is never negative, but may go down */
	bool		nonnegative = PG_NARGS() > 7 && !PG_ARGISNULL(7) && PG_GETARG_BOOL(7);

	release_items_open(fcinfo, 0, &items);
	window_params_from_call(fcinfo, items.n, &params);
	ledger_check_cost(ledger, cc_pure_cost(params.epsilon_units));

	InitMaterializedSRF(fcinfo, 0);
	window = palloc(cc_window_size(&params));
	cc_window_init(window, &params);
	for (int i = 0; i < items.n; i++)
	{
		cc_release	release;
		cc_status	status = cc_window_push(window, release_items_next(&items, i),
											strong_rng());

		if (status == CC_OVERFLOW)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("window count is out of range for type bigint")));
		if (status != CC_OK)
			report_status(status, NULL, i + 1);
		cc_window_read(window, &release);
		/* post-processing: the count is >= 0, so the clamp only nears it */
		if (nonnegative)
			release.noisy = Max(release.noisy, 0);
		release_put(rsinfo, &release);
	}
	ledger_charge(ledger, cc_pure_cost(params.epsilon_units), "window_counts");
	return (Datum) 0;
}
