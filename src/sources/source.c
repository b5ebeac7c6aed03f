/*
 * source.c
 *		Protected sources: tables that roles without SELECT on them publish
 *		noisy counts from, each person's contribution bounded.
 *
 * A DBA declares a table a source: its privacy unit column, its time column,
 * the bounds on one unit's contribution (at most max_rows rows, in at most
 * max_groups groups), the ledger that holds the data's budget, and public
 * dimensions with their declared keys.  A role granted the source releases
 * from it through source_counts(), which builds its query itself from the
 * declared columns (quoted identifiers, the declared keys as a parameter:
 * no SQL text from the caller) and runs it as the extension's owner with
 * search_path pinned.
 *
 * Bounding, the documented rule: rows with a null unit are dropped; so are
 * rows whose key is not declared; each unit keeps its groups in the order of
 * their first row's time (ties by key) up to max_groups, and within them its
 * rows in time order (ties by key) up to max_rows.  Adding or removing all of
 * one unit's rows then moves the counts by at most max_rows in all, so
 * discrete Laplace noise of scale max_rows / epsilon on every key's count is
 * epsilon-DP for all keys together: one charge for all groups (parallel
 * composition, sound because contcount bounded the contributions, unlike
 * the GROUP BY of open SQL).  Every declared key gets a row, zeros included;
 * a key found only in the data never appears.
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
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "windowapi.h"
#include "common/int.h"

#include "common/args.h"
#include "common/owner_spi.h"
#include "common/report.h"
#include "ledger/ledger.h"
#include "releases/spec.h"

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
} Source;

/* A live column of the table, by name. */
static AttrNumber
column_arg(FunctionCallInfo fcinfo, int argno, Oid relid, const char *what)
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
 */
static void
require_time_type(Oid relid, AttrNumber attnum)
{
	Oid			type = get_atttype(relid, attnum);

	if (type != TIMESTAMPTZOID && type != TIMESTAMPOID && type != DATEOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the time column of a protected source must be a timestamptz, a timestamp or a date")));
}

/*
 * The source's row, as committed now (and, for management, with the current
 * transaction's changes, so that a source can be declared, given keys and
 * granted in one transaction); an error if there is none.  Owner scope.
 */
static Source
read_source(const char *name, bool committed_only)
{
	static SPIPlanPtr plan = NULL;
	static SPIPlanPtr own_plan = NULL;
	static const char *sql = "SELECT relid, unit_attnum, time_attnum, ledger_id, max_rows, max_groups "
		"FROM contcount.source WHERE name OPERATOR(pg_catalog.=) $1";
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	Source		source;
	HeapTuple	tuple;
	TupleDesc	desc;
	bool		isnull;

	if (committed_only)
		owner_read_committed(&plan, sql, 1, types, values, NULL);
	else
		owner_run(&own_plan, sql, 1, types, values, NULL, SPI_OK_SELECT);
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
	return source;
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

/*
 * protect_table(name, relation, unit_column, time_column, ledger, max_rows,
 * max_groups): declare a protected source.
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
	unit = column_arg(fcinfo, 2, relid, "unit column");
	time = column_arg(fcinfo, 3, relid, "time column");
	require_time_type(relid, time);
	max_rows = PG_ARGISNULL(5) ? 0 : PG_GETARG_INT32(5);
	max_groups = PG_ARGISNULL(6) ? 0 : PG_GETARG_INT32(6);
	if (max_rows < 1 || max_groups < 1 || max_rows > 1000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_rows must be from 1 to 1000000 and max_groups at least 1")));

	owner_begin(&scope);
	owner_run(&ledger_plan, "SELECT id FROM contcount.ledger "
			  "WHERE name OPERATOR(pg_catalog.=) $1 AND dropped_at IS NULL",
			  1, ledger_type, ledger_name, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("ledger \"%s\" does not exist", ledger)));
	values[0] = CStringGetTextDatum(name);
	values[1] = ObjectIdGetDatum(relid);
	values[2] = Int16GetDatum(unit);
	values[3] = Int16GetDatum(time);
	values[4] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	values[5] = Int32GetDatum(max_rows);
	values[6] = Int32GetDatum(max_groups);
	owner_run(&plan, "INSERT INTO contcount.source "
			  "(name, relid, unit_attnum, time_attnum, ledger_id, max_rows, max_groups, created_by) "
			  "VALUES ($1, $2, $3, $4, $5, $6, $7, pg_catalog.to_regrole(CURRENT_USER)) "
			  "ON CONFLICT (name) DO NOTHING",
			  7, types, values, NULL, SPI_OK_INSERT);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("protected source \"%s\" already exists", name)));
	owner_end(&scope);
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

/* drop_source(source): releases from it are refused from then on. */
PG_FUNCTION_INFO_V1(contcount_drop_source);
Datum
contcount_drop_source(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *name = arg_text(fcinfo, 0, "source name");
	OwnerScope	scope;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};

	owner_begin(&scope);
	owner_run(&plan, "DELETE FROM contcount.source WHERE name OPERATOR(pg_catalog.=) $1",
			  1, types, values, NULL, SPI_OK_DELETE);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("protected source \"%s\" does not exist", name)));
	owner_end(&scope);
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

