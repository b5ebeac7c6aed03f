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
#include "utils/datetime.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "common/args.h"
#include "ledger/ledger.h"
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

	require_superuser("store_spent()");
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

	require_superuser("store_accounting()");
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
	require_superuser("store_charges()");
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
 * The n charges of an exported ledger, from store_import()'s arrays
 * (fields[0..nfields): nfields 9 from 0.5, with each charge's releases; 6
 * before, each charge pure, its releases not recorded); 22023 if one is not
 * positive.
 */
static StoreCharge *
export_charges(Datum *const *fields, int nfields, int n, int64 ledger)
{
	StoreCharge *charges = palloc0(sizeof(StoreCharge) * Max(n, 1));

	for (int i = 0; i < n; i++)
	{
		charges[i].at = DatumGetTimestampTz(fields[0][i]);
		charges[i].role = DatumGetObjectId(fields[1][i]);
		charges[i].ledger = ledger;
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
	return charges;
}

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

	require_superuser("store_import()");
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
	charges = export_charges(fields, nfields, n, PG_GETARG_INT64(0));
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

	require_superuser("store_blocks()");
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

	require_superuser("store_import_blocks()");
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
 * Refuse (22023) unless format and version (either NULL if missing) are
 * those of an export of version 1 up to newest.
 */
static void
check_export(const char *format, const char *version, int32 newest)
{
	bool		known = false;

	if (format != NULL && version != NULL && strcmp(format, "contcount ledgers") == 0)
		for (int v = 1; v <= newest && !known; v++)
			known = strcmp(version, psprintf("%d", v)) == 0;
	if (!known)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("not an export of contcount ledgers, version %d or older", newest),
				 errhint("Export with contcount.export_ledgers().")));
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

	check_export(PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0)),
				 PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1)), newest);
	PG_RETURN_BOOL(true);
}

/*
 * Checking a whole export before import_ledgers() takes anything in: the
 * store is not transactional, so a ledger refused after another was taken
 * in would leave half an import.  Each field is checked as the import reads
 * it (and as export_ledgers() writes it); the first bad one is refused with
 * 22023, naming the ledger (counted from 1) and the field.
 */

/* The newest export version import_ledgers() reads. */
#define EXPORT_NEWEST 2

/* ledger 0: a field of the export itself, or one across its ledgers */
static void
bad_field(int ledger, const char *field, const char *rule)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 ledger == 0 ? errmsg("\"%s\" of the export must be %s", field, rule) :
			 errmsg("\"%s\" of ledger %d of the export must be %s", field, ledger, rule),
			 errdetail("Nothing was imported.")));
}

/* The value of key in an object, or NULL if it is missing or a JSON null. */
static JsonbValue *
json_get(JsonbContainer *object, const char *key)
{
	JsonbValue *v = getKeyJsonValueFromContainer(object, key, strlen(key), NULL);

	return v == NULL || v->type == jbvNull ? NULL : v;
}

/* The container of an array (or object, if object) value; NULL if not one. */
static JsonbContainer *
json_container(JsonbValue *v, bool object)
{
	if (v == NULL || v->type != jbvBinary ||
		(object ? !JsonContainerIsObject(v->val.binary.data) : !JsonContainerIsArray(v->val.binary.data)))
		return NULL;
	return v->val.binary.data;
}

/* A string value, palloc'd; NULL if v is not a string. */
static char *
json_text(JsonbValue *v)
{
	return v != NULL && v->type == jbvString ? pnstrdup(v->val.string.val, v->val.string.len) : NULL;
}

/*
 * A whole number from min to max, into *out; false if v is not one, or is
 * written with decimals (5.0), which the import's int8() of its text refuses.
 */
static bool
json_int(JsonbValue *v, int64 min, int64 max, int64 *out)
{
	Datum		n;

	if (v == NULL || v->type != jbvNumeric || numeric_is_nan(v->val.numeric) ||
		numeric_is_inf(v->val.numeric))
		return false;
	n = NumericGetDatum(v->val.numeric);
	if (DatumGetInt32(DirectFunctionCall1(numeric_scale, n)) != 0 ||
		DatumGetBool(DirectFunctionCall2(numeric_lt, n, NumericGetDatum(int64_to_numeric(min)))) ||
		DatumGetBool(DirectFunctionCall2(numeric_gt, n, NumericGetDatum(int64_to_numeric(max)))))
		return false;
	*out = DatumGetInt64(DirectFunctionCall1(numeric_int8, n));
	return true;
}

