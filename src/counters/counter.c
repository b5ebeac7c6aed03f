/*
 * counter.c
 *		Named counters: the SQL functions that create, drop, grant, tick and
 *		read them.
 *
 * A counter's definition, mechanism state, releases and pending counts live
 * in tables (contcount.counter, counter_release, counter_delta,
 * counter_grant) that only the extension's owner reads; the functions here
 * check the caller's rights and work as the owner.  Creating a counter
 * charges its ledger once for the whole continual release, and records
 * where its state lives (counter_place_here) and which ledger paid: a copy
 * of the tables elsewhere pays that ledger again before it steps.  Only
 * the step worker (counter_worker.c) closes steps and writes releases.  A
 * counter is fed by tables whose owner has the rights of the counter's
 * owner, or of a role the owner allowed to feed it (counter_grant.feed): no
 * one else can push numbers into it.
 *
 * IDENTIFICATION
 *	  src/counters/counter.c
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "common/args.h"
#include "common/owner_spi.h"
#include "common/settings.h"
#include "access/table.h"
#include "counters/counter.h"
#include "counters/counter_attach.h"
#include "counters/counter_keys.h"
#include "counters/counter_shmem.h"
#include "counters/shard_counters.h"
#include "ledger/ledger.h"
#include "releases/spec.h"
#include "sources/feed_cache.h"
#include "sources/source.h"
#include "sources/source_blocks.h"
#include "sources/unit_log.h"

/* How long tick() waits for the worker. */
#define TICK_TIMEOUT_MS 30000

/* A counter's row, from 0.3 on (with its place); from 0.5 with its rho. */
#define INSERT_PLACED(extra_column, extra_value) \
	"INSERT INTO contcount.counter (id, name, mechanism, epsilon, horizon, block, " \
	"sensitivity, beta, ledger, step, state, owner, started_at, " \
	"place_system, place_database, place_table, charged_ledger" extra_column ") " \
	"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, pg_catalog.now(), " \
	"$13, $14, $15, $16" extra_value ") ON CONFLICT (name) DO NOTHING"

typedef struct CounterRow
{
	int64		id;
	Oid			owner;
	bool		finished;
} CounterRow;

static bool
lookup_counter(const char *name, CounterRow *row)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	bool		isnull;

	owner_run(&plan,
			  "SELECT id, owner, finished FROM contcount.counter WHERE name OPERATOR(pg_catalog.=) $1",
			  1, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	row->id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	row->owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	row->finished = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	return true;
}

static CounterRow
require_counter(const char *name)
{
	CounterRow	row;

	if (!lookup_counter(name, &row))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("counter \"%s\" does not exist", name)));
	return row;
}

/* May the role read the counter (owner, superuser, or granted)? */
static bool
may_read(int64 counter, Oid role)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[2] = {INT8OID, OIDOID};
	Datum		values[2] = {Int64GetDatum(counter), ObjectIdGetDatum(role)};
	bool		isnull;

	owner_run(&plan, "SELECT contcount.counter_granted($1, $2)", 2, types, values, NULL,
			  SPI_OK_SELECT);
	return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/* May tables owned by role feed the counter, by a grant?  Owner scope. */
static bool
may_feed(int64 counter, Oid role)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[2] = {INT8OID, OIDOID};
	Datum		values[2] = {Int64GetDatum(counter), ObjectIdGetDatum(role)};
	bool		isnull;

	/* a database still at 0.1 (until ALTER EXTENSION UPDATE) has no feed grants */
	if (!contcount_has_column("counter_grant", "feed"))
		return false;
	owner_run(&plan,
			  "SELECT EXISTS (SELECT 1 FROM contcount.counter_grant g "
			  "JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) g.role_id "
			  "WHERE g.counter_id OPERATOR(pg_catalog.=) $1 AND g.feed "
			  "AND pg_catalog.pg_has_role($2, g.role_id, 'USAGE'))",
			  2, types, values, NULL, SPI_OK_SELECT);
	return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

static void
require_owner(const OwnerScope *scope, const char *name, const CounterRow *row)
{
	if (row->owner != scope->caller && !superuser_arg(scope->caller))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be the owner of counter \"%s\"", name)));
}

static char *
name_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *name;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("counter name must not be null")));
	name = TextDatumGetCString(PG_GETARG_DATUM(argno));
	if (name[0] == '\0' || strlen(name) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("counter name must have 1 to %d bytes", NAMEDATALEN - 1)));
	return name;
}

/*
 * Is this the step worker's database?  Asked once: contcount.database is set
 * at server start, and the database a backend is connected to cannot be
 * renamed.  Needs the shared state (contcount.database is defined with it).
 */
static bool
in_counter_database(void)
{
	static int	answer = -1;

	if (answer < 0)
		answer = strcmp(get_database_name(MyDatabaseId), contcount_database) == 0;
	return answer;
}

/* Counters exist only in the step worker's database. */
static void
require_counter_database(void)
{
	counter_shared();
	if (!in_counter_database())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("counters live in database \"%s\"", contcount_database),
				 errhint("The setting contcount.database names the database whose counters the step worker closes.")));
}

/*
 * Tables owned by feeder may feed the counter if feeder has the rights of
 * its owner or of a role the owner allowed to feed it.  Owner scope.
 */
static bool
may_feed_counter(const CounterRow *row, Oid feeder)
{
	return has_privs_of_role(feeder, row->owner) || may_feed(row->id, feeder);
}

/* The same, or 42501: for attaching a counter, which its caller asks for. */
static void
require_feeder(const char *name, const CounterRow *row, Oid feeder, const char *table)
{
	if (!may_feed_counter(row, feeder))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("table \"%s\" may not feed counter \"%s\"", table, name),
				 errdetail("A counter counts the inserts into tables owned by its owner, or by roles it allowed to feed it."),
				 errhint("The counter's owner allows a role with contcount.grant_counter(counter, role, feed => true).")));
}

