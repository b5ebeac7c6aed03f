/*
 * source_mean.c
 *		The continual mean of a protected source's column: source_running_mean,
 *		and the DBA's declaration of the columns it may average.
 *
 * The release is running_mean's (src/releases/running_mean.c, the core in
 * src/core/continual_mean.c) over the source's rows in time order, each row
 * a sample of the declared column from the unit of the source's unit column.
 * contcount builds the query itself from the declared columns and runs it as
 * the extension's owner with search_path pinned; the caller gives no SQL
 * text and needs no SELECT on the table, only the source's grant.
 *
 * What it protects is the paper's neighbourhood, not the one of the
 * source's counts: streams with the same arrival pattern (which unit gave
 * the t-th sample, and when) that differ in any of one unit's values.  The
 * release shows the arrival pattern (each row's time, the samples covered),
 * so that pattern is public: a column may be averaged only once the DBA, who
 * decides what is public, has declared it with source_mean_value().  The
 * rows' order is a function of the pattern alone: time, then unit, then
 * value (a unit's own tie is its own business).
 *
 * No value can make the query fail, since an error would show it: the value
 * is clamped to [lo, hi] in the query, in the column's own type for numeric
 * (whose cast to float8 can overflow), and NaN, the largest value in
 * PostgreSQL's order, becomes hi.  Rows without a unit, a time or a value
 * are not samples: whether a row has them is part of the arrival pattern.
 * The time is source_time_sql's, which no value makes fail (a date beyond
 * timestamp's range has none), and the range is one the core can place any
 * sample in (mean_mechanism refuses a wider one).
 *
 * One charge of epsilon, to the caller's ledger and to the source's, as
 * every release from a source, before the query runs.
 *
 * IDENTIFICATION
 *	  src/sources/source_mean.c
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "common/args.h"
#include "common/owner_spi.h"
#include "common/seal.h"
#include "core/accounting.h"
#include "ledger/ledger.h"
#include "releases/running_mean.h"
#include "sources/source.h"

/* Rows a cursor fetch brings: the release holds no more of them at once. */
#define FETCH_ROWS 10000

/* contcount.source_running_mean's columns: t, at, mean, covered, stddev, bound */
#define SOURCE_MEAN_NATTS 6

/*
 * A value column's type must cast to float8 without an error once clamped:
 * an error on one row's value would show it.
 */
static void
require_value_type(Oid relid, AttrNumber attnum)
{
	Oid			type = get_atttype(relid, attnum);

	if (type != INT2OID && type != INT4OID && type != INT8OID && type != FLOAT4OID &&
		type != FLOAT8OID && type != NUMERICOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the value column of a running mean must be a smallint, integer, bigint, real, double precision or numeric")));
}

/*
 * source_mean_value(source, column): the running mean of column may be
 * released from source, whose arrival pattern the DBA thereby makes public.
 */
PG_FUNCTION_INFO_V1(contcount_source_mean_value);
Datum
contcount_source_mean_value(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *source = arg_text(fcinfo, 0, "source name");
	char	   *column = arg_text(fcinfo, 1, "value column");
	OwnerScope	scope;
	Oid			relid;
	AttrNumber	attnum;
	Oid			types[3] = {TEXTOID, TEXTOID, INT2OID};
	Datum		values[3];

	owner_begin(&scope);
	relid = source_relid(source);
	attnum = source_column_arg(fcinfo, 1, relid, "value column");
	require_value_type(relid, attnum);
	values[0] = CStringGetTextDatum(source);
	values[1] = CStringGetTextDatum(column);
	values[2] = Int16GetDatum(attnum);
	owner_run(&plan, "INSERT INTO contcount.source_mean_value (source, name, attnum) "
			  "VALUES ($1, $2, $3) "
			  "ON CONFLICT (source, name) DO UPDATE SET attnum = EXCLUDED.attnum",
			  3, types, values, NULL, SPI_OK_INSERT);
	owner_end(&scope);
	PG_RETURN_VOID();
}

/* drop_source_mean_value(source, column): no longer. */
PG_FUNCTION_INFO_V1(contcount_drop_source_mean_value);
Datum
contcount_drop_source_mean_value(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *source = arg_text(fcinfo, 0, "source name");
	char	   *column = arg_text(fcinfo, 1, "value column");
	OwnerScope	scope;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(source), CStringGetTextDatum(column)};

	owner_begin(&scope);
	owner_run(&plan, "DELETE FROM contcount.source_mean_value "
			  "WHERE source OPERATOR(pg_catalog.=) $1 AND name OPERATOR(pg_catalog.=) $2",
			  2, types, values, NULL, SPI_OK_DELETE);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("protected source \"%s\" has no value column \"%s\"", source, column)));
	owner_end(&scope);
	PG_RETURN_VOID();
}

/*
 * The query of a release: the samples (unit, clamped value as float8, time)
 * of the rows with all three, in the order of the head comment; $1 and $2
 * are lo and hi.  An error unless value is a declared value column of the
 * source, still there, of a type that casts without an error.  Owner scope.
 */
