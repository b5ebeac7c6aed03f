/*
 * shards.c
 *		Releases over sharded sources: finding the shards of a source's
 *		table and asking each for its exact bounded counts.
 *
 * PostgreSQL shards a table with its own machinery: a partitioned table on
 * a coordinator whose partitions are postgres_fdw foreign tables on other
 * servers.  The bounding rule needs all of a person's rows in one place, in
 * order; a table hash-partitioned by the unit column puts them in one
 * partition, so each partition can be bounded on its own and the counts
 * added.  A partition whose foreign server lists contcount in its
 * `extensions` option (postgres_fdw's word for "this server runs these
 * extensions") is bounded on that server: contcount.shard_bounded_counts()
 * there, called over a libpq connection made as postgres_fdw makes its own,
 * from the server's options and the user mapping of the extension's owner,
 * returns the exact counts per key and step.  Every shard is asked first
 * and answered after, so that they work at the same time.  Nothing here
 * draws noise or charges: source.c does both, once, at the coordinator.
 *
 * postgres_fdw itself ships only queries on foreign tables, which cannot
 * carry a release's parameters to a function; its connections are its own.
 *
 * IDENTIFICATION
 *	  src/sources/shards.c
 */
#include "postgres.h"

#include "libpq-fe.h"

#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "partitioning/partdesc.h"
#include "storage/latch.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"
#include "utils/wait_event.h"

#include "sources/shards.h"

/*
 * Is the table partitioned by a hash of the unit column alone, as the
 * column's own equality sees it (its type's default hash operator class,
 * its collation), so that one person's rows are all in one partition?
 */
static bool
partitioned_by_unit(Relation rel, AttrNumber unit)
{
	PartitionKey key;
	Oid			type;
	int32		typmod;
	Oid			collation;
	Oid			opclass;

	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		return false;
	key = RelationGetPartitionKey(rel);
	if (key->strategy != PARTITION_STRATEGY_HASH || key->partnatts != 1 ||
		key->partattrs[0] != unit)
		return false;
	get_atttypetypmodcoll(RelationGetRelid(rel), unit, &type, &typmod, &collation);
	opclass = GetDefaultOpClass(type, HASH_AM_OID);
	return OidIsValid(opclass) && key->partopfamily[0] == get_opclass_family(opclass) &&
		key->partcollation[0] == collation;
}

List *
shards_partitions(Oid relid, AttrNumber unit)
{
	Relation	rel = table_open(relid, AccessShareLock);
	List	   *partitions = NIL;

	if (partitioned_by_unit(rel, unit))
	{
		PartitionDesc desc = RelationGetPartitionDesc(rel, true);

		for (int i = 0; i < desc->nparts; i++)
			partitions = lappend_oid(partitions, desc->oids[i]);
	}
	/* the lock is kept, as a query's */
	table_close(rel, NoLock);
	return partitions;
}

/* A string option's value, or fallback if the list has none of that name. */
static char *
option_or(List *options, const char *name, char *fallback)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *option = lfirst(lc);

		if (strcmp(option->defname, name) == 0)
			return defGetString(option);
	}
	return fallback;
}

bool
shards_is_shard(Oid partition)
{
	ForeignServer *server;
	char	   *extensions;
	List	   *names;
	ListCell   *lc;

	if (get_rel_relkind(partition) != RELKIND_FOREIGN_TABLE)
		return false;
	server = GetForeignServer(GetForeignTable(partition)->serverid);
	if (strcmp(GetForeignDataWrapper(server->fdwid)->fdwname, "postgres_fdw") != 0)
		return false;
	/* a comma-separated list of names, as postgres_fdw reads it */
	extensions = option_or(server->options, "extensions", NULL);
	if (extensions == NULL || !SplitIdentifierString(pstrdup(extensions), ',', &names))
		return false;
	foreach(lc, names)
		if (strcmp(lfirst(lc), "contcount") == 0)
			return true;
	return false;
}

