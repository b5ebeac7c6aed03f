/*
 * ledger.c
 *		Privacy budget ledgers: the SQL functions that manage them, and the
 *		charge every release makes (the views that show them are in
 *		ledger_views.c).
 *
 * A ledger's name, budget and grants live in the tables contcount.ledger and
 * contcount.ledger_grant, so managing them is transactional; what has been
 * spent lives in the ledger store (ledger_store.c), which no transaction can
 * undo.  Every function here checks the calling role's rights itself and
 * then works on the tables as their owner (owner_spi.c), on a snapshot of
 * what is committed now: a charge sees neither the caller's older snapshot
 * nor its own uncommitted changes, so budgets, grants and drops bind from
 * their commit.  Budget changes are kept in contcount.budget_change, in the
 * transaction that makes them.
 *
 * A call site of an aggregate (ChargeSite) pays for every release it makes:
 * each group, partition or rescan is a release of its own (sequential
 * composition), since nothing tells contcount that the rows SQL groups are
 * disjoint.  So that many groups do not mean one fsync each, a charge pays
 * in advance for a batch of releases, doubling up to SITE_MAX_BATCH, and
 * what the site did not use is refunded when the query ends.
 *
 * IDENTIFICATION
 *	  src/ledger/ledger.c
 */
#include "postgres.h"

#include <float.h>

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "common/args.h"
#include "common/owner_spi.h"
#include "common/report.h"
#include "common/settings.h"
#include "ledger/ledger.h"
#include "ledger/ledger_forget.h"
#include "ledger/statement_cap.h"
#include "ledger/ledger_store.h"

typedef struct LedgerRow
{
	int64		id;
	uint64		budget_units;
} LedgerRow;

/* Most releases one charge of a call site pays for in advance. */
#define SITE_MAX_BATCH 1024

/*
 * The live ledger of that name, as committed now; with the current
 * transaction's changes unless committed_only.  Owner scope.
 */
static bool
lookup_ledger(const char *name, LedgerRow *row, bool committed_only)
{
	static SPIPlanPtr plan = NULL;
	static const char *sql =
		"SELECT id, pg_catalog.int8(budget OPERATOR(pg_catalog.*) 1000000000::pg_catalog.numeric) "
		"FROM contcount.ledger WHERE name OPERATOR(pg_catalog.=) $1 AND dropped_at IS NULL";
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	bool		isnull;

	if (committed_only)
		owner_read_committed(&plan, sql, 1, types, values, NULL);
	else
		owner_run(&plan, sql, 1, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	row->id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	row->budget_units = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
													SPI_tuptable->tupdesc, 2, &isnull));
	return true;
}

/*
 * The committed row of the ledger contcount.ledger names, kept between
 * charges while no commit has changed contcount.ledger since it was read
 * (ledger_store_generation; a commit counts once it is visible, so a charge
 * that races it is ordered before it), and while the table is the same one
 * (a dropped and created extension has a new table).  Only where the
 * statement trigger that counts changes exists: a database not yet updated
 * to 0.3 reads every time.
 */
static struct
{
	bool		valid;
	char	   *name;
	Oid			table;
	uint64		generation;
	LedgerRow	row;
}			kept;

/* Has this transaction changed contcount.ledger?  Counted at commit. */
static bool ledgers_changed = false;

static Oid
ledger_table(void)
{
	Oid			schema = get_namespace_oid("contcount", true);

	return OidIsValid(schema) ? get_relname_relid("ledger", schema) : InvalidOid;
}

static bool
kept_row(const char *name, LedgerRow *row)
{
	if (!kept.valid || strcmp(kept.name, name) != 0 ||
		kept.generation != ledger_store_generation() || kept.table != ledger_table())
		return false;
	*row = kept.row;
	return true;
}

/* Keep row, read as committed after generation was taken.  Owner scope. */
static void
keep_row(const char *name, const LedgerRow *row, uint64 generation)
{
	Oid			table = ledger_table();

	kept.valid = false;
	if (generation == 0 || !OidIsValid(get_trigger_oid(table, "ledger_changed", true)))
		return;
	if (kept.name == NULL || strcmp(kept.name, name) != 0)
	{
		if (kept.name != NULL)
			pfree(kept.name);
		kept.name = MemoryContextStrdup(TopMemoryContext, name);
	}
	kept.table = table;
	kept.generation = generation;
	kept.row = *row;
	kept.valid = true;
}

