/*
 * owner_spi.c
 *		Working on contcount's tables as the extension's owner.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "miscadmin.h"
#include "utils/syscache.h"

#include "owner_spi.h"

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
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

void
owner_end(OwnerScope *scope)
{
	SPI_finish();
	SetUserIdAndSecContext(scope->caller, scope->caller_context);
}

void
owner_run(SPIPlanPtr *plan, const char *sql, int nargs, const Oid *types,
		  const Datum *values, const char *nulls, int expected)
{
	int			rc;

	if (*plan == NULL)
	{
		SPIPlanPtr	prepared = SPI_prepare(sql, nargs, (Oid *) types);

		if (prepared == NULL || SPI_keepplan(prepared) != 0)
			elog(ERROR, "contcount: could not prepare \"%s\": %s", sql,
				 SPI_result_code_string(SPI_result));
		*plan = prepared;
	}
	rc = SPI_execute_plan(*plan, (Datum *) values, nulls, false, 0);
	if (rc != expected)
		elog(ERROR, "contcount: \"%s\" returned %s", sql, SPI_result_code_string(rc));
}
