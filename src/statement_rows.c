/*
 * statement_rows.c
 *		The rows a statement inserted, for count_inserts fired FOR EACH
 *		STATEMENT without a transition table.
 *
 * A transition table costs a copy of every inserted row; for large batches
 * that is most of what counting costs.  But a statement's own row count is
 * exact when the table is its one INSERT target and the count holds nothing
 * else: a plain INSERT (ON CONFLICT DO NOTHING included) whose ModifyTable
 * sets the command tag, or COPY FROM.  Anything else (an INSERT in a WITH
 * query or a rule action, ON CONFLICT DO UPDATE, MERGE) is refused rather
 * than counted wrong.
 *
 * AFTER STATEMENT triggers fire from AfterTriggerEndQuery, which runs inside
 * ExecutorFinish or COPY FROM.  Each of those runs in a frame on a stack;
 * the trigger leaves its counter in the innermost frame, and once the
 * statement has finished the frame adds the statement's row count to it.
 * Statements the trigger's own work might run are inner frames of their
 * own, so a frame sees only the triggers of its statement.
 */
#include "postgres.h"

#include "executor/executor.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "tcop/utility.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "counter.h"
#include "statement_rows.h"

typedef struct CountLater
{
	int64		counter;
	Oid			relid;			/* the table whose trigger fired */
} CountLater;

typedef struct Frame
{
	struct Frame *outer;
	QueryDesc  *query;			/* the statement, or NULL for COPY FROM */
	QueryCompletion *copied;	/* where COPY FROM reports its rows */
	List	   *fired;			/* CountLater * in TopTransactionContext */
} Frame;

static Frame *innermost = NULL;
static ExecutorFinish_hook_type prev_executor_finish = NULL;
static ProcessUtility_hook_type prev_process_utility = NULL;

void
statement_rows_count_later(int64 counter, Oid relid)
{
	MemoryContext old;
	CountLater *later;

	if (innermost == NULL)
		elog(ERROR, "count_inserts fired outside a statement");
	old = MemoryContextSwitchTo(TopTransactionContext);
	later = palloc(sizeof(CountLater));
	later->counter = counter;
	later->relid = relid;
	innermost->fired = lappend(innermost->fired, later);
	MemoryContextSwitchTo(old);
}

/* Whether plan is a ModifyTable that inserts into relid. */
static bool
inserts_into(PlannedStmt *stmt, Plan *plan, Oid relid)
{
	ModifyTable *modify = (ModifyTable *) plan;

	return plan != NULL && IsA(plan, ModifyTable) &&
		(modify->operation == CMD_INSERT || modify->operation == CMD_MERGE) &&
		rt_fetch(modify->nominalRelation, stmt->rtable)->relid == relid;
}

/* The statement's row count, when it is the number of rows inserted into relid. */
static uint64
executor_rows(QueryDesc *query, Oid relid)
{
	PlannedStmt *stmt = query->plannedstmt;
	ModifyTable *top = (ModifyTable *) stmt->planTree;
	int			inserts = inserts_into(stmt, stmt->planTree, relid) ? 1 : 0;
	ListCell   *lc;

	foreach(lc, stmt->subplans)
		inserts += inserts_into(stmt, lfirst(lc), relid) ? 1 : 0;
	if (inserts != 1 || !inserts_into(stmt, stmt->planTree, relid) ||
		!top->canSetTag || top->operation != CMD_INSERT ||
		top->onConflictAction == ONCONFLICT_UPDATE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("count_inserts cannot count the rows this statement inserted into \"%s\" without a transition table",
						get_rel_name(relid)),
				 errdetail("A statement-level count_inserts without REFERENCING NEW TABLE counts a plain INSERT or COPY into its table, not ON CONFLICT DO UPDATE, MERGE, or an INSERT in a WITH query or a rule."),
				 errhint("Declare the trigger with REFERENCING NEW TABLE AS inserted.")));
	return query->estate->es_processed;
}

/* The statement in frame is done: count its rows for every trigger that fired. */
static void
count_fired(Frame *frame)
{
	ListCell   *lc;

	foreach(lc, frame->fired)
	{
		CountLater *later = lfirst(lc);
		uint64		rows = frame->query ?
			executor_rows(frame->query, later->relid) : frame->copied->nprocessed;

		if (rows > 0)
			counter_count_rows(later->counter, (int64) rows);
		pfree(later);
	}
	list_free(frame->fired);
}

static void
executor_finish(QueryDesc *query)
{
	Frame		frame = {innermost, query, NULL, NIL};

	innermost = &frame;
	PG_TRY();
	{
		if (prev_executor_finish)
			prev_executor_finish(query);
		else
			standard_ExecutorFinish(query);
	}
	PG_FINALLY();
	{
		innermost = frame.outer;
	}
	PG_END_TRY();
	count_fired(&frame);
}

static void
next_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					 ProcessUtilityContext context, ParamListInfo params,
					 QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context,
							 params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

static void
process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
				ProcessUtilityContext context, ParamListInfo params,
				QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	QueryCompletion own_qc;
	Frame		frame = {innermost, NULL, qc ? qc : &own_qc, NIL};

	/* of the utility statements, only COPY FROM inserts with triggers */
	if (!IsA(pstmt->utilityStmt, CopyStmt) || !((CopyStmt *) pstmt->utilityStmt)->is_from)
	{
		next_process_utility(pstmt, queryString, readOnlyTree, context,
							 params, queryEnv, dest, qc);
		return;
	}
	InitializeQueryCompletion(frame.copied);
	innermost = &frame;
	PG_TRY();
	{
		next_process_utility(pstmt, queryString, readOnlyTree, context,
							 params, queryEnv, dest, frame.copied);
	}
	PG_FINALLY();
	{
		innermost = frame.outer;
	}
	PG_END_TRY();
	count_fired(&frame);
}

void
statement_rows_install(void)
{
	prev_executor_finish = ExecutorFinish_hook;
	ExecutorFinish_hook = executor_finish;
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = process_utility;
}