static void
count_ledger_changes(XactEvent event, void *arg pg_attribute_unused())
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			if (ledgers_changed)
				ledger_store_catalog_changed();
			ledgers_changed = false;
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (ledgers_changed)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that changed contcount's ledgers")));
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			ledgers_changed = false;
			break;
		default:
			break;
	}
}

/*
 * The statement trigger on contcount.ledger (ENABLE ALWAYS, so replication
 * roles count too): the commit will say that the ledgers changed.
 */
PG_FUNCTION_INFO_V1(contcount_ledger_changed);
Datum
contcount_ledger_changed(PG_FUNCTION_ARGS)
{
	static bool counting = false;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "contcount_ledger_changed: not called as a trigger");
	if (!counting)
	{
		RegisterXactCallback(count_ledger_changes, NULL);
		counting = true;
	}
	ledgers_changed = true;
	return PointerGetDatum(NULL);
}

static LedgerRow
require_ledger(const char *name, bool committed_only)
{
	LedgerRow	row;

	if (!lookup_ledger(name, &row, committed_only))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("ledger \"%s\" does not exist", name)));
	return row;
}

/* Is role a superuser or granted the ledger (as admin if need_admin)?  Owner scope. */
static bool
granted(int64 ledger, Oid role, bool need_admin, bool committed_only)
{
	static SPIPlanPtr plan = NULL;
	static const char *sql = "SELECT contcount.ledger_granted($1, $2, $3)";
	Oid			types[3] = {INT8OID, OIDOID, BOOLOID};
	Datum		values[3] = {Int64GetDatum(ledger), ObjectIdGetDatum(role), BoolGetDatum(need_admin)};
	bool		isnull;

	if (committed_only)
		owner_read_committed(&plan, sql, 3, types, values, NULL);
	else
		owner_run(&plan, sql, 3, types, values, NULL, SPI_OK_SELECT);
	return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/* The ledger, if the caller may manage it. */
static LedgerRow
require_admin(const OwnerScope *scope, const char *name)
{
	LedgerRow	row = require_ledger(name, false);

	if (!granted(row.id, scope->caller, true, false))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for ledger \"%s\"", name),
				 errdetail("Only superusers and the ledger's admins manage it.")));
	return row;
}

/*
 * May the caller see the ledger, as contcount.ledgers shows it: a superuser,
 * a role granted it, or the one contcount.ledger selects.  Owner scope.
 */
static bool
ledger_shown(const OwnerScope *scope, const char *name, int64 id)
{
	const char *setting = settings_ledger();

	return (setting && strcmp(name, setting) == 0) ||
		granted(id, scope->caller, false, false);
}

/*
 * The live ledger of that name as committed now (with the caller's own
 * changes), if the caller sees it in contcount.ledgers; else 42704 or 42501.
 */
static LedgerRow
visible_row(const char *name)
{
	OwnerScope	scope;
	LedgerRow	row;

	owner_begin(&scope);
	row = require_ledger(name, false);
	if (!ledger_shown(&scope, name, row.id))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for ledger \"%s\"", name),
				 errdetail("Superusers see every ledger, other roles the ones granted to them and "
						   "the one contcount.ledger selects.")));
	owner_end(&scope);
	return row;
}

int64
ledger_require_visible(const char *name)
{
	return visible_row(name).id;
}

uint64
ledger_remaining(const char *ledger, bool by_source, const char **name,
				 cc_accounting *accounting, bool *shown)
{
	const char *setting = settings_ledger();
	OwnerScope	scope;
	LedgerRow	row;
	uint64		spent;

	*name = ledger ? ledger : setting;
	if (*name == NULL || (*name)[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_CONTCOUNT_NO_LEDGER),
				 errmsg("no privacy budget ledger is selected"),
				 errhint("Name a ledger, or ask a superuser to select one with contcount.ledger.")));
	if (by_source)
	{
		owner_begin(&scope);
		row = require_ledger(*name, false);
		*shown = ledger_shown(&scope, *name, row.id);
		owner_end(&scope);
	}
	else
	{
		row = visible_row(*name);
		*shown = true;
	}
	if (!ledger_store_spent(row.id, &spent, accounting))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("ledger \"%s\" is missing from the ledger store", *name)));
	return row.budget_units > spent ? row.budget_units - spent : 0;
}

