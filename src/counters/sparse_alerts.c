/*
 * sparse_alerts.c
 *		create_sparse_alert, and the step of the sparse vector alerts: a NOTIFY
 *		when the count of a counter's last window_steps steps, which is not
 *		released, is above a threshold.
 *
 * The count is exact, so the answer is paid for: create_sparse_alert charges
 * its ledger epsilon once, for up to max_positives answers above the
 * threshold (Dwork and Roth's Sparse, src/core/sparse_vector.c), and the
 * alert stops after the last.  The step worker asks each alert once a step,
 * with the step's exact increment (the counts the step consumed), and stores
 * the state (the threshold's noise, the window's increments) in the step's
 * transaction: a noise that could have influenced a notification is never
 * drawn again, and a step taken again after a crash asks again with fresh
 * query noise what nobody heard.  A below answer sends nothing; silence is
 * part of what the epsilon pays for.
 *
 * Only the counter's owner (or a superuser) may create one: it spends
 * budget on the counter's exact counts, as the owner did by creating the
 * counter.  The sensitivity of each query is the counter's, as recorded
 * when it was created: a unit's events change the sum of any of its steps
 * by at most that.
 *
 * Over a protected source the count is what the step counted, each
 * person's rows bounded by max_rows (unit_log_rows), and the counter's
 * sensitivity is the bound (max_rows).  The creator must also be granted
 * the source now (a revoked grant spends nothing more of its budget), and
 * the alert is charged where the source's releases are: to the caller's
 * ledger and to the source's (ledger_charge_source).  A source whose budget
 * is held per block is refused (0A000): an alert answers at steps whose
 * blocks nobody has paid yet.  On a counter over a dimension an alert
 * watches one declared key (alert_key_arg, as create_alert does), and its
 * query is that key's bounded rows over the window (counter_keys_taken): a
 * person's rows in one key are at most max_rows, so the counter's
 * sensitivity bounds the key's too.  The window's counts live only in the
 * state table, which only the extension's owner reads, and no payload,
 * message or plan shows them.
 *
 * An alert records where its state lives, as a counter does
 * (counter_place_here): a copy found elsewhere (pg_upgrade; pg_dump leaves
 * the table out) would answer again with the noise the original draws from,
 * unpaid, so it is dropped at its counter's next step, before any question.
 *
 * IDENTIFICATION
 *	  src/counters/sparse_alerts.c
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "common/owner_spi.h"
#include "common/random.h"
#include "core/accounting.h"
#include "core/mechanism.h"
#include "core/sparse_vector.h"
#include "counters/alert_args.h"
#include "counters/counter.h"
#include "counters/sparse_alerts.h"
#include "ledger/ledger.h"
#include "sources/source.h"

/* A non-null argument of create_sparse_alert, or 22004. */
static void
require_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
}

/*
 * threshold, window_steps, epsilon and max_positives, checked (22004 null,
 * 22023 out of range); the sensitivity comes from the counter.
 */
