/*
 * source.c
 *		Protected sources: tables that roles without SELECT on them publish
 *		noisy counts from, each person's contribution bounded.
 *
 * A DBA declares a table a source: its privacy unit column, its time column,
 * the bounds on one unit's contribution (at most max_rows rows, in at most
 * max_groups groups), the ledger that holds the data's budget, and public
 * dimensions with their declared keys.  A role granted the source releases
 * from it through source_counts() and source_running_counts(), which build
 * their query themselves from the declared columns (quoted identifiers; the
 * filters' keys, declared keys all, as parameters: no SQL text from the
 * caller) and run it as the extension's owner with search_path pinned.
 *
 * Each unit's rows are bounded by the rule in bounding.c, after the filters,
 * so that adding or removing all of one unit's rows moves the counts by at
 * most max_rows in all: discrete Laplace noise of scale max_rows / epsilon
 * on every key's count is epsilon-DP for all keys together, one charge for
 * all groups (parallel composition, sound because contcount bounded the
 * contributions, unlike the GROUP BY of open SQL).  Every declared key gets
 * a row, zeros included; a key found only in the data never appears.
 * Counting persons (count => 'persons'), a unit counts once in each group,
 * at its first row there, so it moves at most min(max_rows, max_groups,
 * the dimension's declared keys) counts by 1: that is the sensitivity (L1;
 * Gaussian noise is calibrated to its square root, source_release_noise).
 *
 * The charge goes first to the caller's ledger (a team's quota), then to the
 * source's (the data's budget, which every team's releases add up in), and
 * precedes the query.
 *
 * IDENTIFICATION
 *	  src/sources/source.c
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/jsonb.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "common/int.h"

#include "common/args.h"
#include "common/owner_spi.h"
#include "common/report.h"
#include "ledger/ledger.h"
#include "releases/release.h"
#include "releases/spec.h"
#include "sources/bounding.h"
#include "sources/feed_cache.h"
#include "sources/shards.h"
#include "sources/source.h"
#include "sources/source_blocks.h"

/* Most keys a dimension declares: each is a row of every release. */
#define MAX_KEYS 100000

typedef struct Source
{
	char	   *name;
	Oid			relid;
	AttrNumber	unit;
	AttrNumber	time;
	int64		ledger_id;
	int32		max_rows;
	int32		max_groups;
	SourceBlocks blocks;		/* length 0: none */
} Source;

AttrNumber
source_column_arg(FunctionCallInfo fcinfo, int argno, Oid relid, const char *what)
{
	char	   *column = arg_text(fcinfo, argno, what);
	AttrNumber	attnum = get_attnum(relid, column);

	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist", column,
						get_rel_name(relid))));
	return attnum;
}

/*
 * A time column must be a date or a timestamp: a cast of anything else to
 * timestamptz could fail on a row's value, and its error would show it.
 * Returns the type.
 */
static Oid
require_time_type(Oid relid, AttrNumber attnum)
{
	Oid			type = get_atttype(relid, attnum);

	if (type != TIMESTAMPTZOID && type != TIMESTAMPOID && type != DATEOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the time column of a protected source must be a timestamptz, a timestamp or a date")));
	return type;
}

/*
 * A time column's value as a timestamptz, in SQL that no value of a row can
 * make fail (its error would show the row).  The owner scope's seal pins
 * TimeZone to UTC, under which a timestamp casts to the same instant, read
 * as UTC, always in range.  A date casts to its midnight UTC, but only up to
 * the last day a timestamp holds, 294276-12-31: a later one (or infinity)
 * has no time, so it is in no step and no block.
 */
char *
source_time_sql(Oid relid, AttrNumber attnum, const char *column)
{
	Oid			type = require_time_type(relid, attnum);

	if (type == DATEOID)
		return psprintf("CASE WHEN %s OPERATOR(pg_catalog.<) '294277-01-01'::pg_catalog.date "
						"THEN (%s)::pg_catalog.timestamptz END", column, column);
	if (type == TIMESTAMPOID)
		return psprintf("(%s)::pg_catalog.timestamptz", column);
	return pstrdup(column);
}

/*
 * The source's row, as committed now (and, for management, with the current
 * transaction's changes, so that a source can be declared, given keys and
 * granted in one transaction); an error if there is none.  Owner scope.
 */
static Source
read_source(const char *name, bool committed_only)
{
	static SPIPlanPtr plans[2][2];
	/* a database not yet updated to 0.5 has no blocks */
	bool		blocks = source_blocks_installed();
	const char *sql = blocks ?
		"SELECT relid, unit_attnum, time_attnum, ledger_id, max_rows, max_groups, "
		"block_length, pg_catalog.int8(block_budget OPERATOR(pg_catalog.*) 1000000000::pg_catalog.numeric), "
		"retention FROM contcount.source WHERE name OPERATOR(pg_catalog.=) $1" :
		"SELECT relid, unit_attnum, time_attnum, ledger_id, max_rows, max_groups "
		"FROM contcount.source WHERE name OPERATOR(pg_catalog.=) $1";
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	Source		source;
	HeapTuple	tuple;
	TupleDesc	desc;
	bool		isnull;

	if (committed_only)
		owner_read_committed(&plans[blocks][0], sql, 1, types, values, NULL);
	else
		owner_run(&plans[blocks][1], sql, 1, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("protected source \"%s\" does not exist", name)));
	tuple = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	source.name = pstrdup(name);
	source.relid = DatumGetObjectId(SPI_getbinval(tuple, desc, 1, &isnull));
	source.unit = DatumGetInt16(SPI_getbinval(tuple, desc, 2, &isnull));
	source.time = DatumGetInt16(SPI_getbinval(tuple, desc, 3, &isnull));
	source.ledger_id = DatumGetInt64(SPI_getbinval(tuple, desc, 4, &isnull));
	source.max_rows = DatumGetInt32(SPI_getbinval(tuple, desc, 5, &isnull));
	source.max_groups = DatumGetInt32(SPI_getbinval(tuple, desc, 6, &isnull));
	memset(&source.blocks, 0, sizeof(source.blocks));
	if (blocks)
		source_blocks_read(&source.blocks, tuple, desc, 7);
	return source;
}

Oid
source_relid(const char *name)
{
	return read_source(name, false).relid;
}