static char *
samples_sql(const char *source, const SourceTable *table, const char *value)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(source), CStringGetTextDatum(value)};
	AttrNumber	attnum;
	char	   *column;
	char	   *clamped;
	bool		isnull;

	owner_read_committed(&plan, "SELECT attnum FROM contcount.source_mean_value "
						 "WHERE source OPERATOR(pg_catalog.=) $1 AND name OPERATOR(pg_catalog.=) $2",
						 2, types, values, NULL);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("protected source \"%s\" has no value column \"%s\"", source, value),
				 errhint("A superuser declares one with contcount.source_mean_value().")));
	attnum = DatumGetInt16(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	column = source_live_column(table->relid, attnum);
	if (column == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("a declared column of protected source \"%s\" is gone", source)));
	/* its type may have changed since it was declared */
	require_value_type(table->relid, attnum);
	column = pstrdup(quote_identifier(column));
	if (get_atttype(table->relid, attnum) == NUMERICOID)
		clamped = psprintf("(GREATEST($1::pg_catalog.numeric, LEAST($2::pg_catalog.numeric, %s)))"
						   "::pg_catalog.float8", column);
	else
		clamped = psprintf("GREATEST($1, LEAST($2, (%s)::pg_catalog.float8))", column);
	return psprintf("SELECT unit, x, t FROM (SELECT %s AS unit, %s AS x, "
					"%s AS t FROM %s "
					"WHERE %s IS NOT NULL AND %s IS NOT NULL AND %s IS NOT NULL) samples "
					"ORDER BY t, unit, x",
					table->unit, clamped, table->time, table->relation,
					table->unit, column, table->time);
}

/* Each sample of the cursor into the stream, and its release as a row. */
static void
release_samples(Portal portal, MeanStream *ms, ReturnSetInfo *rsinfo)
{
	for (;;)
	{
		SPI_cursor_fetch(portal, true, FETCH_ROWS);
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			HeapTuple	tuple = SPI_tuptable->vals[i];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			Datum		values[SOURCE_MEAN_NATTS];
			bool		nulls[SOURCE_MEAN_NATTS];
			Datum		release[MEAN_RELEASE_NATTS];
			bool		release_nulls[MEAN_RELEASE_NATTS];
			bool		isnull;

			mean_stream_push(ms, DatumGetFloat8(SPI_getbinval(tuple, desc, 2, &isnull)),
							 SPI_getbinval(tuple, desc, 1, &isnull));
			mean_stream_release(ms, release, release_nulls);
			values[0] = release[0];
			nulls[0] = release_nulls[0];
			values[1] = SPI_getbinval(tuple, desc, 3, &nulls[1]);
			for (int f = 1; f < MEAN_RELEASE_NATTS; f++)
			{
				values[f + 1] = release[f];
				nulls[f + 1] = release_nulls[f];
			}
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		SPI_freetuptable(SPI_tuptable);
	}
}

/*
 * source_running_mean(source, value, mechanism): the running mean of the
 * source's declared column value, one row per sample in time order.
 */
PG_FUNCTION_INFO_V1(contcount_source_running_mean);
Datum
contcount_source_running_mean(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext outer = CurrentMemoryContext;
	char	   *name = arg_text(fcinfo, 0, "source name");
	char	   *value = arg_text(fcinfo, 1, "value column");
	MeanSpec	spec;
	SourceTable table;
	OwnerScope	scope;
	char	   *sql;
	MeanSite   *site;
	MeanStream *ms;
	Oid			types[2] = {FLOAT8OID, FLOAT8OID};
	Datum		bounds[2];
	SPIPlanPtr	plan;
	Portal		portal;
	SealedUsage usage;

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("mechanism must not be null")));
	mean_spec_from_composite(PG_GETARG_DATUM(2), &spec);
	InitMaterializedSRF(fcinfo, 0);
	source_for_release(name, &table);
	owner_begin(&scope);
	sql = MemoryContextStrdup(outer, samples_sql(name, &table, value));
	owner_end(&scope);
	site = mean_site_make(&spec, table.unit_type, table.unit_collation, outer);
	ms = mean_stream_start(site, outer);

	/* paid before anything is computed, once */
	ledger_charge_source(spec.ledger, table.ledger, cc_pure_cost(spec.plan.params.epsilon_units),
						 "source_running_mean");

	bounds[0] = Float8GetDatum(spec.lo);
	bounds[1] = Float8GetDatum(spec.hi);
	owner_begin(&scope);
	plan = SPI_prepare(sql, 2, types);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for a running mean from a protected source: %s",
			 SPI_result_code_string(SPI_result));
	seal_usage_save(&usage);
	PG_TRY();
	{
		portal = owner_open_cursor(plan, bounds);
		release_samples(portal, ms, rsinfo);
		SPI_cursor_close(portal);
	}
	PG_FINALLY();
	{
		/* even on an error (a stream beyond its horizon), which plpgsql may catch */
		seal_usage_restore(&usage);
	}
	PG_END_TRY();
	owner_end(&scope);
	return (Datum) 0;
}
