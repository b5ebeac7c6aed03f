/*
 * running_count.c
 *		The running_count aggregate: one stream step per row, one release
 *		per row when used as a window function.
 *
 * The transition function pushes the row's item, which draws the noise of
 * that step into the state; the final function only reads the state, so a
 * window that calls it for every row, or several times for peers, never
 * redraws anything.  A frame whose start moves would make PostgreSQL restart
 * the aggregate for every row and draw the same items' noise again, so only
 * frames starting at UNBOUNDED PRECEDING are accepted.
 *
 * The ledger is charged by the first final call of a scan, before its value
 * is returned: partitions and groups are disjoint, one charge covers them.
 */
#include "postgres.h"

#include "nodes/execnodes.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"

#include "ledger.h"
#include "release.h"
#include "report.h"
#include "spec.h"

/* The arguments after the item: (mechanism) or (epsilon, horizon). */
#define MAX_CONFIG_ARGS 2

typedef struct RunningCount
{
	int			nconfig;
	NullableDatum config[MAX_CONFIG_ARGS];	/* as first seen, to hold rows to */
	int16		typlen[MAX_CONFIG_ARGS];
	bool		typbyval[MAX_CONFIG_ARGS];
	char	   *ledger;			/* the ledger named, or NULL */
	cc_state   *state;
} RunningCount;

/* What a call site of the final function keeps for the whole query. */
typedef struct FinalSite
{
	ReleaseRowType *row_type;
	ChargeSite	charge;
} FinalSite;

static void
check_window_frame(FunctionCallInfo fcinfo)
{
	WindowAggState *window = (WindowAggState *) fcinfo->context;

	if (!(window->frameOptions & FRAMEOPTION_START_UNBOUNDED_PRECEDING) ||
		(window->frameOptions & FRAMEOPTION_EXCLUSION))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("running_count needs a window frame that starts at UNBOUNDED PRECEDING and excludes nothing"),
				 errhint("Use OVER (ORDER BY ... ROWS UNBOUNDED PRECEDING): a moving frame would restart the stream and redraw its noise.")));
}

static void
params_from_args(FunctionCallInfo fcinfo, cc_params *params, char **ledger)
{
	SpecArgs	args;

	if (PG_NARGS() == 3)
	{
		/* running_count(item, mechanism) */
		if (PG_ARGISNULL(2))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("mechanism must not be null")));
		spec_from_composite(PG_GETARG_DATUM(2), &args);
	}
	else
	{
		/* running_count(item, epsilon, horizon): the binary mechanism */
		spec_with_defaults(&args, "binary", fcinfo->args[2], fcinfo->args[3]);
	}
	spec_to_params(&args, params);
	*ledger = spec_ledger(&args);
}

static RunningCount *
running_count_start(FunctionCallInfo fcinfo, int context, MemoryContext aggcxt)
{
	MemoryContext old;
	RunningCount *rc;
	cc_params	params;
	char	   *ledger;

	if (context == AGG_CONTEXT_WINDOW)
		check_window_frame(fcinfo);
	params_from_args(fcinfo, &params, &ledger);

	old = MemoryContextSwitchTo(aggcxt);
	rc = palloc(sizeof(RunningCount));
	rc->nconfig = PG_NARGS() - 2;
	for (int i = 0; i < rc->nconfig; i++)
	{
		get_typlenbyval(get_fn_expr_argtype(fcinfo->flinfo, i + 2),
						&rc->typlen[i], &rc->typbyval[i]);
		rc->config[i].isnull = fcinfo->args[i + 2].isnull;
		rc->config[i].value = rc->config[i].isnull ? (Datum) 0 :
			datumCopy(fcinfo->args[i + 2].value, rc->typbyval[i], rc->typlen[i]);
	}
	rc->ledger = ledger ? pstrdup(ledger) : NULL;
	rc->state = palloc(cc_state_size(&params));
	cc_state_init(rc->state, &params);
	MemoryContextSwitchTo(old);
	return rc;
}

/* One stream has one set of parameters: every row must repeat the first. */
static void
check_config_unchanged(FunctionCallInfo fcinfo, const RunningCount *rc)
{
	for (int i = 0; i < rc->nconfig; i++)
	{
		NullableDatum arg = fcinfo->args[i + 2];

		if (arg.isnull != rc->config[i].isnull ||
			(!arg.isnull &&
			 !datumIsEqual(arg.value, rc->config[i].value, rc->typbyval[i], rc->typlen[i])))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("running_count parameters must be the same for every row of a stream")));
	}
}

PG_FUNCTION_INFO_V1(running_count_step);
Datum
running_count_step(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	int			context = AggCheckCallContext(fcinfo, &aggcxt);
	RunningCount *rc;

	if (context == 0)
		elog(ERROR, "running_count_step called in non-aggregate context");
	if (PG_ARGISNULL(0))
		rc = running_count_start(fcinfo, context, aggcxt);
	else
	{
		rc = (RunningCount *) PG_GETARG_POINTER(0);
		check_config_unchanged(fcinfo, rc);
	}
	push_or_report(rc->state, PG_ARGISNULL(1) ? 0 : PG_GETARG_INT64(1));
	PG_RETURN_POINTER(rc);
}

PG_FUNCTION_INFO_V1(running_count_final);
Datum
running_count_final(PG_FUNCTION_ARGS)
{
	FinalSite  *site = fcinfo->flinfo->fn_extra;
	RunningCount *rc;
	cc_release	release;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	rc = (RunningCount *) PG_GETARG_POINTER(0);
	if (site == NULL)
	{
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(FinalSite));
		site->row_type = release_row_type(fcinfo);
		fcinfo->flinfo->fn_extra = site;
	}
	ledger_charge_site(&site->charge, (PlanState *) fcinfo->context, rc->ledger,
					   cc_state_params(rc->state)->epsilon_units, "running_count");
	cc_read(rc->state, &release);
	PG_RETURN_DATUM(release_row(site->row_type, &release));
}