/* Has role the rights of a role the source is granted to?  Owner scope. */
static bool
source_granted(const char *name, Oid role)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};

	if (superuser_arg(role))
		return true;
	owner_read_committed(&plan, "SELECT role_id FROM contcount.source_grant "
						 "WHERE source OPERATOR(pg_catalog.=) $1",
						 1, types, values, NULL);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Oid			grantee = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
															 SPI_tuptable->tupdesc, 1, &isnull));

		if (has_privs_of_role(role, grantee))
			return true;
	}
	return false;
}

/* The source, as committed now, if granted to role.  Owner scope. */
static Source
read_granted_source(const char *name, Oid role)
{
	Source		source = read_source(name, true);

	if (!source_granted(name, role))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for protected source \"%s\"", name),
				 errhint("A superuser grants it with contcount.grant_source().")));
	return source;
}

/*
 * Warn when PostgreSQL's statistics still show every role exact counts (a
 * protected table's rows, or those of contcount's own tables behind the
 * counters): the DBA declaring a source is the one who can close them, with
 * contcount.lockdown_statistics().  Owner scope.
 */
static void
warn_unless_locked_down(void)
{
	static SPIPlanPtr plan = NULL;
	bool		isnull;
	Datum		open;

	/* a database not yet updated to 0.6 has no check to run */
	if (!OidIsValid(LookupFuncName(list_make2(makeString("contcount"),
											  makeString("statistics_lockdown")),
								   0, NULL, true)))
		return;
	owner_run(&plan, "SELECT pg_catalog.string_agg(pg_catalog.format('%s: %s', kind, n), ', ' ORDER BY kind) "
			  "FROM (SELECT kind, pg_catalog.count(DISTINCT door) AS n "
			  "FROM contcount.statistics_lockdown() "
			  "WHERE open_to OPERATOR(pg_catalog.=) 'PUBLIC' GROUP BY kind) doors",
			  0, NULL, NULL, NULL, SPI_OK_SELECT);
	open = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
		ereport(WARNING,
				(errmsg("every role may read exact counts of this table in PostgreSQL's statistics"),
				 errdetail("Doors open to PUBLIC, by kind: %s (contcount.statistics_lockdown() lists them).",
						   TextDatumGetCString(open)),
				 errhint("A superuser closes them with contcount.lockdown_statistics(), "
						 "revokes CONNECT on the other databases from PUBLIC, and keeps the "
						 "settings of kind \"setting\" out of the server's configuration.")));
}

/*
 * protect_table(name, relation, unit_column, time_column, ledger, max_rows,
 * max_groups): declare a protected source, and the trigger that will feed
 * its counters (a DBA's action: it locks the table until commit).  Not over
 * the rows of a source whose budget is held per block.
 */
PG_FUNCTION_INFO_V1(contcount_protect_table);
Datum
contcount_protect_table(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr ledger_plan = NULL;
	static SPIPlanPtr plan = NULL;
	char	   *name = arg_text(fcinfo, 0, "source name");
	Oid			relid;
	AttrNumber	unit;
	AttrNumber	time;
	char	   *ledger = arg_text(fcinfo, 4, "ledger");
	int32		max_rows;
	int32		max_groups;
	OwnerScope	scope;
	Oid			types[7] = {TEXTOID, OIDOID, INT2OID, INT2OID, INT8OID, INT4OID, INT4OID};
	Datum		values[7];
	Datum		ledger_name[1] = {CStringGetTextDatum(ledger)};
	Oid			ledger_type[1] = {TEXTOID};
	bool		isnull;

	if (name[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("source name must not be empty")));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	relid = PG_GETARG_OID(1);
	unit = source_column_arg(fcinfo, 2, relid, "unit column");
	time = source_column_arg(fcinfo, 3, relid, "time column");
	require_time_type(relid, time);
	max_rows = DatumGetInt32(arg_required(fcinfo, 5, "max_rows"));
	max_groups = DatumGetInt32(arg_required(fcinfo, 6, "max_groups"));
	if (max_rows < 1 || max_groups < 1 || max_rows > 1000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_rows must be from 1 to 1000000 and max_groups at least 1")));

	owner_begin(&scope);
	owner_select_existing(&ledger_plan, "SELECT id FROM contcount.ledger "
						  "WHERE name OPERATOR(pg_catalog.=) $1 AND dropped_at IS NULL",
						  1, ledger_type, ledger_name, "ledger", ledger);
	values[0] = CStringGetTextDatum(name);
	values[1] = ObjectIdGetDatum(relid);
	values[2] = Int16GetDatum(unit);
	values[3] = Int16GetDatum(time);
	values[4] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	values[5] = Int32GetDatum(max_rows);
	values[6] = Int32GetDatum(max_groups);
	source_blocks_require_alone(name, relid, false);
	owner_insert_new(&plan, "INSERT INTO contcount.source "
					 "(name, relid, unit_attnum, time_attnum, ledger_id, max_rows, max_groups, created_by) "
					 "VALUES ($1, $2, $3, $4, $5, $6, $7, pg_catalog.to_regrole(CURRENT_USER)) "
					 "ON CONFLICT (name) DO NOTHING",
					 7, types, values, "protected source", name);
	feed_cache_changed();
	warn_unless_locked_down();
	owner_end(&scope);
	/* the counters of the source attach to it without a lock on the table */
	source_counter_feed(name, relid);
	PG_RETURN_VOID();
}

/* source_dimension(source, column, keys): declare a public dimension and its keys. */
PG_FUNCTION_INFO_V1(contcount_source_dimension);
Datum
contcount_source_dimension(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	static SPIPlanPtr distinct_plan = NULL;
	char	   *name = arg_text(fcinfo, 0, "source name");
	char	   *column = arg_text(fcinfo, 1, "dimension column");
	bool		isnull;
	OwnerScope	scope;
	Source		source;
	AttrNumber	attnum;
	ArrayType  *keys;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	Oid			types[4] = {TEXTOID, TEXTOID, INT2OID, TEXTARRAYOID};
	Datum		values[4];

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("keys must not be null")));
	keys = PG_GETARG_ARRAYTYPE_P(2);
	if (ARR_NDIM(keys) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("keys must be a one-dimensional array")));
	deconstruct_array(keys, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	if (n < 1 || n > MAX_KEYS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a dimension declares from 1 to %d keys", MAX_KEYS)));
	for (int i = 0; i < n; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("keys must not be null")));

	owner_begin(&scope);
	source = read_source(name, false);
	attnum = get_attnum(source.relid, column);
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist", column,
						get_rel_name(source.relid))));
	values[0] = PointerGetDatum(keys);
	owner_run(&distinct_plan, "SELECT pg_catalog.count(DISTINCT k) OPERATOR(pg_catalog.=) "
			  "pg_catalog.cardinality($1) FROM pg_catalog.unnest($1) k",
			  1, &types[3], values, NULL, SPI_OK_SELECT);
	if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a key is declared twice")));
	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(column);
	values[2] = Int16GetDatum(attnum);
	values[3] = PointerGetDatum(keys);
	owner_run(&plan, "INSERT INTO contcount.source_dimension (source, name, attnum, keys) "
			  "VALUES ($1, $2, $3, $4) "
			  "ON CONFLICT (source, name) DO UPDATE SET attnum = EXCLUDED.attnum, keys = EXCLUDED.keys",
			  4, types, values, NULL, SPI_OK_INSERT);
	owner_end(&scope);
	/* the triggers' kept lookups name the declaration's version */
	feed_cache_changed();
	PG_RETURN_VOID();
}