/* A column of the source's table as an identifier, or an error if it is gone. */
static char *
column_sql(const Source *source, AttrNumber attnum)
{
	char	   *column = get_attname(source->relid, attnum, true);

	if (column == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("a declared column of protected source \"%s\" is gone", source->name)));
	return pstrdup(quote_identifier(column));
}

/*
 * The query of the bounded counts per key, for keys (its $1, a text[]), or
 * of all rows when the dimension is InvalidAttrNumber; $2 and $3 are
 * max_groups and max_rows.  It returns, for every key in the keys' order,
 * its position in them and its count; stepped, for rows whose time is in
 * [$4, $6), per step of width $5 (an interval without months) from $4: the
 * key's position, the step from 0 and the count, only where there are rows.
 * Rows outside the window are left out before bounding.  An error if the
 * table or a declared column is gone.
 */
static char *
bounded_counts_sql(const Source *source, AttrNumber dimension, bool stepped)
{
	char	   *relname = get_rel_name(source->relid);
	char	   *table;
	char	   *unit;
	char	   *time;
	char	   *key;
	char	   *rows;
	char	   *kept;
	StringInfoData sql;

	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the table of protected source \"%s\" is gone", source->name)));
	unit = column_sql(source, source->unit);
	time = column_sql(source, source->time);
	/* its type may have changed since it was declared */
	require_time_type(source->relid, source->time);
	table = quote_qualified_identifier(get_namespace_name(get_rel_namespace(source->relid)), relname);
	key = dimension != InvalidAttrNumber ?
		psprintf("(%s)::pg_catalog.text", column_sql(source, dimension)) : pstrdup("''::pg_catalog.text");
	initStringInfo(&sql);
	rows = psprintf("SELECT %s AS unit, %s AS key, %s AS t, %s AS step FROM %s"
					" WHERE %s IS NOT NULL AND %s OPERATOR(pg_catalog.=) ANY ($1)%s",
					unit, key, time,
					stepped ?
					psprintf("pg_catalog.int8(pg_catalog.floor((EXTRACT(EPOCH FROM (%s)::pg_catalog.timestamptz "
							 "OPERATOR(pg_catalog.-) $4)) OPERATOR(pg_catalog./) EXTRACT(EPOCH FROM $5)))",
							 time) : "0",
					table, unit, key,
					stepped ?
					psprintf(" AND (%s)::pg_catalog.timestamptz OPERATOR(pg_catalog.>=) $4"
							 " AND (%s)::pg_catalog.timestamptz OPERATOR(pg_catalog.<) $6", time, time) : "");

	/* the kept rows of every unit, by bounded_keep in one pass of one sort */
	kept = psprintf("SELECT key, step FROM (SELECT key, step, contcount.bounded_keep(key, $3, $2)"
					" OVER (PARTITION BY unit ORDER BY t, key) AS keep FROM (%s) rows) marked"
					" WHERE keep", rows);
	appendStringInfo(&sql,
					 "SELECT k.ord, %s "
					 "FROM pg_catalog.unnest($1) WITH ORDINALITY AS k(key, ord) "
					 "%s JOIN (SELECT key, step, pg_catalog.count(*) AS n FROM (%s) kept"
					 " GROUP BY key, step) c"
					 " ON c.key OPERATOR(pg_catalog.=) k.key "
					 "ORDER BY k.ord%s",
					 stepped ? "c.step, c.n" : "COALESCE(c.n, 0)",
					 stepped ? "" : "LEFT",
					 kept,
					 stepped ? ", c.step" : "");
	return sql.data;
}