static void
sparse_params_from_call(FunctionCallInfo fcinfo, cc_svt_params *params)
{
	require_arg(fcinfo, 1, "threshold");
	require_arg(fcinfo, 2, "window_steps");
	require_arg(fcinfo, 3, "epsilon");
	require_arg(fcinfo, 4, "max_positives");
	memset(params, 0, sizeof(*params));
	params->threshold = PG_GETARG_INT64(1);
	params->window = PG_GETARG_INT32(2);
	params->max_positives = PG_GETARG_INT32(4);
	if (params->window < 1 || params->window > CC_SVT_MAX_WINDOW)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window_steps must be between 1 and %d", CC_SVT_MAX_WINDOW)));
	if (params->max_positives < 1 || params->max_positives > CC_SVT_MAX_POSITIVES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_positives must be between 1 and %d", CC_SVT_MAX_POSITIVES)));
	if (cc_epsilon_units(PG_GETARG_FLOAT8(3), &params->epsilon_units) != CC_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon must be a finite number in the range a ledger charges")));
}

/* The counter a sparse vector alert is created on, in the caller's memory. */
typedef struct AlertTarget
{
	int64		id;
	int64		sensitivity;	/* as the counter recorded it */
	char	   *source;			/* the protected source it counts, or NULL */
	char	   *key;			/* the key watched, over a dimension; or NULL */
} AlertTarget;

/*
 * The counter named, which the caller must own (42704 if there is none,
 * 42501 if another role owns it), and the key argument (argno) checked as
 * create_alert checks it.  Owner scope; the strings in outer.
 */
static void
owned_counter(FunctionCallInfo fcinfo, int argno, const char *name, Oid caller,
			  MemoryContext outer, AlertTarget *target)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	HeapTuple	row;
	TupleDesc	desc;
	bool		isnull;
	Datum		source;
	text	   *key;

	owner_select_existing(&plan,
						  "SELECT id, owner, sensitivity, source FROM contcount.counter "
						  "WHERE name OPERATOR(pg_catalog.=) $1",
						  1, types, values, "counter", name);
	row = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	if (DatumGetObjectId(SPI_getbinval(row, desc, 2, &isnull)) != caller && !superuser_arg(caller))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be the owner of counter \"%s\"", name),
				 errdetail("A sparse vector alert spends budget on the counter's exact counts.")));
	target->id = DatumGetInt64(SPI_getbinval(row, desc, 1, &isnull));
	target->sensitivity = DatumGetInt64(SPI_getbinval(row, desc, 3, &isnull));
	source = SPI_getbinval(row, desc, 4, &isnull);
	target->source = isnull ? NULL : MemoryContextStrdup(outer, TextDatumGetCString(source));
	key = alert_key_arg(fcinfo, argno, name, target->id);
	target->key = key == NULL ? NULL : MemoryContextStrdup(outer, text_to_cstring(key));
}

/*
 * The ledger of the source a counter (named counter) counts, which the
 * caller must be granted now (42501 otherwise), and whose budget must not be
 * held per block (0A000).
 */
static char *
paying_source(const char *counter, const char *source)
{
	SourceBounds bounds;

	(void) source_for_preview(source, NULL, false, &bounds);
	if (bounds.blocks.length > 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("counter \"%s\" counts protected source \"%s\", whose budget is held per block, "
						"which a sparse vector alert cannot pay", counter, source)));
	return bounds.ledger;
}

/* The new alert's row, with its state and first threshold noise: its id. */
static int64
insert_sparse_alert(const AlertTarget *target, const cc_svt_params *params, double epsilon,
					const char *channel, Oid owner)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[12] = {INT8OID, INT8OID, INT4OID, FLOAT8OID, INT4OID, TEXTOID, OIDOID,
	BYTEAOID, INT8OID, OIDOID, OIDOID, TEXTOID};
	Datum		values[12];
	char		nulls[12] = "           ";
	size_t		len = cc_svt_bytes(params->window);
	bytea	   *state = palloc(VARHDRSZ + len);
	bool		isnull;
	CounterPlace here;

	if (!counter_place_here(&here))
		elog(ERROR, "contcount.counter has no place columns");
	values[8] = Int64GetDatum(here.system);
	values[9] = ObjectIdGetDatum(here.database);
	values[10] = ObjectIdGetDatum(here.table);
	cc_svt_start((cc_svt *) VARDATA(state), params, strong_rng());
	SET_VARSIZE(state, VARHDRSZ + len);
	values[0] = Int64GetDatum(target->id);
	values[1] = Int64GetDatum(params->threshold);
	values[2] = Int32GetDatum(params->window);
	values[3] = Float8GetDatum(epsilon);
	values[4] = Int32GetDatum(params->max_positives);
	values[5] = CStringGetTextDatum(channel);
	values[6] = ObjectIdGetDatum(owner);
	values[7] = PointerGetDatum(state);
	values[11] = target->key ? CStringGetTextDatum(target->key) : (Datum) 0;
	nulls[11] = target->key ? ' ' : 'n';
	owner_run(&plan,
			  "INSERT INTO contcount.counter_sparse_alert (counter_id, threshold, window_steps, "
			  "epsilon, max_positives, channel, owner, state, place_system, place_database, "
			  "place_table, key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
			  "RETURNING id",
			  12, types, values, nulls, SPI_OK_INSERT_RETURNING);
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * create_sparse_alert(counter, threshold, window_steps, epsilon,
 * max_positives, channel, ledger, key): the new alert's id, once its ledger
 * (or contcount.ledger's) is charged epsilon, as the caller, in this
 * transaction, and over a source the source's ledger too: a refusal takes
 * the alert back.  Every check comes before the charge.
 */
PG_FUNCTION_INFO_V1(contcount_create_sparse_alert);
Datum
contcount_create_sparse_alert(PG_FUNCTION_ARGS)
{
	char	   *counter = alert_text_arg(fcinfo, 0, "counter");
	char	   *channel = alert_channel_arg(fcinfo, 5);
	char	   *ledger = PG_ARGISNULL(6) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(6));
	MemoryContext outer = CurrentMemoryContext;
	char	   *source_ledger = NULL;
	cc_svt_params params;
	AlertTarget target;
	OwnerScope	scope;
	int64		id;

	sparse_params_from_call(fcinfo, &params);
	owner_begin(&scope);
	owned_counter(fcinfo, 7, counter, scope.caller, outer, &target);
	owner_end(&scope);
	if (target.source != NULL)
		source_ledger = paying_source(counter, target.source);
	params.sensitivity = target.sensitivity;
	if (!cc_svt_params_ok(&params))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the noise of this alert would be too large"),
				 errdetail("Its query noise has scale 4 * max_positives * sensitivity / epsilon, "
						   "which may be at most %g.", CC_MAX_SCALE)));
	owner_begin(&scope);
	alert_require_room(scope.caller);
	id = insert_sparse_alert(&target, &params, PG_GETARG_FLOAT8(3), channel, scope.caller);
	owner_end(&scope);
	if (source_ledger != NULL)
		ledger_charge_source(ledger, source_ledger, cc_pure_cost(params.epsilon_units),
							 "create_sparse_alert");
	else
		ledger_charge(ledger, cc_pure_cost(params.epsilon_units), "create_sparse_alert");
	PG_RETURN_INT64(id);
}