/* grant_source(source, role) and revoke_source(source, role). */
static void
change_grant(FunctionCallInfo fcinfo, bool grant)
{
	static SPIPlanPtr grant_plan = NULL;
	static SPIPlanPtr revoke_plan = NULL;
	char	   *name = arg_text(fcinfo, 0, "source name");
	OwnerScope	scope;
	Oid			types[2] = {TEXTOID, OIDOID};
	Datum		values[2];

	values[1] = arg_required(fcinfo, 1, "role");
	owner_begin(&scope);
	(void) read_source(name, false);
	values[0] = CStringGetTextDatum(name);
	if (grant)
		owner_run(&grant_plan, "INSERT INTO contcount.source_grant (source, role_id) VALUES ($1, $2) "
				  "ON CONFLICT DO NOTHING", 2, types, values, NULL, SPI_OK_INSERT);
	else
		owner_run(&revoke_plan, "DELETE FROM contcount.source_grant "
				  "WHERE source OPERATOR(pg_catalog.=) $1 AND role_id OPERATOR(pg_catalog.=) $2",
				  2, types, values, NULL, SPI_OK_DELETE);
	owner_end(&scope);
}

char *
source_counted_by(const char *source)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(source)};

	if (!counter_sources_installed())
		return NULL;
	owner_run(&plan, "SELECT name FROM contcount.counter "
			  "WHERE source OPERATOR(pg_catalog.=) $1 ORDER BY name LIMIT 1",
			  1, types, values, NULL, SPI_OK_SELECT);
	return SPI_processed > 0 ? SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1) : NULL;
}

/*
 * drop_source(source): releases from it are refused from then on.  Not while
 * a counter counts it: the counter has paid the source's ledger for its
 * whole life, and its trigger needs the source's bounds.  The trigger that
 * fed its counters goes with it (a DBA's action: it locks the table).
 */
PG_FUNCTION_INFO_V1(contcount_drop_source);
Datum
contcount_drop_source(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *name = arg_text(fcinfo, 0, "source name");
	OwnerScope	scope;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	char	   *counter;
	Oid			relid;

	owner_begin(&scope);
	counter = source_counted_by(name);
	if (counter != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg("protected source \"%s\" is counted by counter \"%s\"", name, counter),
				 errhint("Drop its counters first.")));
	relid = source_relid(name);
	owner_run(&plan, "DELETE FROM contcount.source WHERE name OPERATOR(pg_catalog.=) $1",
			  1, types, values, NULL, SPI_OK_DELETE);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("protected source \"%s\" does not exist", name)));
	owner_end(&scope);
	feed_cache_changed();
	source_counter_unfeed(name, relid);
	PG_RETURN_VOID();
}

/*
 * feed_source(source): create the trigger that feeds the source's counters,
 * if it is not there (protect_table creates it; this is for a trigger
 * dropped by hand).  A DBA's action: it locks the table until commit.
 */
PG_FUNCTION_INFO_V1(contcount_feed_source);
Datum
contcount_feed_source(PG_FUNCTION_ARGS)
{
	char	   *name = arg_text(fcinfo, 0, "source name");
	OwnerScope	scope;
	Oid			relid;

	owner_begin(&scope);
	relid = source_relid(name);
	owner_end(&scope);
	source_counter_feed(name, relid);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(contcount_grant_source);
Datum
contcount_grant_source(PG_FUNCTION_ARGS)
{
	change_grant(fcinfo, true);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(contcount_revoke_source);
Datum
contcount_revoke_source(PG_FUNCTION_ARGS)
{
	change_grant(fcinfo, false);
	PG_RETURN_VOID();
}

char *
source_live_column(Oid relid, AttrNumber attnum)
{
	/* unlike get_attname(), NULL for a dropped column */
	HeapTuple	tuple = SearchSysCacheAttNum(relid, attnum);
	char	   *name;

	if (!HeapTupleIsValid(tuple))
		return NULL;
	name = pstrdup(NameStr(((Form_pg_attribute) GETSTRUCT(tuple))->attname));
	ReleaseSysCache(tuple);
	return name;
}

/* A column of the source's table as an identifier, or an error if it is gone. */
static char *
column_sql(const Source *source, AttrNumber attnum)
{
	char	   *column = source_live_column(source->relid, attnum);

	if (column == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("a declared column of protected source \"%s\" is gone", source->name)));
	return pstrdup(quote_identifier(column));
}

/*
 * Per-unit counts are kept by (the digest of) the unit's text form, which
 * must then be one a value, as equality sees values: not so for numeric (1.0 and 1.00) or
 * text under a nondeterministic collation ('Ann' and 'ann').
 */
static void
require_one_text_form(const Source *source)
{
	Oid			type;
	int32		typmod;
	Oid			collation;

	get_atttypetypmodcoll(source->relid, source->unit, &type, &typmod, &collation);
	if (!(type == INT2OID || type == INT4OID || type == INT8OID || type == UUIDOID ||
		  ((type == TEXTOID || type == VARCHAROID) && get_collation_isdeterministic(collation))))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a counter over protected source \"%s\" needs a unit column of type smallint, "
						"integer, bigint, uuid, or text or varchar with a deterministic collation",
						source->name)));
}

/* What a counter or a preview needs of a source, in outer memory.  Owner scope. */
static void
bounds_of(const Source *source, SourceBounds *bounds, MemoryContext outer)
{
	bounds->blocks = source->blocks;
	bounds->relid = source->relid;
	bounds->unit = source->unit;
	bounds->max_rows = source->max_rows;
	bounds->ledger = MemoryContextStrdup(outer, source_ledger_name(source->name));
}

