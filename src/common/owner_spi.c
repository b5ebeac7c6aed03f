/*
 * owner_spi.c
 *		Working on contcount's tables as the extension's owner.
 *
 * The caller is not trusted (docs/design.md, "Threat model"): its search_path
 * may put a schema of its own, with its own operators and functions, ahead of
 * pg_catalog.  SQL run with the owner's rights must never resolve a name
 * there, so every owner scope pins search_path to pg_catalog, pg_temp for its
 * duration, as a SET clause does for a SECURITY DEFINER function, and the SQL
 * text qualifies what it calls as well.  Plans are kept for the backend's
 * life: the plan cache re-plans them if search_path differs from the one they
 * were made under, and here it never does.  search_path is one of the settings
 * of the scope's seal (seal.c): the others keep the query from reporting on
 * itself through the caller's session, and the caller's buffer and WAL
 * counters are put back as they were when the scope ends.
 *
 * Every statement runs on a snapshot taken for it, not on the caller's: a
 * budget cut, a ledger dropped or a grant revoked binds from its commit even
 * inside a REPEATABLE READ transaction that began before it.  Charges read
 * the committed state alone (owner_read_committed), so a budget raised or a
 * grant given in the caller's own open transaction does not count before it
 * commits; management sees its own transaction's changes too.
 *
 * IDENTIFICATION
 *	  src/common/owner_spi.c
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "miscadmin.h"
#include "storage/procarray.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "common/owner_spi.h"
#include "common/seal.h"

static Oid
extension_owner(void)
{
	Oid			schema = get_namespace_oid("contcount", false);
	HeapTuple	tuple = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(schema));
	Oid			owner;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for schema %u", schema);
	owner = ((Form_pg_namespace) GETSTRUCT(tuple))->nspowner;
	ReleaseSysCache(tuple);
	return owner;
}

void
owner_begin(OwnerScope *scope)
{
	Oid			owner = extension_owner();

	GetUserIdAndSecContext(&scope->caller, &scope->caller_context);
	SetUserIdAndSecContext(owner, scope->caller_context |
						   SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	scope->guc_nest_level = seal_settings();
	seal_usage_save(&scope->usage);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

void
owner_end(OwnerScope *scope)
{
	SPI_finish();
	AtEOXact_GUC(true, scope->guc_nest_level);
	seal_usage_restore(&scope->usage);
	SetUserIdAndSecContext(scope->caller, scope->caller_context);
}

/*
 * A snapshot of what is committed now, registered: with the changes of the
 * current transaction up to now, or without any of them.
 */
static Snapshot
snapshot_now(bool own_changes)
{
	static SnapshotData latest = {SNAPSHOT_MVCC};
	Snapshot	snapshot = RegisterSnapshot(GetSnapshotData(&latest));

	if (!own_changes)
		snapshot->curcid = FirstCommandId;
	return snapshot;
}

static int
execute_now(SPIPlanPtr plan, const Datum *values, const char *nulls, bool own_changes)
{
	Snapshot	snapshot = snapshot_now(own_changes);
	int			rc;

	rc = SPI_execute_snapshot(plan, (Datum *) values, nulls, snapshot, InvalidSnapshot,
							  !own_changes, true, 0);
	UnregisterSnapshot(snapshot);
	return rc;
}

void
owner_execute(SPIPlanPtr plan, const Datum *values, int expected)
{
	int			rc = execute_now(plan, values, NULL, true);

	if (rc != expected)
		elog(ERROR, "a statement of contcount's returned %s", SPI_result_code_string(rc));
}

Portal
owner_open_cursor(SPIPlanPtr plan, const Datum *values)
{
	Snapshot	snapshot = snapshot_now(true);
	Portal		portal;

	/* the portal's executor registers the snapshot for itself */
	PushActiveSnapshot(snapshot);
	portal = SPI_cursor_open(NULL, plan, (Datum *) values, NULL, true);
	PopActiveSnapshot();
	UnregisterSnapshot(snapshot);
	return portal;
}

static void
run(SPIPlanPtr *plan, const char *sql, int nargs, const Oid *types,
	const Datum *values, const char *nulls, int expected, bool own_changes)
{
	int			rc;

	if (*plan == NULL)
	{
		SPIPlanPtr	prepared = SPI_prepare(sql, nargs, (Oid *) types);

		if (prepared == NULL || SPI_keepplan(prepared) != 0)
			elog(ERROR, "could not prepare \"%s\": %s", sql,
				 SPI_result_code_string(SPI_result));
		*plan = prepared;
	}
	rc = execute_now(*plan, values, nulls, own_changes);
	if (rc != expected)
		elog(ERROR, "\"%s\" returned %s", sql, SPI_result_code_string(rc));
}

void
owner_run(SPIPlanPtr *plan, const char *sql, int nargs, const Oid *types,
		  const Datum *values, const char *nulls, int expected)
{
	run(plan, sql, nargs, types, values, nulls, expected, true);
}

void
owner_insert_new(SPIPlanPtr *plan, const char *sql, int nargs, const Oid *types,
				 const Datum *values, const char *kind, const char *name)
{
	run(plan, sql, nargs, types, values, NULL, SPI_OK_INSERT, true);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("%s \"%s\" already exists", kind, name)));
}

void
owner_select_existing(SPIPlanPtr *plan, const char *sql, int nargs, const Oid *types,
					  const Datum *values, const char *kind, const char *name)
{
	run(plan, sql, nargs, types, values, NULL, SPI_OK_SELECT, true);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("%s \"%s\" does not exist", kind, name)));
}

void
owner_read_committed(SPIPlanPtr *plan, const char *sql, int nargs, const Oid *types,
					 const Datum *values, const char *nulls)
{
	run(plan, sql, nargs, types, values, nulls, SPI_OK_SELECT, false);
}

bool
contcount_has_column(const char *table, const char *column)
{
	return get_attnum(get_relname_relid(table, get_namespace_oid("contcount", false)),
					  column) != InvalidAttrNumber;
}
