/*
 * counter_trigger.c
 *		contcount.count_inserts(counter): the trigger that feeds a counter.
 *
 * It counts a row trigger's row, a statement trigger's transition table or,
 * without one, the statement's own row count (statement_rows.c), into the
 * transaction's pending counts (src/sources/counter_delta.c), which are
 * written with the transaction.
 *
 * IDENTIFICATION
 *	  src/counters/counter_trigger.c
 */
#include "postgres.h"

#include "commands/trigger.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "counters/counter.h"
#include "counters/statement_rows.h"
#include "sources/counter_delta.h"

/* The counter a trigger feeds, looked up and checked once per query. */
typedef struct TriggerTarget
{
	int64		counter;
	bool		finished;
} TriggerTarget;

PG_FUNCTION_INFO_V1(contcount_count_inserts);
Datum
contcount_count_inserts(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	TriggerTarget *target = fcinfo->flinfo->fn_extra;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("count_inserts must be called as a trigger")));
	if (!TRIGGER_FIRED_AFTER(trigdata->tg_event) || !TRIGGER_FIRED_BY_INSERT(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("count_inserts must be an AFTER INSERT trigger")));
	if (trigdata->tg_trigger->tgnargs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("count_inserts takes one argument, the counter's name")));

	if (target == NULL)
	{
		target = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(TriggerTarget));
		target->counter = counter_to_feed(trigdata->tg_trigger->tgargs[0], trigdata->tg_relation,
										  trigdata->tg_trigger->tgname, &target->finished);
		fcinfo->flinfo->fn_extra = target;
	}

	/* a finished counter, or one gone, releases nothing more: no counting */
	if (target->finished)
		return PointerGetDatum(NULL);
	if (TRIGGER_FIRED_FOR_ROW(trigdata->tg_event))
		counter_count_rows(target->counter, 1);
	else if (trigdata->tg_newtable != NULL)
	{
		int64		rows = tuplestore_tuple_count(trigdata->tg_newtable);

		if (rows > 0)
			counter_count_rows(target->counter, rows);
	}
	else
		statement_rows_count_later(target->counter, RelationGetRelid(trigdata->tg_relation));
	return PointerGetDatum(NULL);
}