void
source_for_counter(const char *name, SourceBounds *bounds)
{
	MemoryContext outer = CurrentMemoryContext;
	OwnerScope	scope;
	Source		source;

	owner_begin(&scope);
	source = read_granted_source(name, scope.caller);
	if (get_rel_name(source.relid) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the table of protected source \"%s\" is gone", name)));
	(void) column_sql(&source, source.unit);
	require_one_text_form(&source);
	source_counter_require_feed(name, source.relid);
	/* the trigger tells a row's block from its time column */
	if (source.blocks.length > 0)
	{
		(void) column_sql(&source, source.time);
		require_time_type(source.relid, source.time);
	}
	bounds_of(&source, bounds, outer);
	owner_end(&scope);
}

void
source_for_release(const char *name, SourceTable *table)
{
	MemoryContext outer = CurrentMemoryContext;
	OwnerScope	scope;
	Source		source;
	char	   *relname;
	char	   *schema;
	int32		typmod;

	owner_begin(&scope);
	source = read_granted_source(name, scope.caller);
	/* its releases would pay the source's ledger, which no block limits */
	if (source.blocks.length > 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a running mean cannot release from protected source \"%s\", whose budget is held per block", name)));
	relname = get_rel_name(source.relid);
	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the table of protected source \"%s\" is gone", name)));
	schema = get_namespace_name(get_rel_namespace(source.relid));
	table->relid = source.relid;
	table->relation = MemoryContextStrdup(outer, quote_qualified_identifier(schema, relname));
	table->unit = MemoryContextStrdup(outer, column_sql(&source, source.unit));
	/* its type may have changed since it was declared */
	table->time = MemoryContextStrdup(outer, source_time_sql(source.relid, source.time,
															 column_sql(&source, source.time)));
	get_atttypetypmodcoll(source.relid, source.unit, &table->unit_type, &typmod,
						  &table->unit_collation);
	table->ledger = MemoryContextStrdup(outer, source_ledger_name(name));
	owner_end(&scope);
}

char *
source_ledger_name(const char *source)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(source)};

	owner_read_committed(&plan, "SELECT l.name FROM contcount.source s JOIN contcount.ledger l "
						 "ON l.id OPERATOR(pg_catalog.=) s.ledger_id "
						 "WHERE s.name OPERATOR(pg_catalog.=) $1 AND l.dropped_at IS NULL",
						 1, types, values, NULL);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("the ledger of protected source \"%s\" was dropped", source)));
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

/* Most filters a release takes: one per dimension, in practice. */
#define MAX_FILTERS 16

/*
 * What a release from a source needs, read as committed now, and checked
 * before anything is charged: the source (granted to the caller), the
 * dimension's keys (or one key for all rows), the filters, the source's
 * ledger by name and the query with its parameters.  In the caller's memory.
 */
typedef struct SourceRelease
{
	Source		source;
	bool		has_dimension;
	Datum		keys;			/* text[], or 0 without a dimension */
	int			nkeys;
	bool		persons;		/* count each unit once a group */
	int64		sensitivity;	/* what one unit moves the counts by, in all */
	Oid			unit_type;
	Oid			unit_collation;
	char	   *source_ledger;
	char	   *sql;
	AttrNumber	dimension;		/* InvalidAttrNumber without one */
	int			nfilters;
	AttrNumber	filters[MAX_FILTERS];	/* their keys: values[] from 2 stepped, else 0 */
	int			nparams;
	/* the steps' [$1, $2), the filters, and a window of blocks' last two */
	Oid			types[2 + MAX_FILTERS + 2];
	Datum		values[2 + MAX_FILTERS + 2];
} SourceRelease;

/* A dimension of a source as committed: its column and declared keys. */
static AttrNumber
read_dimension(const char *source, const char *dimension, Datum *keys)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(source), CStringGetTextDatum(dimension)};
	bool		isnull;

	owner_read_committed(&plan, "SELECT attnum, keys FROM contcount.source_dimension "
						 "WHERE source OPERATOR(pg_catalog.=) $1 AND name OPERATOR(pg_catalog.=) $2",
						 2, types, values, NULL);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("protected source \"%s\" has no dimension \"%s\"", source, dimension)));
	*keys = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	return DatumGetInt16(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

static void
bad_filter(const char *message)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s", message),
			 errhint("A filter is a JSON object mapping dimensions to arrays of their declared keys, "
					 "such as '{\"country\": [\"FR\", \"DE\"]}'.")));
}

/*
 * The filter's dimensions: for each, its column and the keys it keeps (a
 * text[] in outer memory), all of them declared keys of a declared
 * dimension.  Owner scope; returns how many.
 */
static int
read_filters(const char *source, Jsonb *filter, AttrNumber *columns, Datum *wanted,
			 MemoryContext outer)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken token;
	int			nfilters = 0;

	if (!JB_ROOT_IS_OBJECT(filter))
		bad_filter("a filter must be a JSON object");
	it = JsonbIteratorInit(&filter->root);
	(void) JsonbIteratorNext(&it, &v, false);	/* the object's start */
	while ((token = JsonbIteratorNext(&it, &v, false)) == WJB_KEY)
	{
		char	   *dimension = pnstrdup(v.val.string.val, v.val.string.len);
		Datum		declared;
		Datum	   *elems;
		int			nelems;
		bool	   *taken;
		Datum	   *keys;
		int			nkeys = 0;
		MemoryContext old;

		if (nfilters == MAX_FILTERS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a release takes at most %d filters", MAX_FILTERS)));
		columns[nfilters] = read_dimension(source, dimension, &declared);
		deconstruct_array(DatumGetArrayTypeP(declared), TEXTOID, -1, false, TYPALIGN_INT,
						  &elems, NULL, &nelems);
		keys = palloc_array(Datum, nelems);
		taken = palloc0_array(bool, nelems);
		if (JsonbIteratorNext(&it, &v, false) != WJB_BEGIN_ARRAY)
			bad_filter(psprintf("the filter's keys of dimension \"%s\" must be a JSON array of strings",
								  dimension));
		while ((token = JsonbIteratorNext(&it, &v, false)) == WJB_ELEM)
		{
			text	   *key;
			int			found = -1;

			if (v.type != jbvString)
				bad_filter(psprintf("the filter's keys of dimension \"%s\" must be a JSON array of strings",
									  dimension));
			key = cstring_to_text_with_len(v.val.string.val, v.val.string.len);
			for (int k = 0; k < nelems && found < 0; k++)
				if (DatumGetBool(DirectFunctionCall2Coll(texteq, C_COLLATION_OID, elems[k],
														 PointerGetDatum(key))))
					found = k;
			if (found < 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("\"%s\" is not a declared key of dimension \"%s\" of protected source \"%s\"",
								text_to_cstring(key), dimension, source)));
			/* the declared key, once, however often the filter names it */
			if (!taken[found])
				keys[nkeys++] = elems[found];
			taken[found] = true;
		}
		if (token != WJB_END_ARRAY)
			bad_filter(psprintf("the filter's keys of dimension \"%s\" must be a JSON array of strings",
								  dimension));
		if (nkeys == 0)
			bad_filter(psprintf("the filter on dimension \"%s\" keeps no key", dimension));
		old = MemoryContextSwitchTo(outer);
		wanted[nfilters++] = PointerGetDatum(construct_array(keys, nkeys, TEXTOID, -1, false,
															 TYPALIGN_INT));
		MemoryContextSwitchTo(old);
	}
	return nfilters;
}

