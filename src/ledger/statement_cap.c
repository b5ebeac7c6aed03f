/*
 * statement_cap.c
 *		What one top-level statement may spend in all.
 *
 * A GROUP BY pays for every group, a set-returning function called per row
 * for every row, and how many there are is the data's: a statement can spend
 * a team's whole quota at once.  contcount.max_epsilon_per_statement and
 * contcount.max_rho_per_statement (PGC_SUSET, 0: no cap) let a superuser cap
 * what the releases of one statement cost in all, pure releases by their
 * epsilon and Gaussian ones by their rho, whichever ledgers pay (a release
 * from a source counts once, though two ledgers pay for it).  Every path
 * that charges a release asks here first, so a release beyond the cap is
 * refused before it pays or computes anything; what was charged before stays
 * charged (nothing refunds a computed release).
 *
 * A statement is what the server timestamps as one (statement_timestamp()):
 * the functions it calls, at any depth, are part of it, also across the
 * COMMITs of a DO block or procedure (a new transaction is no new
 * statement); each FETCH from a cursor is a statement of its own.  The step
 * worker's charges (a copied counter paying its epsilon again) are no
 * statement of a role's and are not capped; every other process is, also
 * a walsender running SQL or another extension's background worker.  A
 * parallel worker would count apart from its leader and from the other
 * workers, so a capped release is refused there (a forced parallel plan
 * can run one in a worker).
 *
 * IDENTIFICATION
 *	  src/ledger/statement_cap.c
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"

#include "common/report.h"
#include "common/settings.h"
#include "core/mechanism.h"
#include "ledger/statement_cap.h"

/* What the statement of start has spent, in 1e-9 units. */
static struct
{
	TimestampTz start;
	uint64		spent[2];		/* [CC_PURE]: epsilon, [CC_ZCDP]: rho */
}			current;

/* The entry of the current statement, cleared when it is a new one. */
static void
current_statement(void)
{
	TimestampTz start = GetCurrentStatementStartTimestamp();

	if (current.start != start)
	{
		current.start = start;
		current.spent[CC_PURE] = current.spent[CC_ZCDP] = 0;
	}
}

/* The cap on cost's accounting in 1e-9 units; 0: none. */
static uint64
cap_units(cc_accounting accounting)
{
	double		cap = accounting == CC_PURE ? contcount_max_epsilon_per_statement
		: contcount_max_rho_per_statement;

	/* a cap is never rounded up: 1e-9 less is what it still allows */
	return (uint64) (cap * (double) CC_EPSILON_UNITS_PER_ONE);
}

/*
 * A capped release in a parallel worker, refused: the worker's count of
 * what the statement spent is its own, which the leader's and the other
 * workers' releases would not see.
 */
static void
refuse_parallel_worker(bool pure)
{
	if (IsParallelWorker())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a release under contcount.max_%s_per_statement cannot run in a parallel worker",
						pure ? "epsilon" : "rho"),
				 errdetail("A parallel worker would count what the statement spends apart from its leader and the other workers."),
				 errhint("Run the statement without a forced parallel plan (RESET force_parallel_mode).")));
}

int64
statement_cap_allow(cc_cost cost, int64 wanted)
{
	uint64		cap = cap_units(cost.accounting);
	uint64		spent;
	uint64		room;
	bool		pure = cost.accounting == CC_PURE;

	if (cap == 0 || contcount_step_worker || cost.units == 0)
		return wanted;
	refuse_parallel_worker(pure);
	current_statement();
	spent = current.spent[cost.accounting];
	room = spent >= cap ? 0 : (cap - spent) / cost.units;
	if (room == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("this statement would spend more %s than contcount.max_%s_per_statement allows (%s)",
						pure ? "epsilon" : "rho", pure ? "epsilon" : "rho",
						format_budget_units(cap)),
				 errdetail("The statement's releases have spent %s; the next one costs %s.",
						   format_budget_units(spent), format_budget_units(cost.units)),
				 errhint("Release fewer values in one statement (fewer groups or rows), or ask a superuser for a larger cap.")));
	return (int64) Min(room, (uint64) wanted);
}

void
statement_cap_count(cc_cost cost, int64 releases)
{
	if (cap_units(cost.accounting) == 0 || contcount_step_worker)
		return;
	current_statement();
	current.spent[cost.accounting] += (uint64) releases * cost.units;
}