bool
ledger_budget_valid(Datum budget)
{
	Datum		units;

	if (numeric_is_nan(DatumGetNumeric(budget)) || numeric_is_inf(DatumGetNumeric(budget)))
		return false;
	units = DirectFunctionCall2(numeric_mul, budget,
								DirectFunctionCall1(int8_numeric,
													Int64GetDatum(CC_EPSILON_UNITS_PER_ONE)));
	return !DatumGetBool(DirectFunctionCall2(numeric_lt, budget,
											 DirectFunctionCall1(int8_numeric, Int64GetDatum(0)))) &&
		DatumGetBool(DirectFunctionCall2(numeric_eq, units,
										 DirectFunctionCall2(numeric_trunc, units,
															 Int32GetDatum(0)))) &&
		!DatumGetBool(DirectFunctionCall2(numeric_gt, units,
										  DirectFunctionCall1(int8_numeric,
															  Int64GetDatum(PG_INT64_MAX))));
}

/* A budget, epsilon or rho (measure), as a whole number of 1e-9 units. */
static Datum
budget_arg(FunctionCallInfo fcinfo, int argno, const char *measure)
{
	Datum		budget;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", measure)));
	budget = PG_GETARG_DATUM(argno);
	if (!ledger_budget_valid(budget))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a ledger's %s must be a finite multiple of 0.000000001, from 0 to 9223372036",
						measure)));
	return budget;
}

bool
ledger_delta_valid(Datum delta)
{
	double		value = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, delta));

	/* written so that NaN fails too */
	return value >= DBL_MIN && value < 1;
}

/*
 * The delta at which the views show a zCDP ledger as (epsilon, delta)-DP:
 * between 0 and 1, and not so small that a double loses it.  Null stays null.
 */
static NullableDatum
delta_arg(FunctionCallInfo fcinfo, int argno)
{
	NullableDatum delta = {PG_GETARG_DATUM(argno), PG_ARGISNULL(argno)};

	if (delta.isnull)
		return delta;
	if (!ledger_delta_valid(delta.value))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("delta must be greater than 0 and less than 1"),
				 errhint("A zCDP ledger is shown as (epsilon, delta)-DP at this delta: choose it well below "
						 "1/n for n people.")));
	return delta;
}

/*
 * The ledger's accounting, as the store knows it (not at all, for a ledger
 * restored without its spending): ZB003 if it is not the one a function that
 * takes a budget in epsilon (CC_PURE) or rho (CC_ZCDP) expects.
 */
static void
require_accounting(int64 ledger, const char *name, cc_accounting expected)
{
	uint64		spent;
	cc_accounting accounting;

	if (!ledger_store_spent(ledger, &spent, &accounting) || accounting == expected)
		return;
	if (accounting == CC_ZCDP)
		ereport(ERROR,
				(errcode(ERRCODE_CONTCOUNT_ACCOUNTING),
				 errmsg("ledger \"%s\" accounts in zCDP: its budget is a rho", name),
				 errhint("Use contcount.alter_ledger(name, rho => ..., delta => ...).")));
	ereport(ERROR,
			(errcode(ERRCODE_CONTCOUNT_ACCOUNTING),
			 errmsg("ledger \"%s\" accounts in pure epsilon: its budget is an epsilon, and it has no delta",
					name),
			 errhint("Use contcount.alter_ledger(name, epsilon).")));
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

/* Record a budget change in the audit, in the changing transaction.  Owner scope. */
static void
log_budget_change(Oid role, int64 ledger, const char *action, NullableDatum old_budget,
				  NullableDatum new_budget)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[5] = {OIDOID, INT8OID, TEXTOID, NUMERICOID, NUMERICOID};
	Datum		values[5] = {ObjectIdGetDatum(role), Int64GetDatum(ledger),
	CStringGetTextDatum(action), old_budget.value, new_budget.value};
	char		nulls[5] = {' ', ' ', ' ', old_budget.isnull ? 'n' : ' ', new_budget.isnull ? 'n' : ' '};

	/* a database not yet updated from 0.1 has no such audit: work as 0.1 did */
	if (!OidIsValid(get_relname_relid("budget_change", get_namespace_oid("contcount", false))))
		return;
	owner_run(&plan, "INSERT INTO contcount.budget_change (role_id, ledger_id, action, old_budget, new_budget) "
			  "VALUES ($1, $2, $3, $4, $5)",
			  5, types, values, nulls, SPI_OK_INSERT);
}