/*
 * The query of a release: its one aggregate, bounded_counts, over the rows
 * of the source's table that have a unit, pass the filters (each a text[] of
 * a column's kept keys: $3 on, stepped, else $1 on), stepped, have a time in
 * [$1, $2) and, with blocks, a time in the window of the two parameters
 * after the filters'.  An error if the table or a declared column is gone.
 */
static char *
bounded_counts_sql(const Source *source, AttrNumber dimension, bool stepped, int nfilters,
				   const AttrNumber *filters, bool window)
{
	char	   *relname = get_rel_name(source->relid);
	char	   *unit;
	char	   *time;
	StringInfoData sql;

	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the table of protected source \"%s\" is gone", source->name)));
	unit = column_sql(source, source->unit);
	/* its type may have changed since it was declared */
	time = source_time_sql(source->relid, source->time, column_sql(source, source->time));
	initStringInfo(&sql);
	appendStringInfo(&sql,
					 "SELECT contcount.bounded_counts(unit, key, t ORDER BY unit, t, key) "
					 "FROM (SELECT %s AS unit, %s AS key, %s AS t FROM %s"
					 " WHERE %s IS NOT NULL",
					 unit,
					 dimension != InvalidAttrNumber ?
					 psprintf("(%s)::pg_catalog.text", column_sql(source, dimension)) :
					 "NULL::pg_catalog.text",
					 time,
					 quote_qualified_identifier(get_namespace_name(get_rel_namespace(source->relid)),
												relname),
					 unit);
	if (stepped)
		appendStringInfo(&sql, " AND %s OPERATOR(pg_catalog.>=) $1"
						 " AND %s OPERATOR(pg_catalog.<) $2", time, time);
	for (int i = 0; i < nfilters; i++)
		appendStringInfo(&sql, " AND (%s)::pg_catalog.text OPERATOR(pg_catalog.=) ANY ($%d)",
						 column_sql(source, filters[i]), (stepped ? 3 : 1) + i);
	if (window)
		appendStringInfo(&sql, " AND %s OPERATOR(pg_catalog.>=) $%d"
						 " AND %s OPERATOR(pg_catalog.<) $%d",
						 time, (stepped ? 3 : 1) + nfilters, time, (stepped ? 4 : 2) + nfilters);
	appendStringInfoString(&sql, ") rows");
	return sql.data;
}

char *
source_rows_sql(Oid relid, AttrNumber unit, AttrNumber time, AttrNumber dimension, bool stepped,
				int nfilters, const AttrNumber *filters, bool window)
{
	Source		table = {0};

	table.name = get_rel_name(relid);
	table.relid = relid;
	table.unit = unit;
	table.time = time;
	return bounded_counts_sql(&table, dimension, stepped, nfilters, filters, window);
}

/*
 * Keep of the release's keys those the filter keeps, in their declared
 * order: a filter on the released dimension is public, so the keys it
 * excludes get no row (they would be pure noise around 0).  wanted is the
 * filter's text[] of declared keys.
 */
static void
keep_filtered_keys(SourceRelease *release, Datum wanted)
{
	Datum	   *declared;
	Datum	   *kept;
	Datum	   *filtered;
	int			ndeclared;
	int			nfiltered;
	int			nkept = 0;

	deconstruct_array(DatumGetArrayTypeP(release->keys), TEXTOID, -1, false, TYPALIGN_INT,
					  &declared, NULL, &ndeclared);
	deconstruct_array(DatumGetArrayTypeP(wanted), TEXTOID, -1, false, TYPALIGN_INT,
					  &filtered, NULL, &nfiltered);
	kept = palloc(sizeof(Datum) * Max(ndeclared, 1));
	for (int d = 0; d < ndeclared; d++)
	{
		for (int f = 0; f < nfiltered; f++)
		{
			if (DatumGetBool(DirectFunctionCall2Coll(texteq, C_COLLATION_OID, declared[d], filtered[f])))
			{
				kept[nkept++] = declared[d];
				break;
			}
		}
	}
	/* read_filters() refused a filter that keeps no key */
	release->keys = PointerGetDatum(construct_array(kept, nkept, TEXTOID, -1, false, TYPALIGN_INT));
	release->nkeys = nkept;
}

/*
 * What one unit moves a release's counts by in all (L1): max_rows rows, or,
 * counting persons, 1 in each of at most max_rows and max_groups groups, of
 * nkeys declared keys (public, whatever a filter keeps: as the charge, the
 * noise is that of the release without a filter).
 */
static int64
release_sensitivity(const Source *source, bool persons, int nkeys)
{
	if (!persons)
		return source->max_rows;
	return Min(Min(source->max_rows, source->max_groups), nkeys);
}

/*
 * Persons over a dimension with Gaussian noise: k keys' streams each moved
 * by 1 are k mechanisms of sensitivity 1 composed (source.h has the whole
 * argument), cheaper in noise than one of sensitivity k at the same rho.
 */
