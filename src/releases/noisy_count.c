/*
 * noisy_count.c
 *		noisy_count(epsilon [, ledger]): count(*) released once, with
 *		discrete Laplace noise of scale 1/epsilon.
 *
 * The aggregate counts with count(*)'s own transition and combine functions,
 * so PostgreSQL runs it in parallel as it runs count(*).  Only the final
 * function is ours, and it reads epsilon from the query rather than from the
 * rows: an empty set must be counted with noise like any other, since a NULL
 * or an error there would tell that the set is empty.  Under a parallel plan
 * the final step's argument is a reference to the partial aggregate below,
 * so the argument expressions are found by following those references down.
 * They must be one value for the whole call (call_site.c): they are read once
 * per call site.  Every group is a release of its own and pays for itself
 * from the call site's charges (ledger.c).
 *
 * IDENTIFICATION
 *	  src/releases/noisy_count.c
 */
#include "postgres.h"

#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"

#include "common/report.h"
#include "ledger/ledger.h"
#include "releases/call_site.h"
#include "releases/spec.h"

/* The plan below an upper node whose tlist refers to it through OUTER_VAR. */
static Plan *
outer_child(Plan *plan)
{
	if (IsA(plan, Append) && ((Append *) plan)->appendplans != NIL)
		return linitial(((Append *) plan)->appendplans);
	if (IsA(plan, MergeAppend) && ((MergeAppend *) plan)->mergeplans != NIL)
		return linitial(((MergeAppend *) plan)->mergeplans);
	return outerPlan(plan);
}

/* The expression of the aggregate's argument argno, which must not vary by row. */
static Expr *
argument_expression(AggState *aggstate, Aggref *aggref, int argno)
{
	List	   *args = aggref->args;
	Plan	   *plan = aggstate->ss.ps.plan;
	Expr	   *expr;

	if (DO_AGGSPLIT_COMBINE(aggref->aggsplit))
	{
		/* the one argument refers to the partial aggregate's result below */
		expr = linitial_node(TargetEntry, args)->expr;
		while (IsA(expr, Var) && ((Var *) expr)->varno == OUTER_VAR)
		{
			TargetEntry *tle;

			plan = outer_child(plan);
			tle = plan ? get_tle_by_resno(plan->targetlist, ((Var *) expr)->varattno) : NULL;
			if (tle == NULL)
				elog(ERROR, "could not find the arguments of noisy_count in the plan");
			expr = tle->expr;
		}
		if (!IsA(expr, Aggref))
			elog(ERROR, "could not find the arguments of noisy_count in the plan");
		args = ((Aggref *) expr)->args;
	}
	expr = list_nth_node(TargetEntry, args, argno)->expr;
	call_site_require_constant(expr, "noisy_count");
	return expr;
}

static NullableDatum
evaluate_once(Expr *expr, AggState *aggstate)
{
	ExprState  *state = ExecInitExpr(expr, &aggstate->ss.ps);
	NullableDatum result;

	result.value = ExecEvalExprSwitchContext(state, aggstate->ss.ps.ps_ExprContext,
											 &result.isnull);
	return result;
}

/* What a call site keeps for the whole query: its parameters, read once, and its charges. */
typedef struct NoisyCountSite
{
	cc_params	params;
	ChargeSite	charge;
} NoisyCountSite;

static NoisyCountSite *
noisy_count_site(FunctionCallInfo fcinfo, AggState *aggstate, Aggref *aggref)
{
	NoisyCountSite *site;
	MemoryContext old;
	NullableDatum horizon = {Int64GetDatum(1), false};
	NullableDatum ledger = {(Datum) 0, true};
	SpecArgs	args;

	call_site_check(fcinfo, -1, "noisy_count");
	/*
	 * A count does not depend on the order of its rows: an ORDER BY in it is
	 * a comma in the wrong place, and noisy_count(epsilon ORDER BY ledger)
	 * would be the one-argument form, charging the session's ledger.
	 */
	if (aggref->aggorder != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("noisy_count takes no ORDER BY"),
				 errdetail("A count does not depend on the order of its rows."),
				 errhint("Name the ledger as the second argument: noisy_count(epsilon, ledger).")));
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	site = palloc0(sizeof(NoisyCountSite));
	/* one step of simple II: Laplace(1/epsilon) on the count */
	spec_with_defaults(&args, "simple_ii",
					   evaluate_once(argument_expression(aggstate, aggref, 0), aggstate), horizon);
	spec_to_params(&args, &site->params);
	if (list_length(aggref->aggargtypes) > 1)
		ledger = evaluate_once(argument_expression(aggstate, aggref, 1), aggstate);
	ledger_site_init(&site->charge, ledger.isnull ? NULL : TextDatumGetCString(ledger.value),
					 cc_params_cost(&site->params), "noisy_count");
	MemoryContextSwitchTo(old);
	return site;
}

/*
 * Counts rows for noisy_count(epsilon, ledger); the one-argument form uses
 * int8inc_any.  Checks once per query where it runs, like every support
 * function.
 */
PG_FUNCTION_INFO_V1(noisy_count_step);
Datum
noisy_count_step(PG_FUNCTION_ARGS)
{
	if (fcinfo->flinfo->fn_extra == NULL)
	{
		call_site_check(fcinfo, -1, "noisy_count");
		fcinfo->flinfo->fn_extra = fcinfo->flinfo;	/* checked */
	}
	PG_RETURN_INT64(PG_GETARG_INT64(0) + 1);
}

PG_FUNCTION_INFO_V1(noisy_count_final);
Datum
noisy_count_final(PG_FUNCTION_ARGS)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	AggState   *aggstate = (AggState *) fcinfo->context;
	NoisyCountSite *site = fcinfo->flinfo->fn_extra;
	cc_state   *state;
	cc_release	release;

	if (site == NULL)
	{
		if (aggref == NULL && fcinfo->context != NULL && IsA(fcinfo->context, WindowAggState))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("noisy_count cannot be used as a window function"),
					 errhint("Use running_count for a count at every row.")));
		fcinfo->flinfo->fn_extra = site = noisy_count_site(fcinfo, aggstate, aggref);
	}
	ledger_pay_release(&site->charge, &aggstate->ss.ps);
	state = palloc(cc_state_size(&site->params));
	cc_state_init(state, &site->params);
	push_or_report(state, PG_GETARG_INT64(0));
	cc_read(state, &release);
	PG_RETURN_INT64(release.noisy);
}
