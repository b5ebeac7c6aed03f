/*
 * counter_attach.c
 *		The count_inserts triggers that attach_counter creates, and their
 *		record in contcount.counter_attachment.
 *
 * The trigger is created as the calling role, so that PostgreSQL's own rules
 * decide who may create it (the table's owner, or a role with the TRIGGER
 * privilege on it); counter.c has checked that the table's owner may feed
 * the counter.  It is dropped as the extension's owner: the counter's owner,
 * dropping the counter, may have no right on the table, and what it drops
 * is only what contcount attached there with the table's owner's consent.
 * Dropping a trigger takes the table's ACCESS EXCLUSIVE lock until the
 * transaction ends, so drop_counter takes it only if it is free at once and
 * otherwise leaves the trigger, which counts nothing once its counter is
 * gone (counter.c, counter_to_feed).
 *
 * IDENTIFICATION
 *	  src/counters/counter_attach.c
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "common/owner_spi.h"
#include "counters/counter_attach.h"

/* The trigger's name: contcount_ and the counter's, cut to fit a name. */
static char *
trigger_name(const char *counter)
{
	char	   *name = psprintf("contcount_%s", counter);

	name[pg_mbcliplen(name, strlen(name), NAMEDATALEN - 1)] = '\0';
	return name;
}

/* CREATE TRIGGER as the calling role, every name quoted and qualified. */
static void
create_trigger(const char *tgname, const char *counter, Oid table, bool for_row)
{
	char	   *sql = psprintf("CREATE TRIGGER %s AFTER INSERT ON %s FOR EACH %s "
							   "EXECUTE FUNCTION contcount.count_inserts(%s)",
							   quote_identifier(tgname),
							   quote_qualified_identifier(get_namespace_name(get_rel_namespace(table)),
														  get_rel_name(table)),
							   for_row ? "ROW" : "STATEMENT", quote_literal_cstr(counter));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not create trigger \"%s\"", tgname);
	SPI_finish();
}

void
attachment_create(int64 counter, const char *name, Oid table, bool for_row)
{
	static SPIPlanPtr plan = NULL;
	char	   *tgname = trigger_name(name);
	Oid			types[3] = {INT8OID, OIDOID, TEXTOID};
	Datum		values[3] = {Int64GetDatum(counter), ObjectIdGetDatum(table),
	CStringGetTextDatum(tgname)};
	OwnerScope	scope;

	create_trigger(tgname, name, table, for_row);
	owner_begin(&scope);
	owner_run(&plan,
			  "INSERT INTO contcount.counter_attachment (counter_id, table_id, trigger_name) "
			  "VALUES ($1, $2, $3::pg_catalog.name)",
			  3, types, values, NULL, SPI_OK_INSERT);
	owner_end(&scope);
}

/*
 * The trigger of that name on table if it is still the one attach_counter
 * made, contcount.count_inserts(counter); else InvalidOid.  The table's
 * owner may have dropped it and written a trigger of its own under that
 * name, which the counter's owner must not drop.
 */