cc_cost
source_release_noise(bool persons, cc_params *params)
{
	cc_cost		cost = cc_params_cost(params);
	cc_params	noise = *params;
	cc_cost		per_key;
	uint64		keys = (uint64) params->sensitivity;

	if (!persons || params->privacy != CC_ZCDP || keys < 2)
		return cost;
	noise.sensitivity = 1;
	noise.rho_units = params->rho_units / keys;
	if (cc_params_prepare(&noise) != CC_OK)
		return cost;
	per_key = cc_params_cost(&noise);
	/* only a pair of coordinates moved by a shift composes by multiplying */
	if (per_key.gauss.shift == 0 ||
		__builtin_mul_overflow(per_key.gauss.coordinates, keys, &per_key.gauss.coordinates))
		return cost;
	per_key.units = cost.units;
	*params = noise;
	return per_key;
}

bool
source_count_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *count;

	/* the functions of a database not yet updated to 0.6 count rows */
	if (PG_NARGS() <= argno)
		return false;
	count = arg_text(fcinfo, argno, "count");
	if (strcmp(count, "rows") == 0)
		return false;
	if (strcmp(count, "persons") == 0)
		return true;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("count must be \"rows\" or \"persons\", not \"%s\"", count)));
	return false;
}

int64
source_for_preview(const char *name, const char *dimension, bool persons, SourceBounds *bounds)
{
	MemoryContext outer = CurrentMemoryContext;
	OwnerScope	scope;
	Source		source;
	int			nkeys = 1;

	owner_begin(&scope);
	source = read_granted_source(name, scope.caller);
	if (dimension != NULL)
	{
		Datum		keys;
		ArrayType  *array;

		(void) read_dimension(name, dimension, &keys);
		array = DatumGetArrayTypeP(keys);
		nkeys = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	}
	bounds_of(&source, bounds, outer);
	owner_end(&scope);
	return release_sensitivity(&source, persons, nkeys);
}

static void
prepare_release(SourceRelease *release, const char *name, const char *dimension, Jsonb *filter,
				bool stepped, bool persons)
{
	MemoryContext outer = CurrentMemoryContext;
	MemoryContext old;
	OwnerScope	scope;
	AttrNumber	attnum = InvalidAttrNumber;
	AttrNumber *filter_columns = release->filters;
	int			nfilters = 0;
	int			first = stepped ? 2 : 0;
	int32		typmod;

	bounding_require_aggregate();
	owner_begin(&scope);
	release->source = read_granted_source(name, scope.caller);
	release->has_dimension = dimension != NULL;
	release->keys = (Datum) 0;
	release->nkeys = 1;
	if (dimension != NULL)
	{
		Datum		keys;

		attnum = read_dimension(name, dimension, &keys);
		old = MemoryContextSwitchTo(outer);
		release->keys = datumCopy(keys, false, -1);
		MemoryContextSwitchTo(old);
		release->nkeys = ArrayGetNItems(ARR_NDIM(DatumGetArrayTypeP(release->keys)),
										ARR_DIMS(DatumGetArrayTypeP(release->keys)));
	}
	release->persons = persons;
	release->sensitivity = release_sensitivity(&release->source, persons, release->nkeys);
	if (filter != NULL)
		nfilters = read_filters(name, filter, filter_columns, &release->values[first], outer);
	for (int i = 0; i < nfilters; i++)
		release->types[first + i] = TEXTARRAYOID;
	release->nparams = first + nfilters;
	release->nfilters = nfilters;
	release->dimension = attnum;
	if (release->source.blocks.length > 0)
	{
		/* the window, set when the release is charged */
		release->types[release->nparams++] = TIMESTAMPTZOID;
		release->types[release->nparams++] = TIMESTAMPTZOID;
	}

	release->source_ledger = MemoryContextStrdup(outer, source_ledger_name(name));

	old = MemoryContextSwitchTo(outer);
	release->sql = bounded_counts_sql(&release->source, attnum, stepped, nfilters, filter_columns,
									  release->source.blocks.length > 0);
	MemoryContextSwitchTo(old);
	get_atttypetypmodcoll(release->source.relid, release->source.unit, &release->unit_type,
						  &typmod, &release->unit_collation);
	owner_end(&scope);
	for (int i = 0; i < nfilters; i++)
		if (dimension != NULL && filter_columns[i] == attnum)
			keep_filtered_keys(release, release->values[first + i]);
}

/* A column of a table as numbered in one of its partitions. */
static AttrNumber
partition_column(Oid relid, Oid partition, AttrNumber attnum)
{
	return get_attnum(partition, get_attname(relid, attnum, false));
}

/* Bound the rows of one partition that is not a shard, here.  Owner scope. */
static void
bound_partition(const SourceRelease *release, Bounding *bounding, Oid partition)
{
	Oid			relid = release->source.relid;
	AttrNumber	filters[MAX_FILTERS];

	for (int i = 0; i < release->nfilters; i++)
		filters[i] = partition_column(relid, partition, release->filters[i]);
	bounding_run(bounding,
				 source_rows_sql(partition, partition_column(relid, partition, release->source.unit),
								 partition_column(relid, partition, release->source.time),
								 release->dimension == InvalidAttrNumber ? InvalidAttrNumber :
								 partition_column(relid, partition, release->dimension),
								 bounding->step_usec > 0, release->nfilters, filters,
								 release->source.blocks.length > 0),
				 release->nparams, release->types, release->values);
}

/* What the shards are asked: the release's rule, keys, steps and filters. */
static void
shard_ask(const SourceRelease *release, const Bounding *bounding, ShardAsk *ask)
{
	ask->relid = release->source.relid;
	ask->unit = release->source.unit;
	ask->time = release->source.time;
	ask->dimension = release->dimension;
	ask->keys = release->keys;
	ask->nkeys = release->nkeys;
	ask->max_rows = release->source.max_rows;
	ask->max_groups = release->source.max_groups;
	ask->persons = release->persons;
	ask->start = bounding->start;
	ask->step_usec = bounding->step_usec;
	ask->nsteps = bounding->nsteps;
	ask->nfilters = release->nfilters;
	ask->filters = release->filters;
	ask->filter_keys = &release->values[bounding->step_usec > 0 ? 2 : 0];
	ask->window = release->source.blocks.length > 0;
	ask->window_from = ask->window ? DatumGetTimestampTz(release->values[release->nparams - 2]) : 0;
	ask->window_to = ask->window ? DatumGetTimestampTz(release->values[release->nparams - 1]) : 0;
}

/*
 * A release over a table hash-partitioned by its unit, some partitions
 * shards: each person's rows are in one partition, so each is bounded on
 * its own and the counts added up, the shards' on the shards (all asked
 * before any is waited for), the others' here while the shards work.  A
 * shard that fails fails the release, after its charge.  Owner scope.
 */
