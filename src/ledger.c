/*
 * ledger.c
 *		Privacy budget ledgers: the SQL functions that manage and show them,
 *		and the charge every release makes.
 *
 * A ledger's name, budget and grants live in the tables contcount.ledger and
 * contcount.ledger_grant, so managing them is transactional; what has been
 * spent lives in the ledger store (ledger_store.c), which no transaction can
 * undo.  Every function here checks the calling role's rights itself and
 * then works on the tables as their owner (owner_spi.c).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "ledger.h"
#include "owner_spi.h"
#include "ledger_store.h"
#include "settings.h"
#include "spec.h"

typedef struct LedgerRow
{
	int64		id;
	uint64		budget_units;
} LedgerRow;

static bool
lookup_ledger(const char *name, LedgerRow *row)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	bool		isnull;

	owner_run(&plan, "SELECT id, (budget * 1000000000)::pg_catalog.int8 FROM contcount.ledger "
		"WHERE name = $1 AND dropped_at IS NULL",
		1, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	row->id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	row->budget_units = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
													SPI_tuptable->tupdesc, 2, &isnull));
	return true;
}

static LedgerRow
require_ledger(const char *name)
{
	LedgerRow	row;

	if (!lookup_ledger(name, &row))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("ledger \"%s\" does not exist", name)));
	return row;
}

static bool
granted(int64 ledger, Oid role, bool need_admin)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[3] = {INT8OID, OIDOID, BOOLOID};
	Datum		values[3] = {Int64GetDatum(ledger), ObjectIdGetDatum(role), BoolGetDatum(need_admin)};
	bool		isnull;

	owner_run(&plan, "SELECT contcount.ledger_granted($1, $2, $3)", 3, types, values, NULL, SPI_OK_SELECT);
	return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/* The ledger, if the caller may manage it. */
static LedgerRow
require_admin(const OwnerScope *scope, const char *name)
{
	LedgerRow	row = require_ledger(name);

	if (!granted(row.id, scope->caller, true))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for ledger \"%s\"", name),
				 errdetail("Only superusers and the ledger's admins manage it.")));
	return row;
}

static char *
text_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	return TextDatumGetCString(PG_GETARG_DATUM(argno));
}

/* A budget as a whole number of 1e-9 epsilon units. */
static Datum
budget_arg(FunctionCallInfo fcinfo, int argno)
{
	Datum		budget;
	Datum		units;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("epsilon must not be null")));
	budget = PG_GETARG_DATUM(argno);
	units = DirectFunctionCall2(numeric_mul, budget,
								DirectFunctionCall1(int8_numeric,
													Int64GetDatum(CC_EPSILON_UNITS_PER_ONE)));
	if (numeric_is_nan(DatumGetNumeric(budget)) || numeric_is_inf(DatumGetNumeric(budget)) ||
		DatumGetBool(DirectFunctionCall2(numeric_lt, budget,
										 DirectFunctionCall1(int8_numeric, Int64GetDatum(0)))) ||
		!DatumGetBool(DirectFunctionCall2(numeric_eq, units,
										  DirectFunctionCall2(numeric_trunc, units,
															  Int32GetDatum(0)))) ||
		DatumGetBool(DirectFunctionCall2(numeric_gt, units,
										 DirectFunctionCall1(int8_numeric,
															 Int64GetDatum(PG_INT64_MAX)))))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a ledger's epsilon must be a finite multiple of 0.000000001, from 0 to 9223372036")));
	return budget;
}