/*
 * Lock the live ledger's row until the end of the transaction and return its
 * budget, as it is after any concurrent change commits.  Owner scope.
 */
static NullableDatum
lock_budget(int64 ledger, const char *name)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(ledger)};
	NullableDatum budget;

	owner_select_existing(&plan, "SELECT budget FROM contcount.ledger "
						  "WHERE id OPERATOR(pg_catalog.=) $1 AND dropped_at IS NULL FOR UPDATE",
						  1, types, values, "ledger", name);
	budget.value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &budget.isnull);
	budget.value = datumCopy(budget.value, false, -1);
	return budget;
}

/* The ids of the catalog's ledgers, live and dropped, sorted. */
typedef struct CatalogIds
{
	int64	   *ids;
	int			n;
} CatalogIds;

/* Ledger ids in order, for qsort and bsearch. */
int
ledger_compare_ids(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y;
}

static bool
in_catalog(int64 ledger, void *arg)
{
	CatalogIds *catalog = (CatalogIds *) arg;

	return bsearch(&ledger, catalog->ids, catalog->n, sizeof(int64), ledger_compare_ids) != NULL;
}

/*
 * The id of a ledger created here under this name whose catalog row is gone
 * (with a dropped extension, or a creation rolled back), or 0.  Its spending
 * was on the same data: creating the name again takes it back rather than
 * starting from nothing.  A ledger dropped with drop_ledger() keeps its row,
 * so is not taken back.  Owner scope.
 */
static int64
ledger_to_take_back(const char *name)
{
	static SPIPlanPtr plan = NULL;
	CatalogIds	catalog;

	owner_run(&plan, "SELECT id FROM contcount.ledger", 0, NULL, NULL, NULL, SPI_OK_SELECT);
	catalog.n = (int) SPI_processed;
	catalog.ids = palloc(sizeof(int64) * Max(catalog.n, 1));
	for (int i = 0; i < catalog.n; i++)
	{
		bool		isnull;

		catalog.ids[i] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i],
													 SPI_tuptable->tupdesc, 1, &isnull));
	}
	qsort(catalog.ids, catalog.n, sizeof(int64), ledger_compare_ids);
	return ledger_store_find_created(MyDatabaseId, name, in_catalog, &catalog);
}

/*
 * A ledger of this name created here before, whose row is gone, takes its
 * spending back (ledger_to_take_back) in the same accounting only: what it
 * spent is in its own measure.  One that spent nothing (its creation rolled
 * back) leaves the name to a new ledger.  Returns the ledger to take back, or
 * 0; ZB003 for one of the other accounting that spent.
 */
static int64
take_back_as(int64 ledger, const char *name, cc_accounting accounting)
{
	uint64		spent;
	cc_accounting old;

	if (ledger == 0 || !ledger_store_spent(ledger, &spent, &old) || old == accounting)
		return ledger;
	if (spent == 0)
		return 0;
	ereport(ERROR,
			(errcode(ERRCODE_CONTCOUNT_ACCOUNTING),
			 errmsg("ledger \"%s\" was created here before, accounting in %s, and spent %s %s",
					name, ledger_accounting_name(old), old == CC_ZCDP ? "rho" : "epsilon",
					format_budget_units(spent)),
			 errdetail("Its row went with a dropped extension; its spending stays with the name in this "
					   "database, in its own measure."),
			 old == CC_ZCDP ?
			 errhint("Create it again with contcount.create_ledger(name, rho => ..., delta => ...).") :
			 errhint("Create it again with contcount.create_ledger(name, epsilon).")));
	return 0;					/* not reached */
}