/* Has this session warned of the trigger feeding counter name?  From now on it has. */
static bool
warned_before(const char *name)
{
	static List *warned = NIL;
	ListCell   *lc;
	MemoryContext old;

	foreach(lc, warned)
	{
		if (strcmp(lfirst(lc), name) == 0)
			return true;
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	warned = lappend(warned, pstrdup(name));
	MemoryContextSwitchTo(old);
	return false;
}

/*
 * A trigger whose counter is gone, or whose table may not feed it (a name
 * taken again by another role, say), counts nothing and lets the insert
 * through: the application must not fail for a counter, and the counter is
 * not fed by a table that may not feed it.  It says so once a session for
 * each counter name, with how to remove the trigger.
 */
static void
warn_unfed(const char *name, Relation table, const char *trigger, bool gone)
{
	char	   *drop;

	if (warned_before(name))
		return;
	drop = psprintf("DROP TRIGGER %s ON %s", quote_identifier(trigger),
					quote_qualified_identifier(get_namespace_name(RelationGetNamespace(table)),
											   RelationGetRelationName(table)));
	if (gone)
		ereport(WARNING,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("trigger \"%s\" on table \"%s\" feeds counter \"%s\", which does not exist",
						trigger, RelationGetRelationName(table), name),
				 errdetail("The trigger counts nothing and lets the inserts through; this session says so once."),
				 errhint("The table's owner removes it with %s.", drop)));
	else
		ereport(WARNING,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("table \"%s\" may not feed counter \"%s\"", RelationGetRelationName(table), name),
				 errdetail("Trigger \"%s\" counts nothing and lets the inserts through; this session says so once.",
						   trigger),
				 errhint("The counter's owner allows the table's owner with contcount.grant_counter(counter, role, feed => true), "
						 "or the table's owner removes the trigger with %s.", drop)));
}

int64
counter_to_feed(const char *name, Relation table, const char *trigger, bool *finished)
{
	Oid			feeder = table->rd_rel->relowner;
	OwnerScope	scope;
	CounterRow	row;
	bool		found;
	bool		fed;

	/* the slots hold the counters of the worker's database only */
	if (counter_shmem_attached() && in_counter_database() &&
		counter_shmem_find(name, &row.id, &row.owner, finished) &&
		has_privs_of_role(feeder, row.owner))
		return row.id;

	/*
	 * Ask the tables: the counter may be new (created in this transaction,
	 * say), the feeder allowed by a grant, or the counts may have to wait in
	 * counter_delta for a server with the worker.
	 */
	owner_begin(&scope);
	found = lookup_counter(name, &row);
	fed = found && may_feed_counter(&row, feeder);
	owner_end(&scope);
	if (!fed)
	{
		warn_unfed(name, table, trigger, !found);
		*finished = true;
		return 0;
	}
	*finished = row.finished;
	return row.id;
}

/*
 * The table's oid belongs to the place because a dump restored into the
 * database it came from (pg_restore --clean) takes a counter back to an
 * earlier step in the same cluster and database: only the table, made anew
 * by the restore, tells it apart.
 */
bool
counter_place_here(CounterPlace *place)
{
	Oid			table = get_relname_relid("counter", get_namespace_oid("contcount", false));

	/* a database still at 0.2 (until ALTER EXTENSION UPDATE) has no places */
	if (!OidIsValid(table) || get_attnum(table, "place_system") == InvalidAttrNumber)
		return false;
	place->system = (int64) GetSystemIdentifier();
	place->database = MyDatabaseId;
	place->table = table;
	return true;
}

/*
 * Refuse (22008) a step whose schedule, from now (the counter's started_at),
 * ends beyond the timestamps: the end of its last step, or for a counter
 * without a horizon its first.  The worker's clock could not say when such a
 * step is due.
 */
static void
check_schedule(int64 step, const cc_params *params)
{
	TimestampTz end;
	int64		last = params->has_horizon ? params->horizon : 1;

	if (!step_end(GetCurrentTransactionStartTimestamp(), last, step, &end))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("the steps of a counter must end within the range of timestamps"),
				 errdetail("Step " INT64_FORMAT " of %s would end after 294276 AD.", last,
						   cc_kind_name(params->kind)),
				 errhint("Take a shorter step, or a shorter horizon.")));
}

/*
 * Who holds the counters' room, as far as caller may see: a superuser, the
 * five roles that own most; any other role, its own count.  Owner scope,
 * with SPI's result of count_counters() at hand.
 */
static char *
counter_holders(Oid caller, int64 own)
{
	StringInfoData detail;

	if (!superuser_arg(caller))
		return psprintf("Role \"%s\" owns " INT64_FORMAT " of them, this one included.",
						GetUserNameFromId(caller, false), own);
	initStringInfo(&detail);
	appendStringInfoString(&detail, "This one included, owned by");
	for (uint64 r = 0; r < SPI_processed && r < 5; r++)
		appendStringInfo(&detail, "%s role %s (%s)", r > 0 ? "," : "",
						 SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1),
						 SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2));
	appendStringInfoString(&detail, SPI_processed > 5 ? ", and others." : ".");
	return detail.data;
}

/*
 * Room for the counter just inserted: the server's, contcount.max_counters,
 * and, for a role that is not a superuser, its share,
 * contcount.max_counters_per_role; else 53400, saying who holds the room.
 * Owner scope.
 */
static void
require_counter_room(Oid caller)
{
	int64		total = 0;
	int64		own = 0;

	if (SPI_execute("SELECT pg_catalog.quote_ident(COALESCE(r.rolname, c.owner::pg_catalog.text)), "
					"pg_catalog.count(*), c.owner "
					"FROM contcount.counter c LEFT JOIN pg_catalog.pg_roles r "
					"ON r.oid OPERATOR(pg_catalog.=) c.owner "
					"GROUP BY 1, 3 ORDER BY 2 DESC, 1", false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not count the counters");
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		int64		n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2, &isnull));

		total += n;
		if (DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 3, &isnull)) == caller)
			own = n;
	}
	if (total > contcount_max_counters)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("the server already holds contcount.max_counters = %d counters",
						contcount_max_counters),
				 errdetail("%s", counter_holders(caller, own)),
				 errhint("Drop a counter, or raise contcount.max_counters and restart the server.")));
	if (own > contcount_max_counters_per_role && !superuser_arg(caller))
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("role \"%s\" already owns contcount.max_counters_per_role = %d counters",
						GetUserNameFromId(caller, false), contcount_max_counters_per_role),
				 errdetail("It owns " INT64_FORMAT " counters.", own - 1),
				 errhint("Drop a counter it owns, or ask a superuser to raise contcount.max_counters_per_role.")));
}

/*
 * A counter over a protected source takes its sensitivity from the source's
 * max_rows (what one unit adds to the whole stream is the source's to say),
 * and a step over blocks pays the blocks it may count, at most all of them:
 * checked here, with the source's bounds read into bounds.
 */
static void
bound_by_source(const char *source, int64 step, SpecArgs *args, SourceBounds *bounds)
{
	if (args->field[SPEC_SENSITIVITY].isnull ||
		DatumGetInt64(args->field[SPEC_SENSITIVITY].value) != SPEC_DEFAULT_SENSITIVITY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a counter over a protected source takes its sensitivity from the source's max_rows")));
	source_for_counter(source, bounds);
	args->field[SPEC_SENSITIVITY].value = Int64GetDatum(bounds->max_rows);
	if (bounds->blocks.length > 0 && step / bounds->blocks.length + 2 > contcount_max_blocks)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a step of a counter touches at most contcount.max_blocks = %d blocks",
						contcount_max_blocks),
				 errhint("Take a shorter step.")));
}

