/*
 * alerts.c
 *		Alerts over counters' released values: create_alert, drop_alert, the
 *		view contcount.alerts, and the NOTIFY a step sends.
 *
 * An alert is post-processing of released values, so it charges nothing,
 * and it must tell no one anything that the released values do not: only a
 * role that may read a counter's releases (current(), history()) may create
 * one, an alert whose creator may no longer read them stays silent, and the
 * value it sends is the released value as current() shows it (a monotone
 * counter's running maximum), read back from the release the step just
 * stored.  Whether it fires depends on released values only.  On a counter
 * over a dimension an alert watches one declared key, whose releases
 * (counter_key_release, written by counter_keys.c in the same step) it
 * reads instead, and its payload names that key.
 *
 * An alert fires at a step whose released value is at or above its
 * threshold, if it never fired before or if the release of the step before
 * was below the threshold: once when the count first reaches it after the
 * alert is created, then at each upward crossing.  The NOTIFY is sent in the
 * step's own transaction, so a client hears only of committed releases, and
 * the step records the crossing with the alert (fired_step, fired_value).
 * Anyone connected to the database may LISTEN on a channel: the creator of
 * an alert publishes the values it sends to them all (docs/alerts.md).
 *
 * IDENTIFICATION
 *	  src/counters/alerts.c
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/async.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/resowner.h"

#include "common/owner_spi.h"
#include "counters/alert_args.h"
#include "counters/alerts.h"
#include "counters/counter.h"
#include "counters/sparse_alerts.h"

/*
 * Past this use of the NOTIFY queue (a listener that reads nothing keeps it
 * full), a step sends no notification rather than fail at its commit.
 */
#define QUEUE_USAGE_LIMIT 0.5

/* The threshold: a finite number (22004 if null, 22023 if not finite). */
static Datum
threshold_arg(FunctionCallInfo fcinfo, int argno)
{
	Numeric		threshold;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("threshold must not be null")));
	threshold = PG_GETARG_NUMERIC(argno);
	if (numeric_is_nan(threshold) || numeric_is_inf(threshold))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("threshold must be a finite number")));
	return NumericGetDatum(threshold);
}

/*
 * The id of the counter named, which the caller must be allowed to read
 * (42704 if there is none, 42501 if it may not).  Owner scope.
 */
static int64
readable_counter(const char *name, Oid caller)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[2] = {TEXTOID, OIDOID};
	Datum		values[2] = {CStringGetTextDatum(name), ObjectIdGetDatum(caller)};
	bool		isnull;

	owner_select_existing(&plan,
						  "SELECT id, contcount.counter_granted(id, $2) FROM contcount.counter "
						  "WHERE name OPERATOR(pg_catalog.=) $1",
						  2, types, values, "counter", name);
	if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull)))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for counter \"%s\"", name),
				 errdetail("An alert may be set only on a counter whose releases the role may read."),
				 errhint("Its owner grants it with contcount.grant_counter().")));
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * create_alert(counter, threshold, channel, key): the new alert's id.  A
 * counter over a dimension takes one of its keys, one without takes none.
 */
PG_FUNCTION_INFO_V1(contcount_create_alert);
Datum
contcount_create_alert(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *counter = alert_text_arg(fcinfo, 0, "counter");
	Datum		threshold = threshold_arg(fcinfo, 1);
	char	   *channel = alert_channel_arg(fcinfo, 2);
	OwnerScope	scope;
	Oid			types[5] = {INT8OID, NUMERICOID, TEXTOID, OIDOID, TEXTOID};
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	bool		isnull;
	text	   *key;

	owner_begin(&scope);
	values[0] = Int64GetDatum(readable_counter(counter, scope.caller));
	key = alert_key_arg(fcinfo, 3, counter, DatumGetInt64(values[0]));
	values[4] = PointerGetDatum(key);
	if (key == NULL)
		nulls[4] = 'n';
	alert_require_room(scope.caller);
	values[1] = threshold;
	values[2] = CStringGetTextDatum(channel);
	values[3] = ObjectIdGetDatum(scope.caller);
	owner_run(&plan,
			  "INSERT INTO contcount.counter_alert (counter_id, threshold, channel, owner, key) "
			  "VALUES ($1, $2, $3, $4, $5) RETURNING id",
			  5, types, values, nulls, SPI_OK_INSERT_RETURNING);
	values[0] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	owner_end(&scope);
	PG_RETURN_DATUM(values[0]);
}

/*
 * drop_alert(id): by a role with the rights of the alert's creator (42501
 * otherwise), 42704 if there is no such alert.
 */
