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
 * Every stream (each partition of a window, each group of a GROUP BY, each
 * scan of the plan node) is a release of its own: the final function pays
 * for it from the call site's charges (ledger.c) before its first value is
 * returned.  The parameters are checked once per call site to be one value
 * for the whole call (call_site.c), read once, and used for every stream.
 *
 * With the mechanism's option monotone, each value shown is the running
 * maximum of the stream's releases read so far, clamped at 0, with the
 * largest bound so far, as a monotone counter's reads: a window shows each
 * row before the next exists, so the one projection that never revises
 * what was shown is the online one (docs/mechanisms-and-accuracy.md).  It
 * reads only released values: the charge is the same.
 *
 * IDENTIFICATION
 *	  src/releases/running_count.c
 */
#include "postgres.h"

#include "nodes/execnodes.h"

#include "common/report.h"
#include "ledger/ledger.h"
#include "core/choice.h"
#include "releases/call_site.h"
#include "releases/release.h"
#include "releases/spec.h"

/* The aggregate's arguments after the item are parameters: (mechanism) or (epsilon, horizon). */
#define FIRST_PARAMETER 1

/* What the transition function keeps for the whole call site. */
typedef struct StepSite
{
	cc_params	params;
	char	   *ledger;			/* the ledger named, or NULL */
	bool		monotone;		/* the mechanism's option monotone */
} StepSite;

/* One stream's transition state. */
typedef struct RunningCount
{
	cc_state   *state;
	const char *ledger;			/* the call site's */
	bool		paid;			/* its release is paid for */
	bool		monotone;		/* the call site's option monotone */
	int64		shown;			/* monotone: the largest value shown, >= 0 */
	double		shown_bound;	/* monotone: the largest bound read */
} RunningCount;

/* What the final function keeps for the whole call site. */
typedef struct FinalSite
{
	ReleaseRowType *row_type;
	bool		charging;		/* charge is set up (at the first stream) */
	ChargeSite	charge;
} FinalSite;

/* Check the call site and read its parameters, once per query. */
static StepSite *
step_site(FunctionCallInfo fcinfo, int context)
{
	StepSite   *site;
	SpecArgs	args;

	call_site_check(fcinfo, FIRST_PARAMETER, "running_count");
	if (context == AGG_CONTEXT_WINDOW)
		call_site_require_growing_frame(fcinfo, "running_count");
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
		/* running_count(item, epsilon, horizon): mechanism auto, as the SRFs */
		spec_with_defaults(&args, CC_AUTO_NAME, fcinfo->args[2], fcinfo->args[3]);
	}
	site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(StepSite));
	spec_to_params(&args, &site->params);
	site->monotone = spec_monotone(&args);
	if (spec_ledger(&args) != NULL)
		site->ledger = MemoryContextStrdup(fcinfo->flinfo->fn_mcxt, spec_ledger(&args));
	/* before the first step draws noise: a pure ledger refuses Gaussian releases */
	ledger_check_cost(site->ledger, cc_params_cost(&site->params));
	return site;
}

PG_FUNCTION_INFO_V1(running_count_step);
Datum
running_count_step(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt;
	int			context = AggCheckCallContext(fcinfo, &aggcxt);
	StepSite   *site = fcinfo->flinfo->fn_extra;
	RunningCount *rc;

	if (site == NULL)
		fcinfo->flinfo->fn_extra = site = step_site(fcinfo, context);
	if (PG_ARGISNULL(0))
	{
		rc = MemoryContextAlloc(aggcxt, sizeof(RunningCount));
		rc->state = MemoryContextAlloc(aggcxt, cc_state_size(&site->params));
		cc_state_init(rc->state, &site->params);
		rc->ledger = site->ledger;
		rc->paid = false;
		rc->monotone = site->monotone;
		rc->shown = 0;
		rc->shown_bound = 0;
	}
	else
		rc = (RunningCount *) PG_GETARG_POINTER(0);
	push_or_report(rc->state, PG_ARGISNULL(1) ? 0 : PG_GETARG_INT64(1));
	PG_RETURN_POINTER(rc);
}

/*
 * The release as a monotone stream shows it: the running maximum of what
 * was read, at least 0, with the largest bound so far.  Any value shown at
 * step t is a release at some step s <= t or 0, both at most the true count
 * at t plus that bound, and the release at t is at least the true count
 * minus its own.  Reading a step again (a peer row) shows the same: the
 * maximum of the same values.  No noise is touched.
 */
static void
show_monotone(RunningCount *rc, cc_release *release)
{
	rc->shown = Max(rc->shown, release->noisy);
	rc->shown_bound = Max(rc->shown_bound, release->bound);
	release->noisy = rc->shown;
	release->bound = rc->shown_bound;
}

PG_FUNCTION_INFO_V1(running_count_final);
Datum
running_count_final(PG_FUNCTION_ARGS)
{
	FinalSite  *site = fcinfo->flinfo->fn_extra;
	RunningCount *rc;
	cc_release	release;

	if (site == NULL)
	{
		call_site_check(fcinfo, -1, "running_count");
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(FinalSite));
		site->row_type = release_row_type(fcinfo);
		fcinfo->flinfo->fn_extra = site;
	}
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	rc = (RunningCount *) PG_GETARG_POINTER(0);
	if (!rc->paid)
	{
		if (!site->charging)
		{
			MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

			ledger_site_init(&site->charge, rc->ledger,
							 cc_params_cost(cc_state_params(rc->state)), "running_count");
			MemoryContextSwitchTo(old);
			site->charging = true;
		}
		ledger_pay_release(&site->charge, (PlanState *) fcinfo->context);
		rc->paid = true;
	}
	cc_read(rc->state, &release);
	if (rc->monotone)
		show_monotone(rc, &release);
	PG_RETURN_DATUM(release_row(site->row_type, &release));
}
