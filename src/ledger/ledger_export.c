/*
 * ledger_export.c
 *		What the store holds, raw, for contcount.export_ledgers(), and taking a
 *		ledger in from an export, for contcount.import_ledgers().
 *
 * The store lives in this cluster's WAL and a file under global/: pg_dump
 * and pg_upgrade carry the ledgers' catalog rows but not what they spent.
 * The SQL functions of the install script put the two together as a
 * document and take it back; these are their superuser-only primitives.
 * Importing never lowers what a ledger spent, nor changes its accounting.
 * The primitives serve the SQL of 0.3 and 0.4 (a database not yet updated)
 * as it expects: the columns and arguments it declares, and pure ledgers.
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

/* What the store says a ledger spent, in units, forgotten or not; NULL if it never created it. */
PG_FUNCTION_INFO_V1(contcount_store_spent);
Datum
contcount_store_spent(PG_FUNCTION_ARGS)
{
	uint64		spent;
	cc_accounting accounting;

	require_superuser("contcount.store_spent()");
	/* a dropped ledger the store forgot: what it had spent */
	if (!ledger_store_spent(PG_GETARG_INT64(0), &spent, &accounting) &&
		!ledger_store_forgotten(PG_GETARG_INT64(0), &spent, &accounting))
		PG_RETURN_NULL();
	PG_RETURN_INT64((int64) spent);
}

/* The accounting of a ledger in the store, "pure" or "zcdp"; NULL if unknown. */
PG_FUNCTION_INFO_V1(contcount_store_accounting);
Datum
contcount_store_accounting(PG_FUNCTION_ARGS)
{
	uint64		spent;
	cc_accounting accounting;

	require_superuser("contcount.store_accounting()");
	if (!ledger_store_spent(PG_GETARG_INT64(0), &spent, &accounting) &&
		!ledger_store_forgotten(PG_GETARG_INT64(0), &spent, &accounting))
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(ledger_accounting_name(accounting)));
}

static void
charge_row(const StoreCharge *charge, void *arg)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) arg;
	Datum		values[10];
	bool		nulls[10] = {false};

	values[0] = Int64GetDatum(charge->ledger);
	values[1] = TimestampTzGetDatum(charge->at);
	values[2] = ObjectIdGetDatum(charge->role);
	values[3] = Int64GetDatum((int64) charge->units);
	values[4] = BoolGetDatum(charge->refund);
	values[5] = CStringGetTextDatum(charge->function);
	values[6] = CStringGetTextDatum(charge->statement);
	/* from 0.5 (the 7 columns before are all 0.4 declares) */
	values[7] = CStringGetTextDatum(ledger_accounting_name(charge->cost.accounting));
	values[8] = Int64GetDatum(charge->releases);
	values[9] = Int64GetDatum((int64) charge->cost.units);
	nulls[8] = nulls[9] = charge->releases == 0;	/* not recorded */
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * Every charge and refund in the store, oldest first, of every ledger: what
 * the ledger was charged in units of its accounting, and from 0.5 the
 * releases' accounting, number and cost each.
 */
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
					 errmsg("a charge or block of the export has a null field")));
	return elems;
}

/* An accounting by name; a bad name is a bad export. */
static cc_accounting
accounting_arg(const char *name)
{
	cc_accounting accounting;

	if (!ledger_accounting_parse(name, &accounting))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("accounting \"%s\" of the export is neither \"pure\" nor \"zcdp\"", name)));
	return accounting;
}

/* The arguments of store_import() before 0.5; from 0.5, STORE_IMPORT_0_5. */
#define STORE_IMPORT_0_3 11
#define STORE_IMPORT_0_5 15

/*
 * store_import(ledger_id, name, created_at, created_by, spent_units, at[],
 * role[], units[], refund[], function[], statement[]), and from 0.5 also
 * (accounting, release_accounting[], releases[], release_units[]): see
 * ledger_store_import.  Before 0.5 every ledger is pure, and each charge
 * one whose releases were not recorded.
 */