/* A ledger name the store can keep: not empty, at most LEDGER_NAME_MAX bytes. */
static void
require_ledger_name(const char *name)
{
	if (name[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ledger name must not be empty")));
	/* the store keeps it whole, to find it again after a dropped extension */
	if (strlen(name) > LEDGER_NAME_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ledger name must be at most %d bytes", LEDGER_NAME_MAX)));
}

/*
 * Insert a new ledger's row (values: id, name, budget, creator, and a zCDP
 * ledger's delta), and its creator's admin grant if not a superuser.  In
 * the owner's scope.  42710 if a ledger of that name exists.
 */
static void
insert_ledger(Datum *values, cc_accounting accounting, const char *name, Oid caller)
{
	/* the pure form's row has no delta, as before 0.5 */
	static SPIPlanPtr plan_pure = NULL;
	static SPIPlanPtr plan_zcdp = NULL;
	static SPIPlanPtr plan2 = NULL;
	Oid			types[5] = {INT8OID, TEXTOID, NUMERICOID, OIDOID, NUMERICOID};

	/* a concurrent creation of the name commits first, or aborts: wait */
	if (accounting == CC_ZCDP)
		owner_insert_new(&plan_zcdp, "INSERT INTO contcount.ledger (id, name, budget, created_by, delta) "
						 "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) WHERE dropped_at IS NULL DO NOTHING",
						 5, types, values, "ledger", name);
	else
		owner_insert_new(&plan_pure, "INSERT INTO contcount.ledger (id, name, budget, created_by) VALUES ($1, $2, $3, $4) "
						 "ON CONFLICT (name) WHERE dropped_at IS NULL DO NOTHING",
						 4, types, values, "ledger", name);
	/* a creator who is not a superuser manages what they created */
	if (!superuser_arg(caller))
		owner_run(&plan2, "INSERT INTO contcount.ledger_grant (ledger_id, role_id, admin) VALUES ($1, $4, true)",
				  4, types, values, NULL, SPI_OK_INSERT);
}

/*
 * After the rows, outside the owner's scope: a ledger that took back the
 * store's ledger of its name says what that had spent; a new one is
 * recorded in the store, last, and forgotten there if its creation rolls
 * back.
 */
static void
record_creation(int64 id, const char *name, Oid caller, cc_accounting accounting, bool taken_back)
{
	if (taken_back)
	{
		uint64		spent = 0;

		/* one whose creation rolled back spent nothing: no news */
		if (ledger_store_spent(id, &spent, NULL) && spent > 0)
			ereport(NOTICE,
					(errmsg("ledger \"%s\" takes back the spending of the ledger of that name created "
							"here whose row is gone (with a dropped extension): spent %s",
							name, format_budget_units(spent))));
	}
	else
	{
		/* last: if this fails, the transaction takes the rows back */
		ledger_store_create(id, name, caller, accounting);
		/* and if it rolls back, the store gives the ledger's room back */
		ledger_forget_at_abort(id);
	}
}

/*
 * create_ledger(name, epsilon): a pure ledger; create_ledger(name, rho,
 * delta), from 0.5: a zCDP ledger.
 */
PG_FUNCTION_INFO_V1(contcount_create_ledger);
Datum
contcount_create_ledger(PG_FUNCTION_ARGS)
{
	char	   *name = arg_text(fcinfo, 0, "ledger name");
	cc_accounting accounting = PG_NARGS() == 3 ? CC_ZCDP : CC_PURE;
	NullableDatum budget = {budget_arg(fcinfo, 1, accounting == CC_ZCDP ? "rho" : "epsilon"), false};
	NullableDatum none = {(Datum) 0, true};
	int64		id;
	int64		taken_back;
	OwnerScope	scope;
	Datum		values[5];

	if (accounting == CC_ZCDP)
	{
		NullableDatum delta = delta_arg(fcinfo, 2);

		if (delta.isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("delta must not be null"),
					 errhint("A zCDP ledger is shown as (epsilon, delta)-DP at this delta.")));
		values[4] = delta.value;
	}
	require_ledger_name(name);
	owner_begin(&scope);
	taken_back = take_back_as(ledger_to_take_back(name), name, accounting);
	id = taken_back != 0 ? taken_back : new_ledger_id();
	values[0] = Int64GetDatum(id);
	values[1] = CStringGetTextDatum(name);
	values[2] = budget.value;
	values[3] = ObjectIdGetDatum(scope.caller);
	insert_ledger(values, accounting, name, scope.caller);
	log_budget_change(scope.caller, id, "create", none, budget);
	owner_end(&scope);
	record_creation(id, name, scope.caller, accounting, taken_back != 0);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(contcount_alter_ledger);
Datum
contcount_alter_ledger(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan_pure = NULL;
	static SPIPlanPtr plan_zcdp = NULL;
	char	   *name = arg_text(fcinfo, 0, "ledger name");
	cc_accounting accounting = PG_NARGS() == 3 ? CC_ZCDP : CC_PURE;
	NullableDatum budget = {(Datum) 0, true};
	NullableDatum delta = {(Datum) 0, true};
	NullableDatum old;
	OwnerScope	scope;
	LedgerRow	row;
	Oid			types[3] = {INT8OID, NUMERICOID, NUMERICOID};
	Datum		values[3];
	char		nulls[3] = {' ', ' ', ' '};

	/* alter_ledger(name, rho, delta), from 0.5: either, or both */
	if (accounting == CC_PURE || !PG_ARGISNULL(1))
	{
		budget.value = budget_arg(fcinfo, 1, accounting == CC_ZCDP ? "rho" : "epsilon");
		budget.isnull = false;
	}
	if (accounting == CC_ZCDP)
	{
		delta = delta_arg(fcinfo, 2);
		if (budget.isnull && delta.isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("rho and delta must not both be null"),
					 errhint("Give the new rho budget, the new delta, or both; a null one stays as it is.")));
	}

	owner_begin(&scope);
	row = require_admin(&scope, name);
	require_accounting(row.id, name, accounting);
	old = lock_budget(row.id, name);
	values[0] = Int64GetDatum(row.id);
	values[1] = budget.value;
	values[2] = delta.value;
	nulls[1] = budget.isnull ? 'n' : ' ';
	nulls[2] = delta.isnull ? 'n' : ' ';
	if (accounting == CC_ZCDP)
		owner_run(&plan_zcdp, "UPDATE contcount.ledger "
				  "SET budget = COALESCE($2, budget), delta = COALESCE($3, delta) "
				  "WHERE id OPERATOR(pg_catalog.=) $1",
				  3, types, values, nulls, SPI_OK_UPDATE);
	else
		owner_run(&plan_pure, "UPDATE contcount.ledger SET budget = $2 WHERE id OPERATOR(pg_catalog.=) $1",
				  2, types, values, NULL, SPI_OK_UPDATE);
	/* delta is how the views show the ledger, not what it may spend */
	if (!budget.isnull)
		log_budget_change(scope.caller, row.id, "alter", old, budget);
	owner_end(&scope);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(contcount_drop_ledger);
Datum
contcount_drop_ledger(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *name = arg_text(fcinfo, 0, "ledger name");
	NullableDatum old;
	NullableDatum none = {(Datum) 0, true};
	OwnerScope	scope;
	LedgerRow	row;
	Oid			types[1] = {INT8OID};
	Datum		values[1];

	owner_begin(&scope);
	row = require_admin(&scope, name);
	old = lock_budget(row.id, name);
	values[0] = Int64GetDatum(row.id);
	/* kept, so that the audit still names it */
	owner_run(&plan, "UPDATE contcount.ledger SET dropped_at = pg_catalog.now() "
			  "WHERE id OPERATOR(pg_catalog.=) $1",
			  1, types, values, NULL, SPI_OK_UPDATE);
	log_budget_change(scope.caller, row.id, "drop", old, none);
	owner_end(&scope);
	/* nothing can charge it once this commits: its room is given back */
	ledger_forget_at_commit(row.id);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(contcount_grant_ledger);
Datum
contcount_grant_ledger(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	char	   *name = arg_text(fcinfo, 0, "ledger name");
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
	char	   *name = arg_text(fcinfo, 0, "ledger name");
	OwnerScope	scope;
	LedgerRow	row;
	Oid			types[2] = {INT8OID, OIDOID};
	Datum		values[2];

	values[1] = arg_required(fcinfo, 1, "role");
	owner_begin(&scope);
	row = require_admin(&scope, name);
	values[0] = Int64GetDatum(row.id);
	owner_run(&plan, "DELETE FROM contcount.ledger_grant "
			  "WHERE ledger_id OPERATOR(pg_catalog.=) $1 AND role_id OPERATOR(pg_catalog.=) $2",
			  2, types, values, NULL, SPI_OK_DELETE);
	owner_end(&scope);
	PG_RETURN_VOID();
}

/*
 * A release may be charged: not during recovery (a standby cannot record the
 * charge), and to a ledger named or selected by contcount.ledger (name).
 */
static void
require_ledger_selected(const char *name)
{
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
}

/*
 * The ledger a release charges: the one named or contcount.ledger's, which
 * the caller (*role) must be allowed to spend; its row as committed now.  An
 * error when none is selected, it does not exist, the caller may not spend
 * it, or during recovery.  Returns its name.  by_source: the grant of a
 * protected source lets the caller spend this ledger, the source's own.
 */
static const char *
paying_ledger(const char *ledger, bool by_source, LedgerRow *row, Oid *role)
{
	const char *setting = settings_ledger();
	const char *name = ledger ? ledger : setting;
	bool		chosen_by_setting = setting && name && strcmp(name, setting) == 0;
	OwnerScope	scope;
	bool		allowed;
	uint64		generation;

	require_ledger_selected(name);

	/*
	 * The ledger contcount.ledger chooses, with no change of the caller's
	 * own to consider: its committed row, if nothing changed it since.
	 */
	if (chosen_by_setting && !TransactionIdIsValid(GetTopTransactionIdIfAny()) &&
		kept_row(name, row))
	{
		*role = GetUserId();
		return name;
	}

	/*
	 * What is committed now, not the caller's snapshot; a change of the
	 * caller's own open transaction binds only where it restricts.
	 */
	generation = ledger_store_generation();
	owner_begin(&scope);
	*row = require_ledger(name, true);
	if (chosen_by_setting)
		keep_row(name, row, generation);
	allowed = chosen_by_setting || by_source || granted(row->id, scope.caller, false, true);
	if (TransactionIdIsValid(GetTopTransactionIdIfAny()))
	{
		LedgerRow	own;

		if (!lookup_ledger(name, &own, false) || own.id != row->id)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("ledger \"%s\" does not exist", name)));
		row->budget_units = Min(row->budget_units, own.budget_units);
		allowed = allowed && (chosen_by_setting || by_source ||
							  granted(row->id, scope.caller, false, false));
	}
	if (!allowed)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for ledger \"%s\"", name),
				 errhint("An admin of the ledger grants it with contcount.grant_ledger().")));
	owner_end(&scope);
	*role = scope.caller;
	return name;
}