/*
 * The shards of a source feed counters of all its rows or of a dimension's
 * keys (shard_counters.c), not per-block budgets: a counter over blocks
 * would count the coordinator's rows and miss the shards'.
 */
static void
refuse_sharded(const char *source, const SourceBounds *bounds)
{
	if (shard_counters_sharded(bounds->relid, bounds->unit))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a counter over sharded source \"%s\" has no blocks", source),
				 errhint("Its shards feed counters of all the source's rows, or of a dimension's keys.")));
}

/* A new counter's id: random, positive and never 0 (a free slot). */
static int64
new_counter_id(void)
{
	uint64		id;

	if (!pg_strong_random(&id, sizeof(id)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random counter id")));
	return (int64) (id >> 1) | 1;
}

/* The values of a new counter's row, in the order INSERT_PLACED takes them. */
typedef struct NewCounter
{
	Datum		values[17];
	char		nulls[17];
} NewCounter;

/* The counter's row from its parameters, with its state before any step. */
static void
fill_new_counter(NewCounter *row, const char *name, const SpecArgs *args,
				 const cc_params *params, Datum step)
{
	cc_state   *state = palloc(cc_state_size(params));
	bytea	   *blob;

	cc_state_init(state, params);
	blob = palloc(VARHDRSZ + cc_state_bytes(state));
	SET_VARSIZE(blob, VARHDRSZ + cc_state_bytes(state));
	memcpy(VARDATA(blob), state, cc_state_bytes(state));

	row->values[0] = Int64GetDatum(new_counter_id());
	row->values[1] = CStringGetTextDatum(name);
	row->values[2] = CStringGetTextDatum(cc_kind_name(params->kind));
	row->values[3] = Float8GetDatum((double) params->epsilon_units / (double) CC_EPSILON_UNITS_PER_ONE);
	row->values[16] = Float8GetDatum((double) params->rho_units / (double) CC_RHO_UNITS_PER_ONE);
	row->values[4] = Int64GetDatum(params->horizon);
	row->values[5] = Int64GetDatum(params->block);
	row->values[6] = Int64GetDatum(params->sensitivity);
	row->values[7] = Float8GetDatum(params->beta);
	row->values[8] = args->field[SPEC_LEDGER].value;
	row->values[9] = step;
	row->values[10] = PointerGetDatum(blob);
	memset(row->nulls, ' ', sizeof(row->nulls));
	row->nulls[3] = params->privacy == CC_PURE ? ' ' : 'n';
	row->nulls[16] = params->privacy == CC_ZCDP ? ' ' : 'n';
	row->nulls[4] = params->has_horizon ? ' ' : 'n';
	row->nulls[5] = params->has_block ? ' ' : 'n';
	row->nulls[8] = args->field[SPEC_LEDGER].isnull ? 'n' : ' ';
}

/*
 * The ledger creation charges (the one named, or contcount.ledger), which a
 * copy of the counter pays again before its next step.  The setting's value
 * is recorded because the worker, charging for a copy, cannot see this
 * session's.  NULL: the server's default.
 */
static const char *
ledger_to_record(const SpecArgs *args)
{
	const char *charged = spec_ledger(args);
	const char *setting = settings_ledger();

	if (charged == NULL && setting != NULL && setting[0] != '\0')
		charged = setting;
	return charged;
}

/*
 * Insert the counter's row, owned by the caller, with where its state lives
 * (a database not yet updated to 0.3 has no place; one before 0.5 no rho).
 * The row first: a session creating the same name waits here until this
 * transaction ends, and is then refused (42710) before it pays anything.
 */
static void
insert_counter(NewCounter *row, const char *name, const char *charged, bool has_rho)
{
	static SPIPlanPtr plan = NULL;
	static SPIPlanPtr placed_plan = NULL;
	static SPIPlanPtr rho_plan = NULL;
	Oid			types[17] = {INT8OID, TEXTOID, TEXTOID, FLOAT8OID, INT8OID, INT8OID,
	INT8OID, FLOAT8OID, TEXTOID, INTERVALOID, BYTEAOID, OIDOID,
	INT8OID, OIDOID, OIDOID, TEXTOID, FLOAT8OID};
	CounterPlace place;
	OwnerScope	scope;

	owner_begin(&scope);
	row->values[11] = ObjectIdGetDatum(scope.caller);
	if (counter_place_here(&place))
	{
		row->values[12] = Int64GetDatum(place.system);
		row->values[13] = ObjectIdGetDatum(place.database);
		row->values[14] = ObjectIdGetDatum(place.table);
		row->values[15] = charged ? CStringGetTextDatum(charged) : (Datum) 0;
		row->nulls[15] = charged ? ' ' : 'n';
		owner_run(has_rho ? &rho_plan : &placed_plan,
				  has_rho ? INSERT_PLACED(", rho", ", $17") : INSERT_PLACED("", ""),
				  has_rho ? 17 : 16, types, row->values, row->nulls, SPI_OK_INSERT);
	}
	else
		owner_run(&plan,
				  "INSERT INTO contcount.counter (id, name, mechanism, epsilon, horizon, block, "
				  "sensitivity, beta, ledger, step, state, owner, started_at) "
				  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, pg_catalog.now()) "
				  "ON CONFLICT (name) DO NOTHING",
				  12, types, row->values, row->nulls, SPI_OK_INSERT);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("counter \"%s\" already exists", name)));
	require_counter_room(scope.caller);
	owner_end(&scope);
}

/* Mark a new counter monotone: its reads post-process what it released. */
static void
set_monotone(int64 id)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};
	OwnerScope	scope;

	owner_begin(&scope);
	owner_run(&plan, "UPDATE contcount.counter SET monotone = true WHERE id OPERATOR(pg_catalog.=) $1",
			  1, types, values, NULL, SPI_OK_UPDATE);
	owner_end(&scope);
}

/*
 * The dimension argument of create_counter (argno), checked: a dimension of
 * the source, which the caller may release from (42704 if the source has
 * none of that name), and only with a source (22023).  NULL without one.
 */
static char *
dimension_arg(FunctionCallInfo fcinfo, int argno, const char *source)
{
	char	   *dimension;
	SourceBounds bounds;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return NULL;
	dimension = TextDatumGetCString(PG_GETARG_DATUM(argno));
	if (source == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a counter has a dimension only over a protected source"),
				 errhint("Name the source with source => ..., and a dimension it declares.")));
	(void) source_for_preview(source, dimension, false, &bounds);
	return dimension;
}