bool
sparse_alerts_exist(int64 counter)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(counter)};

	if (!OidIsValid(get_relname_relid("counter_sparse_alert", get_namespace_oid("contcount", true))))
		return false;
	if (SPI_execute_with_args("SELECT 1 FROM contcount.counter_sparse_alert "
							  "WHERE counter_id OPERATOR(pg_catalog.=) $1 "
							  "AND positives OPERATOR(pg_catalog.<) max_positives LIMIT 1",
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the sparse vector alerts of counter " INT64_FORMAT, counter);
	return SPI_processed > 0;
}

/*
 * Store an alert's state after its step, and NOTIFY its channel if it
 * answered above: the payload names the alert, the counter, its key (or
 * null), the step, the window and the threshold, and how many positives it
 * has answered, but no count.
 */
static void
store_answer(int64 id, const cc_svt *svt, bool above, int64 step)
{
	Oid			types[5] = {INT8OID, BYTEAOID, INT4OID, BOOLOID, INT8OID};
	Datum		args[5];
	size_t		len = cc_svt_bytes(svt->params.window);
	bytea	   *state = palloc(VARHDRSZ + len);

	memcpy(VARDATA(state), svt, len);
	SET_VARSIZE(state, VARHDRSZ + len);
	args[0] = Int64GetDatum(id);
	args[1] = PointerGetDatum(state);
	args[2] = Int32GetDatum(svt->positives);
	args[3] = BoolGetDatum(above);
	args[4] = Int64GetDatum(step);
	if (SPI_execute_with_args("WITH u AS (UPDATE contcount.counter_sparse_alert s "
							  "SET state = $2, positives = $3, "
							  "fired_step = CASE WHEN $4 THEN $5 ELSE s.fired_step END "
							  "FROM contcount.counter c WHERE c.id OPERATOR(pg_catalog.=) s.counter_id "
							  "AND s.id OPERATOR(pg_catalog.=) $1 "
							  "RETURNING s.id, s.channel, c.name, s.key, s.window_steps, s.threshold, "
							  "s.positives, s.max_positives) "
							  "SELECT pg_catalog.pg_notify(u.channel, pg_catalog.json_build_object("
							  "'alert', u.id, 'counter', u.name, 'key', u.key, "
							  "'kind', 'sparse_vector', 'step', $5, 'window_steps', u.window_steps, "
							  "'threshold', u.threshold, 'positives', u.positives, "
							  "'max_positives', u.max_positives)::pg_catalog.text) FROM u WHERE $4",
							  5, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not store the sparse vector alert " INT64_FORMAT, id);
}

/* A live sparse vector alert, as a step asks it. */
typedef struct SparseAlert
{
	int64		id;
	char	   *key;			/* the key it watches, or NULL */
	cc_svt	   *state;
} SparseAlert;

/* The counter's live sparse vector alerts, copied out of SPI: how many. */
static int
read_sparse_alerts(int64 counter, SparseAlert **alerts)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(counter)};
	bool		isnull;
	int			n;

	if (SPI_execute_with_args("SELECT id, state, key FROM contcount.counter_sparse_alert "
							  "WHERE counter_id OPERATOR(pg_catalog.=) $1 "
							  "AND positives OPERATOR(pg_catalog.<) max_positives ORDER BY id",
							  1, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the sparse vector alerts of counter " INT64_FORMAT, counter);
	n = (int) SPI_processed;
	*alerts = palloc(sizeof(SparseAlert) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		SparseAlert *alert = &(*alerts)[i];
		bytea	   *stored = DatumGetByteaPCopy(SPI_getbinval(row, SPI_tuptable->tupdesc, 2,
															  &isnull));

		alert->id = DatumGetInt64(SPI_getbinval(row, SPI_tuptable->tupdesc, 1, &isnull));
		alert->key = SPI_getvalue(row, SPI_tuptable->tupdesc, 3);
		if (!cc_svt_valid(VARDATA(stored), VARSIZE(stored) - VARHDRSZ))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("the state of sparse vector alert " INT64_FORMAT " is damaged",
							alert->id)));
		/* aligned for the core: palloc'd, and the header's 4 bytes copied away */
		alert->state = palloc(VARSIZE(stored) - VARHDRSZ);
		memcpy(alert->state, VARDATA(stored), VARSIZE(stored) - VARHDRSZ);
	}
	return n;
}

/* Drop the counter's sparse vector alerts whose state was copied here. */
static void
drop_copies(int64 counter)
{
	Oid			types[4] = {INT8OID, INT8OID, OIDOID, OIDOID};
	Datum		args[4];
	CounterPlace here;

	if (!counter_place_here(&here))
		elog(ERROR, "contcount.counter has no place columns");
	args[0] = Int64GetDatum(counter);
	args[1] = Int64GetDatum(here.system);
	args[2] = ObjectIdGetDatum(here.database);
	args[3] = ObjectIdGetDatum(here.table);
	if (SPI_execute_with_args("DELETE FROM contcount.counter_sparse_alert "
							  "WHERE counter_id OPERATOR(pg_catalog.=) $1 "
							  "AND (place_system OPERATOR(pg_catalog.<>) $2 "
							  "OR place_database OPERATOR(pg_catalog.<>) $3 "
							  "OR place_table OPERATOR(pg_catalog.<>) $4)",
							  4, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not drop the copied sparse vector alerts of counter " INT64_FORMAT,
			 counter);
	if (SPI_processed > 0)
		ereport(LOG,
				(errmsg("dropped " UINT64_FORMAT " sparse vector alerts of counter " INT64_FORMAT
						" whose state was copied here", SPI_processed, counter),
				 errdetail("A copy would answer again with the noise its original drew, unpaid.")));
}

void
sparse_alerts_step(int64 counter, int64 step, int64 increment, const KeyTaken *keyed)
{
	SparseAlert *alerts;
	int			n;

	drop_copies(counter);
	n = read_sparse_alerts(counter, &alerts);

	for (int i = 0; i < n; i++)
	{
		/* an alert on a key asks about its key's rows, every other the counter's */
		int64		rows = alerts[i].key == NULL ? increment :
			keyed == NULL ? 0 : counter_keys_taken(keyed, alerts[i].key);
		cc_svt_answer answer = cc_svt_step(alerts[i].state, rows, strong_rng());

		if (answer == CC_SVT_OVERFLOW)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("the window of sparse vector alert " INT64_FORMAT " overflows",
							alerts[i].id)));
		store_answer(alerts[i].id, alerts[i].state, answer == CC_SVT_ABOVE, step);
	}
}