PG_FUNCTION_INFO_V1(contcount_drop_alert);
Datum
contcount_drop_alert(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr read_plan = NULL;
	static SPIPlanPtr drop_plan = NULL;
	Oid			types[1] = {INT8OID};
	Datum		values[1];
	OwnerScope	scope;
	char		name[32];
	bool		isnull;
	Oid			owner;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("id must not be null")));
	values[0] = PG_GETARG_DATUM(0);
	snprintf(name, sizeof(name), INT64_FORMAT, PG_GETARG_INT64(0));
	owner_begin(&scope);
	owner_select_existing(&read_plan,
						  "SELECT owner FROM contcount.counter_alert WHERE id OPERATOR(pg_catalog.=) $1 "
						  "UNION ALL SELECT owner FROM contcount.counter_sparse_alert "
						  "WHERE id OPERATOR(pg_catalog.=) $1",
						  1, types, values, "alert", name);
	owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (!has_privs_of_role(scope.caller, owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be the creator of alert %s", name)));
	owner_run(&drop_plan,
			  "WITH r AS (DELETE FROM contcount.counter_alert WHERE id OPERATOR(pg_catalog.=) $1) "
			  "DELETE FROM contcount.counter_sparse_alert WHERE id OPERATOR(pg_catalog.=) $1",
			  1, types, values, NULL, SPI_OK_DELETE);
	owner_end(&scope);
	PG_RETURN_VOID();
}

/*
 * The rows of contcount.alerts: the alerts of both kinds of the roles whose
 * rights the caller has.
 */
PG_FUNCTION_INFO_V1(contcount_alert_rows);
Datum
contcount_alert_rows(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			types[1] = {OIDOID};
	Datum		values[1];
	OwnerScope	scope;

	InitMaterializedSRF(fcinfo, 0);
	owner_begin(&scope);
	values[0] = ObjectIdGetDatum(scope.caller);
	owner_run(&plan,
			  "SELECT a.id, 'released', c.name, a.key, a.threshold, a.channel, "
			  "a.owner::pg_catalog.regrole, a.created_at, a.fired_step, a.fired_value, "
			  "NULL::pg_catalog.int4, NULL::pg_catalog.float8, NULL::pg_catalog.int4, "
			  "NULL::pg_catalog.int4 FROM contcount.counter_alert a "
			  "JOIN contcount.counter c ON c.id OPERATOR(pg_catalog.=) a.counter_id "
			  "WHERE pg_catalog.pg_has_role($1, a.owner, 'USAGE') "
			  "UNION ALL SELECT s.id, 'sparse_vector', c.name, s.key, s.threshold::pg_catalog.numeric, "
			  "s.channel, s.owner::pg_catalog.regrole, s.created_at, s.fired_step, NULL, "
			  "s.window_steps, s.epsilon, s.max_positives, s.positives "
			  "FROM contcount.counter_sparse_alert s "
			  "JOIN contcount.counter c ON c.id OPERATOR(pg_catalog.=) s.counter_id "
			  "WHERE pg_catalog.pg_has_role($1, s.owner, 'USAGE') ORDER BY 1",
			  1, types, values, NULL, SPI_OK_SELECT);
	for (uint64 i = 0; i < SPI_processed; i++)
		tuplestore_puttuple(rsinfo->setResult, SPI_tuptable->vals[i]);
	owner_end(&scope);
	return (Datum) 0;
}

/* The creator of alert a still exists and may read counter $1. */
#define ALERT_OWNER_MAY_READ \
	"CASE WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_roles o " \
	"WHERE o.oid OPERATOR(pg_catalog.=) a.owner) " \
	"THEN contcount.counter_granted($1, a.owner) ELSE false END"

/* Record the crossings f of step $2 with their alerts, and NOTIFY each. */
#define ALERT_RECORD_AND_NOTIFY \
	"u AS (UPDATE contcount.counter_alert a SET fired_step = $2, fired_value = f.value " \
	"FROM f WHERE a.id OPERATOR(pg_catalog.=) f.id) " \
	"SELECT pg_catalog.pg_notify(f.channel, pg_catalog.json_build_object('alert', f.id, " \
	"'counter', f.name, 'key', f.key, 'step', $2, 'value', f.value, " \
	"'threshold', f.threshold)::pg_catalog.text) FROM f ORDER BY f.id"

/*
 * The released values of step and of the step before, as current() shows
 * them (a monotone counter's the running maximum, clamped at 0: the rule of
 * counter.c's releases), the alerts without a key they fire, each recorded,
 * and their NOTIFY.  An alert whose creator is gone or may no longer read
 * the counter stays silent.
 */
#define FIRE_ALERTS \
	"WITH v AS (SELECT r.t, CASE WHEN c.monotone " \
	"THEN GREATEST(0, pg_catalog.max(r.noisy_count) OVER w) ELSE r.noisy_count END AS value " \
	"FROM contcount.counter_release r " \
	"JOIN contcount.counter c ON c.id OPERATOR(pg_catalog.=) r.counter_id " \
	"WHERE r.counter_id OPERATOR(pg_catalog.=) $1 AND r.t OPERATOR(pg_catalog.<=) $2 " \
	"AND (c.monotone OR r.t OPERATOR(pg_catalog.>=) ($2 OPERATOR(pg_catalog.-) 1)) " \
	"WINDOW w AS (ORDER BY r.t)), " \
	"f AS (SELECT a.id, a.channel, a.threshold, c.name, a.key, v.value " \
	"FROM contcount.counter_alert a " \
	"JOIN contcount.counter c ON c.id OPERATOR(pg_catalog.=) a.counter_id " \
	"JOIN v ON v.t OPERATOR(pg_catalog.=) $2 " \
	"WHERE a.counter_id OPERATOR(pg_catalog.=) $1 AND a.key IS NULL " \
	"AND v.value::pg_catalog.numeric OPERATOR(pg_catalog.>=) a.threshold " \
	"AND (a.fired_step IS NULL OR NOT EXISTS (SELECT 1 FROM v p " \
	"WHERE p.t OPERATOR(pg_catalog.=) ($2 OPERATOR(pg_catalog.-) 1) " \
	"AND p.value::pg_catalog.numeric OPERATOR(pg_catalog.>=) a.threshold)) " \
	"AND " ALERT_OWNER_MAY_READ "), " ALERT_RECORD_AND_NOTIFY

/*
 * The same for the alerts on keys of a counter over a dimension: each
 * watches its key's releases (counter_key_release, never monotone), and a
 * key without a release at the step before (declared since) counts as
 * below there.
 */
#define FIRE_KEY_ALERTS \
	"WITH f AS (SELECT a.id, a.channel, a.threshold, c.name, a.key, r.noisy_count AS value " \
	"FROM contcount.counter_alert a " \
	"JOIN contcount.counter c ON c.id OPERATOR(pg_catalog.=) a.counter_id " \
	"JOIN contcount.counter_key_release r ON r.counter_id OPERATOR(pg_catalog.=) $1 " \
	"AND r.key OPERATOR(pg_catalog.=) a.key AND r.t OPERATOR(pg_catalog.=) $2 " \
	"WHERE a.counter_id OPERATOR(pg_catalog.=) $1 " \
	"AND r.noisy_count::pg_catalog.numeric OPERATOR(pg_catalog.>=) a.threshold " \
	"AND (a.fired_step IS NULL OR NOT EXISTS (SELECT 1 FROM contcount.counter_key_release p " \
	"WHERE p.counter_id OPERATOR(pg_catalog.=) $1 AND p.key OPERATOR(pg_catalog.=) a.key " \
	"AND p.t OPERATOR(pg_catalog.=) ($2 OPERATOR(pg_catalog.-) 1) " \
	"AND p.noisy_count::pg_catalog.numeric OPERATOR(pg_catalog.>=) a.threshold)) " \
	"AND " ALERT_OWNER_MAY_READ "), " ALERT_RECORD_AND_NOTIFY

/*
 * Has the counter any alert?  Most have none, and a database not yet
 * updated to 0.6 has no alerts at all.
 */
static bool
has_alerts(int64 counter)
{
	Oid			namespace = get_namespace_oid("contcount", true);
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(counter)};

	if (!OidIsValid(get_relname_relid("counter_alert", namespace)))
		return false;
	if (SPI_execute_with_args("SELECT 1 FROM contcount.counter_alert "
							  "WHERE counter_id OPERATOR(pg_catalog.=) $1 LIMIT 1",
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the alerts of counter " INT64_FORMAT, counter);
	return SPI_processed > 0;
}

/*
 * Send the notifications of the counter's alerts that step fires: those on
 * its keys if it is keyed, else those on its own releases.
 */
static void
notify_crossings(int64 counter, bool keyed, int64 step)
{
	Oid			types[2] = {INT8OID, INT8OID};
	Datum		args[2] = {Int64GetDatum(counter), Int64GetDatum(step)};

	if (SPI_execute_with_args(keyed ? FIRE_KEY_ALERTS : FIRE_ALERTS, 2, types, args, NULL, false,
							  0) != SPI_OK_SELECT)
		elog(ERROR, "could not fire the alerts of counter " INT64_FORMAT, counter);
}

/*
 * Refuse to NOTIFY (an error) when the queue is too full: better than an
 * error at the step's commit.
 */
static void
require_queue_room(void)
{
	if (DatumGetFloat8(DirectFunctionCall1(pg_notification_queue_usage, (Datum) 0)) >
		QUEUE_USAGE_LIMIT)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the NOTIFY queue is more than %.0f%% full", QUEUE_USAGE_LIMIT * 100),
				 errhint("A session that listens and reads nothing keeps it full.")));
}

/*
 * Both kinds of alert, in a subtransaction: an error loses this step's
 * notifications (and the sparse vector alerts' query of this step, as if it
 * had not been asked), never the step.
 */
void
alerts_fire(int64 counter, const KeyTaken *keyed, int64 step, int64 increment)
{
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner resowner = CurrentResourceOwner;
	bool		released = has_alerts(counter);
	bool		sparse = sparse_alerts_exist(counter);

	if (!released && !sparse)
		return;
	BeginInternalSubTransaction(NULL);
	PG_TRY();
	{
		require_queue_room();
		if (released)
			notify_crossings(counter, keyed != NULL, step);
		if (sparse)
			sparse_alerts_step(counter, step, increment, keyed);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(context);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		ereport(WARNING,
				(errcode(edata->sqlerrcode),
				 errmsg("the alerts of step " INT64_FORMAT " of counter " INT64_FORMAT
						" send nothing: %s", step, counter, edata->message),
				 edata->hint ? errhint("%s", edata->hint) : 0));
		FreeErrorData(edata);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(context);
	CurrentResourceOwner = resowner;
}