static int64
new_ledger_id(void)
{
	uint64		id;

	/* random, so that no other ledger, here or in another database, has it */
	if (!pg_strong_random(&id, sizeof(id)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random ledger id")));
	return (int64) (id >> 1);
}

PG_FUNCTION_INFO_V1(contcount_create_ledger);
Datum
contcount_create_ledger(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan1 = NULL;
	static SPIPlanPtr plan2 = NULL;
	char	   *name = text_arg(fcinfo, 0, "ledger name");
	Datum		budget = budget_arg(fcinfo, 1);
	int64		id = new_ledger_id();
	OwnerScope	scope;
	LedgerRow	existing;
	Oid			types[4] = {INT8OID, TEXTOID, NUMERICOID, OIDOID};
	Datum		values[4];

	if (name[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ledger name must not be empty")));
	owner_begin(&scope);
	if (lookup_ledger(name, &existing))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("ledger \"%s\" already exists", name)));
	values[0] = Int64GetDatum(id);
	values[1] = CStringGetTextDatum(name);
	values[2] = budget;
	values[3] = ObjectIdGetDatum(scope.caller);
	owner_run(&plan1, "INSERT INTO contcount.ledger (id, name, budget, created_by) VALUES ($1, $2, $3, $4)",
		4, types, values, NULL, SPI_OK_INSERT);
	/* a creator who is not a superuser manages what they created */
	if (!superuser_arg(scope.caller))
		owner_run(&plan2, "INSERT INTO contcount.ledger_grant (ledger_id, role_id, admin) VALUES ($1, $4, true)",
			4, types, values, NULL, SPI_OK_INSERT);
	owner_end(&scope);

	/* last: if this fails, the transaction takes the rows back */
	ledger_store_create(id, name, scope.caller);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(contcount_alter_ledger);
Datum
contcount_alter_ledger(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *name = text_arg(fcinfo, 0, "ledger name");
	Datum		budget = budget_arg(fcinfo, 1);
	OwnerScope	scope;
	LedgerRow	row;
	Oid			types[2] = {INT8OID, NUMERICOID};
	Datum		values[2];

	owner_begin(&scope);
	row = require_admin(&scope, name);
	values[0] = Int64GetDatum(row.id);
	values[1] = budget;
	owner_run(&plan, "UPDATE contcount.ledger SET budget = $2 WHERE id = $1", 2, types, values, NULL,
		SPI_OK_UPDATE);
	owner_end(&scope);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(contcount_drop_ledger);
Datum
contcount_drop_ledger(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *name = text_arg(fcinfo, 0, "ledger name");
	OwnerScope	scope;
	LedgerRow	row;
	Oid			types[1] = {INT8OID};
	Datum		values[1];

	owner_begin(&scope);
	row = require_admin(&scope, name);
	values[0] = Int64GetDatum(row.id);
	/* kept, so that the audit still names it */
	owner_run(&plan, "UPDATE contcount.ledger SET dropped_at = pg_catalog.now() WHERE id = $1",
		1, types, values, NULL, SPI_OK_UPDATE);
	owner_end(&scope);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(contcount_grant_ledger);
Datum
contcount_grant_ledger(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *name = text_arg(fcinfo, 0, "ledger name");
	OwnerScope	scope;
	LedgerRow	row;
	Oid			types[3] = {INT8OID, OIDOID, BOOLOID};
	Datum		values[3];

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("role and admin must not be null")));
	owner_begin(&scope);
	row = require_admin(&scope, name);
	values[0] = Int64GetDatum(row.id);
	values[1] = PG_GETARG_DATUM(1);
	values[2] = PG_GETARG_DATUM(2);
	owner_run(&plan, "INSERT INTO contcount.ledger_grant (ledger_id, role_id, admin) VALUES ($1, $2, $3) "
		"ON CONFLICT (ledger_id, role_id) DO UPDATE SET admin = EXCLUDED.admin",
		3, types, values, NULL, SPI_OK_INSERT);
	owner_end(&scope);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(contcount_revoke_ledger);
Datum
contcount_revoke_ledger(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *name = text_arg(fcinfo, 0, "ledger name");
	OwnerScope	scope;
	LedgerRow	row;
	Oid			types[2] = {INT8OID, OIDOID};
	Datum		values[2];

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("role must not be null")));
	owner_begin(&scope);
	row = require_admin(&scope, name);
	values[0] = Int64GetDatum(row.id);
	values[1] = PG_GETARG_DATUM(1);
	owner_run(&plan, "DELETE FROM contcount.ledger_grant WHERE ledger_id = $1 AND role_id = $2",
		2, types, values, NULL, SPI_OK_DELETE);
	owner_end(&scope);
	PG_RETURN_VOID();
}

static Datum
epsilon_numeric(uint64 units)
{
	return DirectFunctionCall3(numeric_in, CStringGetDatum(spec_format_epsilon(units)),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/*
 * The ledgers the caller may spend from or manage, with what is left:
 * the contcount.ledgers view.
 */
PG_FUNCTION_INFO_V1(contcount_ledger_rows);
Datum
contcount_ledger_rows(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OwnerScope	scope;
	Oid			types[2] = {OIDOID, TEXTOID};
	Datum		args[2];

	InitMaterializedSRF(fcinfo, 0);
	owner_begin(&scope);
	args[0] = ObjectIdGetDatum(scope.caller);
	args[1] = CStringGetTextDatum(contcount_ledger ? contcount_ledger : "");
	owner_run(&plan, "SELECT id, name, (budget * 1000000000)::pg_catalog.int8, created_at "
		"FROM contcount.ledger "
		"WHERE dropped_at IS NULL AND (name = $2 OR contcount.ledger_granted(id, $1, false)) "
		"ORDER BY name",
		2, types, args, NULL, SPI_OK_SELECT);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(tuple, desc, 1, &isnull));
		uint64		budget = DatumGetInt64(SPI_getbinval(tuple, desc, 3, &isnull));
		uint64		spent = 0;
		Datum		values[5];
		bool		nulls[5] = {false};

		values[0] = SPI_getbinval(tuple, desc, 2, &isnull);
		values[1] = epsilon_numeric(budget);
		values[4] = SPI_getbinval(tuple, desc, 4, &isnull);
		if (ledger_store_spent(id, &spent))
		{
			values[2] = epsilon_numeric(spent);
			values[3] = epsilon_numeric(spent < budget ? budget - spent : 0);
		}
		else
			nulls[2] = nulls[3] = true; /* not in the store: unusable */
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	owner_end(&scope);
	return (Datum) 0;
}

/* The ledgers whose charges the caller may see, by id. */
typedef struct AuditLedger
{
	int64		id;				/* hash key */
	char	   *name;
} AuditLedger;

typedef struct AuditScan
{
	HTAB	   *ledgers;
	ReturnSetInfo *rsinfo;
} AuditScan;

static void
audit_one(const StoreCharge *charge, void *arg)
{
	AuditScan  *scan = arg;
	AuditLedger *ledger = hash_search(scan->ledgers, &charge->ledger, HASH_FIND, NULL);
	Datum		values[6];
	bool		nulls[6] = {false};

	if (ledger == NULL)
		return;
	values[0] = TimestampTzGetDatum(charge->at);
	values[1] = ObjectIdGetDatum(charge->role);
	values[2] = CStringGetTextDatum(ledger->name);
	values[3] = epsilon_numeric(charge->epsilon_units);
	values[4] = CStringGetTextDatum(charge->function);
	values[5] = CStringGetTextDatum(charge->statement);
	tuplestore_putvalues(scan->rsinfo->setResult, scan->rsinfo->setDesc, values, nulls);
}

/*
 * Every charge to a ledger the caller administers, dropped ledgers
 * included: the contcount.charges view.
 */
PG_FUNCTION_INFO_V1(contcount_charge_rows);
Datum
contcount_charge_rows(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	AuditScan	scan;
	HASHCTL		info;
	OwnerScope	scope;
	Oid			types[1] = {OIDOID};
	Datum		args[1];
	MemoryContext outer = CurrentMemoryContext;

	InitMaterializedSRF(fcinfo, 0);
	scan.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	info.keysize = sizeof(int64);
	info.entrysize = sizeof(AuditLedger);
	info.hcxt = outer;
	scan.ledgers = hash_create("contcount audit ledgers", 64, &info,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	owner_begin(&scope);
	args[0] = ObjectIdGetDatum(scope.caller);
	owner_run(&plan, "SELECT id, name FROM contcount.ledger WHERE contcount.ledger_granted(id, $1, true)",
		1, types, args, NULL, SPI_OK_SELECT);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i],
													 SPI_tuptable->tupdesc, 1, &isnull));
		AuditLedger *ledger = hash_search(scan.ledgers, &id, HASH_ENTER, NULL);

		ledger->name = MemoryContextStrdup(outer, SPI_getvalue(SPI_tuptable->vals[i],
															   SPI_tuptable->tupdesc, 2));
	}
	owner_end(&scope);

	ledger_store_scan(audit_one, &scan);
	return (Datum) 0;
}

