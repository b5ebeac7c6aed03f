/*
 * alert_args.c
 *		What every kind of alert checks when it is created (alert_args.h).
 *
 * IDENTIFICATION
 *	  src/counters/alert_args.c
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "common/owner_spi.h"
#include "counters/alert_args.h"
#include "counters/counter.h"

char *
alert_text_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

char *
alert_channel_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *channel = alert_text_arg(fcinfo, argno, "channel");

	if (channel[0] == '\0' || strlen(channel) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("channel must have 1 to %d bytes", NAMEDATALEN - 1)));
	return channel;
}

void
alert_require_room(Oid caller)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(caller)};
	bool		isnull;
	int64		held;

	if (superuser_arg(caller))
		return;
	owner_run(&plan,
			  "SELECT (SELECT pg_catalog.count(*) FROM contcount.counter_alert "
			  "WHERE owner OPERATOR(pg_catalog.=) $1) OPERATOR(pg_catalog.+) "
			  "(SELECT pg_catalog.count(*) FROM contcount.counter_sparse_alert "
			  "WHERE owner OPERATOR(pg_catalog.=) $1)",
			  1, types, values, NULL, SPI_OK_SELECT);
	held = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (held >= ALERTS_PER_ROLE)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("role \"%s\" holds %d alerts, as many as a role may",
						GetUserNameFromId(caller, false), ALERTS_PER_ROLE),
				 errhint("Drop one with contcount.drop_alert().")));
}

text *
alert_key_arg(FunctionCallInfo fcinfo, int argno, const char *counter, int64 id)
{
	static SPIPlanPtr plan = NULL;
	Oid			types[2] = {INT8OID, TEXTOID};
	Datum		values[2] = {Int64GetDatum(id), (Datum) 0};
	char		nulls[2] = {' ', PG_ARGISNULL(argno) ? 'n' : ' '};
	bool		isnull;
	bool		declared;

	if (!PG_ARGISNULL(argno))
		values[1] = PG_GETARG_DATUM(argno);
	if (!counter_has_dimension(id))
	{
		if (PG_ARGISNULL(argno))
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("counter \"%s\" has no key \"%s\"", counter, TextDatumGetCString(values[1])),
				 errdetail("Counter \"%s\" releases one running count, without keys.", counter)));
	}
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("counter \"%s\" releases a running count per key: an alert watches one key",
						counter),
				 errhint("Name one of its dimension's keys with key => ...")));
	owner_run(&plan,
			  "SELECT $2 OPERATOR(pg_catalog.=) ANY (d.keys) FROM contcount.counter c "
			  "JOIN contcount.source_dimension d ON d.source OPERATOR(pg_catalog.=) c.source "
			  "AND d.name OPERATOR(pg_catalog.=) c.dimension WHERE c.id OPERATOR(pg_catalog.=) $1",
			  2, types, values, nulls, SPI_OK_SELECT);
	declared = SPI_processed > 0 &&
		DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) &&
		!isnull;
	if (!declared)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("counter \"%s\" has no key \"%s\"", counter, TextDatumGetCString(values[1])),
				 errdetail("An alert watches a key its counter's dimension declares.")));
	return DatumGetTextPP(values[1]);
}
