/*
 * ledger_export.c
 *		What the store holds, raw, for contcount.export_ledgers(), and taking a
 *		ledger in from an export, for contcount.import_ledgers().
 *
 * The store lives in this cluster's WAL and a file under global/: pg_dump
 * and pg_upgrade carry the ledgers' catalog rows but not what they spent.
 * The SQL functions of the install script put the two together as a
 * document and take it back; these are their superuser-only primitives.
 * Importing never lowers what a ledger spent.
 *
 * IDENTIFICATION
 *	  src/ledger/ledger_export.c
 */
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "ledger/ledger_store.h"

static void
require_superuser(const char *function)
{
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("only a superuser may call %s", function)));
}

/* What the store says a ledger spent, in units; NULL if it never created it. */
PG_FUNCTION_INFO_V1(contcount_store_spent);
Datum
contcount_store_spent(PG_FUNCTION_ARGS)
{
	uint64		spent;

	require_superuser("contcount.store_spent()");
	if (!ledger_store_spent(PG_GETARG_INT64(0), &spent))
		PG_RETURN_NULL();
	PG_RETURN_INT64((int64) spent);
}

static void
charge_row(const StoreCharge *charge, void *arg)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) arg;
	Datum		values[7];
	bool		nulls[7] = {false};

	values[0] = Int64GetDatum(charge->ledger);
	values[1] = TimestampTzGetDatum(charge->at);
	values[2] = ObjectIdGetDatum(charge->role);
	values[3] = Int64GetDatum((int64) charge->epsilon_units);
	values[4] = BoolGetDatum(charge->refund);
	values[5] = CStringGetTextDatum(charge->function);
	values[6] = CStringGetTextDatum(charge->statement);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* Every charge and refund in the store, oldest first, of every ledger. */
PG_FUNCTION_INFO_V1(contcount_store_charges);
Datum
contcount_store_charges(PG_FUNCTION_ARGS)
{
	require_superuser("contcount.store_charges()");
	InitMaterializedSRF(fcinfo, 0);
	ledger_store_scan(charge_row, fcinfo->resultinfo);
	return (Datum) 0;
}

/* The elements of a one-dimensional array argument, none null. */
static Datum *
array_arg(FunctionCallInfo fcinfo, int argno, Oid type, int *n)
{
	ArrayType  *array = PG_GETARG_ARRAYTYPE_P(argno);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	bool	   *nulls;

	get_typlenbyvalalign(type, &typlen, &typbyval, &typalign);
	deconstruct_array(array, type, typlen, typbyval, typalign, &elems, &nulls, n);
	for (int i = 0; i < *n; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("a charge of the export has a null field")));
	return elems;
}

/*
 * store_import(ledger_id, name, created_at, created_by, spent_units, at[],
 * role[], epsilon_units[], refund[], function[], statement[]): see
 * ledger_store_import.
 */
PG_FUNCTION_INFO_V1(contcount_store_import);
Datum
contcount_store_import(PG_FUNCTION_ARGS)
{
	static const Oid types[6] = {TIMESTAMPTZOID, OIDOID, INT8OID, BOOLOID, TEXTOID, TEXTOID};
	Datum	   *fields[6];
	int			n = 0;
	StoreCharge *charges;
	int64		spent;

	require_superuser("contcount.store_import()");
	for (int a = 0; a < 11; a++)
		if (PG_ARGISNULL(a))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("a ledger of the export has a null field")));
	for (int f = 0; f < 6; f++)
	{
		int			count;

		fields[f] = array_arg(fcinfo, 5 + f, types[f], &count);
		if (f > 0 && count != n)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the charges of a ledger of the export do not line up")));
		n = count;
	}
	spent = PG_GETARG_INT64(4);
	if (spent < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a ledger of the export spent less than nothing")));
	charges = palloc0(sizeof(StoreCharge) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		charges[i].at = DatumGetTimestampTz(fields[0][i]);
		charges[i].role = DatumGetObjectId(fields[1][i]);
		charges[i].ledger = PG_GETARG_INT64(0);
		if (DatumGetInt64(fields[2][i]) <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a charge of the export is not positive")));
		charges[i].epsilon_units = DatumGetInt64(fields[2][i]);
		charges[i].refund = DatumGetBool(fields[3][i]);
		charges[i].function = TextDatumGetCString(fields[4][i]);
		charges[i].statement = TextDatumGetCString(fields[5][i]);
	}
	PG_RETURN_TEXT_P(cstring_to_text(
									 ledger_store_import(PG_GETARG_INT64(0),
														 text_to_cstring(PG_GETARG_TEXT_PP(1)),
														 PG_GETARG_TIMESTAMPTZ(2),
														 PG_GETARG_OID(3), (uint64) spent,
														 charges, n)));
}

/* True if format and version are those of export_ledgers(); else an error. */
PG_FUNCTION_INFO_V1(contcount_store_check_export);
Datum
contcount_store_check_export(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) ||
		strcmp(text_to_cstring(PG_GETARG_TEXT_PP(0)), "contcount ledgers") != 0 ||
		strcmp(text_to_cstring(PG_GETARG_TEXT_PP(1)), "1") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("not an export of contcount ledgers, version 1"),
				 errhint("Export with contcount.export_ledgers().")));
	PG_RETURN_BOOL(true);
}

/*
 * After point-in-time recovery: the DBA has imported what was spent after
 * the target (or knows nothing was), and lets releases go on.
 */
PG_FUNCTION_INFO_V1(contcount_accept_ledger_store);
Datum
contcount_accept_ledger_store(PG_FUNCTION_ARGS)
{
	require_superuser("contcount.accept_ledger_store()");
	ledger_store_accept();
	PG_RETURN_VOID();
}