void
ledger_charge(const char *ledger, uint64 epsilon_units, const char *function)
{
	const char *name = ledger ? ledger : contcount_ledger;
	bool		chosen_by_setting = contcount_ledger && name && strcmp(name, contcount_ledger) == 0;
	OwnerScope	scope;
	LedgerRow	row;
	StoreCharge charge;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot release noisy values during recovery"),
				 errdetail("A standby cannot record the charge that must precede a release.")));
	if (name == NULL || name[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_CONTCOUNT_NO_LEDGER),
				 errmsg("no privacy budget ledger is selected"),
				 errhint("A superuser selects the ledger a role spends with ALTER ROLE ... SET contcount.ledger = 'name'.")));

	owner_begin(&scope);
	row = require_ledger(name);
	if (!chosen_by_setting && !granted(row.id, scope.caller, false))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for ledger \"%s\"", name),
				 errhint("An admin of the ledger grants it with contcount.grant_ledger().")));
	owner_end(&scope);

	charge.at = GetCurrentTimestamp();
	charge.role = scope.caller;
	charge.ledger = row.id;
	charge.epsilon_units = epsilon_units;
	charge.function = function;
	charge.statement = debug_query_string;
	ledger_store_charge(row.id, name, row.budget_units, &charge);
}

static void
site_rescanned(Datum arg)
{
	((ChargeSite *) DatumGetPointer(arg))->charged = false;
}

void
ledger_charge_site(ChargeSite *site, PlanState *node, const char *ledger,
				   uint64 epsilon_units, const char *function)
{
	if (site->charged)
		return;
	ledger_charge(ledger, epsilon_units, function);
	site->charged = true;
	/* ExecReScan() of the node calls this back */
	RegisterExprContextCallback(node->ps_ExprContext, site_rescanned, PointerGetDatum(site));
}
