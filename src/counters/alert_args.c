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
