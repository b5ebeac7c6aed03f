/*
 * call_site.c
 *		Where an aggregate support function runs, and what it may trust.
 *
 * contcount's support functions trust their input: a final function reads
 * the state its own transition function built, and calibrates noise with
 * the parameters the call gives.  Anyone could otherwise build an aggregate
 * of their own around them (a final function fed someone else's state
 * releases what it does not know, or reads an integer as a pointer), so
 * they are not PUBLIC and, as a second line, each checks at its first call
 * in a query that the aggregate calling it is a member of the extension.
 *
 * The parameters of a release (epsilon, mechanism, horizon, ledger) must be
 * one value for the whole call site: the epsilon charged must be the one
 * that calibrated every released value, in every row, group and partition.
 * A value that could vary between them (a column, a CASE over one, a STABLE
 * function that answers differently per call, a subquery) is refused;
 * constants, query parameters and immutable functions of them are one value
 * for the whole execution.
 *
 * IDENTIFICATION
 *	  src/releases/call_site.c
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/dependency.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "commands/extension.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/inval.h"
#include "utils/syscache.h"

#include "releases/call_site.h"

static bool
varies_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return ((Param *) node)->paramkind != PARAM_EXTERN;
	if (IsA(node, Var) || IsA(node, Aggref) || IsA(node, WindowFunc) ||
		IsA(node, GroupingFunc) || IsA(node, SubLink) || IsA(node, SubPlan) ||
		IsA(node, AlternativeSubPlan) || IsA(node, NextValueExpr) ||
		IsA(node, CurrentOfExpr))
		return true;
	return expression_tree_walker(node, varies_walker, context);
}

void
call_site_require_constant(Expr *expr, const char *function)
{
	if (varies_walker((Node *) expr, NULL) || contain_mutable_functions((Node *) expr))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the parameters of %s must be the same for every row, group and partition",
						function),
				 errhint("Give constants or query parameters: the epsilon charged must be the one that calibrated every value.")));
}

/*
 * The aggregates found to be the extension's, so that a query does not scan
 * pg_depend and pg_extension each time.  Forgotten at any change of pg_proc:
 * an aggregate's oid is only taken again after it is dropped.
 */
#define OWN_AGGREGATES 8
static Oid	own_aggregates[OWN_AGGREGATES];
static int	n_own_aggregates = 0;
static bool own_aggregates_watched = false;

static void
forget_own_aggregates(Datum arg pg_attribute_unused(), int cacheid pg_attribute_unused(),
					  uint32 hashvalue pg_attribute_unused())
{
	n_own_aggregates = 0;
}

static void
require_own_aggregate(Oid aggfnoid, const char *function)
{
	for (int i = 0; i < n_own_aggregates; i++)
		if (own_aggregates[i] == aggfnoid)
			return;
	if (getExtensionOfObject(ProcedureRelationId, aggfnoid) != get_extension_oid("contcount", false))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s support functions run only inside contcount's own aggregates", function)));
	if (!own_aggregates_watched)
	{
		CacheRegisterSyscacheCallback(PROCOID, forget_own_aggregates, (Datum) 0);
		own_aggregates_watched = true;
	}
	if (n_own_aggregates < OWN_AGGREGATES)
		own_aggregates[n_own_aggregates++] = aggfnoid;
}

/* Does the aggregate aggfnoid use the support function fn_oid? */
static bool
aggregate_uses(Oid aggfnoid, Oid fn_oid)
{
	HeapTuple	tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	bool		uses = false;

	if (HeapTupleIsValid(tuple))
	{
		Form_pg_aggregate agg = (Form_pg_aggregate) GETSTRUCT(tuple);

		uses = agg->aggtransfn == fn_oid || agg->aggfinalfn == fn_oid;
		ReleaseSysCache(tuple);
	}
	return uses;
}

static void
require_constant_args(List *args, int first_parameter, bool target_entries, const char *function)
{
	ListCell   *lc;

	if (first_parameter < 0)
		return;
	for_each_from(lc, args, first_parameter)
	{
		Expr	   *expr = lfirst(lc);

		if (target_entries)
		{
			/* the columns of an ORDER BY inside the call come last, as junk */
			if (castNode(TargetEntry, expr)->resjunk)
				break;
			expr = castNode(TargetEntry, expr)->expr;
		}
		call_site_require_constant(expr, function);
	}
}

void
call_site_check(FunctionCallInfo fcinfo, int first_parameter, const char *function)
{
	Node	   *context = fcinfo->context;

	if (context != NULL && IsA(context, AggState))
	{
		Aggref	   *aggref = AggGetAggref(fcinfo);

		if (aggref == NULL)
			elog(ERROR, "%s: no aggregate found for a support function", function);
		require_own_aggregate(aggref->aggfnoid, function);
		/* a combining aggregate's argument refers to the partial one below */
		if (!DO_AGGSPLIT_COMBINE(aggref->aggsplit))
			require_constant_args(aggref->args, first_parameter, true, function);
		return;
	}
	if (context != NULL && IsA(context, WindowAggState))
	{
		/*
		 * PostgreSQL does not tell a window aggregate's support function
		 * which window function it serves: check every one in the node that
		 * uses this support function.
		 */
		bool		found = false;
		ListCell   *lc;

		foreach(lc, ((WindowAggState *) context)->funcs)
		{
			WindowFunc *wfunc = ((WindowFuncExprState *) lfirst(lc))->wfunc;

			if (!wfunc->winagg || !aggregate_uses(wfunc->winfnoid, fcinfo->flinfo->fn_oid))
				continue;
			require_own_aggregate(wfunc->winfnoid, function);
			require_constant_args(wfunc->args, first_parameter, false, function);
			found = true;
		}
		if (found)
			return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("%s support functions run only inside contcount's own aggregates", function)));
}

void
call_site_require_growing_frame(FunctionCallInfo fcinfo, const char *function)
{
	WindowAggState *window = (WindowAggState *) fcinfo->context;

	if (!(window->frameOptions & FRAMEOPTION_START_UNBOUNDED_PRECEDING) ||
		(window->frameOptions & FRAMEOPTION_EXCLUSION))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s needs a window frame that starts at UNBOUNDED PRECEDING and excludes nothing",
						function),
				 errhint("Use OVER (ORDER BY ... ROWS UNBOUNDED PRECEDING): a moving frame would restart the stream and redraw its noise.")));
}
