/*
 * noisy_count.c
 *		noisy_count(epsilon): count(*) released once, with discrete Laplace
 *		noise of scale 1/epsilon.
 *
 * The aggregate counts with count(*)'s own transition and combine functions,
 * so PostgreSQL runs it in parallel as it runs count(*).  Only the final
 * function is ours, and it reads epsilon from the query rather than from the
 * rows: an empty set must be counted with noise like any other, since a NULL
 * or an error there would tell that the set is empty.  Under a parallel plan
 * the final step's argument is a reference to the partial aggregate below,
 * so the epsilon expression is found by following those references down.
 */
#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "executor/executor.h"

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

static Expr *
epsilon_expression(AggState *aggstate, Aggref *aggref)
{
	Expr	   *expr = linitial_node(TargetEntry, aggref->args)->expr;
	Plan	   *plan = aggstate->ss.ps.plan;

	while (IsA(expr, Var) && ((Var *) expr)->varno == OUTER_VAR)
	{
		TargetEntry *tle;

		plan = outer_child(plan);
		tle = plan ? get_tle_by_resno(plan->targetlist, ((Var *) expr)->varattno) : NULL;
		if (tle == NULL)
			elog(ERROR, "could not find the epsilon of noisy_count in the plan");
		expr = tle->expr;
	}
	if (IsA(expr, Aggref))		/* the partial aggregate: its argument */
		expr = linitial_node(TargetEntry, ((Aggref *) expr)->args)->expr;
	if (contain_var_clause((Node *) expr) || contain_volatile_functions((Node *) expr))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon of noisy_count must be the same for every row"),
				 errhint("Give a constant or a query parameter.")));
	return expr;
}

PG_FUNCTION_INFO_V1(noisy_count_final);
Datum
noisy_count_final(PG_FUNCTION_ARGS)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	AggState   *aggstate = (AggState *) fcinfo->context;
	ExprState  *epsilon = fcinfo->flinfo->fn_extra;
	SpecArgs	args;
	cc_params	params;
	cc_state   *state;
	cc_release	release;

	if (aggref == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("noisy_count cannot be used as a window function"),
				 errhint("Use running_count for a count at every row.")));
	if (epsilon == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

		epsilon = ExecInitExpr(epsilon_expression(aggstate, aggref), &aggstate->ss.ps);
		fcinfo->flinfo->fn_extra = epsilon;
		MemoryContextSwitchTo(old);
	}

	/* one step of simple II: Laplace(1/epsilon) on the count */
	{
		NullableDatum value;
		NullableDatum horizon = {Int64GetDatum(1), false};

		value.value = ExecEvalExprSwitchContext(epsilon, aggstate->ss.ps.ps_ExprContext,
												&value.isnull);
		spec_with_defaults(&args, "simple_ii", value, horizon);
	}
	spec_to_params(&args, &params);

	state = palloc(cc_state_size(&params));
	cc_state_init(state, &params);
	push_or_report(state, PG_GETARG_INT64(0));
	cc_read(state, &release);
	PG_RETURN_INT64(release.noisy);
}