/*
 * bounded_keep(key, max_rows, max_groups) OVER (PARTITION BY unit ORDER BY
 * time, key): whether the rule keeps this row.  Rows come in the unit's
 * time order, so a group's rank is known at its first row: the first
 * max_groups distinct keys are the kept groups (ranked by their first row's
 * time, then key), and their rows are kept up to max_rows.  One pass, no
 * row looked at twice, so the bounding costs what a row_number() does.
 * Keys compare as bytes, as the database's deterministic collation does.
 */
typedef struct KeepState
{
	MemoryContext groups_cxt;	/* the partition's kept keys */
	text	  **groups;
	int			ngroups;
	int			groups_size;
	int64		kept_rows;
	int32		max_rows;
	int32		max_groups;
} KeepState;

PG_FUNCTION_INFO_V1(contcount_bounded_keep);
Datum
contcount_bounded_keep(PG_FUNCTION_ARGS)
{
	WindowObject winobj = PG_WINDOW_OBJECT();
	int64		pos = WinGetCurrentPosition(winobj);
	KeepState  *state = fcinfo->flinfo->fn_extra;
	bool		isnull;
	Datum		key_datum;
	text	   *key;
	int			found = -1;

	/* no row before this one is needed again */
	WinSetMarkPosition(winobj, pos);
	if (state == NULL)
	{
		state = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(KeepState));
		state->groups_cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "contcount kept groups",
												  ALLOCSET_SMALL_SIZES);
		fcinfo->flinfo->fn_extra = state;
	}
	if (pos == 0)
	{
		/* the bounds are constants: read once a partition */
		state->max_rows = DatumGetInt32(WinGetFuncArgCurrent(winobj, 1, &isnull));
		state->max_groups = DatumGetInt32(WinGetFuncArgCurrent(winobj, 2, &isnull));
		MemoryContextReset(state->groups_cxt);
		state->groups_size = 4;
		state->groups = MemoryContextAlloc(state->groups_cxt, state->groups_size * sizeof(text *));
		state->ngroups = 0;
		state->kept_rows = 0;
	}
	/* a unit's rows past its bound cost nothing more */
	if (state->kept_rows >= state->max_rows)
		PG_RETURN_BOOL(false);
	key_datum = WinGetFuncArgCurrent(winobj, 0, &isnull);
	if (isnull)
		PG_RETURN_BOOL(false);
	key = DatumGetTextPP(key_datum);
	for (int i = 0; i < state->ngroups && found < 0; i++)
		if (VARSIZE_ANY_EXHDR(state->groups[i]) == VARSIZE_ANY_EXHDR(key) &&
			memcmp(VARDATA_ANY(state->groups[i]), VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key)) == 0)
			found = i;
	if (found < 0 && state->ngroups < state->max_groups)
	{
		if (state->ngroups == state->groups_size)
		{
			state->groups_size *= 2;
			state->groups = repalloc(state->groups, state->groups_size * sizeof(text *));
		}
		state->groups[state->ngroups] = MemoryContextAlloc(state->groups_cxt, VARSIZE_ANY(key));
		memcpy(state->groups[state->ngroups], key, VARSIZE_ANY(key));
		found = state->ngroups++;
	}
	if (found < 0)
		PG_RETURN_BOOL(false);
	state->kept_rows++;
	PG_RETURN_BOOL(true);
}

/*
 * What a release from a source needs, read as committed now, and checked
 * before anything is charged: the source (granted to the caller), the
 * dimension's keys (or one key for all rows), the source's ledger by name
 * and the query.  In the caller's memory.
 */
typedef struct SourceRelease
{
	Source		source;
	Datum		keys;			/* text[] */
	int			nkeys;
	char	   *source_ledger;
	char	   *sql;
} SourceRelease;