/*
 * A charge of cost for function by the current statement, to the ledger that
 * pays (paying_ledger, whose row and name it returns).
 */
static const char *
prepare_charge(const char *ledger, bool by_source, cc_cost cost, const char *function,
			   LedgerRow *row, StoreCharge *charge)
{
	const char *name;

	memset(charge, 0, sizeof(*charge));
	name = paying_ledger(ledger, by_source, row, &charge->role);
	charge->at = GetCurrentTimestamp();
	charge->ledger = row->id;
	charge->cost = cost;
	charge->function = function;
	charge->statement = debug_query_string;
	return name;
}

/*
 * Charge for up to max_releases releases of cost each, at least one, to the
 * ledger named or contcount.ledger; return how many were paid for and the
 * ledger's id.  See ledger_charge and paying_ledger.
 */
static int64
charge_releases(const char *ledger, cc_cost cost, const char *function,
				int64 max_releases, int64 *ledger_id, bool by_source)
{
	LedgerRow	row;
	StoreCharge charge;
	const char *name = prepare_charge(ledger, by_source, cost, function, &row, &charge);
	OwnerScope	scope;

	/* the data's ledger refuses without its figures a role that may not see it */
	if (by_source)
	{
		owner_begin(&scope);
		charge.figures_hidden = !ledger_shown(&scope, name, row.id);
		owner_end(&scope);
	}
	*ledger_id = row.id;
	return ledger_store_charge(row.id, name, row.budget_units, &charge, max_releases);
}