/*
 * Record the dimension a new counter releases a running count per key of:
 * its keys' states are made by its steps (counter_keys.c).
 */
static void
set_dimension(int64 id, const char *dimension)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[2] = {INT8OID, TEXTOID};
	Datum		values[2] = {Int64GetDatum(id), CStringGetTextDatum(dimension)};
	OwnerScope	scope;

	owner_begin(&scope);
	owner_run(&plan, "UPDATE contcount.counter SET dimension = $2 WHERE id OPERATOR(pg_catalog.=) $1",
			  2, types, values, NULL, SPI_OK_UPDATE);
	owner_end(&scope);
}

/*
 * The count argument of create_counter (argno): persons (true) or rows,
 * as source_counts takes it (22004 NULL, 22023 another value); persons
 * only over a protected source (0A000: without one no person is known).
 */
static bool
count_arg(FunctionCallInfo fcinfo, int argno, const char *source)
{
	bool		persons = source_count_arg(fcinfo, argno);

	if (persons && source == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a counter counts persons only over a protected source"),
				 errhint("Name the source with source => ..., whose unit column tells its persons.")));
	return persons;
}

/*
 * Counting persons, a counter's sensitivity is that of a release of
 * distinct persons from its source (over its dimension, or none): each
 * person moves at most that many keys' counts, by 1 each.  The step keeps
 * every person within it, whatever keys are declared later.
 */
static void
bound_persons(const char *source, const char *dimension, SpecArgs *args)
{
	SourceBounds bounds;

	args->field[SPEC_SENSITIVITY].value =
		Int64GetDatum(source_for_preview(source, dimension, true, &bounds));
}

/* Mark a new counter over a source as counting distinct persons. */
static void
set_persons(int64 id)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};
	OwnerScope	scope;

	owner_begin(&scope);
	owner_run(&plan, "UPDATE contcount.counter SET count = 'persons' "
			  "WHERE id OPERATOR(pg_catalog.=) $1",
			  1, types, values, NULL, SPI_OK_UPDATE);
	owner_end(&scope);
}

/*
 * Record the source a counter counts.  With blocks, also the blocks of its
 * first step (into first_run), from the block of the counter's start (now(),
 * as started_at): the counter counts rows timed in them, and pays for them.
 */
static void
attach_source(int64 id, const char *source, const SourceBounds *bounds, int64 step,
			  StoreBlockRun *first_run)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[4] = {INT8OID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID};
	Datum		values[4] = {Int64GetDatum(id), CStringGetTextDatum(source)};
	char		nulls[4] = {' ', ' ', 'n', 'n'};
	OwnerScope	scope;

	if (bounds->blocks.length > 0)
	{
		TimestampTz started_at = GetCurrentTransactionStartTimestamp();

		source_blocks_counter_run(bounds->blocks.length,
								  source_blocks_start(started_at, bounds->blocks.length),
								  started_at + step, first_run);
		values[2] = TimestampTzGetDatum(first_run->first);
		values[3] = TimestampTzGetDatum(first_run->first + first_run->count * first_run->length);
		nulls[2] = nulls[3] = ' ';
	}
	owner_begin(&scope);
	owner_run(&plan, "UPDATE contcount.counter SET source = $2, blocks_from = $3, "
			  "blocks_until = $4 WHERE id OPERATOR(pg_catalog.=) $1",
			  4, types, values, nulls, SPI_OK_UPDATE);
	owner_end(&scope);
	/* the source's trigger feeds it from this transaction's commit */
	feed_cache_changed();
}

/*
 * The whole continual release is paid for now, once (from a source: to the
 * team's ledger and to the data's, or with blocks to the blocks of its
 * first step; the worker pays each later block as the counter's clock
 * enters it).  If the charge is refused, the error takes the row back.
 */
static void
charge_creation(const SpecArgs *args, const cc_params *params, const char *source,
				const SourceBounds *bounds, const StoreBlockRun *first_run)
{
	if (source != NULL && bounds->blocks.length > 0)
		ledger_charge_blocks(spec_ledger(args), bounds->ledger, cc_params_cost(params),
							 "create_counter", first_run, bounds->blocks.budget_units);
	else if (source != NULL)
		ledger_charge_source(spec_ledger(args), bounds->ledger,
							 cc_params_cost(params), "create_counter");
	else
		ledger_charge(spec_ledger(args), cc_params_cost(params), "create_counter");
}

/*
 * create_counter(name, epsilon, mechanism, horizon, step, block, sensitivity,
 * beta, ledger, objective, source, rho, monotone, dimension, count): with a
 * protected source, the counter counts its table's inserts, at most max_rows
 * a unit, and its noise and charges are those of a release from the source
 * (source_counter.c).  A
 * zCDP mechanism takes rho in place of epsilon; the table keeps the one the
 * counter is charged (rho only from 0.5, where the function has it).  The
 * source's trigger (made by protect_table) finds the counter once it is
 * committed: nothing here locks the source's table.  monotone (from 0.6)
 * is kept with the counter, for current() and history().  count (from
 * 0.6) => 'persons' counts each person of the source once (once a key).
 */
PG_FUNCTION_INFO_V1(contcount_create_counter);
Datum
contcount_create_counter(PG_FUNCTION_ARGS)
{
	static const int argno[SPEC_NFIELDS] = {
		[SPEC_NAME] = 2,
		[SPEC_EPSILON] = 1,
		[SPEC_HORIZON] = 3,
		[SPEC_BLOCK] = 5,
		[SPEC_SENSITIVITY] = 6,
		[SPEC_BETA] = 7,
		[SPEC_LEDGER] = 8,
		[SPEC_RHO] = 11,
	};
	char	   *name = name_arg(fcinfo, 0);
	SpecArgs	args;
	cc_params	params;
	NewCounter	row;
	int64		step;
	char	   *source = PG_NARGS() > 10 && !PG_ARGISNULL(10) ?
		TextDatumGetCString(PG_GETARG_DATUM(10)) : NULL;
	SourceBounds bounds;
	StoreBlockRun first_run;
	char	   *dimension;
	bool		persons;

	require_counter_database();
	if (PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("step must not be null")));
	step = step_usecs(PG_GETARG_INTERVAL_P(4));
	spec_from_call(fcinfo, argno, &args);
	spec_objective_from_call(fcinfo, 9, &args);
	if (source != NULL)
		bound_by_source(source, step, &args, &bounds);
	dimension = dimension_arg(fcinfo, 13, source);
	if (dimension != NULL && PG_NARGS() > 12 && !PG_ARGISNULL(12) && PG_GETARG_BOOL(12))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a counter over a dimension cannot be monotone")));
	persons = count_arg(fcinfo, 14, source);
	if (persons)
		bound_persons(source, dimension, &args);
	if (source != NULL && bounds.blocks.length > 0)
		refuse_sharded(source, &bounds);
	spec_to_params(&args, &params);
	check_schedule(step, &params);
	spec_notice_choice(&args, &params);

	fill_new_counter(&row, name, &args, &params, PG_GETARG_DATUM(4));
	/* the table has rho where the function has it: both came with 0.5 */
	insert_counter(&row, name, ledger_to_record(&args), PG_NARGS() > argno[SPEC_RHO]);
	if (PG_NARGS() > 12 && !PG_ARGISNULL(12) && PG_GETARG_BOOL(12))
		set_monotone(DatumGetInt64(row.values[0]));
	if (source != NULL)
		attach_source(DatumGetInt64(row.values[0]), source, &bounds, step, &first_run);
	if (dimension != NULL)
		set_dimension(DatumGetInt64(row.values[0]), dimension);
	if (persons)
		set_persons(DatumGetInt64(row.values[0]));
	charge_creation(&args, &params, source, &bounds, &first_run);
	counter_shmem_wake_worker(true);
	PG_RETURN_VOID();
}