static void
prepare_release(SourceRelease *release, const char *name, const char *dimension, bool stepped)
{
	static SPIPlanPtr dimension_plan = NULL;
	static SPIPlanPtr ledger_plan = NULL;
	MemoryContext outer = CurrentMemoryContext;
	MemoryContext old;
	OwnerScope	scope;
	AttrNumber	attnum = InvalidAttrNumber;
	bool		isnull;

	owner_begin(&scope);
	release->source = read_source(name, true);
	if (!source_granted(name, scope.caller))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for protected source \"%s\"", name),
				 errhint("A superuser grants it with contcount.grant_source().")));
	if (dimension != NULL)
	{
		Oid			types[2] = {TEXTOID, TEXTOID};
		Datum		values[2] = {CStringGetTextDatum(name), CStringGetTextDatum(dimension)};

		owner_read_committed(&dimension_plan, "SELECT attnum, keys FROM contcount.source_dimension "
							 "WHERE source OPERATOR(pg_catalog.=) $1 AND name OPERATOR(pg_catalog.=) $2",
							 2, types, values, NULL);
		if (SPI_processed == 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("protected source \"%s\" has no dimension \"%s\"", name, dimension)));
		attnum = DatumGetInt16(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		release->keys = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
		old = MemoryContextSwitchTo(outer);
		release->keys = datumCopy(release->keys, false, -1);
		MemoryContextSwitchTo(old);
	}
	else
	{
		Datum		all = CStringGetTextDatum("");

		old = MemoryContextSwitchTo(outer);
		release->keys = PointerGetDatum(construct_array(&all, 1, TEXTOID, -1, false, TYPALIGN_INT));
		MemoryContextSwitchTo(old);
	}
	release->nkeys = ArrayGetNItems(ARR_NDIM(DatumGetArrayTypeP(release->keys)),
									ARR_DIMS(DatumGetArrayTypeP(release->keys)));
	{
		Oid			types[1] = {INT8OID};
		Datum		values[1] = {Int64GetDatum(release->source.ledger_id)};

		owner_read_committed(&ledger_plan, "SELECT name FROM contcount.ledger "
							 "WHERE id OPERATOR(pg_catalog.=) $1 AND dropped_at IS NULL",
							 1, types, values, NULL);
		if (SPI_processed == 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("the ledger of protected source \"%s\" was dropped", name)));
		release->source_ledger = MemoryContextStrdup(outer, SPI_getvalue(SPI_tuptable->vals[0],
																		  SPI_tuptable->tupdesc, 1));
	}
	old = MemoryContextSwitchTo(outer);
	release->sql = bounded_counts_sql(&release->source, attnum, stepped);
	MemoryContextSwitchTo(old);
	owner_end(&scope);
}

/* Run the release's query with its parameters ($4 on).  Owner scope. */
static void
run_release(const SourceRelease *release, int nextra, const Oid *extra_types, const Datum *extra)
{
	Oid			types[6] = {TEXTARRAYOID, INT4OID, INT4OID};
	Datum		values[6] = {release->keys, Int32GetDatum(release->source.max_groups),
	Int32GetDatum(release->source.max_rows)};
	SPIPlanPtr	plan = NULL;

	for (int i = 0; i < nextra; i++)
	{
		types[3 + i] = extra_types[i];
		values[3 + i] = extra[i];
	}
	/* planned here each time: the table and its columns may change */
	owner_run(&plan, release->sql, 3 + nextra, types, values, NULL, SPI_OK_SELECT);
	SPI_freeplan(plan);
}

/* The key at position ord (from 1) of the release's keys, or NULL without a dimension. */
static Datum
release_key(const SourceRelease *release, bool has_dimension, int64 ord, bool *isnull)
{
	int			index = (int) ord;

	*isnull = !has_dimension;
	if (!has_dimension)
		return (Datum) 0;
	return array_get_element(release->keys, 1, &index, -1, -1, false, TYPALIGN_INT, isnull);
}

/*
 * source_counts(source, epsilon, dimension, ledger): a noisy count of the
 * bounded rows per declared key of the dimension (or of all, without one).
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
	OwnerScope	scope;
	SourceRelease release;

	InitMaterializedSRF(fcinfo, 0);
	prepare_release(&release, name, dimension, false);
	/* one step of simple II, its noise scaled to what one unit adds */
	spec_with_defaults(&args, "simple_ii", epsilon, horizon);
	args.field[SPEC_SENSITIVITY].value = Int64GetDatum(release.source.max_rows);
	spec_to_params(&args, &params);

	/* paid before anything is computed; once for every key */
	ledger_charge_source(ledger, release.source_ledger, cc_pure_cost(params.epsilon_units), "source_counts");

	owner_begin(&scope);
	run_release(&release, 0, NULL, NULL);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		cc_state   *state = palloc(cc_state_size(&params));
		cc_release	noisy;
		Datum		values[3];
		bool		nulls[3] = {false};
		bool		isnull;

		cc_state_init(state, &params);
		push_or_report(state, DatumGetInt64(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 2, &isnull)));
		cc_read(state, &noisy);
		values[0] = release_key(&release, dimension != NULL,
								DatumGetInt64(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 1, &isnull)),
								&nulls[0]);
		values[1] = Int64GetDatum(noisy.noisy);
		values[2] = Float8GetDatum(sqrt(noisy.variance));
		/* the tuplestore copies them out of SPI's memory */
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(state);
	}
	owner_end(&scope);
	return (Datum) 0;
}