/* The name on the shard of a column of the table, as postgres_fdw maps it. */
static char *
remote_column(Oid relid, Oid partition, AttrNumber attnum)
{
	char	   *name = get_attname(relid, attnum, false);
	AttrNumber	local = get_attnum(partition, name);

	if (local == InvalidAttrNumber)
		elog(ERROR, "partition %u has no column \"%s\"", partition, name);
	return option_or(GetForeignColumnOptions(partition, local), "column_name", name);
}

static bool
is_libpq_option(const PQconninfoOption *defaults, const char *keyword)
{
	for (const PQconninfoOption *option = defaults; option->keyword != NULL; option++)
		if (strcmp(option->keyword, keyword) == 0)
			return true;
	return false;
}

/*
 * A watchful call's libpq options, each unless the server or the user
 * mapping sets it: give up connecting after 10 s, and a connection whose
 * shard stops answering the kernel's keepalives after about 25 s idle.  A
 * long seal of a shard that answers them is not cut short.
 */
static const char *const watchful_options[][2] = {
	{"connect_timeout", "10"},
	{"keepalives_idle", "10"},
	{"keepalives_interval", "5"},
	{"keepalives_count", "3"},
};

#define NWATCHFUL lengthof(watchful_options)

/* The watchful options that options does not set, after keywords[*n]. */
static void
add_watchful(List *options, const char **keywords, const char **values, int *n)
{
	for (int i = 0; i < (int) NWATCHFUL; i++)
		if (option_or(options, watchful_options[i][0], NULL) == NULL)
		{
			keywords[*n] = watchful_options[i][0];
			values[(*n)++] = watchful_options[i][1];
		}
}

/*
 * Connect as postgres_fdw would: the libpq options of the server and of the
 * user mapping.  As postgres_fdw, a role that is not a superuser must log in
 * with a password, not as the server's own OS user (2F003).
 */
static void
shard_connect(ShardCall *call, ForeignServer *server, UserMapping *mapping)
{
	PQconninfoOption *defaults = PQconndefaults();
	List	   *options = list_concat(list_copy(server->options), mapping->options);
	const char **keywords = palloc0_array(const char *, list_length(options) + 3 + NWATCHFUL);
	const char **values = palloc0_array(const char *, list_length(options) + 3 + NWATCHFUL);
	int			n = 0;
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *option = lfirst(lc);

		if (defaults != NULL && is_libpq_option(defaults, option->defname))
		{
			keywords[n] = option->defname;
			values[n++] = defGetString(option);
		}
	}
	PQconninfoFree(defaults);
	if (call->watchful)
		add_watchful(options, keywords, values, &n);
	keywords[n] = "fallback_application_name";
	values[n++] = "contcount";
	keywords[n] = "client_encoding";
	values[n++] = GetDatabaseEncodingName();
	call->conn = PQconnectdbParams(keywords, values, false);
	if (call->conn == NULL || PQstatus(call->conn) != CONNECTION_OK)
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("could not connect to shard \"%s\"", call->server),
				 errdetail_internal("%s", call->conn ? pchomp(PQerrorMessage(call->conn)) : "out of memory")));
	if (!superuser() && !PQconnectionUsedPassword(call->conn))
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("a shard's user mapping for a role that is not a superuser needs a password"),
				 errhint("Give user mapping of the extension's owner on server \"%s\" a password.",
						 call->server)));
}

/* The filters as the shard reads them: {"remote column": ["key", ...], ...}. */
static char *
filter_json(const ShardAsk *ask, Oid partition)
{
	StringInfoData json;

	initStringInfo(&json);
	appendStringInfoChar(&json, '{');
	for (int i = 0; i < ask->nfilters; i++)
	{
		Datum	   *keys;
		int			nkeys;

		deconstruct_array(DatumGetArrayTypeP(ask->filter_keys[i]), TEXTOID, -1, false,
						  TYPALIGN_INT, &keys, NULL, &nkeys);
		if (i > 0)
			appendStringInfoString(&json, ", ");
		escape_json(&json, remote_column(ask->relid, partition, ask->filters[i]));
		appendStringInfoString(&json, ": [");
		for (int k = 0; k < nkeys; k++)
		{
			if (k > 0)
				appendStringInfoString(&json, ", ");
			escape_json(&json, TextDatumGetCString(keys[k]));
		}
		appendStringInfoChar(&json, ']');
	}
	appendStringInfoChar(&json, '}');
	return json.data;
}