static void
sharded_counts(const SourceRelease *release, Bounding *bounding, List *partitions)
{
	ShardCall  *calls = palloc0_array(ShardCall, list_length(partitions));
	ShardAsk	ask;

	shard_ask(release, bounding, &ask);
	for (int i = 0; i < list_length(partitions); i++)
		calls[i].partition = list_nth_oid(partitions, i);
	PG_TRY();
	{
		for (int i = 0; i < list_length(partitions); i++)
			if (shards_is_shard(calls[i].partition))
				shards_send(&calls[i], &ask);
		for (int i = 0; i < list_length(partitions); i++)
			if (calls[i].conn == NULL)
				bound_partition(release, bounding, calls[i].partition);
		for (int i = 0; i < list_length(partitions); i++)
			if (calls[i].conn != NULL)
				shards_collect(&calls[i], &ask, bounding->counts);
	}
	PG_FINALLY();
	{
		for (int i = 0; i < list_length(partitions); i++)
			shards_close(&calls[i]);
	}
	PG_END_TRY();
}

/* Has the table a partition that is a shard? */
static bool
has_shard(List *partitions)
{
	ListCell   *lc;

	foreach(lc, partitions)
		if (shards_is_shard(lfirst_oid(lc)))
			return true;
	return false;
}

/*
 * The bounded counts of a release, nsteps a key in the keys' order, steps
 * of step_usec from start (one step of all rows: nsteps 1, step_usec 0),
 * its query run as the owner; start and end are its $1 and $2, stepped.
 * A table hash-partitioned by the unit with shards among its partitions is
 * bounded partition by partition; any other, here, in one query (through
 * postgres_fdw for its foreign partitions): a person's rows split between
 * servers are bounded only where they all are.
 */
static int64 *
bounded_counts(SourceRelease *release, TimestampTz start, int64 step_usec, int64 nsteps)
{
	Bounding	bounding;
	OwnerScope	scope;
	List	   *partitions;

	if (step_usec > 0)
	{
		release->types[0] = TIMESTAMPTZOID;
		release->values[0] = TimestampTzGetDatum(start);
		release->types[1] = TIMESTAMPTZOID;
		release->values[1] = TimestampTzGetDatum(start + step_usec * nsteps);
	}
	bounding_init(&bounding, release->source.max_rows, release->source.max_groups,
				  release->persons, release->unit_type, release->unit_collation, release->keys,
				  start, step_usec, nsteps);
	owner_begin(&scope);
	partitions = shards_partitions(release->source.relid, release->source.unit);
	if (has_shard(partitions))
		sharded_counts(release, &bounding, partitions);
	else
		bounding_run(&bounding, release->sql, release->nparams, release->types, release->values);
	owner_end(&scope);
	return bounding.counts;
}

/*
 * Charge a release before anything is computed, once for every key and
 * step: to the caller's ledger, then to the source's ledger or, with
 * blocks, to the blocks of the window the release reads, which its query is
 * then given.  Stepped, the release's steps cover [start, end).
 */
static void
charge_release(SourceRelease *release, const char *ledger, cc_cost cost, const char *function,
			   bool stepped, TimestampTz start, TimestampTz end)
{
	TimestampTz from;
	TimestampTz to;
	StoreBlockRun run;

	if (release->source.blocks.length == 0)
	{
		ledger_charge_source(ledger, release->source_ledger, cost, function);
		return;
	}
	source_blocks_window(&release->source.blocks, stepped, start, end, &from, &to, &run);
	release->values[release->nparams - 2] = TimestampTzGetDatum(from);
	release->values[release->nparams - 1] = TimestampTzGetDatum(to);
	ledger_charge_blocks(ledger, release->source_ledger, cost, function, &run,
						 release->source.blocks.budget_units);
}

/* The key at position k (from 0) of the release's keys; null without a dimension. */
static Datum
release_key(const SourceRelease *release, int k, bool *isnull)
{
	int			index = k + 1;

	*isnull = !release->has_dimension;
	if (!release->has_dimension)
		return (Datum) 0;
	return array_get_element(release->keys, 1, &index, -1, -1, false, TYPALIGN_INT, isnull);
}

/* The filter argument at argno, or NULL. */
static Jsonb *
filter_arg(FunctionCallInfo fcinfo, int argno)
{
	/* 0.4's functions, until ALTER EXTENSION UPDATE, have no filter */
	return PG_NARGS() <= argno || PG_ARGISNULL(argno) ? NULL : PG_GETARG_JSONB_P(argno);
}

/*
 * source_counts(source, epsilon, dimension, ledger, filter, count): a noisy
 * count of the bounded rows (or persons) per declared key of the dimension
 * (or of all, without one), of the rows that pass the filter.
 */
PG_FUNCTION_INFO_V1(contcount_source_counts);
Datum
contcount_source_counts(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name = arg_text(fcinfo, 0, "source name");
	char	   *dimension = PG_ARGISNULL(2) ? NULL : TextDatumGetCString(PG_GETARG_DATUM(2));
	char	   *ledger = PG_ARGISNULL(3) ? NULL : TextDatumGetCString(PG_GETARG_DATUM(3));
	NullableDatum epsilon = {PG_GETARG_DATUM(1), PG_ARGISNULL(1)};
	NullableDatum horizon = {Int64GetDatum(1), false};
	SpecArgs	args;
	cc_params	params;
	SourceRelease release;
	int64	   *counts;

	InitMaterializedSRF(fcinfo, 0);
	prepare_release(&release, name, dimension, filter_arg(fcinfo, 4), false,
					source_count_arg(fcinfo, 5));
	/* one step of simple II, its noise scaled to what one unit adds */
	spec_with_defaults(&args, "simple_ii", epsilon, horizon);
	args.field[SPEC_SENSITIVITY].value = Int64GetDatum(release.sensitivity);
	spec_to_params(&args, &params);

	charge_release(&release, ledger, cc_params_cost(&params), "source_counts", false, 0, 0);

	counts = bounded_counts(&release, 0, 0, 1);
	for (int k = 0; k < release.nkeys; k++)
	{
		cc_state   *state = palloc(cc_state_size(&params));
		cc_release	noisy;
		Datum		values[3];
		bool		nulls[3] = {false};

		cc_state_init(state, &params);
		push_or_report(state, counts[k]);
		cc_read(state, &noisy);
		values[0] = release_key(&release, k, &nulls[0]);
		values[1] = Int64GetDatum(noisy.noisy);
		values[2] = Float8GetDatum(sqrt(noisy.variance));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(state);
	}
	return (Datum) 0;
}