/* Most cells (keys times steps) one running release holds. */
#define MAX_CELLS 10000000

/*
 * source_running_counts(source, epsilon, step, start, steps, mechanism,
 * dimension, ledger): per declared key (or for all rows), the running count
 * of the bounded rows at every step of width step from start, each step's
 * count fed to mechanism (horizon steps), the noise scaled to max_rows.
 */
PG_FUNCTION_INFO_V1(contcount_source_running_counts);
Datum
contcount_source_running_counts(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name = arg_text(fcinfo, 0, "source name");
	NullableDatum epsilon = {PG_GETARG_DATUM(1), PG_ARGISNULL(1)};
	Interval   *step;
	TimestampTz start;
	int64		steps;
	char	   *mechanism = arg_text(fcinfo, 5, "mechanism");
	char	   *dimension = PG_ARGISNULL(6) ? NULL : TextDatumGetCString(PG_GETARG_DATUM(6));
	char	   *ledger = PG_ARGISNULL(7) ? NULL : TextDatumGetCString(PG_GETARG_DATUM(7));
	NullableDatum horizon;
	SpecArgs	args;
	cc_params	params;
	OwnerScope	scope;
	SourceRelease release;
	int64	   *items;
	int64		step_usec;
	TimestampTz end;
	Datum		extra[3];
	Oid			extra_types[3] = {TIMESTAMPTZOID, INTERVALOID, TIMESTAMPTZOID};
	bool		isnull;

	if (PG_ARGISNULL(2) || PG_ARGISNULL(3) || PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("step, start and steps must not be null")));
	step = PG_GETARG_INTERVAL_P(2);
	start = PG_GETARG_TIMESTAMPTZ(3);
	steps = PG_GETARG_INT64(4);
	/* steps of a fixed length, as the counters' steps: a day is 24 hours here */
	step_usec = step_usecs(step);
	if (TIMESTAMP_NOT_FINITE(start))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("start must be finite")));
	horizon.value = Int64GetDatum(steps);
	horizon.isnull = false;
	InitMaterializedSRF(fcinfo, 0);
	prepare_release(&release, name, dimension, true);
	spec_with_defaults(&args, mechanism, epsilon, horizon);
	args.field[SPEC_SENSITIVITY].value = Int64GetDatum(release.source.max_rows);
	spec_to_params(&args, &params);
	if (steps > MAX_CELLS / release.nkeys)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a running release holds at most %d counts (keys times steps)", MAX_CELLS)));
	if (pg_mul_s64_overflow(step_usec, steps, &end) || pg_add_s64_overflow(start, end, &end) ||
		!IS_VALID_TIMESTAMP(end))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("the last step ends out of the range of timestamps")));
	extra[0] = TimestampTzGetDatum(start);
	extra[1] = PointerGetDatum(step);
	extra[2] = TimestampTzGetDatum(end);
	items = palloc0_array(int64, release.nkeys * steps);

	/* paid before anything is computed; once for every key and step */
	ledger_charge_source(ledger, release.source_ledger, cc_pure_cost(params.epsilon_units), "source_running_counts");

	owner_begin(&scope);
	run_release(&release, 3, extra_types, extra);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		int64		ord = DatumGetInt64(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 1, &isnull));
		int64		t = DatumGetInt64(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 2, &isnull));

		items[(ord - 1) * steps + t] = DatumGetInt64(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 3, &isnull));
	}
	owner_end(&scope);

	for (int k = 0; k < release.nkeys; k++)
	{
		cc_state   *state = palloc(cc_state_size(&params));
		bool		key_null;
		Datum		key = release_key(&release, dimension != NULL, k + 1, &key_null);

		cc_state_init(state, &params);
		for (int64 t = 0; t < steps; t++)
		{
			cc_release	noisy;
			Datum		values[6];
			bool		nulls[6] = {key_null, false, false, false, false, false};

			push_or_report(state, items[k * steps + t]);
			cc_read(state, &noisy);
			values[0] = key;
			values[1] = Int64GetDatum(t + 1);
			values[2] = TimestampTzGetDatum(start + t * step_usec);
			values[3] = Int64GetDatum(noisy.noisy);
			values[4] = Float8GetDatum(sqrt(noisy.variance));
			values[5] = Float8GetDatum(noisy.bound);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		pfree(state);
	}
	return (Datum) 0;
}
