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
 * The ledger is charged once per call site and scan: groups are disjoint.
 */
#include "postgres.h"

#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"

#include "ledger.h"
#include "report.h"
#include "spec.h"

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
argument_expression(AggState *aggstate, Aggref *aggref, int argno, const char *what)
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
	if (contain_var_clause((Node *) expr) || contain_volatile_functions((Node *) expr))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s of noisy_count must be the same for every row", what),
				 errhint("Give a constant or a query parameter.")));
	return expr;
}

/* What a call site keeps for the whole query. */
typedef struct NoisyCountSite
{
	ExprState  *epsilon;
	ExprState  *ledger;			/* NULL: contcount.ledger pays */
	ChargeSite	charge;
} NoisyCountSite;

static NoisyCountSite *
noisy_count_site(FunctionCallInfo fcinfo, AggState *aggstate, Aggref *aggref)
{
	NoisyCountSite *site = fcinfo->flinfo->fn_extra;
	MemoryContext old;

	if (site != NULL)
		return site;
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	site = palloc0(sizeof(NoisyCountSite));
	site->epsilon = ExecInitExpr(argument_expression(aggstate, aggref, 0, "epsilon"),
								 &aggstate->ss.ps);
	if (list_length(aggref->aggargtypes) > 1)
		site->ledger = ExecInitExpr(argument_expression(aggstate, aggref, 1, "ledger"),
									&aggstate->ss.ps);
	fcinfo->flinfo->fn_extra = site;
	MemoryContextSwitchTo(old);
	return site;
}

static NullableDatum
evaluate(ExprState *expr, AggState *aggstate)
{
	NullableDatum result;

	result.value = ExecEvalExprSwitchContext(expr, aggstate->ss.ps.ps_ExprContext,
											 &result.isnull);
	return result;
}

/* Counts rows for noisy_count(epsilon, ledger); the one-argument form uses int8inc_any. */
PG_FUNCTION_INFO_V1(noisy_count_step);
Datum
noisy_count_step(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(PG_GETARG_INT64(0) + 1);
}

PG_FUNCTION_INFO_V1(noisy_count_final);
Datum
noisy_count_final(PG_FUNCTION_ARGS)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	AggState   *aggstate = (AggState *) fcinfo->context;
	NoisyCountSite *site;
	NullableDatum horizon = {Int64GetDatum(1), false};
	NullableDatum ledger = {(Datum) 0, true};
	SpecArgs	args;
	cc_params	params;
	cc_state   *state;
	cc_release	release;

	if (aggref == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("noisy_count cannot be used as a window function"),
				 errhint("Use running_count for a count at every row.")));
	site = noisy_count_site(fcinfo, aggstate, aggref);

	/* one step of simple II: Laplace(1/epsilon) on the count */
	spec_with_defaults(&args, "simple_ii", evaluate(site->epsilon, aggstate), horizon);
	spec_to_params(&args, &params);
	if (site->ledger)
		ledger = evaluate(site->ledger, aggstate);
	ledger_charge_site(&site->charge, &aggstate->ss.ps,
					   ledger.isnull ? NULL : TextDatumGetCString(ledger.value),
					   params.epsilon_units, "noisy_count");

	state = palloc(cc_state_size(&params));
	cc_state_init(state, &params);
	push_or_report(state, PG_GETARG_INT64(0));
	cc_read(state, &release);
	PG_RETURN_INT64(release.noisy);
}