/*
 * drop_counter(name): contcount's own tables change, and no row an insert
 * may write: a counter over a source keeps its units until the step worker
 * sweeps them (an insert whose statement still feeds the counter would
 * otherwise wait on the dropping transaction), and its source's trigger
 * stays, the DBA's.  The triggers attach_counter made go, on the tables that
 * can be locked at once (counter_attach.c); any other trigger feeding the
 * counter stays, and counts nothing.
 */
PG_FUNCTION_INFO_V1(contcount_drop_counter);
Datum
contcount_drop_counter(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *name = name_arg(fcinfo, 0);
	OwnerScope	scope;
	CounterRow	row;
	Oid			types[1] = {INT8OID};
	Datum		values[1];

	require_counter_database();
	owner_begin(&scope);
	row = require_counter(name);
	require_owner(&scope, name, &row);
	values[0] = Int64GetDatum(row.id);
	owner_run(&plan,
			  "WITH d AS (DELETE FROM contcount.counter_delta "
			  "WHERE counter_id OPERATOR(pg_catalog.=) $1) "
			  "DELETE FROM contcount.counter WHERE id OPERATOR(pg_catalog.=) $1",
			  1, types, values, NULL, SPI_OK_DELETE);
	unit_log_forget(row.id);
	counter_keys_forget(row.id);
	owner_end(&scope);
	feed_cache_changed();
	attachments_remove_all(row.id, name);
	counter_shmem_forget_at_commit(row.id);
	PG_RETURN_VOID();
}

/* The table argument: null is refused (22004). */
static Oid
table_arg(FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("table must not be null")));
	return PG_GETARG_OID(argno);
}

/* May the caller create triggers on table (its owner, or granted TRIGGER)? */
static bool
may_trigger(Oid table)
{
	return pg_class_aclcheck(table, GetUserId(), ACL_TRIGGER) == ACLCHECK_OK;
}

/*
 * attach_counter(counter, tbl, for_each): an AFTER INSERT trigger on tbl
 * that feeds the counter, one a row or one a statement, made by a role that
 * may create triggers on tbl (42501), for a counter that tbl's owner may
 * feed (42501), as a trigger the role writes itself.  The privilege is
 * checked before the table is locked, as CREATE TRIGGER does.  No WHEN
 * condition: SQL text cannot be taken safely into the statement, and a
 * role that needs one writes the trigger itself.
 */
PG_FUNCTION_INFO_V1(contcount_attach_counter);
Datum
contcount_attach_counter(PG_FUNCTION_ARGS)
{
	char	   *name = name_arg(fcinfo, 0);
	Oid			table = table_arg(fcinfo, 1);
	char	   *for_each = PG_ARGISNULL(2) ? "" : TextDatumGetCString(PG_GETARG_DATUM(2));
	Relation	rel;
	OwnerScope	scope;
	CounterRow	row;

	require_counter_database();
	if (strcmp(for_each, "row") != 0 && strcmp(for_each, "statement") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("for_each must be 'row' or 'statement'")));
	if (!may_trigger(table))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(table)),
				 errdetail("Attaching a counter to a table takes its owner, or the TRIGGER privilege on it.")));
	rel = table_open(table, ShareRowExclusiveLock);
	owner_begin(&scope);
	row = require_counter(name);
	require_feeder(name, &row, rel->rd_rel->relowner, RelationGetRelationName(rel));
	owner_end(&scope);
	table_close(rel, NoLock);
	attachment_create(row.id, name, table, strcmp(for_each, "row") == 0);
	PG_RETURN_VOID();
}

/*
 * detach_counter(counter, tbl): drops the trigger attach_counter made, for
 * a role that may create triggers on tbl (42501), waiting for its lock.
 * 42704 if the counter is not attached there.  The counter's owner without
 * that right may not lock the application's table at all (holding ACCESS
 * EXCLUSIVE in an open transaction would stop every insert): it stops the
 * feeding without a lock by taking back the table owner's feed grant, or
 * drops the counter.
 */
PG_FUNCTION_INFO_V1(contcount_detach_counter);
Datum
contcount_detach_counter(PG_FUNCTION_ARGS)
{
	char	   *name = name_arg(fcinfo, 0);
	Oid			table = table_arg(fcinfo, 1);
	OwnerScope	scope;
	CounterRow	row;

	require_counter_database();
	if (!may_trigger(table))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be able to create triggers on table %s to detach a counter from it",
						get_rel_name(table)),
				 errhint("The counter's owner stops the feeding without a lock on the table with "
						 "contcount.grant_counter(counter, role, feed => false), or drops the counter.")));
	owner_begin(&scope);
	row = require_counter(name);
	owner_end(&scope);
	if (!attachment_remove(row.id, name, table))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("counter \"%s\" is not attached to table %s", name, get_rel_name(table))));
	PG_RETURN_VOID();
}

/*
 * grant_counter(name, role, feed): the role may read the counter, and feed
 * it if feed (a second grant replaces the first); revoke_counter(name,
 * role) takes both back.  A database still at 0.1 calls grant_counter(name,
 * role), which grants reading alone.
 */