PG_FUNCTION_INFO_V1(contcount_store_import);
Datum
contcount_store_import(PG_FUNCTION_ARGS)
{
	static const Oid types[9] = {TIMESTAMPTZOID, OIDOID, INT8OID, BOOLOID, TEXTOID, TEXTOID,
	TEXTOID, INT8OID, INT8OID};
	int			nfields = PG_NARGS() == STORE_IMPORT_0_5 ? 9 : 6;
	Datum	   *fields[9];
	int			n = 0;
	StoreCharge *charges;
	int64		spent;
	cc_accounting accounting = CC_PURE;

	require_superuser("contcount.store_import()");
	for (int a = 0; a < PG_NARGS(); a++)
		if (PG_ARGISNULL(a))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("a ledger of the export has a null field")));
	for (int f = 0; f < nfields; f++)
	{
		int			count;

		/* the arrays from 0.5 follow the accounting */
		fields[f] = array_arg(fcinfo, f < 6 ? 5 + f : STORE_IMPORT_0_3 + 1 + f - 6, types[f], &count);
		if (f > 0 && count != n)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the charges of a ledger of the export do not line up")));
		n = count;
	}
	if (PG_NARGS() == STORE_IMPORT_0_5)
		accounting = accounting_arg(text_to_cstring(PG_GETARG_TEXT_PP(STORE_IMPORT_0_3)));
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
		if (DatumGetInt64(fields[2][i]) <= 0 ||
			(nfields == 9 && (DatumGetInt64(fields[7][i]) < 0 || DatumGetInt64(fields[8][i]) <= 0)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a charge of the export is not positive")));
		charges[i].units = DatumGetInt64(fields[2][i]);
		charges[i].refund = DatumGetBool(fields[3][i]);
		charges[i].function = TextDatumGetCString(fields[4][i]);
		charges[i].statement = TextDatumGetCString(fields[5][i]);
		if (nfields == 9)
		{
			charges[i].cost.accounting = accounting_arg(TextDatumGetCString(fields[6][i]));
			charges[i].releases = DatumGetInt64(fields[7][i]);
			charges[i].cost.units = DatumGetInt64(fields[8][i]);
		}
		else
			charges[i].cost = cc_pure_cost(charges[i].units);
	}
	PG_RETURN_TEXT_P(cstring_to_text(
									 ledger_store_import(PG_GETARG_INT64(0),
														 text_to_cstring(PG_GETARG_TEXT_PP(1)),
														 accounting,
														 PG_GETARG_TIMESTAMPTZ(2),
														 PG_GETARG_OID(3), (uint64) spent,
														 charges, n)));
}

/* store_blocks(): every block the store holds, with what it spent in units. */
PG_FUNCTION_INFO_V1(contcount_store_blocks);
Datum
contcount_store_blocks(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		n;
	StoreBlock *blocks;

	require_superuser("contcount.store_blocks()");
	InitMaterializedSRF(fcinfo, 0);
	blocks = ledger_store_blocks(&n);
	for (int64 i = 0; i < n; i++)
	{
		Datum		values[4];
		bool		nulls[4] = {false};

		values[0] = Int64GetDatum(blocks[i].ledger);
		values[1] = TimestampTzGetDatum(blocks[i].start);
		values[2] = TimestampTzGetDatum(blocks[i].end);
		values[3] = Int64GetDatum((int64) blocks[i].spent_units);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * store_import_blocks(ledger_id, block_start[], block_end[], spent_units[]):
 * see ledger_store_import_blocks.
 */
PG_FUNCTION_INFO_V1(contcount_store_import_blocks);
Datum
contcount_store_import_blocks(PG_FUNCTION_ARGS)
{
	static const Oid types[3] = {TIMESTAMPTZOID, TIMESTAMPTZOID, INT8OID};
	Datum	   *fields[3];
	int			n = 0;
	StoreBlock *blocks;

	require_superuser("contcount.store_import_blocks()");
	for (int a = 0; a < PG_NARGS(); a++)
		if (PG_ARGISNULL(a))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("a ledger of the export has a null field")));
	for (int f = 0; f < 3; f++)
	{
		int			count;

		fields[f] = array_arg(fcinfo, 1 + f, types[f], &count);
		if (f > 0 && count != n)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the blocks of a ledger of the export do not line up")));
		n = count;
	}
	blocks = palloc0(sizeof(StoreBlock) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		blocks[i].ledger = PG_GETARG_INT64(0);
		blocks[i].start = DatumGetTimestampTz(fields[0][i]);
		blocks[i].end = DatumGetTimestampTz(fields[1][i]);
		if (DatumGetInt64(fields[2][i]) <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a block of the export spent nothing")));
		blocks[i].spent_units = DatumGetInt64(fields[2][i]);
	}
	ledger_store_import_blocks(PG_GETARG_INT64(0), blocks, n);
	PG_RETURN_VOID();
}

/*
 * True if format and version are those of an export that the caller's SQL
 * reads: version 1 (0.3 and 0.4, pure ledgers only) up to newest, the third
 * argument from 0.5 (2: ledgers that say their accounting).  Else an error,
 * so that a database not yet updated refuses an export whose zCDP ledgers it
 * would take in as pure.
 */
PG_FUNCTION_INFO_V1(contcount_store_check_export);
Datum
contcount_store_check_export(PG_FUNCTION_ARGS)
{
	int32		newest = PG_NARGS() == 3 && !PG_ARGISNULL(2) ? PG_GETARG_INT32(2) : 1;
	bool		known = false;

	if (!PG_ARGISNULL(0) && !PG_ARGISNULL(1) &&
		strcmp(text_to_cstring(PG_GETARG_TEXT_PP(0)), "contcount ledgers") == 0)
	{
		char	   *version = text_to_cstring(PG_GETARG_TEXT_PP(1));

		for (int v = 1; v <= newest && !known; v++)
			known = strcmp(version, psprintf("%d", v)) == 0;
	}
	if (!known)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("not an export of contcount ledgers, version %d or older", newest),
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