/* A timestamp as text: the seal's DateStyle (ISO) and TimeZone (UTC). */
static char *
time_text(TimestampTz t)
{
	return DatumGetCString(DirectFunctionCall1(timestamptz_out, TimestampTzGetDatum(t)));
}

#define SHARD_CALL "SELECT contcount.shard_bounded_counts($1, $2, $3, $4, $5, $6::pg_catalog.text[], " \
	"$7::pg_catalog.int4, $8::pg_catalog.int4, $9::pg_catalog.timestamptz, $10::pg_catalog.interval, " \
	"$11::pg_catalog.int8, $12::pg_catalog.jsonb, $13::pg_catalog.timestamptz, $14::pg_catalog.timestamptz, $15::pg_catalog.bool)"

/* The call's parameters, as text, NULL for SQL's null. */
static void
shard_params(const ShardAsk *ask, Oid partition, ForeignTable *table, const char **params)
{
	params[0] = option_or(table->options, "schema_name", get_namespace_name(get_rel_namespace(partition)));
	params[1] = option_or(table->options, "table_name", get_rel_name(partition));
	params[2] = remote_column(ask->relid, partition, ask->unit);
	params[3] = remote_column(ask->relid, partition, ask->time);
	params[4] = ask->dimension == InvalidAttrNumber ? NULL :
		remote_column(ask->relid, partition, ask->dimension);
	params[5] = ask->keys == (Datum) 0 ? NULL :
		OidOutputFunctionCall(F_ARRAY_OUT, ask->keys);
	params[6] = psprintf("%d", ask->max_rows);
	params[7] = psprintf("%d", ask->max_groups);
	params[8] = ask->step_usec > 0 ? time_text(ask->start) : NULL;
	params[9] = ask->step_usec > 0 ? psprintf(INT64_FORMAT " microseconds", ask->step_usec) : NULL;
	params[10] = psprintf(INT64_FORMAT, ask->nsteps);
	params[11] = ask->nfilters > 0 ? filter_json(ask, partition) : NULL;
	params[12] = ask->window ? time_text(ask->window_from) : NULL;
	params[13] = ask->window ? time_text(ask->window_to) : NULL;
	params[14] = ask->persons ? "true" : "false";
}

void
shards_open(ShardCall *call)
{
	shards_open_server(call, GetForeignTable(call->partition)->serverid);
}

void
shards_open_server(ShardCall *call, Oid serverid)
{
	ForeignServer *server = GetForeignServer(serverid);

	call->server = server->servername;
	shard_connect(call, server, GetUserMapping(GetUserId(), server->serverid));
}

void
shards_send_sql(ShardCall *call, const char *sql, int nparams, const char *const *params)
{
	if (!PQsendQueryParams(call->conn, sql, nparams, NULL, params, NULL, NULL, 0))
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not ask shard \"%s\" for its bounded counts", call->server),
				 errdetail_internal("%s", pchomp(PQerrorMessage(call->conn)))));
}

void
shards_send(ShardCall *call, const ShardAsk *ask)
{
	const char *params[15];

	shard_params(ask, call->partition, GetForeignTable(call->partition), params);
	shards_open(call);
	shards_send_sql(call, SHARD_CALL, 15, params);
}

void
shards_remote_names(Oid relid, Oid partition, AttrNumber unit, char **schema, char **table,
					char **unit_column)
{
	ForeignTable *foreign = GetForeignTable(partition);

	*schema = option_or(foreign->options, "schema_name",
						get_namespace_name(get_rel_namespace(partition)));
	*table = option_or(foreign->options, "table_name", get_rel_name(partition));
	*unit_column = remote_column(relid, partition, unit);
}