/* The check of ledger_check_cost, by_source as for paying_ledger. */
static void
check_cost(const char *ledger, cc_cost cost, bool by_source)
{
	LedgerRow	row;
	Oid			role;
	const char *name = paying_ledger(ledger, by_source, &row, &role);
	uint64		spent;
	cc_accounting accounting;

	/* a ledger the store lacks is refused by the charge itself (XX001) */
	if (ledger_store_spent(row.id, &spent, &accounting))
		(void) ledger_store_release_units(accounting, name, cost);
}

void
ledger_check_cost(const char *ledger, cc_cost cost)
{
	/* every ledger pays for a pure release */
	if (cost.accounting != CC_PURE)
		check_cost(ledger, cost, false);
}

void
ledger_charge(const char *ledger, cc_cost cost, const char *function)
{
	int64		ledger_id;

	(void) statement_cap_allow(cost, 1);
	(void) charge_releases(ledger, cost, function, 1, &ledger_id, false);
	statement_cap_count(cost, 1);
}

void
ledger_charge_source(const char *ledger, const char *source_ledger, cc_cost cost,
					 const char *function)
{
	const char *team = ledger ? ledger : settings_ledger();
	int64		ledger_id;

	/* neither pays if either cannot account for the release */
	if (cost.accounting != CC_PURE)
	{
		check_cost(ledger, cost, false);
		check_cost(source_ledger, cost, true);
	}
	(void) statement_cap_allow(cost, 1);
	/* the team's quota first: a team without one spends nothing of the data's */
	(void) charge_releases(ledger, cost, function, 1, &ledger_id, false);
	/* one release, though two ledgers pay for it */
	statement_cap_count(cost, 1);
	if (team != NULL && strcmp(team, source_ledger) == 0)
		return;
	(void) charge_releases(source_ledger, cost, function, 1, &ledger_id, true);
}