/*
 * A finite timestamptz as its input function reads it, into *out; false if
 * v is not one.  Parsed without raising an error, so that a bad one is a
 * bad field (22023) and not a bad datetime.
 */
static bool
json_timestamp(JsonbValue *v, TimestampTz *out)
{
	char	   *text = json_text(v);
	char		workbuf[MAXDATELEN + MAXDATEFIELDS];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	struct pg_tm tm;
	fsec_t		fsec;
	int			tz;

	return text != NULL &&
		ParseDateTime(text, workbuf, sizeof(workbuf), field, ftype, MAXDATEFIELDS, &nf) == 0 &&
		DecodeDateTime(field, ftype, nf, &dtype, &tm, &fsec, &tz) == 0 &&
		dtype == DTK_DATE && tm2timestamp(&tm, fsec, &tz, out) == 0 && IS_VALID_TIMESTAMP(*out);
}

/* An array field's container, or NULL if absent and optional. */
static JsonbContainer *
json_array_field(JsonbContainer *object, const char *key, bool optional, int ledger)
{
	JsonbValue *v = json_get(object, key);
	JsonbContainer *array = json_container(v, false);

	if (array == NULL && !(optional && v == NULL))
		bad_field(ledger, key, "an array");
	return array;
}

/* The i-th element of an array, which must be an object. */
static JsonbContainer *
json_element(JsonbContainer *array, int i, int ledger, const char *what)
{
	JsonbContainer *object = json_container(getIthJsonbValueFromContainer(array, i), true);

	if (object == NULL)
		bad_field(ledger, what, "an array of objects");
	return object;
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

/* The accounting named by an optional field, *given false if it is absent. */
static cc_accounting
json_accounting(JsonbContainer *object, int ledger, const char *field, bool *given)
{
	JsonbValue *v = json_get(object, "accounting");
	char	   *name = json_text(v);
	cc_accounting accounting = CC_PURE;

	*given = v != NULL;
	if (v != NULL && (name == NULL || !ledger_accounting_parse(name, &accounting)))
		bad_field(ledger, field, "\"pure\" or \"zcdp\"");
	return accounting;
}

/*
 * The i-th charge (from 0) of a ledger's audit, as store_import() takes it:
 * units (or, before 0.5, epsilon_units), releases (0, not recorded, if
 * missing) and release_units (units if missing), in the ledger's units.
 */
static void
check_charge(JsonbContainer *charges, int i, int ledger, StoreCharge *charge)
{
	JsonbContainer *c = json_element(charges, i, ledger, "charges");
	JsonbValue *units = json_get(c, "units");
	JsonbValue *v;
	bool		given;
	char	   *field = psprintf("charges[%d]", i + 1);
	int64		n;

	if (!json_timestamp(json_get(c, "at"), &charge->at))
		bad_field(ledger, psprintf("%s.at", field), "a finite timestamp");
	v = json_get(c, "role");
	if (v != NULL && v->type != jbvString)
		bad_field(ledger, psprintf("%s.role", field), "a role name or null");
	if (!json_int(units ? units : json_get(c, "epsilon_units"), 1, PG_INT64_MAX, &n))
		bad_field(ledger, psprintf("%s.units", field), "a whole number from 1 to 9223372036854775807");
	charge->units = n;
	v = json_get(c, "refund");
	if (v == NULL || v->type != jbvBool)
		bad_field(ledger, psprintf("%s.refund", field), "true or false");
	charge->refund = v->val.boolean;
	charge->cost.accounting = json_accounting(c, ledger, psprintf("%s.accounting", field), &given);
	v = json_get(c, "releases");
	charge->releases = 0;
	if (v != NULL && !json_int(v, 0, PG_INT64_MAX, &charge->releases))
		bad_field(ledger, psprintf("%s.releases", field), "a whole number from 0 to 9223372036854775807");
	v = json_get(c, "release_units");
	charge->cost.units = charge->units;
	if (v != NULL && !json_int(v, 1, PG_INT64_MAX, &n))
		bad_field(ledger, psprintf("%s.release_units", field), "a whole number from 1 to 9223372036854775807");
	if (v != NULL)
		charge->cost.units = n;
	charge->function = json_text(json_get(c, "function"));
	charge->statement = json_text(json_get(c, "statement"));
	if (charge->function == NULL || charge->statement == NULL)
		bad_field(ledger, psprintf("%s.function and .statement", field), "strings");
}

/* The i-th block (from 0) of a ledger, into *block. */
static void
check_block(JsonbContainer *blocks, int i, int ledger, StoreBlock *block)
{
	JsonbContainer *b = json_element(blocks, i, ledger, "blocks");
	char	   *field = psprintf("blocks[%d]", i + 1);
	int64		spent;

	if (!json_timestamp(json_get(b, "start"), &block->start) ||
		!json_timestamp(json_get(b, "end"), &block->end))
		bad_field(ledger, psprintf("%s.start and .end", field), "finite timestamps");
	if (!json_int(json_get(b, "spent_units"), 1, PG_INT64_MAX, &spent))
		bad_field(ledger, psprintf("%s.spent_units", field), "a whole number from 1 to 9223372036854775807");
	block->spent_units = spent;
}

/* Each grant of a ledger: a role name and whether it administers. */
static void
check_grants(JsonbContainer *l, int ledger)
{
	JsonbContainer *grants = json_array_field(l, "grants", true, ledger);

	for (int i = 0; grants != NULL && i < (int) JsonContainerSize(grants); i++)
	{
		JsonbContainer *g = json_element(grants, i, ledger, "grants");
		JsonbValue *admin = json_get(g, "admin");

		if (json_text(json_get(g, "role")) == NULL || admin == NULL || admin->type != jbvBool)
			bad_field(ledger, psprintf("grants[%d]", i + 1), "a role name and whether it is \"admin\"");
	}
}

/*
 * The fields of a ledger's row: its budget a ledger budget (else the views
 * could not show it), its delta that of its accounting (a zCDP ledger's
 * between 0 and 1, none for a pure one), its times finite.
 */
static void
check_ledger_row(JsonbContainer *l, int ledger, cc_accounting accounting, bool known)
{
	JsonbValue *budget = json_get(l, "budget");
	JsonbValue *delta = json_get(l, "delta");
	JsonbValue *v;
	TimestampTz at;

	if (budget == NULL || budget->type != jbvNumeric ||
		!ledger_budget_valid(NumericGetDatum(budget->val.numeric)))
		bad_field(ledger, "budget", "a multiple of 0.000000001 from 0 to 9223372036");
	if (delta != NULL &&
		(delta->type != jbvNumeric || !ledger_delta_valid(NumericGetDatum(delta->val.numeric))))
		bad_field(ledger, "delta", "null or greater than 0 and less than 1");
	if (known && (delta == NULL) != (accounting == CC_PURE))
		bad_field(ledger, "delta",
				  accounting == CC_PURE ? "null for a pure ledger" : "given for a zcdp ledger");
	if (!json_timestamp(json_get(l, "created_at"), &at))
		bad_field(ledger, "created_at", "a finite timestamp");
	v = json_get(l, "created_by");
	if (v != NULL && v->type != jbvString)
		bad_field(ledger, "created_by", "a role name or null");
	v = json_get(l, "dropped_at");
	if (v != NULL && !json_timestamp(v, &at))
		bad_field(ledger, "dropped_at", "a finite timestamp or null");
	check_grants(l, ledger);
}

/* What an export would add to the store: ledgers and blocks it lacks. */
typedef struct ImportRoom
{
	int			ledgers;
	int64		blocks;
} ImportRoom;

/*
 * The n-th ledger of the export (from 1): its row, then its audit and
 * blocks as the store would take them, adding what the store lacks to
 * *room.  Its id into *id, and its name into *live_name if it is not
 * dropped (else NULL).
 */
static void
check_ledger(JsonbContainer *l, int n, int64 *id, char **live_name, ImportRoom *room)
{
	char	   *name = json_text(json_get(l, "name"));
	JsonbValue *spent_value = json_get(l, "spent_units");
	JsonbContainer *charges = json_array_field(l, "charges", true, n);
	JsonbContainer *blocks = json_array_field(l, "blocks", true, n);
	int			ncharges = charges ? JsonContainerSize(charges) : 0;
	int			nblocks = blocks ? JsonContainerSize(blocks) : 0;
	StoreCharge *audit = palloc0(sizeof(StoreCharge) * Max(ncharges, 1));
	StoreBlock *block = palloc0(sizeof(StoreBlock) * Max(nblocks, 1));
	bool		given;
	cc_accounting accounting = json_accounting(l, n, "accounting", &given);
	int64		spent = 0;
	uint64		known_spent;
	bool		known;

	if (!json_int(json_get(l, "id"), 1, PG_INT64_MAX, id))
		bad_field(n, "id", "a whole number from 1 to 9223372036854775807");
	if (name == NULL || name[0] == '\0' || strlen(name) > LEDGER_NAME_MAX)
		bad_field(n, "name", psprintf("a string of 1 to %d bytes", LEDGER_NAME_MAX));
	if (spent_value != NULL && !json_int(spent_value, 0, PG_INT64_MAX, &spent))
		bad_field(n, "spent_units", "null or a whole number from 0 to 9223372036854775807");
	for (int i = 0; i < ncharges; i++)
		check_charge(charges, i, n, &audit[i]);
	for (int i = 0; i < nblocks; i++)
		check_block(blocks, i, n, &block[i]);
	/* first, as the import: another accounting than the store's is ZB003 */
	if (spent_value != NULL)
		ledger_store_check_import(*id, name, accounting, (uint64) spent, audit, ncharges);
	/* a ledger whose spending is unknown is not taken in, nor its blocks */
	known = ledger_store_spent(*id, &known_spent, NULL);
	room->ledgers += !known && spent_value != NULL;
	if (known || spent_value != NULL)
		room->blocks += ledger_store_check_import_blocks(*id, name, block, nblocks);
	/* the import reads a ledger that says no accounting as pure */
	check_ledger_row(l, n, accounting, given || spent_value != NULL);
	*live_name = json_get(l, "dropped_at") == NULL ? name : NULL;
}

static int
compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The format and version of an export, as import_ledgers() reads them. */
static void
check_export_header(JsonbContainer *root)
{
	JsonbValue *version = json_get(root, "version");
	char	   *version_text = json_text(version);
	JsonbValue *v;
	TimestampTz at;

	if (version != NULL && version->type == jbvNumeric)
		version_text = DatumGetCString(DirectFunctionCall1(numeric_out,
														   NumericGetDatum(version->val.numeric)));
	check_export(json_text(json_get(root, "format")), version_text, EXPORT_NEWEST);
	v = json_get(root, "exported_at");
	if (v != NULL && !json_timestamp(v, &at))
		bad_field(0, "exported_at", "a finite timestamp");
	v = json_get(root, "system_identifier");
	if (v != NULL && v->type != jbvString)
		bad_field(0, "system_identifier", "a string");
}

/*
 * store_check_import(export): true, or an error for the first field of the
 * export that import_ledgers() would refuse or could not take in whole,
 * before anything is imported: 22023 (a bad field, two ledgers with one id,
 * or two live ledgers with one name), ZB003 (a ledger the store accounts
 * otherwise), 55000 (a block of another length in the store), 53400 (no
 * room in the store for its new ledgers or blocks).
 */
PG_FUNCTION_INFO_V1(contcount_store_check_import);
Datum
contcount_store_check_import(PG_FUNCTION_ARGS)
{
	Jsonb	   *export;
	JsonbContainer *ledgers;
	int			n;
	int			nlive = 0;
	int64	   *ids;
	char	  **names;
	ImportRoom	room = {0, 0};

	require_superuser("store_check_import()");
	export = DatumGetJsonbP(arg_required(fcinfo, 0, "export"));
	if (!JB_ROOT_IS_OBJECT(export))
		check_export(NULL, NULL, EXPORT_NEWEST);
	check_export_header(&export->root);
	ledgers = json_array_field(&export->root, "ledgers", false, 0);
	n = JsonContainerSize(ledgers);
	ids = palloc(sizeof(int64) * Max(n, 1));
	names = palloc(sizeof(char *) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		check_ledger(json_element(ledgers, i, 0, "ledgers"), i + 1, &ids[i], &names[nlive], &room);
		nlive += names[nlive] != NULL;
	}
	qsort(ids, n, sizeof(int64), ledger_compare_ids);
	qsort(names, nlive, sizeof(char *), compare_names);
	for (int i = 1; i < n; i++)
		if (ids[i] == ids[i - 1])
			bad_field(0, "id", psprintf("different in every ledger (" INT64_FORMAT " is not)", ids[i]));
	for (int i = 1; i < nlive; i++)
		if (strcmp(names[i], names[i - 1]) == 0)
			bad_field(0, "name", psprintf("different in every live ledger (\"%s\" is not)", names[i]));
	ledger_store_check_import_room(room.ledgers, room.blocks);
	PG_RETURN_BOOL(true);
}