/* The next result of a call, waiting on the latch: a cancel interrupts it. */
static PGresult *
next_result(ShardCall *call)
{
	PGconn	   *conn = call->conn;

	while (PQisBusy(conn))
	{
		int			rc = WaitLatchOrSocket(MyLatch, WL_LATCH_SET | WL_SOCKET_READABLE |
										   WL_EXIT_ON_PM_DEATH, PQsocket(conn), -1L,
										   PG_WAIT_EXTENSION);

		if (rc & WL_LATCH_SET)
		{
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
		if ((rc & WL_SOCKET_READABLE) && !PQconsumeInput(conn))
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("lost the connection to shard \"%s\"", call->server),
					 errdetail_internal("%s", pchomp(PQerrorMessage(conn)))));
	}
	return PQgetResult(conn);
}

/*
 * The shard's error as the release's, with its SQLSTATE: the shard's query
 * is sealed as the coordinator's, so no row's value is in it.
 */
static void
report_shard_error(ShardCall *call, PGresult *result)
{
	const char *state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
	const char *message = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
	int			code = ERRCODE_CONNECTION_FAILURE;
	char	   *text = pstrdup(message ? message : pchomp(PQerrorMessage(call->conn)));

	if (state != NULL && strlen(state) == 5)
		code = MAKE_SQLSTATE(state[0], state[1], state[2], state[3], state[4]);
	PQclear(result);
	ereport(ERROR,
			(errcode(code),
			 errmsg("shard \"%s\" answered with an error: %s", call->server, text)));
}

/*
 * The one row of ncols columns that the shard answered, as text (NULL for
 * SQL's null), once the statement has ended: its commit too, so that what
 * is read is what the shard keeps.  An error after the row (a commit that
 * failed) is the call's error.
 */
char	  **
shards_collect_row(ShardCall *call, int ncols)
{
	PGresult   *result = next_result(call);
	char	  **values = palloc0_array(char *, ncols);

	if (result == NULL || PQresultStatus(result) != PGRES_TUPLES_OK || PQntuples(result) != 1 ||
		PQnfields(result) != ncols)
		report_shard_error(call, result);
	for (int i = 0; i < ncols; i++)
		if (!PQgetisnull(result, 0, i))
			values[i] = pstrdup(PQgetvalue(result, 0, i));
	PQclear(result);
	while ((result = next_result(call)) != NULL)
	{
		if (PQresultStatus(result) != PGRES_TUPLES_OK && PQresultStatus(result) != PGRES_COMMAND_OK)
			report_shard_error(call, result);
		PQclear(result);
	}
	return values;
}

void
shards_collect(ShardCall *call, const ShardAsk *ask, int64 *counts)
{
	char	   *answer = shards_collect_row(call, 1)[0];
	Datum	   *cells;
	int			ncells;

	if (answer == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("shard \"%s\" answered no counts", call->server)));
	deconstruct_array(DatumGetArrayTypeP(OidInputFunctionCall(F_ARRAY_IN, answer, INT8OID, -1)),
					  INT8OID, 8, true, TYPALIGN_DOUBLE, &cells, NULL, &ncells);
	if (ncells != ask->nkeys * ask->nsteps)
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("shard \"%s\" answered %d counts, not " INT64_FORMAT, call->server, ncells,
						ask->nkeys * ask->nsteps)));
	for (int i = 0; i < ncells; i++)
		counts[i] += DatumGetInt64(cells[i]);
}

void
shards_close(ShardCall *call)
{
	PGconn	   *conn = call->conn;

	if (conn == NULL)
		return;
	if (PQtransactionStatus(conn) == PQTRANS_ACTIVE)
	{
		PGcancel   *cancel = PQgetCancel(conn);
		char		message[256];

		if (cancel != NULL)
		{
			(void) PQcancel(cancel, message, sizeof(message));
			PQfreeCancel(cancel);
		}
	}
	PQfinish(conn);
	call->conn = NULL;
}