static void
change_grant(FunctionCallInfo fcinfo, bool grant)
{
	static SPIPlanPtr grant_plan = NULL;
	static SPIPlanPtr grant_read_plan = NULL;
	static SPIPlanPtr revoke_plan = NULL;
	char	   *name = name_arg(fcinfo, 0);
	OwnerScope	scope;
	CounterRow	row;
	Oid			types[3] = {INT8OID, OIDOID, BOOLOID};
	Datum		values[3];

	if (PG_ARGISNULL(1) || (grant && PG_NARGS() > 2 && PG_ARGISNULL(2)))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("role and feed must not be null")));
	require_counter_database();
	owner_begin(&scope);
	row = require_counter(name);
	require_owner(&scope, name, &row);
	values[0] = Int64GetDatum(row.id);
	values[1] = PG_GETARG_DATUM(1);
	if (grant && PG_NARGS() == 2)
		owner_run(&grant_read_plan,
				  "INSERT INTO contcount.counter_grant (counter_id, role_id) VALUES ($1, $2) "
				  "ON CONFLICT DO NOTHING",
				  2, types, values, NULL, SPI_OK_INSERT);
	else if (grant)
	{
		values[2] = PG_GETARG_DATUM(2);
		owner_run(&grant_plan,
				  "INSERT INTO contcount.counter_grant (counter_id, role_id, feed) VALUES ($1, $2, $3) "
				  "ON CONFLICT (counter_id, role_id) DO UPDATE SET feed = EXCLUDED.feed",
				  3, types, values, NULL, SPI_OK_INSERT);
	}
	else
		owner_run(&revoke_plan,
				  "DELETE FROM contcount.counter_grant "
				  "WHERE counter_id OPERATOR(pg_catalog.=) $1 AND role_id OPERATOR(pg_catalog.=) $2",
				  2, types, values, NULL, SPI_OK_DELETE);
	owner_end(&scope);
}

PG_FUNCTION_INFO_V1(contcount_grant_counter);
Datum
contcount_grant_counter(PG_FUNCTION_ARGS)
{
	change_grant(fcinfo, true);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(contcount_revoke_counter);
Datum
contcount_revoke_counter(PG_FUNCTION_ARGS)
{
	change_grant(fcinfo, false);
	PG_RETURN_VOID();
}

/* Copy every row of the last SPI result to the function's result set. */
static void
return_spi_rows(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	for (uint64 i = 0; i < SPI_processed; i++)
		tuplestore_puttuple(rsinfo->setResult, SPI_tuptable->vals[i]);
}

#define COUNTER_ROWS(extra_columns) \
	"SELECT name, mechanism, epsilon, horizon, step, ledger, started_at, steps, " \
	"finished, owner::pg_catalog.regrole" extra_columns " FROM contcount.counter " \
	"WHERE contcount.counter_granted(id, $1) ORDER BY name"
#define ACCOUNTING_COLUMNS ", CASE WHEN rho IS NULL THEN 'pure' ELSE 'zcdp' END, rho"

/* From 0.6: the ledger that paid, and when the counter stepped last. */
#define COUNTER_ROWS_0_6 \
	"SELECT name, mechanism, epsilon, horizon, step, COALESCE(charged_ledger, ledger), " \
	"started_at, steps, finished, owner::pg_catalog.regrole" ACCOUNTING_COLUMNS \
	", blocks_from, blocks_until, finish_reason, (SELECT pg_catalog.max(r.released_at) " \
	"FROM contcount.counter_release r WHERE r.counter_id OPERATOR(pg_catalog.=) c.id) " \
	"FROM contcount.counter c WHERE contcount.counter_granted(id, $1) ORDER BY name"
#define COUNTER_COLUMNS_0_6 19

/* A time of a counter's schedule, null beyond the timestamps. */
static void
schedule_time(TimestampTz start, int64 k, int64 step, Datum *value, bool *isnull)
{
	TimestampTz end;

	*isnull = !step_end(start, k, step, &end);
	if (!*isnull)
		*value = TimestampTzGetDatum(end);
}

/*
 * One row of the view from 0.6: SPI's 16 columns, the last release's time
 * moved after when the next step is due (null once finished), then when the
 * horizon ends (a bounded counter) and how late the next step is, if it is
 * due already (null otherwise).  The schedule is the worker's own,
 * started_at + k * step (step_end).
 */
static void
put_counter_row_0_6(ReturnSetInfo *rsinfo, HeapTuple tuple, TupleDesc spi_desc)
{
	Datum		values[COUNTER_COLUMNS_0_6];
	bool		nulls[COUNTER_COLUMNS_0_6];
	TimestampTz now = GetCurrentTransactionStartTimestamp();
	TimestampTz started_at;
	int64		step;

	heap_deform_tuple(tuple, spi_desc, values, nulls);
	values[16] = values[15];
	nulls[16] = nulls[15];
	started_at = DatumGetTimestampTz(values[6]);
	step = step_usecs(DatumGetIntervalP(values[4]));
	nulls[15] = nulls[17] = nulls[18] = true;
	if (!DatumGetBool(values[8]))
		schedule_time(started_at, DatumGetInt64(values[7]) + 1, step, &values[15], &nulls[15]);
	if (!nulls[3])
		schedule_time(started_at, DatumGetInt64(values[3]), step, &values[17], &nulls[17]);
	if (!nulls[15] && DatumGetTimestampTz(values[15]) < now)
	{
		Interval   *late = palloc0(sizeof(Interval));

		late->time = now - DatumGetTimestampTz(values[15]);
		values[18] = IntervalPGetDatum(late);
		nulls[18] = false;
	}
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * The counters the caller may read: the contcount.counters view, from 0.5
 * with each counter's accounting and rho (epsilon null for a zCDP counter),
 * the blocks it paid and why it finished; from 0.6 with the ledger that
 * paid and its schedule (put_counter_row_0_6).
 */
PG_FUNCTION_INFO_V1(contcount_counter_rows);
Datum
contcount_counter_rows(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plans[4];
	static const char *const sql[4] = {
		COUNTER_ROWS(""),
		COUNTER_ROWS(ACCOUNTING_COLUMNS),
		COUNTER_ROWS(ACCOUNTING_COLUMNS ", blocks_from, blocks_until, finish_reason"),
		COUNTER_ROWS_0_6,
	};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OwnerScope	scope;
	Oid			types[1] = {OIDOID};
	Datum		values[1];
	int			version;
	int			natts;

	InitMaterializedSRF(fcinfo, 0);
	/* the function of 0.1 to 0.4 returns ten columns, 0.5's five more, 0.6's four more */
	natts = rsinfo->setDesc->natts;
	version = natts >= COUNTER_COLUMNS_0_6 ? 3 : natts > 12 ? 2 : natts > 10 ? 1 : 0;
	owner_begin(&scope);
	values[0] = ObjectIdGetDatum(scope.caller);
	owner_run(&plans[version], sql[version], 1, types, values, NULL, SPI_OK_SELECT);
	if (version < 3)
		return_spi_rows(fcinfo);
	else
		for (uint64 i = 0; i < SPI_processed; i++)
			put_counter_row_0_6(rsinfo, SPI_tuptable->vals[i], SPI_tuptable->tupdesc);
	owner_end(&scope);
	return (Datum) 0;
}

/*
 * A counter's releases, in order of t; a monotone counter's (from 0.6) as
 * the running maximum of its released values, clamped at 0, each with the
 * largest bound so far: what it showed never changes, and it reads only
 * released values (report/monotone.c measures what it does to the error).
 */
#define MONOTONE_RELEASES \
	"SELECT r.t, CASE WHEN c.monotone THEN GREATEST(0, pg_catalog.max(r.noisy_count) OVER w) " \
	"ELSE r.noisy_count END AS noisy_count, r.stddev, " \
	"CASE WHEN c.monotone THEN pg_catalog.max(r.bound) OVER w ELSE r.bound END AS bound, " \
	"r.released_at FROM contcount.counter_release r " \
	"JOIN contcount.counter c ON c.id OPERATOR(pg_catalog.=) r.counter_id " \
	"WHERE r.counter_id OPERATOR(pg_catalog.=) $1 WINDOW w AS (ORDER BY r.t)"

bool
counter_has_dimension(int64 id)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};
	bool		isnull;

	if (!contcount_has_column("counter", "dimension"))
		return false;
	owner_run(&plan, "SELECT dimension IS NOT NULL FROM contcount.counter "
			  "WHERE id OPERATOR(pg_catalog.=) $1", 1, types, values, NULL, SPI_OK_SELECT);
	return SPI_processed > 0 &&
		DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * The counter named, which the caller may read (42501 otherwise), with or
 * without (keyed) a dimension (22023 otherwise, naming the functions that
 * read it).  Owner scope.
 */
static CounterRow
readable_counter(const char *name, Oid caller, bool keyed)
{
	CounterRow	row = require_counter(name);

	if (!may_read(row.id, caller))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for counter \"%s\"", name),
				 errhint("Its owner grants it with contcount.grant_counter().")));
	if (counter_has_dimension(row.id) != keyed)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 keyed ? errmsg("counter \"%s\" has no dimension: it releases one running count", name) :
				 errmsg("counter \"%s\" releases a running count per key of a dimension", name),
				 keyed ? errhint("Read it with contcount.current() or contcount.history().") :
				 errhint("Read it with contcount.current_by_key() or contcount.history_by_key().")));
	return row;
}

