/*
 * args.c
 *		Reading the arguments of contcount's SQL functions.
 *
 * IDENTIFICATION
 *	  src/common/args.c
 */
#include "postgres.h"

#include "common/int.h"
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

Datum
arg_required(FunctionCallInfo fcinfo, int argno, const char *what)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	return PG_GETARG_DATUM(argno);
}

int64
interval_usecs(Interval *interval, const char *what)
{
	int64		usecs;

	if (interval->month != 0 ||
		__builtin_mul_overflow((int64) interval->day, USECS_PER_DAY, &usecs) ||
		__builtin_add_overflow(usecs, interval->time, &usecs) ||
		usecs < USECS_PER_SEC)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at least 1 second, in days, hours, minutes or seconds", what)));
	return usecs;
}

int64
step_usecs(Interval *step)
{
	return interval_usecs(step, "step");
}

bool
step_end(TimestampTz start, int64 k, int64 step_usecs, TimestampTz *end)
{
	int64		offset;

	return !pg_mul_s64_overflow(k, step_usecs, &offset) &&
		!pg_add_s64_overflow(start, offset, end) && IS_VALID_TIMESTAMP(*end);
}
