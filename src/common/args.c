/*
 * args.c
 *		Reading the arguments of contcount's SQL functions.
 *
 * IDENTIFICATION
 *	  src/common/args.c
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "common/args.h"

char *
arg_text(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	return TextDatumGetCString(PG_GETARG_DATUM(argno));
}
