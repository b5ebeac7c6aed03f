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
 *
 * Without shared_preload_libraries, the library is loaded by the trigger's
 * first call, in the middle of the statement that fired it: that statement,
 * and those around it, run without a frame.  Their triggers are still
 * counted exactly.  AFTER triggers run in a context made under the one
 * AfterTriggerEndQuery was called in: for a statement in ExecutorFinish that
 * is its executor's query context, so the ExecutorEnd hook, installed by
 * then, finds the statement by that context and counts its rows.  COPY FROM
 * has no ExecutorEnd, but it reports the rows it inserted as its progress,
 * final by the time its AFTER triggers fire.
 *
 * IDENTIFICATION
 *	  src/counters/statement_rows.c
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/progress.h"
#include "executor/executor.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "tcop/utility.h"
#include "utils/backend_status.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "counters/statement_rows.h"
#include "sources/counter_delta.h"

typedef struct CountLater
{
	int64		counter;
	Oid			relid;			/* the table whose trigger fired */
	/* for a statement without a frame: */
	MemoryContext query_cxt;	/* its executor's es_query_cxt */
	int			level;			/* the transaction nesting level it runs at */
} CountLater;

typedef struct Frame
{
	struct Frame *outer;
	QueryDesc  *query;			/* the statement, or NULL for COPY FROM */
	QueryCompletion *copied;	/* where COPY FROM reports its rows */
	List	   *fired;			/* CountLater * in TopTransactionContext */
} Frame;

static Frame *innermost = NULL;
/* CountLater * of statements without a frame, in TopTransactionContext */
static List *frameless = NIL;
static ExecutorFinish_hook_type prev_executor_finish = NULL;
static ExecutorEnd_hook_type prev_executor_end = NULL;
static ProcessUtility_hook_type prev_process_utility = NULL;

/*
 * The trigger fired in a statement that began before the library was
 * loaded.  Called in the trigger's own memory context.
 */
static void
count_without_frame(int64 counter, Oid relid)
{
	MemoryContext firing = MemoryContextGetParent(CurrentMemoryContext);
	PgBackendStatus *status = MyBEEntry;

	if (firing != NULL && strcmp(firing->name, "ExecutorState") == 0)
	{
		MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
		CountLater *later = palloc(sizeof(CountLater));

		later->counter = counter;
		later->relid = relid;
		later->query_cxt = firing;
		later->level = GetCurrentTransactionNestLevel();
		frameless = lappend(frameless, later);
		MemoryContextSwitchTo(old);
		return;
	}
	/* not in an executor: in COPY FROM, the only other statement that fires these */
	if (pgstat_track_activities && status != NULL &&
		status->st_progress_command == PROGRESS_COMMAND_COPY &&
		status->st_progress_command_target == relid)
	{
		int64		rows = status->st_progress_param[PROGRESS_COPY_TUPLES_PROCESSED];

		if (rows > 0)
			counter_count_rows(counter, rows);
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("count_inserts cannot count the rows this COPY inserted into \"%s\"",
					get_rel_name(relid)),
			 errdetail("contcount was loaded while the COPY ran, and the progress report that holds its row count is off (track_activities) or was taken over by another command."),
			 errhint("Add contcount to shared_preload_libraries, or declare the trigger with REFERENCING NEW TABLE AS inserted.")));
}

void
statement_rows_count_later(int64 counter, Oid relid)
{
	MemoryContext old;
	CountLater *later;

	if (innermost == NULL)
	{
		count_without_frame(counter, relid);
		return;
	}
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

/* A statement without a frame ends: count its rows for the triggers it fired. */
static void
executor_end(QueryDesc *query)
{
	ListCell   *lc;

	foreach(lc, frameless)
	{
		CountLater *later = lfirst(lc);
		uint64		rows;

		if (later->query_cxt != query->estate->es_query_cxt)
			continue;
		rows = executor_rows(query, later->relid);
		if (rows > 0)
			counter_count_rows(later->counter, (int64) rows);
		frameless = foreach_delete_current(frameless, lc);
		pfree(later);
	}
	if (prev_executor_end)
		prev_executor_end(query);
	else
		standard_ExecutorEnd(query);
}

/*
 * A frameless statement's rows are counted at its ExecutorEnd, which an
 * error skips: its (sub)transaction then takes its counts back.
 */
static void
frameless_xact_callback(XactEvent event, void *arg)
{
	(void) arg;
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			if (frameless != NIL)
				elog(ERROR, "count_inserts did not see the end of a statement it counts");
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PREPARE:
			frameless = NIL;	/* its memory goes with the transaction */
			break;
		default:
			break;
	}
}

static void
frameless_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						   SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	ListCell   *lc;

	(void) mySubid;
	(void) parentSubid;
	(void) arg;
	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	foreach(lc, frameless)
	{
		CountLater *later = lfirst(lc);

		if (later->level >= level)
			frameless = foreach_delete_current(frameless, lc);
	}
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
	prev_executor_end = ExecutorEnd_hook;
	ExecutorEnd_hook = executor_end;
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = process_utility;
	RegisterXactCallback(frameless_xact_callback, NULL);
	RegisterSubXactCallback(frameless_subxact_callback, NULL);
}