void
ledger_charge_blocks(const char *ledger, const char *source_ledger, cc_cost cost,
					 const char *function, const StoreBlockRun *run, uint64 block_budget_units)
{
	int64		ledger_id;

	/* neither pays if either cannot account for the release */
	if (cost.accounting != CC_PURE)
	{
		check_cost(ledger, cost, false);
		check_cost(source_ledger, cost, true);
	}
	(void) statement_cap_allow(cost, 1);
	/* no room for the blocks: refused before the team's ledger pays */
	if (run->count > 0)
	{
		LedgerRow	row;
		Oid			role;
		const char *name = paying_ledger(source_ledger, true, &row, &role);

		ledger_store_check_block_room(row.id, name, run, role);
	}
	(void) charge_releases(ledger, cost, function, 1, &ledger_id, false);
	statement_cap_count(cost, 1);
	ledger_charge_source_blocks(source_ledger, cost, function, run, block_budget_units);
}

void
ledger_charge_source_blocks(const char *source_ledger, cc_cost cost, const char *function,
							const StoreBlockRun *run, uint64 block_budget_units)
{
	LedgerRow	row;
	StoreCharge charge;
	const char *name;

	if (run->count == 0)
		return;
	name = prepare_charge(source_ledger, true, cost, function, &row, &charge);
	ledger_store_charge_blocks(row.id, name, block_budget_units, &charge, run);
}

void
ledger_site_init(ChargeSite *site, const char *ledger, cc_cost cost, const char *function)
{
	memset(site, 0, sizeof(*site));
	site->ledger = ledger ? pstrdup(ledger) : NULL;
	site->cost = cost;
	site->function = function;
	site->next_batch = 1;
}

/* At the end of the query: give back what was paid for and not released. */
static void
site_settle(Datum arg)
{
	ChargeSite *site = (ChargeSite *) DatumGetPointer(arg);
	StoreCharge refund;

	if (site->prepaid == 0)
		return;
	memset(&refund, 0, sizeof(refund));
	refund.at = GetCurrentTimestamp();
	refund.role = GetUserId();
	refund.ledger = site->ledger_id;
	refund.cost = site->cost;
	refund.releases = site->prepaid;
	refund.refund = true;
	refund.function = site->function;
	refund.statement = debug_query_string;
	site->prepaid = 0;
	ledger_store_refund(&refund);
}

void
ledger_pay_release(ChargeSite *site, PlanState *node)
{
	/* a batch paid in advance never goes beyond the statement's cap */
	int64		allowed = statement_cap_allow(site->cost, Max(site->next_batch, 1));

	if (site->prepaid == 0)
	{
		int64		paid = charge_releases(site->ledger, site->cost, site->function,
										   Min(site->next_batch, allowed), &site->ledger_id, false);

		site->next_batch = Min(2 * site->next_batch, SITE_MAX_BATCH);
		if (paid > 1 && !site->settles)
		{
			/* an ExprContext of its own: the node's is reset by rescans */
			RegisterExprContextCallback(CreateExprContext(node->state), site_settle,
										PointerGetDatum(site));
			site->settles = true;
		}
		site->prepaid = paid;
	}
	statement_cap_count(site->cost, 1);
	site->prepaid--;
}
