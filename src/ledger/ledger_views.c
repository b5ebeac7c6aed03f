/*
 * ledger_views.c
 *		The rows of the views that show ledgers: contcount.ledgers (what each
 *		ledger the caller may spend from has spent and has left, and from 0.5
 *		as (epsilon, delta)-DP), contcount.charges (the audit of the ledgers
 *		it administers) and contcount.budget_changes.
 *
 * Each reads the catalog as the extension's owner (owner_spi.c) and what
 * was spent from the store (ledger_store.h), which takes its own locks
 * (the protocol is at the top of ledger_store.c); nothing here writes.
 *
 * IDENTIFICATION
 *	  src/ledger/ledger_views.c
 */
#include "postgres.h"

#include <math.h>

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "common/owner_spi.h"
#include "common/report.h"
#include "common/settings.h"
#include "ledger/ledger.h"
#include "ledger/ledger_curve.h"
#include "ledger/ledger_store.h"

Datum
ledger_units_numeric(uint64 units, bool negative)
{
	char	   *text = format_budget_units(units);

	if (negative && units > 0)
		text = psprintf("-%s", text);
	return DirectFunctionCall3(numeric_in, CStringGetDatum(text),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* An epsilon bound as numeric, rounded up to a unit. */
static Datum
epsilon_numeric_up(double epsilon)
{
	double		units = ceil(epsilon * CC_EPSILON_UNITS_PER_ONE);

	return ledger_units_numeric(units < (double) UINT64_MAX ? (uint64) units : UINT64_MAX, false);
}

/*
 * The epsilon at which rho_units of rho are (epsilon, delta)-DP, rounded up
 * to a unit (cc_zcdp_epsilon, which is already an upper bound).
 */
static Datum
zcdp_epsilon_numeric(uint64 rho_units, double delta)
{
	return epsilon_numeric_up(cc_zcdp_epsilon((double) rho_units / CC_EPSILON_UNITS_PER_ONE, delta));
}

/*
 * The columns of ledger_rows() from 0.5 on; before, the first 5 (a database
 * not yet updated declares those, and tuplestore_putvalues takes as many).
 */
#define LEDGER_ROWS_0_5 10

/* What the ledgers of ledger_rows()' SPI result spent, row by row. */
typedef struct SpentRows
{
	uint64	   *spent;
	cc_accounting *accounting;
	bool	   *known;			/* false: not in the store */
	LedgerReleases *releases;	/* of the zCDP ledgers with a delta, or NULL */
} SpentRows;

/*
 * What each ledger of the SPI result spent, and then the releases of the
 * zCDP ones with a delta (v05), in one scan of the store: what each spent is
 * read before the releases behind it (ledger_curve.c).
 */
static void
read_spent(bool v05, SpentRows *rows)
{
	int64	   *ids = palloc(sizeof(int64) * (SPI_processed + 1));
	int			ncurves = 0;

	rows->spent = palloc0(sizeof(uint64) * (SPI_processed + 1));
	rows->accounting = palloc0(sizeof(cc_accounting) * (SPI_processed + 1));
	rows->known = palloc(sizeof(bool) * (SPI_processed + 1));
	rows->releases = NULL;
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
													 1, &isnull));

		rows->accounting[i] = CC_PURE;
		rows->known[i] = ledger_store_spent(id, &rows->spent[i], &rows->accounting[i]);
		if (v05 && rows->known[i] && rows->accounting[i] == CC_ZCDP)
		{
			(void) SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 5, &isnull);
			if (!isnull)
				ids[ncurves++] = id;
		}
	}
	if (ncurves > 0)
		rows->releases = ledger_releases_read(ids, ncurves);
}

/*
 * The epsilon columns of a zCDP ledger at its admin's delta: what it spent
 * and may spend by the zCDP conversion, and, tighter, what it spent by the
 * privacy curve of its releases (built in a context of its own, freed here).
 */
static void
zcdp_epsilons(Datum *values, Datum delta, const LedgerReleases *releases, int64 id,
			  uint64 spent, uint64 budget)
{
	double		d = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, delta));
	MemoryContext curve_context = AllocSetContextCreate(CurrentMemoryContext,
														"contcount ledger curve",
														ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(curve_context);
	cc_privacy_curve *curve = ledger_curve_build(releases, id,
												 TextDatumGetCString(values[0]));
	double		tight = ledger_curve_epsilon(curve, CC_ZCDP, spent, d);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(curve_context);
	values[7] = zcdp_epsilon_numeric(spent, d);
	values[8] = zcdp_epsilon_numeric(budget, d);
	values[9] = epsilon_numeric_up(tight);
}