static Oid
trigger_feeding(Oid table, const char *tgname, const char *counter)
{
	Relation	rel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			trigger = InvalidOid;

	ScanKeyInit(&key[0], Anum_pg_trigger_tgrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(table));
	ScanKeyInit(&key[1], Anum_pg_trigger_tgname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum(tgname));
	scan = systable_beginscan(rel, TriggerRelidNameIndexId, true, NULL, 2, key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		Form_pg_trigger form = (Form_pg_trigger) GETSTRUCT(tuple);
		bool		isnull;
		Datum		args = heap_getattr(tuple, Anum_pg_trigger_tgargs, RelationGetDescr(rel), &isnull);

		/* tgargs holds each argument followed by a NUL */
		if (form->tgnargs == 1 && !isnull &&
			strcmp(get_func_name(form->tgfoid), "count_inserts") == 0 &&
			get_func_namespace(form->tgfoid) == get_namespace_oid("contcount", false) &&
			strcmp(VARDATA_ANY(DatumGetByteaPP(args)), counter) == 0)
			trigger = form->oid;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return trigger;
}

/*
 * Drop the trigger of that name on table that feeds counter, if both are
 * still there: false, without waiting, if the table's lock is not free at
 * once and !wait.  No privilege check: the callers decided.
 */
static bool
drop_trigger(Oid table, const char *tgname, const char *counter, bool wait)
{
	Oid			trigger;
	ObjectAddress object;

	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(table)))
		return true;
	if (wait)
		LockRelationOid(table, AccessExclusiveLock);
	else if (!ConditionalLockRelationOid(table, AccessExclusiveLock))
		return false;
	trigger = trigger_feeding(table, tgname, counter);
	if (OidIsValid(trigger))
	{
		ObjectAddressSet(object, TriggerRelationId, trigger);
		performDeletion(&object, DROP_RESTRICT, 0);
	}
	return true;
}

bool
attachment_remove(int64 counter, const char *name, Oid table)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[2] = {INT8OID, OIDOID};
	Datum		values[2] = {Int64GetDatum(counter), ObjectIdGetDatum(table)};
	char	   *tgname = NULL;
	MemoryContext outer = CurrentMemoryContext;
	OwnerScope	scope;

	owner_begin(&scope);
	owner_run(&plan,
			  "DELETE FROM contcount.counter_attachment WHERE counter_id OPERATOR(pg_catalog.=) $1 "
			  "AND table_id OPERATOR(pg_catalog.=) $2 RETURNING trigger_name::pg_catalog.text",
			  2, types, values, NULL, SPI_OK_DELETE_RETURNING);
	if (SPI_processed > 0)
		tgname = MemoryContextStrdup(outer, SPI_getvalue(SPI_tuptable->vals[0],
														 SPI_tuptable->tupdesc, 1));
	owner_end(&scope);
	if (tgname == NULL)
		return false;
	(void) drop_trigger(table, tgname, name, true);
	return true;
}

void
attachments_remove_all(int64 counter, const char *name)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(counter)};
	uint64		n;
	Oid		   *tables;
	char	  **tgnames;
	bool		isnull;
	MemoryContext outer = CurrentMemoryContext;
	OwnerScope	scope;

	owner_begin(&scope);
	owner_run(&plan,
			  "DELETE FROM contcount.counter_attachment WHERE counter_id OPERATOR(pg_catalog.=) $1 "
			  "RETURNING table_id, trigger_name::pg_catalog.text",
			  1, types, values, NULL, SPI_OK_DELETE_RETURNING);
	n = SPI_processed;
	/* SPI's memory goes with owner_end: keep the rows in the caller's */
	tables = MemoryContextAlloc(outer, sizeof(Oid) * (n + 1));
	tgnames = MemoryContextAlloc(outer, sizeof(char *) * (n + 1));
	for (uint64 i = 0; i < n; i++)
	{
		tables[i] = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1,
												   &isnull));
		tgnames[i] = MemoryContextStrdup(outer, SPI_getvalue(SPI_tuptable->vals[i],
															 SPI_tuptable->tupdesc, 2));
	}
	owner_end(&scope);
	for (uint64 i = 0; i < n; i++)
	{
		/* a role with no right on the table never locks it */
		bool		mine = pg_class_aclcheck(tables[i], GetUserId(), ACL_TRIGGER) == ACLCHECK_OK;

		if (!mine || !drop_trigger(tables[i], tgnames[i], name, false))
			ereport(NOTICE,
					(errmsg("trigger \"%s\" on table \"%s\" is left in place: %s",
							tgnames[i], get_rel_name(tables[i]),
							mine ? "the table is in use" : "only a role that may create triggers on it drops it"),
					 errdetail("With counter \"%s\" gone, it counts nothing and lets inserts through.", name),
					 errhint("The table's owner removes it with DROP TRIGGER.")));
	}
}