/* history(name): every release; current(name): the latest. */
static void
releases(FunctionCallInfo fcinfo, bool latest_only)
{
	static SPIPlanPtr all_plan = NULL;
	static SPIPlanPtr latest_plan = NULL;
	static SPIPlanPtr monotone_all_plan = NULL;
	static SPIPlanPtr monotone_latest_plan = NULL;
	char	   *name = name_arg(fcinfo, 0);
	OwnerScope	scope;
	CounterRow	row;
	Oid			types[1] = {INT8OID};
	Datum		values[1];

	require_counter_database();
	InitMaterializedSRF(fcinfo, 0);
	owner_begin(&scope);
	row = readable_counter(name, scope.caller, false);
	values[0] = Int64GetDatum(row.id);
	if (contcount_has_column("counter", "monotone"))
		owner_run(latest_only ? &monotone_latest_plan : &monotone_all_plan,
				  latest_only ? "SELECT * FROM (" MONOTONE_RELEASES ") m ORDER BY t DESC LIMIT 1"
				  : MONOTONE_RELEASES " ORDER BY r.t",
				  1, types, values, NULL, SPI_OK_SELECT);
	else if (latest_only)
		owner_run(&latest_plan,
				  "SELECT t, noisy_count, stddev, bound, released_at FROM contcount.counter_release "
				  "WHERE counter_id OPERATOR(pg_catalog.=) $1 ORDER BY t DESC LIMIT 1",
				  1, types, values, NULL, SPI_OK_SELECT);
	else
		owner_run(&all_plan,
				  "SELECT t, noisy_count, stddev, bound, released_at FROM contcount.counter_release "
				  "WHERE counter_id OPERATOR(pg_catalog.=) $1 ORDER BY t",
				  1, types, values, NULL, SPI_OK_SELECT);
	return_spi_rows(fcinfo);
	owner_end(&scope);
}