/* Row i of the SPI result as a row of ledger_rows(). */
static void
put_ledger_row(ReturnSetInfo *rsinfo, uint64 i, bool v05, const SpentRows *rows)
{
	HeapTuple	tuple = SPI_tuptable->vals[i];
	TupleDesc	desc = SPI_tuptable->tupdesc;
	bool		isnull;
	int64		id = DatumGetInt64(SPI_getbinval(tuple, desc, 1, &isnull));
	uint64		budget = DatumGetInt64(SPI_getbinval(tuple, desc, 3, &isnull));
	uint64		spent = rows->spent[i];
	bool		known = rows->known[i];
	Datum		values[LEDGER_ROWS_0_5];
	bool		nulls[LEDGER_ROWS_0_5] = {false};

	values[0] = SPI_getbinval(tuple, desc, 2, &isnull);
	values[1] = ledger_units_numeric(budget, false);
	values[4] = SPI_getbinval(tuple, desc, 4, &isnull);
	/* not in the store: unusable, and of no known accounting */
	if (!known)
		nulls[2] = nulls[3] = nulls[5] = nulls[6] = nulls[7] = nulls[8] = nulls[9] = true;
	else
	{
		values[2] = ledger_units_numeric(spent, false);
		values[3] = ledger_units_numeric(spent < budget ? budget - spent : 0, false);
		values[5] = CStringGetTextDatum(ledger_accounting_name(rows->accounting[i]));
	}
	if (known && rows->accounting[i] == CC_PURE)
	{
		values[6] = ledger_units_numeric(0, false);
		values[7] = values[9] = values[2];
		values[8] = values[1];
	}
	else if (known && v05)
	{
		Datum		delta = SPI_getbinval(tuple, desc, 5, &isnull);

		values[6] = delta;
		nulls[6] = nulls[7] = nulls[8] = nulls[9] = isnull;
		if (!isnull)
			zcdp_epsilons(values, delta, rows->releases, id, spent, budget);
	}
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * The ledgers the caller may spend from or manage, with what is left (in
 * the ledger's accounting), and from 0.5 that accounting and what the ledger
 * spent and may spend as (epsilon, delta)-DP: the contcount.ledgers view.  A
 * pure ledger is (spent, 0)-DP; a zCDP ledger is shown at the delta its admin
 * chose, by the zCDP conversion and, tighter, by the privacy curve of its
 * releases (ledger_curve.c), read for all of them in one scan of the store.
 */
PG_FUNCTION_INFO_V1(contcount_ledger_rows);
Datum
contcount_ledger_rows(PG_FUNCTION_ARGS)
{
	/* before 0.5 the table has no delta */
	static SPIPlanPtr plans[2] = {NULL, NULL};
	static const char *const sql[2] = {
		"SELECT id, name, "
		"pg_catalog.int8(budget OPERATOR(pg_catalog.*) 1000000000::pg_catalog.numeric), created_at "
		"FROM contcount.ledger "
		"WHERE dropped_at IS NULL "
		"AND (name OPERATOR(pg_catalog.=) $2 OR contcount.ledger_granted(id, $1, false)) "
		"ORDER BY name COLLATE \"C\"",
		"SELECT id, name, "
		"pg_catalog.int8(budget OPERATOR(pg_catalog.*) 1000000000::pg_catalog.numeric), created_at, delta "
		"FROM contcount.ledger "
		"WHERE dropped_at IS NULL "
		"AND (name OPERATOR(pg_catalog.=) $2 OR contcount.ledger_granted(id, $1, false)) "
		"ORDER BY name COLLATE \"C\""
	};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		v05;
	OwnerScope	scope;
	const char *setting;
	Oid			types[2] = {OIDOID, TEXTOID};
	Datum		args[2];
	SpentRows	rows;

	InitMaterializedSRF(fcinfo, 0);
	v05 = rsinfo->setDesc->natts == LEDGER_ROWS_0_5;
	owner_begin(&scope);
	args[0] = ObjectIdGetDatum(scope.caller);
	setting = settings_ledger();
	args[1] = CStringGetTextDatum(setting ? setting : "");
	owner_run(&plans[v05], sql[v05], 2, types, args, NULL, SPI_OK_SELECT);
	read_spent(v05, &rows);
	for (uint64 i = 0; i < SPI_processed; i++)
		put_ledger_row(rsinfo, i, v05, &rows);
	owner_end(&scope);
	return (Datum) 0;
}

/*
 * The ledgers by id, and whether the caller administers one: it sees every
 * charge to those, and its own charges to the others.
 */
typedef struct AuditLedger
{
	int64		id;				/* hash key */
	char	   *name;
	cc_accounting accounting;
	bool		admin;
} AuditLedger;

/* The columns of charge_rows() from 0.5 on; before, the first 6. */
#define CHARGE_ROWS_0_5 10

typedef struct AuditScan
{
	HTAB	   *ledgers;
	Oid			caller;
	ReturnSetInfo *rsinfo;
} AuditScan;

static void
audit_one(const StoreCharge *charge, void *arg)
{
	AuditScan  *scan = arg;
	AuditLedger *ledger = hash_search(scan->ledgers, &charge->ledger, HASH_FIND, NULL);
	Datum		values[CHARGE_ROWS_0_5];
	bool		nulls[CHARGE_ROWS_0_5] = {false};

	if (ledger == NULL || (!ledger->admin && charge->role != scan->caller))
		return;
	values[0] = TimestampTzGetDatum(charge->at);
	values[1] = ObjectIdGetDatum(charge->role);
	values[2] = CStringGetTextDatum(ledger->name);
	values[3] = ledger_units_numeric(charge->units, charge->refund);
	values[4] = CStringGetTextDatum(charge->function);
	values[5] = CStringGetTextDatum(charge->statement);
	/* from 0.5: the ledger's accounting, and its releases' own costs */
	values[6] = CStringGetTextDatum(ledger_accounting_name(ledger->accounting));
	values[7] = Int64GetDatum(charge->releases);
	values[8] = ledger_units_numeric(charge->cost.units, false);
	values[9] = values[8];
	nulls[7] = charge->releases == 0;	/* not recorded before 0.5 */
	nulls[8] = nulls[7] || charge->cost.accounting != CC_PURE;
	nulls[9] = nulls[7] || charge->cost.accounting != CC_ZCDP;
	tuplestore_putvalues(scan->rsinfo->setResult, scan->rsinfo->setDesc, values, nulls);
}

/*
 * Every charge to a ledger the caller administers, dropped ledgers
 * included, and from 0.6 the caller's own charges to any other ledger (what
 * it spent, which it knows: the statement is its own, and a ledger that a
 * source charged is one contcount.sources names to it): the contcount.charges
 * view.  From 0.5 each row also says the
 * ledger's accounting (what its epsilon column counts: rho on a zCDP ledger)
 * and the releases it paid for: how many, and each one's epsilon (a pure
 * release) or rho (a zCDP release); unknown (null) for charges made before.
 */
PG_FUNCTION_INFO_V1(contcount_charge_rows);
Datum
contcount_charge_rows(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	static SPIPlanPtr plan_0_4 = NULL;
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
	/* before 0.5 the table has no delta, and every ledger is pure */
	if (get_attnum(get_relname_relid("ledger", get_namespace_oid("contcount", false)),
				   "delta") != InvalidAttrNumber)
		owner_run(&plan, "SELECT id, name, delta IS NOT NULL, contcount.ledger_granted(id, $1, true) "
				  "FROM contcount.ledger",
				  1, types, args, NULL, SPI_OK_SELECT);
	else
		owner_run(&plan_0_4, "SELECT id, name, false, contcount.ledger_granted(id, $1, true) "
				  "FROM contcount.ledger",
				  1, types, args, NULL, SPI_OK_SELECT);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i],
													 SPI_tuptable->tupdesc, 1, &isnull));
		AuditLedger *ledger = hash_search(scan.ledgers, &id, HASH_ENTER, NULL);
		uint64		spent;

		ledger->name = MemoryContextStrdup(outer, SPI_getvalue(SPI_tuptable->vals[i],
															   SPI_tuptable->tupdesc, 2));
		/*
		 * A ledger the store forgot (dropped) has its accounting in its row:
		 * only a zCDP ledger has a delta.  One the store never knew has no
		 * charges to show.
		 */
		ledger->accounting = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
														3, &isnull)) ? CC_ZCDP : CC_PURE;
		(void) ledger_store_spent(id, &spent, &ledger->accounting);
		ledger->admin = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
												   4, &isnull));
	}
	scan.caller = scope.caller;
	owner_end(&scope);

	ledger_store_scan(audit_one, &scan);
	return (Datum) 0;
}

/*
 * The budget changes of the ledgers the caller administers: the
 * contcount.budget_changes view.
 */
PG_FUNCTION_INFO_V1(contcount_budget_change_rows);
Datum
contcount_budget_change_rows(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan = NULL;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OwnerScope	scope;
	Oid			types[1] = {OIDOID};
	Datum		args[1];

	InitMaterializedSRF(fcinfo, 0);
	owner_begin(&scope);
	args[0] = ObjectIdGetDatum(scope.caller);
	owner_run(&plan, "SELECT c.at, c.role_id::pg_catalog.regrole, l.name, c.action, c.old_budget, c.new_budget "
			  "FROM contcount.budget_change c "
			  "JOIN contcount.ledger l ON l.id OPERATOR(pg_catalog.=) c.ledger_id "
			  "WHERE contcount.ledger_granted(l.id, $1, true) ORDER BY c.at",
			  1, types, args, NULL, SPI_OK_SELECT);
	for (uint64 i = 0; i < SPI_processed; i++)
		tuplestore_puttuple(rsinfo->setResult, SPI_tuptable->vals[i]);
	owner_end(&scope);
	return (Datum) 0;
}