/* Most cells (keys times steps) one running release holds. */
#define MAX_CELLS 10000000

/*
 * Refuse a running release its parameters cannot make sound or that holds
 * too many counts.  The noise of blt and blt_scaled covers one moving
 * stream's rounding of its fixed point; a person whose rows reach several
 * keys moves several streams, each with its own rounding, which its rho
 * does not cover.
 */
static void
require_running_release(const SourceRelease *release, const cc_params *params, int64 steps)
{
	if ((params->kind == CC_BLT || params->kind == CC_BLT_SCALED) && release->nkeys > 1 &&
		release->source.max_groups > 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s cannot release a dimension of a source whose persons reach several groups",
						cc_kind_name(params->kind)),
				 errdetail("Source \"%s\" lets a person count in %d groups.", release->source.name,
						   release->source.max_groups),
				 errhint("Use mechanism gaussian_honaker, or release without a dimension.")));
	if (steps > MAX_CELLS / release->nkeys)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a running release holds at most %d counts (keys times steps)", MAX_CELLS)));
}

/* The end of the last of steps steps from start; 22008 beyond the timestamps. */
static TimestampTz
running_end(TimestampTz start, int64 step_usec, int64 steps)
{
	TimestampTz end;

	if (pg_mul_s64_overflow(step_usec, steps, &end) || pg_add_s64_overflow(start, end, &end) ||
		!IS_VALID_TIMESTAMP(end))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("the last step ends out of the range of timestamps")));
	return end;
}

/*
 * Release each key's running counts, one stream a key over its steps, as
 * rows (key, step, its start, noisy count, stddev, bound); monotone, each
 * key's series post-processed into a non-negative non-decreasing one.
 */
static void
put_running_counts(ReturnSetInfo *rsinfo, const SourceRelease *release, const cc_params *params,
				   const int64 *counts, TimestampTz start, int64 step_usec, int64 steps,
				   bool monotone)
{
	cc_release *series = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(cc_release) * steps);

	for (int k = 0; k < release->nkeys; k++)
	{
		cc_state   *state = palloc(cc_state_size(params));
		bool		key_null;
		Datum		key = release_key(release, k, &key_null);

		cc_state_init(state, params);
		for (int64 t = 0; t < steps; t++)
		{
			push_or_report(state, counts[k * steps + t]);
			cc_read(state, &series[t]);
		}
		if (monotone)
			release_monotone(series, steps);
		for (int64 t = 0; t < steps; t++)
		{
			Datum		values[6];
			bool		nulls[6] = {key_null, false, false, false, false, false};

			values[0] = key;
			values[1] = Int64GetDatum(t + 1);
			values[2] = TimestampTzGetDatum(start + t * step_usec);
			values[3] = Int64GetDatum(series[t].noisy);
			values[4] = Float8GetDatum(sqrt(series[t].variance));
			values[5] = Float8GetDatum(series[t].bound);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		pfree(state);
	}
	pfree(series);
}

/*
 * source_running_counts(source, epsilon, step, start, steps, mechanism,
 * dimension, ledger, filter, rho, monotone, count): per declared key (or for
 * all rows), the running count of the bounded rows (or persons, each at its
 * first row) that pass the filter at every step of width step from start,
 * each step's count fed to mechanism (horizon steps), the noise scaled to
 * the release's sensitivity.  A zCDP mechanism takes rho (from 0.5) in place
 * of epsilon: one unit changes the steps' counts by at most the sensitivity
 * in L1, hence in L2 too, the sensitivity its noise is calibrated to;
 * counting persons over a dimension, by its square root in L2
 * (source_release_noise).
 */
PG_FUNCTION_INFO_V1(contcount_source_running_counts);
Datum
contcount_source_running_counts(PG_FUNCTION_ARGS)
{
	char	   *name = arg_text(fcinfo, 0, "source name");
	NullableDatum epsilon = {PG_GETARG_DATUM(1), PG_ARGISNULL(1)};
	TimestampTz start;
	int64		steps;
	char	   *mechanism = arg_text(fcinfo, 5, "mechanism");
	char	   *dimension = PG_ARGISNULL(6) ? NULL : TextDatumGetCString(PG_GETARG_DATUM(6));
	char	   *ledger = PG_ARGISNULL(7) ? NULL : TextDatumGetCString(PG_GETARG_DATUM(7));
	NullableDatum horizon;
	SpecArgs	args;
	cc_params	params;
	SourceRelease release;
	int64		step_usec;
	TimestampTz end;
	cc_cost		cost;

	if (PG_ARGISNULL(2) || PG_ARGISNULL(3) || PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("step, start and steps must not be null")));
	start = PG_GETARG_TIMESTAMPTZ(3);
	steps = PG_GETARG_INT64(4);
	/* steps of a fixed length, as the counters' steps: a day is 24 hours here */
	step_usec = step_usecs(PG_GETARG_INTERVAL_P(2));
	if (TIMESTAMP_NOT_FINITE(start))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("start must be finite")));
	horizon.value = Int64GetDatum(steps);
	horizon.isnull = false;
	InitMaterializedSRF(fcinfo, 0);
	prepare_release(&release, name, dimension, filter_arg(fcinfo, 8), true,
					source_count_arg(fcinfo, 11));
	spec_with_defaults(&args, mechanism, epsilon, horizon);
	args.field[SPEC_SENSITIVITY].value = Int64GetDatum(release.sensitivity);
	if (PG_NARGS() > 9)
		args.field[SPEC_RHO] = fcinfo->args[9];
	spec_to_params(&args, &params);
	require_running_release(&release, &params, steps);
	end = running_end(start, step_usec, steps);
	cost = source_release_noise(release.persons, &params);

	charge_release(&release, ledger, cost, "source_running_counts", true, start, end);
	put_running_counts((ReturnSetInfo *) fcinfo->resultinfo, &release, &params,
					   bounded_counts(&release, start, step_usec, steps), start, step_usec, steps,
					   /* the 0.5 function, until ALTER EXTENSION UPDATE, has no monotone */
					   PG_NARGS() > 10 && !PG_ARGISNULL(10) && PG_GETARG_BOOL(10));
	return (Datum) 0;
}