PG_FUNCTION_INFO_V1(contcount_current);
Datum
contcount_current(PG_FUNCTION_ARGS)
{
	releases(fcinfo, true);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(contcount_history);
Datum
contcount_history(PG_FUNCTION_ARGS)
{
	releases(fcinfo, false);
	return (Datum) 0;
}

/*
 * history_by_key(name): every release of every key, by key and step;
 * current_by_key(name): each key's release at the counter's latest step
 * (a key no longer declared is released no more, and not shown).
 */
static void
key_releases(FunctionCallInfo fcinfo, bool latest_only)
{
	static SPIPlanPtr plans[2];
	char	   *name = name_arg(fcinfo, 0);
	OwnerScope	scope;
	CounterRow	row;
	Oid			types[1] = {INT8OID};
	Datum		values[1];

	require_counter_database();
	InitMaterializedSRF(fcinfo, 0);
	owner_begin(&scope);
	row = readable_counter(name, scope.caller, true);
	values[0] = Int64GetDatum(row.id);
	owner_run(&plans[latest_only],
			  latest_only ?
			  "SELECT key, t, noisy_count, stddev, bound, released_at FROM contcount.counter_key_release "
			  "WHERE counter_id OPERATOR(pg_catalog.=) $1 AND t OPERATOR(pg_catalog.=) "
			  "(SELECT pg_catalog.max(t) FROM contcount.counter_key_release "
			  "WHERE counter_id OPERATOR(pg_catalog.=) $1) ORDER BY key" :
			  "SELECT key, t, noisy_count, stddev, bound, released_at FROM contcount.counter_key_release "
			  "WHERE counter_id OPERATOR(pg_catalog.=) $1 ORDER BY key, t",
			  1, types, values, NULL, SPI_OK_SELECT);
	return_spi_rows(fcinfo);
	owner_end(&scope);
}

PG_FUNCTION_INFO_V1(contcount_current_by_key);
Datum
contcount_current_by_key(PG_FUNCTION_ARGS)
{
	key_releases(fcinfo, true);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(contcount_history_by_key);
Datum
contcount_history_by_key(PG_FUNCTION_ARGS)
{
	key_releases(fcinfo, false);
	return (Datum) 0;
}

/*
 * counter_internals(name): the exact count released so far, the committed
 * counts not yet in a step (over a source, bounded as the step will), and
 * the raw state with its noise.  Superusers
 * only (the install script revokes it from PUBLIC).
 */
PG_FUNCTION_INFO_V1(contcount_counter_internals);
Datum
contcount_counter_internals(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *name = name_arg(fcinfo, 0);
	OwnerScope	scope;
	CounterRow	row;
	Oid			types[1] = {INT8OID};
	Datum		values[4];
	bool		nulls[4] = {false};
	bool		isnull;
	TupleDesc	tupdesc;
	bytea	   *blob;
	int64		pending;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	require_counter_database();
	owner_begin(&scope);
	row = require_counter(name);
	values[0] = Int64GetDatum(row.id);
	owner_run(&plan,
			  "SELECT steps, state, (SELECT coalesce(pg_catalog.sum(n), 0)::pg_catalog.int8 "
			  "FROM contcount.counter_delta WHERE counter_id OPERATOR(pg_catalog.=) $1) "
			  "FROM contcount.counter WHERE id OPERATOR(pg_catalog.=) $1",
			  1, types, values, NULL, SPI_OK_SELECT);
	values[0] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	blob = DatumGetByteaPCopy(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	pending = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	/* and what a step would let through of the persons' logged rows */
	values[2] = Int64GetDatum(pending + unit_log_rows(row.id, false));
	owner_end(&scope);
	if (!cc_state_valid(VARDATA_ANY(blob), VARSIZE_ANY_EXHDR(blob)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the state of counter \"%s\" is damaged", name)));
	values[1] = Int64GetDatum(cc_exact_count((cc_state *) VARDATA_ANY(blob)));
	values[3] = PointerGetDatum(blob);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

/*
 * tick(name): close a step now, and wait until the worker has committed it.
 * The step is closed by the worker in its own transaction, never in the
 * caller's: a caller that rolled back would otherwise have seen a release
 * whose noise the next step would draw again.
 */
/*
 * Raise why a finished counter releases no more: its horizon, or the block
 * that refused to pay (ZB001), as contcount.counters says.
 */
static void
counter_finished_error(const char *name, int64 id)
{
	static SPIPlanPtr plan = NULL;
	OwnerScope	scope;
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};
	char	   *reason = NULL;

	owner_begin(&scope);
	if (counter_sources_installed())
	{
		owner_run(&plan, "SELECT finish_reason FROM contcount.counter WHERE id OPERATOR(pg_catalog.=) $1",
				  1, types, values, NULL, SPI_OK_SELECT);
		if (SPI_processed > 0)
			reason = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	}
	if (reason != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONTCOUNT_BUDGET_EXCEEDED),
				 errmsg("counter \"%s\" releases no more: %s", name, reason)));
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("counter \"%s\" has reached its horizon and releases no more", name)));
}

/* What tick() sees of a counter's slot, copied under the lock. */
typedef struct TickView
{
	bool		done;			/* the step it asked for is closed */
	bool		finished;
	int64		steps;
	int			refused_code;
	bool		refused_copy;
	char		refused_message[sizeof(((CounterSlot *) NULL)->refused_message)];
	char		refused_detail[sizeof(((CounterSlot *) NULL)->refused_detail)];
} TickView;

/*
 * Look at counter id's slot (*slot, found and asked for a step, *target,
 * the first time; NULL again if the counter was dropped meanwhile), or ask
 * the worker to reload if it has none yet.
 */
static void
look_at_slot(CounterShared *cs, int64 id, CounterSlot **slot, uint64 *target, TickView *view)
{
	memset(view, 0, sizeof(*view));
	LWLockAcquire(cs->lock, LW_EXCLUSIVE);
	if (*slot == NULL)
	{
		for (int i = 0; i < cs->nslots && *slot == NULL; i++)
			if (cs->slots[i].id == id)
				*slot = &cs->slots[i];
		if (*slot != NULL)
			*target = ++(*slot)->ticks_requested;
		else
			cs->reload_requested = true;
	}
	if (*slot != NULL && (*slot)->id != id)
		*slot = NULL;			/* dropped meanwhile */
	if (*slot != NULL)
	{
		view->done = (*slot)->ticks_done >= *target;
		view->finished = (*slot)->finished;
		view->steps = (*slot)->steps;
		view->refused_code = (*slot)->refused_code;
		view->refused_copy = (*slot)->refused_copy;
		memcpy(view->refused_message, (*slot)->refused_message, sizeof(view->refused_message));
		memcpy(view->refused_detail, (*slot)->refused_detail, sizeof(view->refused_detail));
	}
	LWLockRelease(cs->lock);
}

/* The worker answered, but a ledger refused to pay: its error, for tick(). */
static void
raise_refusal(const char *name, const TickView *view)
{
	ereport(ERROR,
			(errcode(view->refused_code),
			 errmsg("%s", view->refused_message),
			 view->refused_detail[0] ? errdetail("%s", view->refused_detail) : 0,
			 view->refused_copy ?
			 errcontext("counter \"%s\" was copied from another database or cluster, "
						"and takes no step until its ledger pays its epsilon (or rho) again", name) :
			 errcontext("counter \"%s\" takes no step until the blocks of its next step are paid",
						name)));
}

PG_FUNCTION_INFO_V1(contcount_tick);
Datum
contcount_tick(PG_FUNCTION_ARGS)
{
	char	   *name = name_arg(fcinfo, 0);
	CounterShared *cs = counter_shared();
	OwnerScope	scope;
	CounterRow	row;
	CounterSlot *slot = NULL;
	uint64		target = 0;
	int64		steps = 0;
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), TICK_TIMEOUT_MS);

	require_counter_database();
	owner_begin(&scope);
	row = require_counter(name);
	require_owner(&scope, name, &row);
	owner_end(&scope);

	ConditionVariablePrepareToSleep(&cs->step_closed);
	for (;;)
	{
		TickView	view;

		look_at_slot(cs, row.id, &slot, &target, &view);
		if (slot != NULL)
			steps = view.steps;
		if (view.finished)
			counter_finished_error(name, row.id);
		if (view.done && view.refused_code != 0)
			raise_refusal(name, &view);
		if (view.done)
			break;
		if (GetCurrentTimestamp() > deadline)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the step worker did not close a step of counter \"%s\"", name),
					 errhint("A counter created in this transaction has no steps until it commits; "
							 "the worker runs in database \"%s\".", contcount_database)));
		counter_shmem_wake_worker(false);
		ConditionVariableTimedSleep(&cs->step_closed, 200, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	PG_RETURN_INT64(steps);
}
